"""The reproduction report: the seed papers' tables beside the stored runs, as Markdown.

The stored runs live in a results directory with one folder per run, holding the run's
``compare.json`` (``scripts/compare.py``) or ``result.json`` (``scripts/train_collocation.py``),
the layout ``bash benchmarks/reproduce.sh NAME`` writes into ``runs/reproduce``. Each table of
:mod:`collocnode.reproduction.published` becomes one block of the document between the markers
``<!-- generated: KEY -->`` and ``<!-- end generated: KEY -->``; everything outside the blocks
is left as it is. Every number in a block comes from a run's JSON file or from the paper.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..tools.io import atomic_write_text
from .published import TABLES, Row, Table

RESULT_FILES = ("compare.json", "result.json", "stable_time.json", "authors_code.json")


@dataclass(frozen=True)
class StoredRun:
    """One run's JSON file: ``data`` as loaded, ``name`` its folder."""

    name: str
    data: Mapping[str, Any]

    @property
    def meta(self) -> Mapping[str, Any]:
        """The run's record: ``compare.json``'s ``meta``, or the top level of the other files."""
        return self.data.get("meta", self.data)

    @property
    def command(self) -> str | None:
        return self.meta.get("command")

    @property
    def machine(self) -> str | None:
        return self.meta.get("machine")

    @property
    def created(self) -> str | None:
        return self.meta.get("created")

    @property
    def load(self) -> float | None:
        """The 1-minute load average when the run started (None if not recorded)."""
        return self.meta.get("load_at_start")

    def method_row(self, method: str) -> Mapping[str, Any] | None:
        for row in self.data.get("rows", ()):
            if row.get("method") == method:
                return row
        return None

    def authors_entry(self, method: str, test_case: str) -> Mapping[str, Any] | None:
        """The entry of ``authors_code.json`` for one method on one of the authors' cases."""
        for entry in self.data.get("runs", ()):
            if entry.get("method") == method and entry.get("test_case") == test_case:
                return entry
        return None


def load_run(root: Path, name: str) -> StoredRun | None:
    """The stored run ``root/name`` (None if it has no result file). A file that is not a JSON
    object raises a ValueError naming it."""
    for filename in RESULT_FILES:
        path = Path(root) / name / filename
        if path.is_file():
            try:
                data = json.loads(path.read_text())
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path} is not valid JSON: {exc}") from None
            if not isinstance(data, dict):
                raise ValueError(f"{path} must hold a JSON object, got {type(data).__name__}")
            return StoredRun(name, data)
    return None


def _sci(x: Any) -> str:
    """An error in the papers' notation, two significant digits: ``8.0e-1``, ``2.2e0``."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    mantissa, _, exponent = f"{float(x):.1e}".partition("e")
    return f"{mantissa}e{int(exponent)}"


def _num(x: Any) -> str:
    """Two significant digits; the papers' notation below 1e-2 and from 1e4 on."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if x != 0 and (abs(x) < 1e-2 or abs(x) >= 1e4):
        return _sci(x)
    return f"{x:.2g}" if abs(x) < 1 else f"{x:.3g}"


def _as_printed(x: float | None) -> str:
    """A published number as the paper prints it."""
    return "–" if x is None else f"{x:g}"


def _seconds(x: Any) -> str:
    return "–" if x is None else f"{float(x):.1f}"


def _ratio(ours: Any, paper: float | None) -> str:
    """ours / paper, or a dash where either is missing."""
    if ours is None or paper is None or not paper:
        return "–"
    r = float(ours) / paper
    return f"{r:.2g}" if r < 10 else f"{r:.0f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(header: Sequence[str], lines: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in line) + " |" for line in lines]
    return out


def _authors_cell(row: Row, method: str, runs: Mapping[str, StoredRun | None]) -> str:
    """The authors' code's whole-trajectory MSE here, or why there is none."""
    if row.authors is None:
        return "–"
    name, case = row.authors
    stored = runs.get(name)
    if stored is None:
        return "no stored run"
    entry = stored.authors_entry(method, case)
    if entry is None:  # a method of the paper's not run here, or one the paper does not have
        return "not run here" if method in row.published else "–"
    if entry.get("full_mse") is None:
        return str(entry.get("status", "?"))
    return _sci(entry["full_mse"])


