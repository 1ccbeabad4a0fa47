"""What the stored runs say about the papers' claims, as generated blocks of the report.

* :func:`discovery_verdict` and :func:`stable_time_verdict` check one model against what its
  paper asserts of it (a row's ``expect``), for the tables that print the verdict beside it.
* ``"authors_code"`` tables: an authors' code run here, entry by entry, against the paper's
  number and the arrays the authors committed, with how many entries land near the paper.
* ``"not_reproduced"``: every claim of :data:`~reproduction.published.TABLES` that its stored
  runs do not bear out, each with what was measured, and the claims no stored run measures.

Every number these blocks print comes from a stored run or from the paper (its table in
:mod:`reproduction.published`); the rules that turn them into a verdict are the constants below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .published import (
    ACCURATE_AWAY,
    BEATS_SINDY,
    DIVERGES,
    DIVERGES_AWAY,
    MATCHES_II,
    NOT_RUN,
    OUTLASTS_NODE,
    RECOVERS,
    STABLE,
    STRATEGY_II_RUN,
    TABLES,
    Row,
    Table,
)
from .report import (
    Spread,
    StoredRun,
    _num,
    _ratio_text,
    _sci,
    _seconds,
    _single,
    _stable_time_result,
    _table,
    _unfinished_seeds,
    load_runs,
)

#: a published error or time is reproduced within this factor; ours above it on every seed is not
FACTOR = 3.0
#: an authors' code entry "near the paper" lies within this factor of it
NEAR = 1.5
#: a field "as accurate away from the trajectory" errs at most this many times more in the box
AWAY_SAME = 2.0
#: a field "far less accurate away from the trajectory" errs at least this many times more
AWAY_WORSE = 5.0
#: strategy III "of mostly equal quality": its unseen-road error within this factor of II's
QUALITY = 1.5
#: the statuses of a collocation run that converged (IPOPT's optimum, or the paper's stopping
#: rule: "no further significant improvement in objective")
CONVERGED = frozenset({"success", "stopped_by_callback"})


def _is_diagnostic(row: Row) -> bool:
    """A row that measures a variant of the paper's setup, not the paper's claim."""
    return row.note.startswith(("a diagnostic", "not the paper's setup"))


def _seed_list(seeds: Sequence[int | None]) -> str:
    return ", ".join("?" if s is None else str(s) for s in seeds)


# --- one model against its paper ---------------------------------------------------------


def discovery_verdict(
    expect: str | None, result: Mapping[str, Any], sindy: Mapping[str, Any] | None
) -> tuple[bool, str] | None:
    """Whether a discovered model bears out what its paper asserts (``expect``), and what was
    measured; None where the paper asserts nothing of it."""
    if expect is None:
        return None
    if result.get("status") != "success":
        return False, f"the run ended {result.get('status', '?')}"
    field = result.get("vector_field_error") or {}
    box, on = field.get("box"), field.get("trajectory")
    measured = f"field error {_num(box)} in the box, {_num(on)} on the trajectory"
    if expect == RECOVERS:
        errors = result.get("coefficient_errors")
        if errors is None:
            return False, "its form cannot express the equations"
        if errors.get("exact_support"):
            return True, "exact support"
        parts = [
            f"{len(errors[key])} {word} term{'s' if len(errors[key]) > 1 else ''}"
            for key, word in (("spurious", "spurious"), ("missed", "missed"))
            if errors.get(key)
        ]
        return False, ", ".join(parts)
    if box is None or on is None:
        return False, "no field error stored"
    if expect == ACCURATE_AWAY:
        return box <= AWAY_SAME * on, measured
    if expect == DIVERGES_AWAY:
        return box >= AWAY_WORSE * on, measured
    if expect == BEATS_SINDY:
        theirs = ((sindy or {}).get("vector_field_error") or {}).get("box")
        if theirs is None:
            return False, f"{measured}; no SINDy field error to compare"
        return box < theirs, f"field error {_num(box)} in the box, SINDy's {_num(theirs)}"
    raise ValueError(f"unknown claim {expect!r}")


def stable_time_verdict(
    expect: str | None,
    summary: Mapping[str, Any],
    node: Mapping[str, Any] | None,
    horizon_s: float,
    paper_horizon_s: float | None,
) -> tuple[bool, str] | None:
    """Whether a rolled-out model bears out what its paper asserts (``expect``) over the stored
    trials, and what was measured; None where the paper asserts nothing checkable of it."""
    if expect is None:
        return None
    diverged, trials = summary["diverged"], summary["trials"]
    within = f"within {_seconds(horizon_s)} s"
    if paper_horizon_s and paper_horizon_s != horizon_s:
        within += f" (the paper's trials: {_seconds(paper_horizon_s)} s)"
    counted = f"{diverged} of {trials} trials diverged {within}"
    if expect == STABLE:
        return diverged == 0, counted
    ours = summary["time_to_error_1"]["median"]
    measured = f"{counted}; {_error_one(ours, horizon_s)}"
    if expect == DIVERGES:
        return diverged > 0, measured
    if expect == OUTLASTS_NODE:
        theirs = None if node is None else node["time_to_error_1"]["median"]
        if theirs is None:
            return False, f"{measured}; no NODE in the run"
        return (
            diverged == 0 and ours > theirs,
            f"{measured}, the NODE's error {_error_one(theirs, horizon_s, alone=False)}",
        )
    raise ValueError(f"unknown claim {expect!r}")


def _error_one(median_s: float, horizon_s: float, alone: bool = True) -> str:
    """When the median trial's error reaches 1, or that it stays below within the trial."""
    whose = "its error " if alone else ""
    if median_s >= horizon_s:
        return f"{whose}stays below 1 in the median trial"
    return f"{whose}reaches 1 after {_seconds(median_s)} s (median)"


