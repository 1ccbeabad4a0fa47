"""The reproduction report: the seed papers' tables beside the stored runs, as Markdown.

The stored runs live in a results directory with one folder per run, holding the run's
``compare.json`` (``scripts/compare.py``) or ``result.json`` (``scripts/train_collocation.py``),
the layout ``bash benchmarks/reproduce.sh NAME`` writes into ``runs/reproduce``. A run repeated
with other seeds keeps each repetition in a subfolder ``seedK/`` of the same folder (and may keep
one at its top); a row then shows the median over the seeds and their range, ``median
(min–max)``, gives the width of that range where its ratios to the paper cover 1, and names each
seed of its table's protocol that is not stored (with the row's reason for one that did not
finish). Each
table of :mod:`reproduction.published` becomes one block of the document between the
markers ``<!-- generated: KEY -->`` and ``<!-- end generated: KEY -->``; everything outside the
blocks is left as it is (:mod:`reproduction.prose` accounts for its numbers). Every number in a
block comes from a run's JSON file or from the paper; the blocks of the kinds ``"authors_code"``
and ``"not_reproduced"`` are written by :mod:`reproduction.findings`.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collocnode.tools._io import atomic_write_text

from .published import TABLES, Row, Table

RESULT_FILES = (
    "compare.json",
    "result.json",
    "stable_time.json",
    "authors_code.json",
    "epoch_time.json",
    "discovery.json",
    "two_body.json",
    "solver_timing.json",
)
# the subfolders of a run folder that hold its repetitions with other seeds
SEED_FOLDERS = "seed*"
# a seed's methods trained on a device of their own (``seed1-cuda/``): benchmarks/reproduce.sh
# runs them, a row's LSTM, with the entry ``<name>-lstm``
DEVICE_FOLDER = re.compile(r"seed\d+-\w+")
DEVICE_ENTRY_SUFFIX = "-lstm"
# statuses of a stored run that was cut before it finished (its time is a lower bound)
UNFINISHED_STATUSES = frozenset({"time_limit"})
# a seed's folder of the authors' code (a record with the commit of their code) holds their
# command trained with another seed, by the entry ``<name>-seeds``
AUTHORS_SEEDS_SUFFIX = "-seeds"


@dataclass(frozen=True)
class StoredRun:
    """One run's JSON file: ``data`` as loaded, ``name`` its run folder, ``folder`` the
    subfolder holding it (``"seed1"``, ``"seed1-cuda"``; ``""`` at the top)."""

    name: str
    data: Mapping[str, Any]
    folder: str = ""

    @property
    def entry(self) -> str:
        """The entry of benchmarks/reproduce.sh that reruns it: the run's name,
        ``<name>-lstm`` for a run in a device's folder, ``<name>-seeds`` for the authors' code
        in a seed's folder."""
        if DEVICE_FOLDER.fullmatch(self.folder):
            return self.name + DEVICE_ENTRY_SUFFIX
        if self.folder and "code_commit" in self.data:
            return self.name + AUTHORS_SEEDS_SUFFIX
        return self.name

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

    @property
    def device(self) -> str:
        """The device its PyTorch methods trained on: ``compare.json``'s ``meta.device``
        ("cpu" where the file records none)."""
        device = self.meta.get("device")
        return device if isinstance(device, str) and device else "cpu"

    @property
    def seed(self) -> int | None:
        """The run's seed: ``compare.json``'s ``meta.seed``, ``result.json``'s
        ``settings.seed`` (None where the file records none)."""
        seed = self.meta.get("seed")
        if seed is None:
            seed = (self.data.get("settings") or {}).get("seed")
        return seed if isinstance(seed, int) else None

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


def _load_file(folder: Path, name: str, subfolder: str = "") -> StoredRun | None:
    for filename in RESULT_FILES:
        path = folder / filename
        if path.is_file():
            try:
                data = json.loads(path.read_text())
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path} is not valid JSON: {exc}") from None
            if not isinstance(data, dict):
                raise ValueError(f"{path} must hold a JSON object, got {type(data).__name__}")
            return StoredRun(name, data, subfolder)
    return None