def _has_authors(table: Table) -> bool:
    return any(row.authors is not None for row in table.rows)


def _compare_lines(
    table: Table, row: Row, run: StoredRun | None, runs: Mapping[str, StoredRun | None]
) -> list[list[str]]:
    # the paper's methods, then any other method the run trained (e.g. collocation)
    methods = [m for m in table.methods if m in row.published]
    if run is not None:
        methods += [r["method"] for r in run.data.get("rows", ()) if r.get("method") not in methods]
    lines = []
    for k, method in enumerate(methods):
        first = k == 0
        label = row.system if first else ""
        note = (row.note or "yes") if first else ""
        paper = row.published.get(method)
        paper_time = _as_printed(row.train_time_s.get(method))
        r = run.method_row(method) if run else None
        authors = [_authors_cell(row, method, runs)] if _has_authors(table) else []
        if r is None:
            why = "no stored run" if run is None else "not in the run"
            lines.append(
                [label, method, _sci(paper), why, "–", *authors, "–", paper_time, "–", "–", note]
            )
            continue
        status = r.get("status", "?")
        metric = row.metric or table.metric
        ours = r.get(metric)  # None where the model could not be scored
        lines.append(
            [
                label,
                method,
                _sci(paper),
                _sci(ours) if ours is not None else status,
                _ratio(ours, paper),
                *authors,
                _sci(r.get(metric.replace("full", "test"))),
                paper_time,
                _seconds(r.get("train_time_s")),
                status,
                note,
            ]
        )
    return lines


