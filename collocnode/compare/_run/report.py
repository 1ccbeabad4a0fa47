"""Writing a comparison: ``compare.json``, ``compare.md``, one ``<method>.npz`` per evaluated
method and the figures, all written atomically (a temporary file in the same directory, then a
rename).

The figures are ``rollouts.png`` (the whole horizon, the training window shaded and its end
marked, the states by their names; or ``accelerations.png`` when the methods saved
accelerations), ``time_vs_error.png`` and, when curves were recorded, ``error_vs_time.png``; the
error is the report's ``target_metric`` (the generic test MSE, or e.g. the quarter vehicle's
test-road acceleration RMSE). Each method has one colour in all of them
(`collocnode.tools._style`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...tools._io import atomic_write_text, save_figure, write_json, write_npz
from ..methods.status import MethodStatus
from .scenarios import scenario_for


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 1e4 else f"{x:.3e}"
    return str(x)


def _unit(row: Mapping[str, Any]) -> str:
    """What the row's ``epochs`` count (rows written before the unit was stored: collocation's
    are IPOPT iterations)."""
    return row.get("unit") or ("iteration" if row["method"] == "collocation" else "epoch")


def _count(n: Any, unit: str) -> str:
    return f"{n} {unit}" + ("" if n == 1 else "s")


def trained_for(row: Mapping[str, Any]) -> str:
    """How long the method trained, in its own unit: "20 epochs", "57 iterations"."""
    return "–" if row.get("epochs") is None else _count(row["epochs"], _unit(row))


def budget(row: Mapping[str, Any], budget_s: float | None) -> str:
    """What the method was allowed: its epochs (at most its iterations) and the run's time
    budget, e.g. "20 epochs, 60 s" or "≤ 3000 iterations, no time limit"."""
    limit = row.get("limit")
    if limit is None:
        return "–"
    unit = _unit(row)
    count = ("≤ " if unit == "iteration" else "") + _count(limit, unit)
    time = "no time limit" if budget_s is None else f"{_fmt(float(budget_s))} s"
    return f"{count}, {time}"


def summary_line(row: Mapping[str, Any]) -> str:
    """One line per method for the console."""
    road = ""
    if "test_road_rmse" in row:
        road = f", test-road a RMSE {_fmt(row.get('test_road_rmse'))}"
    note = (
        f" ({row['message']})"
        if row["status"] != MethodStatus.SUCCESS and row.get("message")
        else ""
    )
    full = f", full-window MSE {_fmt(row['full_mse'])}" if "full_mse" in row else ""
    return (
        f"{row['method']}: {row['status']}, train {_fmt(row.get('train_time_s'))} s, "
        f"{trained_for(row)}, train MSE {_fmt(row.get('train_mse'))}, "
        f"test MSE {_fmt(row.get('test_mse'))}{full}{road}{note}"
    )


def markdown(report: Mapping[str, Any]) -> str:
    """The report (a `CompareReport` or its JSON) as a
    Markdown table with the columns of its problem's scenario."""
    meta = report["meta"]
    scenario = scenario_for(report["problem"])
    columns = scenario.columns
    horizon = f", {meta['duration_s']:g} s per road" if "duration_s" in meta else ""
    noise = ""
    if meta.get("noise"):
        kind = f" ({meta['noise_kind']})" if meta.get("noise_kind") else ""
        noise = f", noise {_fmt(meta['noise'])}{kind}"
    lines = [
        f"# Comparison on `{report['problem']}` (preset `{meta['preset']}`)",
        "",
        f"{meta['n_train']} training samples of {meta['n_total']}, dt = {_fmt(meta['dt'])} s"
        f"{horizon}{noise}, device {meta['device']}, seed {meta['seed']}"
        + (", quick run" if meta["quick"] else ""),
        "",
        "| " + " | ".join(h for _, h in columns) + " | note |",
        "|" + "---|" * (len(columns) + 1),
    ]
    for row in report["rows"]:
        note = row.get("message", "") if row["status"] != MethodStatus.SUCCESS else ""
        cells = [_cell(row, c, meta) for c, _ in columns]
        lines.append("| " + " | ".join([*cells, note.replace("|", "/").replace("\n", " ")]) + " |")
    lines += ["", f"{scenario.errors_label}: {meta['mse']}."]
    if meta["quick"]:
        lines += [
            "",
            "Quick run: small networks and data; the trainers run few epochs while collocation "
            "runs until IPOPT converges or reaches its iteration limit. The budget column gives "
            "what each method was allowed, the last column how its training ended.",
        ]
    return "\n".join([*lines, "", *_at_set_times(report)])


def _cell(row: Mapping[str, Any], column: str, meta: Mapping[str, Any]) -> str:
    """The table cell of ``column``: "epochs" and "limit" worded with the row's unit and the
    run's time budget, the other columns the row's value."""
    if column == "epochs":
        return trained_for(row)
    if column == "limit":
        return budget(row, meta.get("budget_s"))
    return _fmt(row.get(column))