def verdict_cell(verdict: tuple[bool, str] | None) -> str:
    """A table's cell for a verdict: "reproduced: ..." / "not reproduced: ..." / a dash."""
    if verdict is None:
        return "–"
    holds, measured = verdict
    return f"{'reproduced' if holds else 'not reproduced'}: {measured}"


# --- an authors' code, entry by entry -------------------------------------------------------


def _authors_entries(run: str) -> list[tuple[Table, Row, str, str]]:
    """(table, row, our method, their method) of every paper entry whose authors' column is
    ``run``, once per (their method, case), in the tables' order."""
    seen: set[tuple[str, str]] = set()
    out = []
    for table in TABLES:
        for row in table.rows:
            if row.authors is None or row.authors[0] != run or _is_diagnostic(row):
                continue
            for method in row.published:
                theirs = row.authors_as.get(method, method)
                if (theirs, row.authors[1]) not in seen:
                    seen.add((theirs, row.authors[1]))
                    out.append((table, row, method, theirs))
    return out


def _last_line(text: str | None) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _their_result(entry: Mapping[str, Any] | None) -> str:
    """Their run's error, or how it ended without one (with its log's last line)."""
    if entry is None:
        return "not run here"
    if entry.get("full_mse") is not None:
        return _sci(entry["full_mse"])
    last = _last_line(entry.get("log_tail"))
    return f"{entry.get('status', '?')}" + (f": {last}" if last else "")


def _over(x: Any, paper: float) -> str:
    return "–" if x is None else _ratio_text(float(x) / paper)


