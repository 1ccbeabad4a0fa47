"""Run several methods on one problem with one data set and write ``compare.json``/``compare.md``.

A method that does not apply is recorded as "not applicable" with the reason; one that raises
is recorded as "failed" with the error while the others continue; a rollout that diverges is
recorded as "diverged" with its step. Ctrl-C keeps the interrupted method's best weights,
evaluates it and skips the remaining methods. Both files are written atomically (a temporary file
in the same directory, then a rename). Each evaluated method also leaves ``<method>.npz`` with the
time grid, the data, the rollout and its flat network weights.

A problem may bring its own data and scoring (its *scenario*, a module of this package named in
``SCENARIOS``): the quarter vehicle trains on its preset's road and scores accelerations on an
unseen road (:mod:`collocnode.compare.qvm`). Every other problem uses the generic state rollout
over the extrapolation window (:class:`StateRollout`).
"""

from __future__ import annotations

import io
import json
import math
import os
import platform
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any

from .. import _validation as v
from ..io import atomic_write_bytes, atomic_write_text
from . import registry
from .base import NotApplicableError, Progress
from .device import check_device_name
from .metrics import evaluate

# problem -> module of this package with its scenario: METHODS (the default methods), SETTINGS
# (.curve_every(quick), .threads(quick)), load(preset, quick, seed, noise), RoadEvaluation and
# COLUMNS
SCENARIOS = {"qvm": "qvm"}
DEFAULT_METHODS = ("fnode", "mbdnode")

COLUMNS = (
    "method",
    "status",
    "train_time_s",
    "epochs",
    "train_mse",
    "test_mse",
    "n_params",
    "time_to_target_s",
)


@dataclass(frozen=True)
class CompareConfig:
    """One comparison run.

    Attributes:
        problem: registered system name; ``preset`` one of its presets (None: the default).
        methods: registered method names, run in this order.
        quick: smoke-test settings (few epochs, small nets, at most 200 training and 100
            extrapolation samples) so the whole run takes about a minute on two CPU cores.
        epochs: override every method's epochs.
        budget_s: wall-time budget per method [s].
        device, seed: passed to every trainer.
        noise: std of Gaussian noise on the training and test states (None: the problem's
            default, no noise for most; for the quarter vehicle a fraction of each signal's σ,
            by default its preset's 2 %).
        eval_every_s: if set, evaluate the test error during training at most this often and
            store the ``curve`` of (train time, test error) per method (default when
            collocation runs beside other methods, as ``time_to_target_s`` needs the curves:
            1 s, or the scenario's cadence, e.g. 5 s / 60 s for a quick / full QVM run).
        threads: torch CPU threads (None: torch's default; a scenario may set it, e.g. 1 for
            a quick QVM run).
        options: extra option overrides per method name.
    """

    problem: str
    methods: tuple[str, ...]
    preset: str | None = None
    quick: bool = False
    epochs: int | None = None
    budget_s: float | None = None
    device: str = "auto"
    seed: int = 0
    noise: float | None = None
    eval_every_s: float | None = None
    threads: int | None = None
    options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from .. import problems

        v.choice("problem", self.problem, problems.available())
        if self.preset is not None:
            v.choice(f"preset of {self.problem}", self.preset, problems.presets(self.problem))
        methods = (self.methods,) if isinstance(self.methods, str) else tuple(self.methods)
        if not methods:
            raise ValueError("methods must name at least one method")
        for m in methods:
            v.choice("method", m, registry.available())
        object.__setattr__(self, "methods", methods)
        if self.epochs is not None:
            v.positive_int("epochs", self.epochs)
        if self.budget_s is not None:
            v.positive_float("budget_s", self.budget_s)
        check_device_name(self.device)
        v.nonnegative_int("seed", self.seed)
        if self.noise is not None:
            v.nonnegative_float("noise", self.noise)
        if self.eval_every_s is not None:
            v.positive_float("eval_every_s", self.eval_every_s)
        elif "collocation" in methods and len(methods) > 1:
            # the time-to-target column needs every other method's error-vs-time curve
            scenario = load_scenario(self.problem)
            every = 1.0 if scenario is None else scenario.SETTINGS.curve_every(self.quick)
            object.__setattr__(self, "eval_every_s", every)
        if self.threads is not None:
            v.positive_int("threads", self.threads)