def _path(data: Mapping[str, Any], dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


def _iterations(d: Mapping[str, Any]) -> str:
    """IPOPT iterations, phase by phase for a multi-phase strategy (``150 + 150``)."""
    phases = d.get("phases") or {}
    counts = [
        v["iterations"] for v in phases.values() if isinstance(v, Mapping) and "iterations" in v
    ]
    return " + ".join(str(c) for c in counts) if len(counts) > 1 else _num(d.get("iterations"))


def _collocation_lines(table: Table, row: Row, run: StoredRun | None) -> list[str]:
    paper = row.published
    iters = f" / {_num(paper['iterations'])}" if "iterations" in paper else ""
    paper_text = f"{_as_printed(paper.get('total_s'))} s{iters}"
    note = row.note or "yes"
    if run is None:
        return [
            row.system,
            paper_text,
            "no stored run",
            "–",
            "–",
            *("–" for _ in table.columns),
            note,
        ]
    d = run.data
    total = (d.get("wall_time_s") or {}).get("total")
    return [
        row.system,
        paper_text,
        f"{_seconds(total)} s / {_iterations(d)}",
        _ratio(total, paper.get("total_s")),
        str(d.get("status", "?")),
        *(_num(_path(d, path)) for _, path in table.columns),
        note,
    ]


def _stable_time_lines(row: Row, run: StoredRun | None) -> list[str]:
    paper = row.published
    paper_text = (
        f"{_as_printed(paper['median'])} ({_as_printed(paper['min'])}–{_as_printed(paper['max'])})"
    )
    found = [
        r for r in (run.data.get("results", ()) if run else ()) if r.get("system") == row.system
    ]
    if not found:
        why = "no stored run" if run is None else "not in the run"
        return [row.system, _as_printed(paper["trial_length"]), paper_text, why, "–", "–", "–"]
    result = found[0]
    node, snode = result["summary"]["NODE"], result["summary"]["SNODE"]
    st = node["stable_time"]
    epochs = sorted({s["models"]["NODE"]["epochs"] for s in result["seeds"]})
    return [
        row.system,
        _seconds(result["seeds"][0]["horizon_s"]),
        paper_text,
        f"{_seconds(st['median'])} ({_seconds(st['min'])}–{_seconds(st['max'])})",
        f"{node['diverged']} / {node['trials']}",
        f"{snode['diverged']} / {snode['trials']}",
        ", ".join(str(e) for e in epochs),
    ]


def _runs_list(names: Sequence[str], runs: Mapping[str, StoredRun | None]) -> list[str]:
    out = ["Runs (`bash benchmarks/reproduce.sh NAME` reruns one into `runs/reproduce/NAME`):", ""]
    for name in dict.fromkeys(names):  # each run once, in order
        run = runs[name]
        if run is None:
            out.append(f"- `{name}`: not stored.")
            continue
        when = f", {run.created}" if run.created else ""
        when += f", load {run.load:g} at start" if run.load is not None else ""
        out.append(
            f"- `{name}`: `{run.command or 'command not recorded'}` "
            f"({run.machine or 'machine not recorded'}{when})"
        )
    return out


def render_table(table: Table, root: Path) -> str:
    """The Markdown block of ``table`` from the runs under ``root``."""
    names = [row.run for row in table.rows]
    names += [row.authors[0] for row in table.rows if row.authors is not None]
    runs = {name: load_run(root, name) for name in names}
    out = [f"**{table.title}.**", ""]
    if table.kind == "compare":
        authors = ("authors' code here, whole trajectory",) if _has_authors(table) else ()
        header = (
            "system",
            "method",
            "paper",
            "ours, whole trajectory",
            "ratio",
            *authors,
            "ours, extrapolation window",
            "paper train time [s]",
            "ours train time [s]",
            "status",
            "like for like",
        )
        lines = [
            line for row in table.rows for line in _compare_lines(table, row, runs[row.run], runs)
        ]
    elif table.kind == "collocation":
        header = (
            "case",
            "paper total (/ iterations)",
            "ours total / iterations",
            "time ratio",
            "status",
            *(title for title, _ in table.columns),
            "like for like",
        )
        lines = [_collocation_lines(table, row, runs[row.run]) for row in table.rows]
    elif table.kind == "stable_time":
        header = (
            "system",
            "trial length [s]",
            "paper NODE median (min–max)",
            "ours NODE median (min–max)",
            "ours NODE diverged / trials",
            "ours SNODE diverged / trials (paper: none)",
            "ours epochs (paper: 1000)",
        )
        lines = [_stable_time_lines(row, runs[row.run]) for row in table.rows]
    else:
        raise ValueError(f"table {table.key!r} has unknown kind {table.kind!r}")
    out += _table(header, lines)
    out += ["", *_runs_list(names, runs)]
    return "\n".join(out) + "\n"


def _markers(key: str) -> tuple[str, str]:
    return f"<!-- generated: {key} -->", f"<!-- end generated: {key} -->"


def update_document(text: str, root: Path, tables: Sequence[Table] = TABLES) -> str:
    """``text`` with every table's generated block rewritten from the runs under ``root``.

    Raises:
        ValueError: a table's markers are missing, repeated or out of order (naming the key).
    """
    for table in tables:
        begin, end = _markers(table.key)
        if text.count(begin) != 1 or text.count(end) != 1:
            raise ValueError(
                f"the document needs exactly one {begin!r} and one {end!r} line "
                f"(found {text.count(begin)} and {text.count(end)})"
            )
        i, j = text.index(begin) + len(begin), text.index(end)
        if j < i:
            raise ValueError(f"{end!r} comes before {begin!r}")
        text = text[:i] + "\n" + render_table(table, root) + text[j:]
    return text


def regenerate(document: Path, root: Path, check: bool = False) -> bool:
    """Rewrite ``document``'s generated blocks from the runs under ``root``; with ``check``,
    write nothing. Returns True when the document was already up to date."""
    document = Path(document)
    old = document.read_text()
    new = update_document(old, Path(root))
    if new != old and not check:
        atomic_write_text(document, new)
    return new == old


def stale_tables(document: Path, root: Path, tables: Sequence[Table] = TABLES) -> list[str]:
    """The keys of the tables whose generated block in ``document`` differs from what the runs
    under ``root`` give (empty when the document is current)."""
    text = Path(document).read_text()
    return [t.key for t in tables if update_document(text, Path(root), [t]) != text]