def load_runs(root: Path, name: str) -> list[StoredRun]:
    """Every stored file of run ``root/name``: its result file and those of its subfolders
    named ``seed...`` (``seed1/``; ``seed1-cuda/`` for methods of seed 1 run elsewhere),
    ordered by seed (empty if there is none). A file that is not a JSON object raises a
    ValueError naming it."""
    folder = Path(root) / name
    folders = [folder, *sorted(p for p in folder.glob(SEED_FOLDERS) if p.is_dir())]
    runs = [
        run
        for f in folders
        if (run := _load_file(f, name, "" if f == folder else f.name)) is not None
    ]
    return sorted(runs, key=lambda run: (run.seed is None, run.seed or 0))


def _one_per_seed(stored: Sequence[StoredRun], what: str) -> None:
    """A ValueError naming the run if two of ``stored`` have the same seed (for ``what``)."""
    seeds = [run.seed for run in stored if run.seed is not None]
    twice = sorted({s for s in seeds if seeds.count(s) > 1})
    if twice:
        raise ValueError(f"run {stored[0].name!r} holds more than one {what} with seed {twice[0]}")


def load_run(root: Path, name: str) -> StoredRun | None:
    """The stored run ``root/name`` with the lowest seed (None if it has none); see
    :func:`load_runs`."""
    runs = load_runs(root, name)
    return runs[0] if runs else None


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


def _ratio_text(r: float) -> str:
    return f"{r:.2g}" if r < 10 else f"{r:.0f}"


def _ratio(ours: Any, paper: float | None) -> str:
    """ours / paper, or a dash where either is missing."""
    if ours is None or paper is None or not paper:
        return "–"
    return _ratio_text(float(ours) / paper)


@dataclass(frozen=True)
class Spread:
    """One figure over the seeds of a row: the values of the seeds that have one."""

    values: tuple[float, ...]

    @classmethod
    def of(cls, values: Sequence[Any]) -> Spread:
        found = []
        for x in values:
            if x is None or isinstance(x, bool) or not isinstance(x, (int, float)):
                continue
            if math.isfinite(float(x)):
                found.append(float(x))
        return cls(tuple(found))

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    def covers(self, x: float) -> bool:
        """Whether ``x`` lies in the range of two or more values (within the seeds' noise)."""
        return len(self.values) > 1 and min(self.values) <= x <= max(self.values)

    def text(self, fmt: Callable[[Any], str]) -> str:
        """``fmt(value)`` for one value, ``fmt(median) (fmt(min)–fmt(max))`` for several."""
        if not self.values:
            return "–"
        if len(self.values) == 1:
            return fmt(self.values[0])
        return f"{fmt(self.median)} ({fmt(min(self.values))}–{fmt(max(self.values))})"


def _ratio_spread(ours: Spread, paper: float | None) -> str:
    """ours / paper over the seeds; where the seeds' range covers 1, that range's width (its
    largest over its smallest ratio) beside it."""
    if not ours.values or paper is None or not paper:
        return "–"
    ratios = Spread(tuple(x / paper for x in ours.values))
    text = ratios.text(_ratio_text)
    return f"{text}, {_covers_one(ratios)}" if ratios.covers(1.0) else text


def _covers_one(ratios: Spread) -> str:
    """What a range of ratios that covers 1 says: how wide it is."""
    low, high = min(ratios.values), max(ratios.values)
    width = _ratio_text(high / low) if low > 0 else "unbounded"
    return f"the seeds' {width}× range covers 1"


def _time_ratio(ours: Spread, paper: float | None) -> str:
    """ours / paper training time over the seeds."""
    if not ours.values or not paper:
        return "–"
    return Spread(tuple(x / paper for x in ours.values)).text(_ratio_text)


def _statuses(statuses: Sequence[str]) -> str:
    """``success`` when every seed ended alike, else ``success ×2, budget ×1``."""
    counts = Counter(statuses)
    if len(counts) == 1:
        return statuses[0]
    return ", ".join(f"{status} ×{n}" for status, n in counts.items())


def _seeds_cell(
    runs: Sequence[StoredRun],
    expected: Sequence[int] = (),
    unfinished: Mapping[int, str] | None = None,
) -> str:
    """The stored seeds; where the protocol's ``expected`` seeds are not all stored, how many
    are and why each other one is missing (its ``unfinished`` reason, or not stored)."""
    stored = [r.seed for r in runs]
    text = ", ".join("?" if s is None else str(s) for s in stored) or "–"
    missing = [s for s in expected if s not in stored]
    if not missing or None in stored:  # a run that records no seed may be any of them
        return text
    why = [f"seed {s} {(unfinished or {}).get(s, 'not stored')}" for s in missing]
    return f"{text} ({len(expected) - len(missing)} of {len(expected)} seeds; {'; '.join(why)})"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(header: Sequence[str], lines: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in line) + " |" for line in lines]
    return out