def _at_set_times(report: Mapping[str, Any]) -> list[str]:
    """A table of each curve's test error at the run's set training times (``--eval-at``):
    the first evaluation at or after each time, then the trained model's."""
    meta = report["meta"]
    times = meta.get("eval_at_s") or []
    rows = [r for r in report["rows"] if r.get("curve") is not None]
    if not times or not rows:
        return []
    metric = meta.get("target_metric", "test_mse")
    lines = [
        f"`{metric}` at set training times: the first evaluation at or after each (the "
        "training time it was taken at), and the trained model's at the end of training; "
        "– where training ended first.",
        "",
        "| method | " + " | ".join(f"{t:g} s" for t in times) + " | end of training |",
        "|" + "---|" * (len(times) + 2),
    ]
    for r in rows:
        cells = []
        for t in times:
            point = next(((s, e) for s, e in r["curve"] if s >= t and e is not None), None)
            cells.append("–" if point is None else f"{_fmt(point[1])} ({_fmt(point[0])} s)")
        cells.append(f"{_fmt(r.get(metric))} ({_fmt(r.get('train_time_s'))} s)")
        lines.append(f"| {r['method']} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def write_report(report: Mapping[str, Any], out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``compare.json`` (strict JSON: non-finite numbers become null) and
    ``compare.md`` into ``out_dir`` (created if needed); returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    js, md = out / "compare.json", out / "compare.md"
    write_json(js, report)
    atomic_write_text(md, markdown(report))
    return js, md


def save_arrays(
    path: str | os.PathLike[str], arrays: Mapping[str, np.ndarray], trainer: Any
) -> Path:
    """``arrays`` and the trainer's flat network weights (``weights_<block>``, where it has
    them) as one ``.npz`` file."""
    arrays = dict(arrays)
    if hasattr(trainer, "get_weights"):
        for block, w in trainer.get_weights().items():
            arrays[f"weights_{block}"] = w
    return write_npz(path, arrays)


def write_plots(report: Mapping[str, Any], out_dir: str | os.PathLike[str]) -> list[Path]:
    """The figures (see the module docstring) from the report's rows and the ``<method>.npz``
    files in ``out_dir``; returns the paths written."""
    from ...tools import _plotting as plotting
    from ...tools import _style as style

    out = Path(out_dir)
    rows, meta, problem = report["rows"], report["meta"], report["problem"]
    metric = meta.get("target_metric", "test_mse")
    label = metric.replace("_", " ").replace("mse", "MSE").replace("rmse", "RMSE")
    states, accelerations = _saved_rollouts(out, rows)
    figures: dict[str, Any] = {}
    if accelerations:
        t, truth, _ = next(iter(accelerations.values()))
        figures["accelerations.png"] = plotting.acceleration_comparison(
            t,
            truth,
            {name: a for name, (_, _, a) in accelerations.items()},
            title=f"{problem}: accelerations on the unseen test road",
        )
    if states:
        t, truth, _ = next(iter(states.values()))
        figures["rollouts.png"] = plotting.rollout_comparison(
            t,
            truth,
            {name: x for name, (_, _, x) in states.items()},
            names=meta.get("state_names") or (),
            train_end=float(t[min(meta["n_train"], t.size) - 1]),
            title=f"{problem}: rollouts over the training and extrapolation windows",
        )
    points = {
        r["method"]: (r["train_time_s"], r[metric])
        for r in rows
        if r.get(metric) is not None and r.get("train_time_s")
    }
    if points:
        title = f"{problem}: time vs error"
        figures["time_vs_error.png"] = plotting.time_vs_error(points, label, title=title)
    curves = {
        r["method"]: np.array([(a, b) for a, b in r["curve"] if b is not None], dtype=float)
        for r in rows
        if r.get("curve")
    }
    if curves:
        target = next((r.get(metric) for r in rows if r["method"] == "collocation"), None)
        figures["error_vs_time.png"] = plotting.error_vs_time(
            curves,
            label,
            target,
            f"collocation's {label}",
            target_color=style.method_color("collocation"),
            title=f"{problem}: error vs training time",
        )
    return [save_figure(fig, out / name) for name, fig in figures.items()]


Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]


def _saved_rollouts(out: Path, rows: Any) -> tuple[dict[str, Arrays], dict[str, Arrays]]:
    """Per method with a ``<method>.npz`` in ``out``: ``(t, x_data, x_pred)`` of its state
    rollout, or ``(t, a_data, a_pred)`` where it saved accelerations (the quarter vehicle)."""
    states: dict[str, Arrays] = {}
    accelerations: dict[str, Arrays] = {}
    for row in rows:
        path = out / f"{row['method']}.npz"
        if path.exists():
            with np.load(path) as z:
                if "a_pred" in z:
                    accelerations[row["method"]] = (z["t"], z["a_data"], z["a_pred"])
                elif "x_pred" in z:
                    states[row["method"]] = (z["t"], z["x_data"], z["x_pred"])
    return states, accelerations