@dataclass
class _Tally:
    """How an authors' code's entries land against the paper: the labels of their runs here
    near it, below it and above it, and of the committed arrays near it and far from it (with
    the far ones' scores)."""

    near: list[str] = field(default_factory=list)
    below: list[str] = field(default_factory=list)
    above: list[str] = field(default_factory=list)
    kept_near: list[str] = field(default_factory=list)
    kept_far: list[tuple[str, Mapping[str, Any], Mapping[str, Any]]] = field(default_factory=list)

    def count(self, label: str, paper: float, entry: Mapping[str, Any]) -> None:
        full = entry.get("full_mse")
        if full is not None:
            ratio = full / paper
            near = 1 / NEAR <= ratio <= NEAR
            (self.near if near else self.below if ratio < 1 else self.above).append(label)
        committed = entry.get("committed") or {}
        kept = committed.get("full_mse")
        if kept is not None:
            if 1 / NEAR <= kept / paper <= NEAR:
                self.kept_near.append(label)
            else:
                self.kept_far.append((label, committed, entry))

    def summary(self, seed: str) -> list[str]:
        scored = len(self.near) + len(self.below) + len(self.above)
        out = [
            "",
            f"On one run per entry ({seed}), their code lands within {NEAR:g}× of the paper in "
            f"{len(self.near)} of the {scored} entries it scored, more than {NEAR:g}× below it "
            f"in {len(self.below)} and more than {NEAR:g}× above it in {len(self.above)}"
            + (f" ({'; '.join(self.above)})" if self.above else "")
            + ".",
        ]
        held = len(self.kept_near) + len(self.kept_far)
        if not held:
            return out
        out += [
            "",
            f"The arrays they committed give the paper's number within {NEAR:g}× in "
            f"{len(self.kept_near)} of the {held} entries they hold"
            + ("; where they do not, their error per state component:" if self.kept_far else "."),
        ]
        out += [""] if self.kept_far else []
        return out + [
            f"- {label}: committed {_components(committed)}; their code here {_components(entry)}"
            for label, committed, entry in self.kept_far
        ]


def _authors_line(
    paper_table: Table,
    paper_row: Row,
    method: str,
    entry: Mapping[str, Any] | None,
    committed_column: bool,
    others: Sequence[tuple[int | None, Mapping[str, Any] | None]] | None,
) -> list[str]:
    """One entry of an ``"authors_code"`` table: the paper's number, the committed arrays'
    (where the runner scores them), their run here, their other seeds' runs (where any)."""
    paper = paper_row.published[method]
    scores = entry or {}
    line = [paper_table.short, paper_row.system, method, _sci(paper)]
    if committed_column:
        kept = (scores.get("committed") or {}).get("full_mse")
        scored = "not scored" if entry is not None and kept is None else _sci(kept)
        line += [scored, _over(kept, paper)]
    line += [_their_result(entry), _over(scores.get("full_mse"), paper)]
    if others is not None:
        found = [f"seed {s}: {_their_result(e)}" for s, e in others if e is not None]
        line.append("; ".join(found) or "–")
    return [*line, _sci(scores.get("train_mse")), _seconds(scores.get("wall_s"))]


def render_authors_code(table: Table, root: Path) -> str:
    """The block of an ``"authors_code"`` table: each paper entry with the authors' code run
    here and, where stored, the arrays they committed; then how many entries land near the
    paper on their own seed."""
    (row,) = table.rows
    stored = load_runs(root, row.run)
    published = [r for r in stored if r.folder == ""]
    seeds = [r for r in stored if r.folder != ""]
    out = [f"**{table.title}.**", ""]
    if not published:
        return "\n".join([*out, f"`{row.run}`: not stored.", ""])
    run = published[0]
    committed_column = any(e.get("committed") for e in run.data.get("runs", ()))
    header = ["table", "system", "method", "paper"]
    header += ["committed arrays", "committed / paper"] if committed_column else []
    header += ["their code here", "here / paper"]
    header += ["other seeds here"] if seeds else []
    header += ["training window here", "wall time here [s]"]
    lines, tally = [], _Tally()
    for paper_table, paper_row, method, theirs in _authors_entries(row.run):
        case = paper_row.authors[1] if paper_row.authors else ""
        entry = run.authors_entry(theirs, case)
        others = [(r.seed, r.authors_entry(theirs, case)) for r in seeds] if seeds else None
        lines.append(_authors_line(paper_table, paper_row, method, entry, committed_column, others))
        if entry is not None:
            tally.count(f"{paper_row.system}, {method}", paper_row.published[method], entry)
    out += _table(header, lines)
    out += tally.summary("their published seed" if run.seed is None else f"seed {run.seed}")
    return "\n".join(out) + "\n"