Runs = Mapping[str, Sequence[StoredRun]]


def _authors_cell(row: Row, method: str, runs: Runs) -> str:
    """The authors' code's whole-trajectory MSE here (the median and range where it ran with
    several seeds), or why there is none."""
    if row.authors is None:
        return "–"
    name, case = row.authors
    stored = runs.get(name)
    if not stored:
        return "no stored run" if method in row.published else "–"
    theirs = row.authors_as.get(method, method)
    entries = [e for run in stored if (e := run.authors_entry(theirs, case)) is not None]
    if not entries:  # a method of the paper's not run here, or one the paper does not have
        return "not run here" if method in row.published else "–"
    scored = _scored(entries, "full_mse")  # one run: its error, or its status without one
    scored = f"{scored}, {len(entries)} seeds" if len(entries) > 1 else scored
    # the arrays the authors committed, scored the same way (MBD-NODE's runner scores them)
    committed = Spread.of([(e.get("committed") or {}).get("full_mse") for e in entries])
    return f"{scored}; committed arrays {committed.text(_sci)}" if committed.values else scored


def _has_authors(table: Table) -> bool:
    return any(row.authors is not None for row in table.rows)


def _scored(rows: Sequence[Mapping[str, Any]], metric: str) -> str:
    """The seeds' median (range) of ``metric``, and the statuses of the seeds without one."""
    spread = Spread.of([r.get(metric) for r in rows])
    missing = [str(r.get("status", "?")) for r in rows if r.get(metric) is None]
    if not spread.values:
        return _statuses(missing)
    text = spread.text(_sci)
    return f"{text}; {_statuses(missing)}" if missing else text


def _compare_lines(
    table: Table, row: Row, stored: Sequence[StoredRun], runs: Runs
) -> list[list[str]]:
    # the paper's methods, then any other method the runs trained (e.g. collocation)
    methods = [m for m in table.methods if m in row.published or m in row.train_time_s]
    for run in stored if table.others and row.others else ():
        methods += [r["method"] for r in run.data.get("rows", ()) if r.get("method") not in methods]
    lines = []
    for k, method in enumerate(methods):
        first = k == 0
        note = (row.note or "yes") if first else ""
        if first and len({_without_seed(run.command) for run in stored}) > 1:
            note += "; its seeds ran with different commands (the runs below)"
        found = [(run, r) for run in stored if (r := run.method_row(method)) is not None]
        # a method trained on several devices gets a line per device, the CPU's first
        devices = sorted({run.device for run, _ in found}, key=lambda d: (d != "cpu", d))
        for j, device in enumerate(devices or ["cpu"]):
            on_device = [(run, r) for run, r in found if run.device == device]
            _one_per_seed([run for run, _ in on_device], f"{method} row")
            lines.append(
                _method_line(
                    table,
                    row,
                    method,
                    on_device,
                    label=row.system if first and j == 0 else "",
                    name=method if device == "cpu" else f"{method} on {device}",
                    authors=_authors_cell(row, method, runs) if j == 0 else "–",
                    note=note if j == 0 else "",
                    empty="no stored run" if not stored else "not in the run",
                )
            )
    return lines


def _method_line(
    table: Table,
    row: Row,
    method: str,
    found: Sequence[tuple[StoredRun, Mapping[str, Any]]],
    *,
    label: str,
    name: str,
    authors: str,
    note: str,
    empty: str,
) -> list[str]:
    """One line of a compare table: ``method``'s ``(run, row)`` pairs ``found`` over the seeds
    against the paper's figures; ``empty`` says why a method without runs has none."""
    metric = row.metric or table.metric
    paper = row.published.get(method)
    paper_time = _as_printed(row.train_time_s.get(method))
    authors_cells = [authors] if _has_authors(table) else []
    time_ratio_cells = ["–"] if table.time_ratio else []
    if not found:
        return [
            label,
            name,
            _sci(paper),
            empty,
            "–",
            "–",
            *authors_cells,
            "–",
            *("–" for _ in table.columns),
            paper_time,
            "–",
            *time_ratio_cells,
            "–",
            note,
        ]
    rows = [r for _, r in found]
    ours = Spread.of([r.get(metric) for r in rows])
    times = Spread.of([r.get("train_time_s") for r in rows])
    if table.time_ratio:
        time_ratio_cells = [_time_ratio(times, row.train_time_s.get(method))]
    return [
        label,
        name,
        _sci(paper),
        _scored(rows, metric),
        _ratio_spread(ours, paper),
        _seeds_cell([run for run, _ in found], table.seeds, row.unfinished),
        *authors_cells,
        _scored(rows, metric.replace("full", "test")) if ours.values else "–",
        *(Spread.of([_path(r, path) for r in rows]).text(_num) for _, path in table.columns),
        paper_time,
        times.text(_seconds),
        *time_ratio_cells,
        _statuses([str(r.get("status", "?")) for r in rows]),
        note,
    ]


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