def load_scenario(problem: str) -> Any:
    """The scenario module of ``problem`` (see ``SCENARIOS``), or None for the generic one."""
    name = SCENARIOS.get(problem)
    return None if name is None else import_module(f"{__package__}.{name}")


def default_methods(problem: str) -> tuple[str, ...]:
    """The methods a comparison of ``problem`` runs unless told otherwise."""
    scenario = load_scenario(problem)
    return DEFAULT_METHODS if scenario is None else tuple(scenario.METHODS)


def load_data(cfg: CompareConfig) -> tuple[Any, Any]:
    """The system and its data split for ``cfg`` (shrunk when ``quick``)."""
    return _setup(cfg)[:2]


def _setup(cfg: CompareConfig) -> tuple[Any, Any, Any]:
    """System, data split and evaluation of ``cfg``: the problem's scenario, or the generic
    rollout on a split shrunk to at most 200 + 100 samples when ``quick``."""
    from .. import problems

    scenario = load_scenario(cfg.problem)
    if scenario is not None:
        data = scenario.load(cfg.preset, cfg.quick, cfg.seed, cfg.noise)
        return data.system, data.split, scenario.RoadEvaluation(data)
    system = problems.get(cfg.problem, cfg.preset)
    kw: dict[str, Any] = {} if cfg.noise is None else {"noise": cfg.noise}
    if cfg.quick:
        n_train = min(system.n_train, 200)
        kw |= {"n_train": n_train, "n_steps": n_train + min(system.n_steps - system.n_train, 100)}
    split = system.generate(seed=cfg.seed, **kw)
    return system, split, StateRollout(system, split)