def _components(scores: Mapping[str, Any]) -> str:
    """An entry's MSE per state component, in the order of the state."""
    values = scores.get("component_mse") or []
    return ", ".join(_sci(v) for v in values) or "–"


# --- the section "Not reproduced" ----------------------------------------------------------


def _compare_findings(table: Table, runs: Mapping[str, Sequence[StoredRun]]) -> list[str]:
    """Each paper entry of a compare table that ours exceeds by more than FACTOR on every
    stored seed (a line per device)."""
    items = []
    for row in table.rows:
        if _is_diagnostic(row):
            continue
        metric = row.metric or table.metric
        for method, paper in row.published.items():
            found = [(run, r) for run in runs[row.run] if (r := run.method_row(method))]
            for device in sorted({run.device for run, _ in found}, key=lambda d: d != "cpu"):
                here = [(run, r) for run, r in found if run.device == device]
                ours = Spread.of([r.get(metric) for _, r in here])
                if not ours.values or min(ours.values) <= FACTOR * paper:
                    continue
                ratios = Spread(tuple(x / paper for x in ours.values))
                name = method if device == "cpu" else f"{method} on {device}"
                items.append(
                    f"{table.short}, {row.system}, {name}: the paper's {_sci(paper)}; ours "
                    f"{ours.text(_sci)}, {ratios.text(_ratio_text)}× it over seeds "
                    f"{_seed_list([run.seed for run, _ in here])} (`{row.run}`)"
                )
    return items


def _quality(stored: Sequence[StoredRun]) -> Spread:
    return Spread.of([run.data.get("test_rmse_ratio") for run in stored])


def _collocation_findings(table: Table, runs: Mapping[str, Sequence[StoredRun]]) -> list[str]:
    """Each timed row of a collocation table with seeds that did not converge, or ours above
    FACTOR of the paper's time on every seed, or (``MATCHES_II``) quality short of II's."""
    items = []
    for row in table.rows:
        stored, paper = runs[row.run], row.published.get("total_s")
        if _is_diagnostic(row) or not paper or not stored:
            continue
        unfinished = _unfinished_seeds(table, row, stored)
        failed = [
            (run.seed, str(run.data.get("status")))
            for run in stored
            if run.seed not in unfinished and run.data.get("status") not in CONVERGED
        ]
        failed += [(s, "did not finish") for s in unfinished]
        expected = len(table.seeds) or len(stored)
        if failed:
            by_status: dict[str, list[int | None]] = {}
            for seed, status in sorted(failed, key=str):
                by_status.setdefault(status, []).append(seed)
            listed = "; ".join(
                f"{status}: seed{'s' if len(seeds) > 1 else ''} {_seed_list(seeds)}"
                for status, seeds in by_status.items()
            )
            items.append(
                f"{table.short}, {row.system}: the paper's run converged; here {len(failed)} of "
                f"{expected} seeds did not ({listed}; `{row.run}`)"
            )
        totals = [(run.data.get("wall_time_s") or {}).get("total") for run in stored]
        finished = Spread.of(
            [t for run, t in zip(stored, totals, strict=True) if run.seed not in unfinished]
        )
        if finished.values and min(finished.values) > FACTOR * paper:
            ratios = Spread(tuple(t / paper for t in finished.values))
            items.append(
                f"{table.short}, {row.system}: the paper's {paper:g} s (on its 20-thread "
                f"machine); ours {finished.text(_seconds)} s, {ratios.text(_ratio_text)}× it "
                f"over the finished seeds (`{row.run}`)"
            )
        if row.expect.get("quality") == MATCHES_II:
            ours, theirs = _quality(stored), _quality(runs.get(STRATEGY_II_RUN, ()))
            if ours.values and theirs.values and ours.median > QUALITY * theirs.median:
                items.append(
                    f"{table.short}, {row.system}: the paper's surrogates are of \"mostly "
                    f"equal quality\" to strategy II's; ours err on the unseen road "
                    f"{ours.text(_num)}× the noise floor over seeds "
                    f"{_seed_list([run.seed for run in stored])}, strategy II "
                    f"{theirs.text(_num)}× (`{row.run}`)"
                )
    return items