def _collocation_lines(table: Table, row: Row, stored: Sequence[StoredRun]) -> list[str]:
    paper = row.published
    iters = f" / {_num(paper['iterations'])}" if "iterations" in paper else ""
    paper_text = f"{_as_printed(paper['total_s'])} s{iters}" if "total_s" in paper else "–"
    note = row.note or "yes"
    if not stored:
        return [
            row.system,
            paper_text,
            "no stored run",
            "–",
            "–",
            "–",
            *("–" for _ in table.columns),
            note,
        ]
    _one_per_seed(stored, "result")
    totals = Spread.of([(run.data.get("wall_time_s") or {}).get("total") for run in stored])
    return [
        row.system,
        paper_text,
        f"{totals.text(_seconds)} s / {'; '.join(_iterations(run.data) for run in stored)}",
        _collocation_time_ratio(table, row, stored),
        _seeds_cell(stored, table.seeds, row.unfinished),
        _statuses([str(run.data.get("status", "?")) for run in stored]),
        *(
            Spread.of([_path(run.data, path) for run in stored]).text(_num)
            for _, path in table.columns
        ),
        note,
    ]


def _unfinished_seeds(table: Table, row: Row, stored: Sequence[StoredRun]) -> list[int]:
    """The protocol's seeds of ``row`` that did not finish: stored with an unfinished status,
    or declared in the row's ``unfinished`` without a stored run."""
    seeds = {run.seed for run in stored}
    declared = [s for s in table.seeds if s in row.unfinished and s not in seeds]
    cut = [run.seed for run in stored if run.data.get("status") in UNFINISHED_STATUSES]
    return sorted(s for s in (*declared, *cut) if s is not None)


def _collocation_time_ratio(table: Table, row: Row, stored: Sequence[StoredRun]) -> str:
    """Ours over the paper's total time over the finished seeds; with seeds that did not
    finish, the median counting them too, a lower bound: a stored one at the time it had run,
    a declared one (no stored run) as slower than every stored seed."""
    paper = row.published.get("total_s")
    if not paper:
        return "–"

    def ratio(run: StoredRun) -> float | None:
        total = (run.data.get("wall_time_s") or {}).get("total")
        return None if total is None else total / paper

    unfinished = _unfinished_seeds(table, row, stored)
    finished = Spread.of([ratio(run) for run in stored if run.seed not in unfinished])
    text = finished.text(_ratio_text)
    if not unfinished:
        return text
    bounds = Spread.of([ratio(run) for run in stored if run.seed in unfinished]).values
    declared = [s for s in unfinished if s not in {run.seed for run in stored}]
    median = statistics.median([*finished.values, *bounds, *(math.inf for _ in declared)])
    names = ", ".join(str(s) for s in unfinished)
    bound = "unbounded" if math.isinf(median) else f"at least {_ratio_text(median)}"
    return f"{text} over the finished seeds; {bound} with seed {names}, which did not finish"


def _stable_time_result(
    row: Row, stored: Sequence[StoredRun]
) -> tuple[StoredRun | None, Mapping[str, Any] | None]:
    """The stored ``stable_time.json`` of a row and its result for the row's system (None for
    either that is missing)."""
    run = stored[0] if stored else None
    found = [
        r for r in (run.data.get("results", ()) if run else ()) if r.get("system") == row.system
    ]
    return run, (found[0] if found else None)