class StateRollout:
    """The generic evaluation: a rollout from the first sample over the whole trajectory,
    scored on the training window and the extrapolation window after it (``metrics``)."""

    metric = "test_mse"

    def __init__(self, system: Any, split: Any) -> None:
        self.system, self.split = system, split
        self.n_train = split.train.n_samples

    def curve_value(self, trainer: Any) -> float | None:
        return evaluate(trainer, self.system, self.split.full, self.n_train).test_mse

    def score(self, trainer: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Row fields and the arrays for ``<method>.npz``."""
        full = self.split.full
        m = evaluate(trainer, self.system, full, self.n_train, subsets=_subsets(self.system))
        fields: dict[str, Any] = dict(m.extra)
        fields.update(
            train_mse=m.train_mse,
            test_mse=m.test_mse,
            test_rmse=m.test_rmse,
            constraint_violation=m.constraint_violation,
            invariant_drift=m.invariant_drift,
            predict_time_s=m.predict_time_s,
        )
        if m.status == "diverged":
            fields.update(
                status="diverged",
                diverged_step=m.diverged_step,
                diverged_t=m.diverged_t,
                message=m.message,
            )
        arrays: dict[str, Any] = {"t": full.t, "x_data": full.x}
        if m.prediction is not None:
            arrays["x_pred"] = m.prediction
        return fields, arrays

    def meta(self) -> dict[str, Any]:
        return {
            "mse": "mean over samples and state components; train = first n_train samples, "
            "test = the samples after them (extrapolation)"
        }


def _finite_or_none(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def run_method(
    name: str,
    system: Any,
    split: Any,
    cfg: CompareConfig,
    progress: bool = True,
    out_dir: str | os.PathLike[str] | None = None,
    evaluation: Any = None,
) -> dict[str, Any]:
    """Train and evaluate one method; never raises for method failures (see the module doc).

    ``evaluation`` scores the trained model (default: :class:`StateRollout` of ``split``).
    With ``out_dir``, the rollout and the flat network weights go to ``<method>.npz`` there."""
    if evaluation is None:
        evaluation = StateRollout(system, split)
    row: dict[str, Any] = {
        "method": name,
        "status": "failed",
        "train_time_s": None,
        "epochs": None,
        "train_mse": None,
        "test_mse": None,
        "n_params": None,
        "message": "",
    }
    try:
        overrides: dict[str, Any] = {"device": cfg.device, "seed": cfg.seed}
        if cfg.epochs is not None:
            overrides["epochs"] = cfg.epochs
        overrides.update(cfg.options.get(name, {}))
        trainer = registry.make_trainer(name, cfg.problem, quick=cfg.quick, **overrides)
        reason = trainer.not_applicable(system)
        if reason:
            row.update(status="not applicable", message=reason)
            return row
        row["options"] = _options_dict(trainer.options)
        curve: list[tuple[float, float | None]] = []
        bar = _bar(name, trainer.options.epochs, progress)
        last_eval = [-math.inf]

        def callback(p: Progress) -> None:
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{p.loss:.3g}")
            if cfg.eval_every_s is not None and p.elapsed_s - last_eval[0] >= cfg.eval_every_s:
                last_eval[0] = p.elapsed_s
                curve.append((p.elapsed_s, evaluation.curve_value(trainer)))

        try:
            result = trainer.fit(system, split.train, budget_s=cfg.budget_s, callback=callback)
        finally:
            if bar is not None:
                bar.close()
        row.update(
            status=result.status,
            train_time_s=result.train_time_s,
            epochs=result.epochs,
            n_params=result.n_params,
            best_loss=_finite_or_none(result.best_loss),
            message=result.message,
        )
        if cfg.eval_every_s is not None:
            row["curve"] = curve
        fields, arrays = evaluation.score(trainer)
        row.update(fields)
        if out_dir is not None:
            _save_arrays(Path(out_dir) / f"{name}.npz", trainer, arrays)
    except NotApplicableError as exc:
        row.update(status="not applicable", message=str(exc))
    except Exception as exc:  # one failing method must not stop the comparison
        row.update(status="failed", message=f"{type(exc).__name__}: {exc}")
        row["traceback"] = traceback.format_exc(limit=8)
    return row


def _save_arrays(path: Path, trainer: Any, arrays: dict[str, Any]) -> None:
    import numpy as np

    arrays = dict(arrays)
    if hasattr(trainer, "get_weights"):
        for block, w in trainer.get_weights().items():
            arrays[f"weights_{block}"] = w
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())


def _subsets(system: Any) -> dict[str, list[int]]:
    """Column subsets scored separately: the independent coordinates and their velocities of a
    constrained mechanism (FNODE reports the slider-crank error on the crank angle)."""
    ind = tuple(getattr(system, "independent", ()) or ())
    if not ind or not system.n_coords:
        return {}
    return {"independent": [*ind, *(system.n_coords + i for i in ind)]}


def _options_dict(opts: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return {k: (list(val) if isinstance(val, tuple) else val) for k, val in asdict(opts).items()}


def _bar(name: str, total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm ships with the torch extra
        return None
    return tqdm(total=total, desc=f"{name:>12}", unit="epoch", leave=True, dynamic_ncols=True)


def run(
    cfg: CompareConfig,
    out_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run every method of ``cfg``; write ``compare.json`` and ``compare.md`` into ``out_dir``
    (if given) after each method, so a crash or Ctrl-C leaves the finished rows on disk.
    Returns the report ``{"problem", "meta", "rows"}``."""
    import torch

    scenario = load_scenario(cfg.problem)
    threads = cfg.threads
    if threads is None and scenario is not None:
        threads = scenario.SETTINGS.threads(cfg.quick)
    if threads is not None:
        torch.set_num_threads(threads)
    system, split, evaluation = _setup(cfg)
    meta = _meta(cfg, system, split) | evaluation.meta()
    report: dict[str, Any] = {"problem": cfg.problem, "meta": meta, "rows": []}
    stopped = False
    for name in cfg.methods:
        if stopped:
            report["rows"].append(
                {"method": name, "status": "interrupted", "message": "skipped after Ctrl-C"}
            )
            continue
        row = run_method(name, system, split, cfg, progress, out_dir, evaluation)
        report["rows"].append(row)
        add_time_to_target(report["rows"], evaluation.metric)
        stopped = row["status"] == "interrupted"
        if log is not None:
            log(_summary_line(row))
        if out_dir is not None:
            write_report(report, out_dir)
    if out_dir is not None:
        from .plots import write_plots

        write_plots(report, out_dir)
    return report


def add_time_to_target(rows: list[dict[str, Any]], metric: str = "test_mse") -> None:
    """``time_to_target_s`` per row: the training time at which the method's test error
    (``metric``, the quantity its curve records) first reached the collocation row's final one
    (null if it never did, or if no curve was recorded). Collocation's own value is its training
    time."""
    target_row = next((r for r in rows if r["method"] == "collocation"), None)
    target = target_row.get(metric) if target_row else None
    for row in rows:
        if target is None:
            row["time_to_target_s"] = None
            continue
        if row is target_row:
            row["time_to_target_s"] = row.get("train_time_s")
            continue
        hit = [t for t, err in row.get("curve", []) if err is not None and err <= target]
        final = row.get(metric)
        if not hit and final is not None and final <= target and not row.get("curve"):
            hit = [row.get("train_time_s")]
        row["time_to_target_s"] = hit[0] if hit else None


def _meta(cfg: CompareConfig, system: Any, split: Any) -> dict[str, Any]:
    import torch

    from .device import resolve_device

    return {
        "preset": system.preset,
        "quick": cfg.quick,
        "seed": cfg.seed,
        "noise": 0.0 if cfg.noise is None else cfg.noise,
        "epochs_override": cfg.epochs,
        "budget_s": cfg.budget_s,
        "device": str(resolve_device(cfg.device)),
        "threads": torch.get_num_threads(),
        "n_train": split.train.n_samples,
        "n_total": split.full.n_samples,
        "dt": float(split.full.t[1] - split.full.t[0]) if split.full.n_samples > 1 else None,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 1e4 else f"{x:.3e}"
    return str(x)


def _summary_line(row: dict[str, Any]) -> str:
    return (
        f"{row['method']}: {row['status']}, train {_fmt(row.get('train_time_s'))} s, "
        f"epochs {_fmt(row.get('epochs'))}, train MSE {_fmt(row.get('train_mse'))}, "
        f"test MSE {_fmt(row.get('test_mse'))}"
        + (
            f", test-road a RMSE {_fmt(row.get('test_road_rmse'))}"
            if "test_road_rmse" in row
            else ""
        )
        + (f" ({row['message']})" if row["status"] != "success" and row.get("message") else "")
    )


def markdown(report: dict[str, Any]) -> str:
    """The report as a Markdown table (the scenario's columns, if the problem has one)."""
    meta = report["meta"]
    scenario = load_scenario(report["problem"])
    columns = (
        scenario.COLUMNS if scenario is not None else tuple(zip(COLUMNS, _HEADERS, strict=True))
    )
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
        note = row.get("message", "") if row["status"] != "success" else ""
        lines.append(
            "| "
            + " | ".join(
                [_fmt(row.get(c)) for c, _ in columns] + [note.replace("|", "/").replace("\n", " ")]
            )
            + " |"
        )
    lines += ["", f"{'MSE' if scenario is None else 'Errors'}: {meta['mse']}.", ""]
    return "\n".join(lines)


_HEADERS = (
    "method",
    "status",
    "train time [s]",
    "epochs",
    "train MSE",
    "test MSE",
    "params",
    "time to collocation's test MSE [s]",
)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(val) for k, val in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(val) for val in x]
    if isinstance(x, float):
        return _finite_or_none(x)
    if hasattr(x, "item"):  # numpy scalars
        return _jsonable(x.item())
    return x


def write_report(report: dict[str, Any], out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``compare.json`` (strict JSON: non-finite numbers become null) and
    ``compare.md`` into ``out_dir`` (created if needed); returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    js, md = out / "compare.json", out / "compare.md"
    atomic_write_text(js, json.dumps(_jsonable(report), indent=2, allow_nan=False) + "\n")
    atomic_write_text(md, markdown(report))
    return js, md


def parse_methods(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"fnode,mbdnode"`` -> ("fnode", "mbdnode"), each checked against the registry."""
    names = [s.strip() for s in text.split(",")] if isinstance(text, str) else list(text)
    names = [n for n in names if n]
    if not names:
        raise ValueError("methods must name at least one method")
    for n in names:
        v.choice("method", n, registry.available())
    return tuple(names)