def _stable_time_findings(table: Table, runs: Mapping[str, Sequence[StoredRun]]) -> list[str]:
    """Each stable-time row whose median lies further from the paper's than the paper's
    standard deviation, with the protocol it ran under."""
    items = []
    for row in table.rows:
        run, result = _stable_time_result(row, runs[row.run])
        if run is None or result is None:
            continue
        paper, node = row.published, result["summary"]["NODE"]
        median = node["stable_time"]["median"]
        if abs(median - paper["median"]) <= paper["std"]:
            continue
        config = run.data.get("config") or {}
        epochs = sorted({s["models"]["NODE"]["epochs"] for s in result["seeds"]})
        items.append(
            f"{table.short}, {row.system}: the paper's NODE median {paper['median']:g} s "
            f"(standard deviation {paper['std']:g} s); ours {_seconds(median)} s, "
            f"{node['diverged']} of {node['trials']} trials diverged, trained "
            f"{', '.join(map(str, epochs))} epochs at {config.get('batch_size', '?')} chunks "
            f"per update and rolled out {config.get('trials', '?')} trials per model "
            f"(`{row.run}`)"
        )
    return items


def _stable_time_model_findings(table: Table, runs: Mapping[str, Sequence[StoredRun]]) -> list[str]:
    items = []
    for row in table.rows:
        run, result = _stable_time_result(row, runs[row.run])
        if result is None:
            continue
        paper_horizon = ((run.data.get("paper_table3") or {}).get(row.system) or {}).get(
            "trial_length"
        )
        horizon = result["seeds"][0]["horizon_s"]
        for method, expect in row.expect.items():
            summary = result["summary"].get(method)
            if summary is None:
                continue
            node = result["summary"].get("NODE")
            verdict = stable_time_verdict(expect, summary, node, horizon, paper_horizon)
            if verdict is not None and not verdict[0]:
                items.append(
                    f"{table.short}, {row.system}, {method}: the paper shows "
                    f'"{row.claims.get(method, expect)}"; {verdict[1]} (`{row.run}`)'
                )
    return items


def _discovery_findings(table: Table, runs: Mapping[str, Sequence[StoredRun]]) -> list[str]:
    items = []
    for row in table.rows:
        run = _single(runs[row.run])
        if run is None:
            continue
        methods = ((run.data.get("systems") or {}).get(row.system) or {}).get("methods", {})
        for method, expect in row.expect.items():
            if method not in methods:
                continue
            verdict = discovery_verdict(expect, methods[method], methods.get("sindy"))
            if verdict is not None and not verdict[0]:
                items.append(
                    f"{table.short}, {row.system}, {method}: the paper: {expect}; "
                    f"ours: {verdict[1]} (`{row.run}`)"
                )
    return items


def _parameter_findings(table: Table, runs: Mapping[str, Sequence[StoredRun]]) -> list[str]:
    """The paper's MNN recovers the force far better than its SONODE; a row whose MNN's force
    error is not below half the SONODE's does not bear that out."""
    items = []
    for row in table.rows:
        run = _single(runs[row.run])
        found = run.data.get("methods", {}) if run else {}
        mnn, sonode = found.get("mnn"), found.get("sonode")
        if not mnn or not sonode or mnn["force_mse"] < sonode["force_mse"] / 2:
            continue
        paper = row.published
        items.append(
            f"{table.short}, {row.system}: the paper's MNN learns the force far better than its "
            f"SONODE (force MSE {paper['mnn.force_mse']:g} against "
            f"{paper['sonode.force_mse']:g}, cosine {paper['mnn.cosine']:g} against "
            f"{paper['sonode.cosine']:g}); ours alike (force MSE {_num(mnn['force_mse'])} "
            f"against {_num(sonode['force_mse'])}, cosine "
            f"{mnn['cosine_similarity']:.4g} against {sonode['cosine_similarity']:.4g}) "
            f"(`{row.run}`)"
        )
    return items