def _stable_time_lines(row: Row, stored: Sequence[StoredRun]) -> list[str]:
    paper = row.published
    paper_text = (
        f"{_as_printed(paper['median'])} ({_as_printed(paper['min'])}–{_as_printed(paper['max'])})"
    )
    run, result = _stable_time_result(row, stored)
    if result is None:
        why = "no stored run" if run is None else "not in the run"
        return [row.system, _as_printed(paper["trial_length"]), paper_text, why, "–", "–", "–", "–"]
    # a row may train the NODE alone (Table 3 is its stable time): no SNODE column then
    node, snode = result["summary"]["NODE"], result["summary"].get("SNODE")
    st = node["stable_time"]
    epochs = sorted({s["models"]["NODE"]["epochs"] for s in result["seeds"]})
    seeds = [s.get("seed", "?") for s in result["seeds"]]
    return [
        row.system,
        _seconds(result["seeds"][0]["horizon_s"]),
        paper_text,
        f"{_seconds(st['median'])} ({_seconds(st['min'])}–{_seconds(st['max'])})",
        f"{node['diverged']} / {node['trials']}",
        "not in the run" if snode is None else f"{snode['diverged']} / {snode['trials']}",
        ", ".join(str(s) for s in seeds),
        ", ".join(str(e) for e in epochs),
    ]


def _stable_time_model_lines(
    table: Table, row: Row, stored: Sequence[StoredRun]
) -> list[list[str]]:
    """One line per model of ``table.methods`` that the row's ``claims`` name: what the paper
    shows, then ours over the trials of the stored run (stable time, divergences, time to
    E ≥ 1, E and the constraint drift at the end, training)."""
    from .findings import stable_time_verdict, verdict_cell  # the rules of "Not reproduced"

    run, result = _stable_time_result(row, stored)
    lines = []
    for label in (m for m in table.methods if m in row.claims):
        claim = row.claims[label]
        summary = result["summary"].get(label) if result else None
        if summary is None:
            why = "no stored run" if run is None else "not in the run"
            lines.append([row.system, label, claim, why, *["–"] * 7])
            continue
        seeds = result["seeds"]
        paper_horizon = ((run.data.get("paper_table3") or {}).get(row.system) or {}).get(
            "trial_length"
        )
        verdict = stable_time_verdict(
            row.expect.get(label),
            summary,
            result["summary"].get("NODE"),
            seeds[0]["horizon_s"],
            paper_horizon,
        )
        fits = [s["models"][label] for s in seeds]
        st = summary["stable_time"]
        lines.append(
            [
                row.system,
                label,
                claim,
                _seconds(seeds[0]["horizon_s"]),
                f"{summary['diverged']} / {summary['trials']}",
                f"{_seconds(st['median'])} ({_seconds(st['min'])}–{_seconds(st['max'])})",
                _seconds(summary["time_to_error_1"]["median"]),
                _sci(summary.get("median_error_end")),
                _sci(summary.get("median_constraint_error_end")),
                ", ".join(f"{f['epochs']} in {_seconds(f['train_time_s'])} s" for f in fits),
                verdict_cell(verdict),
            ]
        )
    return lines


def _significant(x: float | None, digits: int) -> str:
    return "–" if x is None else f"{x:.{digits}g}"


def _three(x: float | None) -> str:
    return _significant(x, 3)