def _solver_timing_findings(table: Table, runs: Mapping[str, Sequence[StoredRun]]) -> list[str]:
    """Each length at which ours finds NeuRLP slower than RK4, where the paper's is faster."""
    items = []
    for row in table.rows:
        run = _single(runs[row.run])
        found = [
            r
            for r in (run.data.get("lengths", ()) if run else ())
            if str(r.get("steps")) == row.system
        ]
        if not found:
            continue
        qp, rk = found[0]["neurlp"].get("time_s"), found[0]["rk4"].get("time_s")
        if qp is None or rk is None or rk >= qp:
            continue
        paper = row.published
        device = (run.data.get("config") or {}).get("device", "?")
        items.append(
            f"{table.short}, {row.system} steps on {device}: the paper's NeuRLP "
            f"{paper['rk4_s'] / paper['neurlp_s']:.0f}× faster than RK4; ours "
            f"{_ratio_text(qp / rk)}× slower ({_seconds(qp)} s against {_seconds(rk)} s; "
            f"`{row.run}`)"
        )
    return items


_FINDERS = {
    "compare": _compare_findings,
    "collocation": _collocation_findings,
    "stable_time": _stable_time_findings,
    "stable_time_models": _stable_time_model_findings,
    "discovery": _discovery_findings,
    "parameters": _parameter_findings,
    "solver_timing": _solver_timing_findings,
}


def _unmeasured(table: Table, runs: Mapping[str, Sequence[StoredRun]]) -> list[str]:
    """The paper entries of a compare table with no stored result."""
    items = []
    if table.kind != "compare":
        return items
    for row in table.rows:
        if _is_diagnostic(row):
            continue
        for method in row.published:
            if not any(run.method_row(method) for run in runs[row.run]):
                why = "no stored run" if not runs[row.run] else "not in the stored run"
                items.append(f"{table.short}, {row.system}, {method}: {why} (`{row.run}`)")
    return items


def render_not_reproduced(table: Table, root: Path) -> str:
    """The block of the ``"not_reproduced"`` table from every other table's stored runs."""
    items, unmeasured = [], []
    for other in TABLES:
        finder = _FINDERS.get(other.kind)
        if finder is None:
            continue
        runs = {row.run: load_runs(root, row.run) for row in other.rows}
        if other.kind == "collocation":
            runs[STRATEGY_II_RUN] = load_runs(root, STRATEGY_II_RUN)
        items += finder(other, runs)
        unmeasured += _unmeasured(other, runs)
    unmeasured += [f"{claim}: {why}" for claim, why in NOT_RUN]
    rule = (
        f"A published error or time counts as not reproduced where ours exceeds it more than "
        f"{FACTOR:g}× on every stored seed (a diagnostic row, which changes the paper's setup, "
        f"is not counted); a timed collocation row where a seed did not converge; the SNDE "
        f"stable time where our median lies further from the paper's than its standard "
        f"deviation; a model's claimed behaviour as its table's column \"the paper's claim "
        f"here\" checks it; MNN §5.4's MNN against SONODE where ours do not order the two as "
        f"the paper does. Each item names its stored run."
    )
    out = [f"**{table.title}.**", "", rule, ""]
    out += [f"- {item}" for item in items] or ["- none"]
    out += ["", "Claims no stored run measures:", ""]
    out += [f"- {item}" for item in unmeasured]
    return "\n".join(out) + "\n"


def render_finding(table: Table, root: Path) -> str:
    """The block of a table of one of this module's kinds."""
    if table.kind == "authors_code":
        return render_authors_code(table, root)
    if table.kind == "not_reproduced":
        return render_not_reproduced(table, root)
    raise ValueError(f"table {table.key!r} has unknown kind {table.kind!r}")


__all__ = [
    "discovery_verdict",
    "render_finding",
    "stable_time_verdict",
    "verdict_cell",
]