def _two_places(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _epoch_time_lines(row: Row, stored: Sequence[StoredRun]) -> list[str]:
    found = [
        r for r in (stored[0].data.get("results", ()) if stored else ()) if r["case"] == row.system
    ]
    if not found:
        why = "no stored run" if not stored else "not in the run"
        return [row.system, "–", "–", why, "–", "–", "–", "–", "–", "–", "–"]
    r = found[0]
    counted = f"{len(r['ours_epochs']['cpu_s'])} / {len(r['theirs_epochs']['cpu_s'])}"
    preset = f" ({r['preset']})" if r.get("preset") else ""
    return [
        row.system,
        r["method"],
        f"{r['problem']}{preset}; theirs: {r['theirs'][0]} {r['theirs'][1]}",
        _three(r["ours_median_cpu_s"]),
        _three(r["theirs_median_cpu_s"]),
        _two_places(r["ratio_cpu_s"]),
        _three(r["ours_median_wall_s"]),
        _three(r["theirs_median_wall_s"]),
        _two_places(r["ratio_wall_s"]),
        counted,
        r.get("note") or "–",
    ]


def _without_seed(command: str | None) -> str | None:
    """The command without its ``--seed`` and ``--out`` arguments: what seeds of one run share."""
    if command is None:
        return None
    return re.sub(r"\s--(?:seed|out)(?:=|\s+)\S+", "", command)


def _run_line(name: str, seeds: str, group: Sequence[StoredRun]) -> str:
    first = group[0]
    created = sorted(r.created for r in group if r.created)  # ISO 8601: sorts by time
    loads = Spread.of([r.load for r in group])
    when = f", {created[0]}" if created else ""
    when += f" to {created[-1]}" if len(created) > 1 else ""
    if loads.values:
        when += f", load {loads.text(lambda x: f'{x:g}')} at start"
    # a resumed benchmark's units taken from its store: computed by an earlier run, so its
    # machine and times may differ from this record's
    reused = [unit for r in group for unit in r.meta.get("units_reused") or ()]
    if reused:
        when += f"; {', '.join(reused)} stored by an earlier run"
    return (
        f"- `{name}`{seeds}: `{first.command or 'command not recorded'}` ({_machines(group)}{when})"
    )


def _machines(group: Sequence[StoredRun]) -> str:
    """The machine the runs ran on; where seeds ran on different machines, each with its
    seeds (their times are then not from one machine)."""
    seeds: dict[str, list[int]] = {}
    for run in group:
        seeds.setdefault(run.machine or "machine not recorded", []).extend(
            [run.seed] if run.seed is not None else []
        )
    if len(seeds) == 1:
        return next(iter(seeds))
    return "; ".join(
        f"{machine} (seed{'s' if len(ks) > 1 else ''} {', '.join(map(str, sorted(ks)))})"
        if ks
        else machine
        for machine, ks in seeds.items()
    )


def _single(stored: Sequence[StoredRun]) -> StoredRun | None:
    """The one stored run of a row whose tables read one run (discovery, parameters, solver
    timing); several seeds of such a run are refused rather than one chosen silently."""
    if len(stored) > 1:
        raise ValueError(
            f"run {stored[0].name!r} holds {len(stored)} seeds; this table reads one stored run"
        )
    return stored[0] if stored else None


def _support(errors: Mapping[str, Any] | None) -> str:
    """Whether the discovered support is the true one, naming what differs."""
    if errors is None:
        return "form not expressible"
    if errors.get("exact_support"):
        return "exact"
    parts = []
    if errors.get("spurious"):
        parts.append("spurious " + ", ".join(errors["spurious"]))
    if errors.get("missed"):
        parts.append("missed " + ", ".join(errors["missed"]))
    return "; ".join(parts) or "–"


def _discovery_lines(table: Table, row: Row, run: StoredRun | None) -> list[list[str]]:
    result = (run.data.get("systems") or {}).get(row.system) if run else None
    if result is None:
        why = "no stored run" if run is None else "not in the run"
        return [[row.system, "–", why, "–", "–", "–", "–", "–", "–", "–", row.note or "yes"]]
    from .findings import discovery_verdict, verdict_cell  # the rules of "Not reproduced"

    methods = result.get("methods", {})
    names = [m for m in table.methods if m in methods] + [
        m for m in methods if m not in table.methods
    ]
    lines = []
    for k, method in enumerate(names):
        r = methods[method]
        errors = r.get("coefficient_errors")
        field = r.get("vector_field_error") or {}
        coefficient = "–" if not errors else _num(errors.get("max_relative_error"))
        lines.append(
            [
                row.system if k == 0 else "",
                method,
                "; ".join(r.get("equations") or [r.get("error", "")]),
                _support(errors) if "coefficient_errors" in r else "–",
                coefficient,
                _num(field.get("box")),
                _num(field.get("trajectory")),
                _seconds(r.get("train_time_s")),
                _discovery_status(r),
                verdict_cell(discovery_verdict(row.expect.get(method), r, methods.get("sindy"))),
                (row.note or "yes") if k == 0 else "",
            ]
        )
    return lines


def _discovery_status(r: Mapping[str, Any]) -> str:
    """A discovery run's status, with its network's where that one did not succeed (the re-fit
    of the closed form may succeed from a network IPOPT stopped early)."""
    status, network = str(r.get("status", "?")), r.get("network_status")
    return status if network in (None, "success") else f"{status}; network: {network}"


def _parameter_lines(table: Table, row: Row, run: StoredRun | None) -> list[list[str]]:
    found = run.data.get("methods", {}) if run else {}
    paper = row.published
    lines = []
    for method in table.methods:
        r = found.get(method)
        cells = [
            _num(paper.get(f"{method}.force_mse")),
            _num(paper.get(f"{method}.cosine")),
            _num(paper.get(f"{method}.mass_ratio")),
        ]
        variants = [(method, r)]
        if method == "collocation" and r is not None:
            closed = r.get("closed_form")
            equation = "; ".join(closed.get("equations", [])) if closed else ""
            variants = [("collocation (network)", r.get("network"))]
            variants.append((f"collocation (closed form: {equation})", closed))
        for label, scores in variants:
            if scores is None:
                why = "no stored run" if run is None else "not in the run"
                ours = [why, "–", "–"]
            else:
                # four digits: ours lie within 1e-3 of 1 and 2, where two would print 1 and 2
                ours = [
                    _num(scores.get("force_mse")),
                    _significant(scores.get("cosine_similarity"), 4),
                    _significant(scores.get("mass_ratio"), 4),
                ]
            time_s = None if r is None else r.get("train_time_s")
            first = not lines
            lines.append(
                [
                    row.system if first else "",
                    label,
                    *cells,
                    *ours,
                    _seconds(time_s),
                    (row.note or "yes") if first else "",
                ]
            )
    return lines


def _solver_timing_lines(row: Row, run: StoredRun | None, first: bool) -> list[str]:
    """One length of one run; the row's note only on the first line of its run."""
    paper = row.published
    note = (row.note or "yes") if first else ""
    found = [
        r for r in (run.data.get("lengths", ()) if run else ()) if str(r.get("steps")) == row.system
    ]
    device = (run.data.get("config") or {}).get("device", "?") if run else "–"
    paper_cells = [
        _as_printed(paper.get("neurlp_s")),
        _as_printed(paper.get("rk4_s")),
        _ratio(paper.get("rk4_s"), paper.get("neurlp_s")),
        _as_printed(paper.get("neurlp_loss")),
        _as_printed(paper.get("rk4_loss")),
    ]
    if not found:
        why = "no stored run" if run is None else "not measured in the run"
        return [row.system, row.run, device, *paper_cells, why, "–", "–", "–", "–", note]
    r = found[0]
    qp, rk = r["neurlp"], r["rk4"]
    return [
        row.system,
        row.run,
        device,
        *paper_cells,
        _seconds(qp.get("time_s")),
        _seconds(rk.get("time_s")),
        _ratio(rk.get("time_s"), qp.get("time_s")),
        _num(qp.get("loss")),
        _num(rk.get("loss")),
        note,
    ]


def _runs_list(names: Sequence[str], runs: Runs) -> list[str]:
    out = ["Runs (`bash benchmarks/reproduce.sh NAME` reruns one into `runs/reproduce/NAME`):", ""]
    for name in dict.fromkeys(names):  # each run once, in order
        stored = runs[name]
        if not stored:
            out.append(f"- `{name}`: not stored.")
            continue
        # a run that records no seed (an authors' run with their published seed) on its own
        groups: dict[tuple[str, str | None, bool], list[StoredRun]] = {}
        for run in stored:
            key = (run.entry, _without_seed(run.command), run.seed is None)
            groups.setdefault(key, []).append(run)
        for (entry, _, _), group in groups.items():
            seeds = ""
            if len(stored) > 1 and any(r.seed is not None for r in group):
                listed = ", ".join(str(r.seed) for r in group)
                seeds = f" (seed {listed})" if len(group) == 1 else f" (seeds {listed})"
            out.append(_run_line(entry, seeds, group))
    return out


def render_table(table: Table, root: Path) -> str:
    """The Markdown block of ``table`` from the runs under ``root``."""
    if table.kind in ("authors_code", "not_reproduced"):
        from .findings import render_finding  # reads every table through the helpers here

        return render_finding(table, root)
    names = [row.run for row in table.rows]
    names += [row.authors[0] for row in table.rows if row.authors is not None]
    runs = {name: load_runs(root, name) for name in names}
    out = [f"**{table.title}.**", ""]
    out += _table(_header(table), _lines(table, runs))
    if any(len(stored) > 1 for stored in runs.values()):
        out += [
            "",
            "Several seeds: median (min–max) over them; where the seeds' range of ratios "
            "covers 1, the cell gives that range's width (its largest over its smallest ratio).",
        ]
    out += ["", *_runs_list(names, runs)]
    return "\n".join(out) + "\n"


#: the header of each kind of table whose columns do not depend on the table
_FIXED_HEADERS: dict[str, tuple[str, ...]] = {
    "stable_time": (
        "system",
        "trial length [s]",
        "paper NODE median (min–max)",
        "ours NODE median (min–max)",
        "ours NODE diverged / trials",
        "ours SNODE diverged / trials (paper: none)",
        "seeds",
        "ours epochs (paper: 1000)",
    ),
    "stable_time_models": (
        "system",
        "model",
        "the paper shows",
        "ours: trial length [s]",
        "diverged (E ≥ 10³) / trials",
        "stable time median (min–max) [s]",
        "median time to E ≥ 1 [s]",
        "median E at the end",
        "median constraint drift at the end",
        "epochs, training time",
        "the paper's claim here",
    ),
    "epoch_time": (
        "case",
        "method",
        "system; their code",
        "ours, CPU [s]",
        "theirs, CPU [s]",
        "ratio, CPU",
        "ours, wall [s]",
        "theirs, wall [s]",
        "ratio, wall",
        "epochs counted (ours / theirs)",
        "note",
    ),
    "discovery": (
        "system",
        "method",
        "discovered equations",
        "support",
        "largest coefficient error",
        "field error, box",
        "field error, on the trajectory",
        "train time [s]",
        "run status",
        "the paper's claim here",
        "paper",
    ),
    "parameters": (
        "case",
        "method",
        "paper force MSE",
        "paper cosine",
        "paper mass ratio",
        "ours force MSE",
        "ours cosine",
        "ours mass ratio",
        "ours train time [s]",
        "like for like",
    ),
    "solver_timing": (
        "steps",
        "run",
        "device",
        "paper QP [s]",
        "paper RK4 [s]",
        "paper RK4 / QP",
        "paper QP loss",
        "paper RK4 loss",
        "ours NeuRLP [s]",
        "ours RK4 [s]",
        "ours RK4 / NeuRLP",
        "ours NeuRLP loss",
        "ours RK4 loss",
        "like for like",
    ),
}


def _header(table: Table) -> tuple[str, ...]:
    """The column titles of ``table``: those of its kind, with its own extra columns."""
    if table.kind == "compare":
        authors = ("authors' code here, whole trajectory",) if _has_authors(table) else ()
        return (
            "system",
            "method",
            "paper",
            "ours, whole trajectory",
            "ratio",
            "seeds",
            *authors,
            "ours, extrapolation window",
            *(title for title, _ in table.columns),
            "paper train time [s]",
            "ours train time [s]",
            *(["time ratio"] if table.time_ratio else []),
            "status",
            "like for like",
        )
    if table.kind == "collocation":
        return (
            "case",
            "paper total (/ iterations)",
            "ours total / iterations",
            "time ratio",
            "seeds",
            "status",
            *(title for title, _ in table.columns),
            "like for like",
        )
    if table.kind in _FIXED_HEADERS:
        return _FIXED_HEADERS[table.kind]
    raise ValueError(f"table {table.key!r} has unknown kind {table.kind!r}")


def _lines(table: Table, runs: Runs) -> list[list[str]]:
    """The body of ``table``: its rows' lines (one or more per row, by its kind) from the
    stored runs."""
    rows, kind = table.rows, table.kind
    if kind == "compare":
        return [line for row in rows for line in _compare_lines(table, row, runs[row.run], runs)]
    if kind == "collocation":
        return [_collocation_lines(table, row, runs[row.run]) for row in rows]
    if kind == "stable_time":
        return [_stable_time_lines(row, runs[row.run]) for row in rows]
    if kind == "stable_time_models":
        return [
            line for row in rows for line in _stable_time_model_lines(table, row, runs[row.run])
        ]
    if kind == "epoch_time":
        return [_epoch_time_lines(row, runs[row.run]) for row in rows]
    if kind == "discovery":
        return [
            line for row in rows for line in _discovery_lines(table, row, _single(runs[row.run]))
        ]
    if kind == "parameters":
        return [
            line for row in rows for line in _parameter_lines(table, row, _single(runs[row.run]))
        ]
    if kind == "solver_timing":
        return [
            _solver_timing_lines(row, _single(runs[row.run]), k == 0 or rows[k - 1].run != row.run)
            for k, row in enumerate(rows)
        ]
    raise ValueError(f"table {table.key!r} has unknown kind {table.kind!r}")


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
