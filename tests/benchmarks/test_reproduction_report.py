"""The reproduction report: tables rendered from stored runs, the document's generated blocks,
and the committed report kept in step with the committed runs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from reproduction import TABLES, Row, Table, regenerate, render_table, update_document

ROOT = Path(__file__).resolve().parents[2]
TABLE = Table(
    key="demo",
    title="Demo table",
    kind="compare",
    methods=("fnode", "mbdnode"),
    rows=(
        Row("system A", "run-a", {"fnode": 1e-3, "mbdnode": 2e-3}, train_time_s={"fnode": 99.0}),
        Row("system B", "run-b", {"fnode": 0.5}, note="a different initial state"),
    ),
)

TABLE_B = Table(
    "b", "B", "compare", (Row("system C", "run-c", {"fnode": 0.8}),), methods=("fnode",)
)


def _store(root: Path, name: str, rows: list[dict], **meta) -> None:
    (root / name).mkdir(parents=True)
    meta = {"command": "python scripts/compare.py x", "seed": 0, **meta}
    (root / name / "compare.json").write_text(
        json.dumps({"problem": "x", "meta": meta, "rows": rows})
    )


def _lines(text: str) -> dict[tuple[str, str], list[str]]:
    out, system = {}, ""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or cells[0] == "system":
            continue
        system = cells[0] or system
        out[(system, cells[1])] = cells
    return out


def test_a_row_shows_the_paper_ours_and_their_ratio(tmp_path):
    _store(
        tmp_path,
        "run-a",
        [
            {
                "method": "fnode",
                "status": "success",
                "full_mse": 3e-3,
                "test_mse": 4e-3,
                "train_time_s": 12.5,
            },
            {"method": "mbdnode", "status": "diverged", "full_mse": None, "test_mse": None},
            {"method": "collocation", "status": "success", "full_mse": 5e-4, "test_mse": 6e-4},
        ],
        machine="some CPU, 2 cores",
        created="2026-11-23T06:00:00",
        load_at_start=1.5,
    )
    text = render_table(TABLE, tmp_path)
    rows = _lines(text)
    fnode = rows[("system A", "fnode")]
    assert fnode[2:10] == ["1.0e-3", "3.0e-3", "3", "0", "4.0e-3", "99", "12.5", "success"]
    assert fnode[10] == "yes"
    # a model that could not be scored shows its status, never a number
    mbdnode = rows[("system A", "mbdnode")]
    assert mbdnode[3] == "diverged" and mbdnode[4] == "–"
    # a method the paper does not report is listed without a paper value
    assert rows[("system A", "collocation")][2:5] == ["–", "5.0e-4", "–"]
    assert _lines(render_table(TABLE_B, tmp_path))[("system C", "fnode")][2] == "8.0e-1"
    # a missing run is said to be missing, with the reason the row is not like for like
    b = rows[("system B", "fnode")]
    assert b[3] == "no stored run" and b[10] == "a different initial state"
    run_a = "`run-a`: `python scripts/compare.py x` (some CPU, 2 cores, 2026-11-23T06:00:00, load"
    assert f"{run_a} 1.5 at start)" in text
    assert "`run-b`: not stored." in text


def test_the_document_outside_the_blocks_is_kept(tmp_path):
    doc = "intro\n<!-- generated: demo -->\nold table\n<!-- end generated: demo -->\noutro\n"
    new = update_document(doc, tmp_path, [TABLE])
    assert new.startswith("intro\n<!-- generated: demo -->\n**Demo table.**")
    assert new.endswith("<!-- end generated: demo -->\noutro\n")
    assert "old table" not in new
    assert update_document(new, tmp_path, [TABLE]) == new  # idempotent


@pytest.mark.parametrize(
    "doc",
    [
        "no markers at all\n",
        "<!-- generated: demo -->\n",
        "<!-- end generated: demo -->\n<!-- generated: demo -->\n",
        "<!-- generated: demo -->\n<!-- generated: demo -->\n<!-- end generated: demo -->\n",
    ],
)
def test_bad_markers_are_refused_naming_the_table(tmp_path, doc):
    with pytest.raises(ValueError, match="demo"):
        update_document(doc, tmp_path, [TABLE])


def test_a_result_file_that_is_not_an_object_is_named(tmp_path):
    (tmp_path / "run-a").mkdir()
    (tmp_path / "run-a" / "compare.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"run-a.*JSON object"):
        render_table(TABLE, tmp_path)


def test_every_run_of_the_report_can_be_rerun_by_name():
    script = (ROOT / "benchmarks" / "reproduce.sh").read_text()
    names = set(
        re.findall(r'^\s*(?:run|compare_\w+|train_seeds) "?([\w.-]+)"? ', script, flags=re.M)
    )
    names |= {f"gdopt-table1-{s}" for s in ("I", "II", "III")}  # a loop over the strategies
    assert 'for s in II III I; do\n  train_seeds "gdopt-table1-$s"' in script
    for table in TABLES:
        for row in table.rows:
            for name in (row.run, *(row.authors or ())[:1]):
                assert name in names, f"{name} is not a run of benchmarks/reproduce.sh"


def test_the_committed_report_matches_the_committed_runs():
    document, results = ROOT / "docs" / "results.md", ROOT / "benchmarks" / "results"
    assert regenerate(document, results, check=True), (
        "docs/results.md is stale: run python scripts/reproduction_report.py"
    )


def test_the_script_checks_and_refuses_a_missing_folder(tmp_path):
    script = ROOT / "scripts" / "reproduction_report.py"
    doc = tmp_path / "doc.md"
    doc.write_text(
        "".join(f"<!-- generated: {t.key} -->\n<!-- end generated: {t.key} -->\n" for t in TABLES)
    )
    run = [sys.executable, str(script), "--document", str(doc), "--results"]
    stale = subprocess.run([*run, str(tmp_path), "--check"], capture_output=True, text=True)
    assert stale.returncode == 1 and "stale" in stale.stderr
    written = subprocess.run([*run, str(tmp_path)], capture_output=True, text=True)
    assert written.returncode == 0 and "no stored run" in doc.read_text()
    again = subprocess.run([*run, str(tmp_path), "--check"], capture_output=True, text=True)
    assert again.returncode == 0
    missing = subprocess.run([*run, str(tmp_path / "nope")], capture_output=True, text=True)
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"reproduction_report.py: error: --results {str(tmp_path / 'nope')!r} is not a folder"
    ]


_STABLE_TIMES = {"min": 150.0, "max": 200.0, "median": 190.0, "mean": 180.0, "std": 20.0}


def _store_stable_time_runs(tmp_path, table, result):
    """Every run of ``table``'s rows holds a stable_time.json with ``result``."""
    for run in {row.run for row in table.rows}:
        (tmp_path / run).mkdir()
        (tmp_path / run / "stable_time.json").write_text(
            json.dumps({"command": "python benchmarks/snde_stable_time.py", "results": [result]})
        )


def test_a_stable_time_row_reads_the_benchmark_file(tmp_path):
    from reproduction.published import SNDE_TABLE3

    model = {"stable_time": _STABLE_TIMES, "diverged": 1, "trials": 5}
    result = {
        "system": "two_body",
        "seeds": [{"seed": 3, "horizon_s": 200.0, "models": {"NODE": {"epochs": 300}}}],
        "summary": {"NODE": model, "SNODE": {**model, "diverged": 0}},
    }
    _store_stable_time_runs(tmp_path, SNDE_TABLE3, result)
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.strip().strip("|").split("|")]
        for line in render_table(SNDE_TABLE3, tmp_path).splitlines()
        if line.startswith("| ") and not line.startswith("| system")
    }
    assert rows["two_body"] == [
        "two_body",
        "200.0",
        "121.7 (52–182.8)",
        "190.0 (150.0–200.0)",
        "1 / 5",
        "0 / 5",
        "3",
        "300",
    ]
    assert rows["dcdc"][3] == "not in the run"


def test_a_stable_time_row_of_the_node_alone_has_no_snode_column(tmp_path):
    from reproduction.published import SNDE_TABLE3

    result = {
        "system": "two_body",
        "seeds": [{"seed": 0, "horizon_s": 200.0, "models": {"NODE": {"epochs": 1000}}}],
        "summary": {"NODE": {"stable_time": _STABLE_TIMES, "diverged": 2, "trials": 5}},
    }
    _store_stable_time_runs(tmp_path, SNDE_TABLE3, result)
    (line,) = [
        line for line in render_table(SNDE_TABLE3, tmp_path).splitlines() if "| two_body" in line
    ]
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    assert cells[4:6] == ["2 / 5", "not in the run"]


def test_a_stable_time_models_table_has_a_line_per_model(tmp_path):
    from reproduction.published import SNDE_BASELINES

    stats = {"min": 100.0, "max": 400.0, "median": 400.0, "mean": 300.0, "std": 50.0}
    model = {
        "stable_time": stats,
        "time_to_error_1": {**stats, "median": 123.4},
        "diverged": 2,
        "trials": 10,
        "median_error_end": 0.25,
        "median_constraint_error_end": 3.2e-9,
    }
    fit = {"epochs": 500, "train_time_s": 321.0}
    result = {
        "system": "rigid_body",
        "seeds": [{"seed": 0, "horizon_s": 400.0, "models": {"NODE": fit, "TPO": fit}}],
        # a run stored before the constraint drift was measured has none
        "summary": {"NODE": {**model, "median_constraint_error_end": None}, "TPO": model},
    }
    folder = tmp_path / "snde-baselines-rigid_body"
    folder.mkdir()
    (folder / "stable_time.json").write_text(
        json.dumps({"command": "python benchmarks/snde_stable_time.py", "results": [result]})
    )
    table = render_table(SNDE_BASELINES, tmp_path).splitlines()
    rows = {
        line.split("|")[2].strip(): [c.strip() for c in line.strip().strip("|").split("|")]
        for line in table
        if line.startswith("| rigid_body")
    }
    assert list(rows) == ["NODE", "ANODE", "SNODE", "SANODE", "TPO"]
    # the two-body rows have no tangent projection (a sphere's), the HNN (a run of its own),
    # and here no stored run
    two_body = [line.split("|")[2:5] for line in table if line.startswith("| two_body")]
    assert [m.strip() for m, _, _ in two_body] == ["NODE", "ANODE", "SNODE", "SANODE", "HNN"]
    assert {why.strip() for _, _, why in two_body} == {"no stored run"}
    assert rows["TPO"][3:] == [
        "400.0",
        "2 / 10",
        "400.0 (100.0–400.0)",
        "123.4",
        "2.5e-1",
        "3.2e-9",
        "500 in 321.0 s",
        "–",  # the paper asserts nothing the run can check of the projection
    ]
    assert rows["NODE"][8] == "–"
    # the rigid body's NODE: its divergence is Table 3's row, this line asserts nothing
    assert rows["NODE"][10] == "–"
    # a model the paper has diverge: whether the trials bear that out, with what they measured
    from reproduction.findings import stable_time_verdict
    from reproduction.published import DIVERGES, STABLE

    assert stable_time_verdict(DIVERGES, {**model, "diverged": 0}, None, 400.0, 1600.0) == (
        False,
        "0 of 10 trials diverged within 400.0 s (the paper's trials: 1600.0 s); its error "
        "reaches 1 after 123.4 s (median)",
    )
    assert stable_time_verdict(STABLE, model, None, 400.0, 400.0) == (
        False,
        "2 of 10 trials diverged within 400.0 s",
    )
    assert rows["ANODE"][3] == "not in the run"


def test_a_collocation_row_reads_the_result_file(tmp_path):
    from reproduction.published import GDOPT_TABLE1

    result = {
        "status": "iteration_limit",
        "iterations": 150,
        "phases": {"pretrain": {"iterations": 150}, "final": {"iterations": 120}},
        "wall_time_s": {"total": 751.6},
        "test_rmse_ratio": 1.054,
        "characteristic": {"friction": {"max_rel_range": 0.06}, "spring": {}},
        "command": "python scripts/train_collocation.py qvm --strategy II",
    }
    for run in ("gdopt-table1-II", "gdopt-table1-II-noise5"):  # the second: no paper time
        (tmp_path / run).mkdir()
        (tmp_path / run / "result.json").write_text(json.dumps(result))
    lines = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in render_table(GDOPT_TABLE1, tmp_path).splitlines()
        if line.startswith("| strategy")
    ]
    assert lines[1][1:9] == [
        "199.8 s",
        "751.6 s / 150 + 120",
        "3.8",
        "?",
        "iteration_limit",
        "1.05",
        "0.06",
        "–",
    ]
    assert lines[0][2] == "no stored run"
    assert "θ0 = 1 fixed" in lines[2][-1]
    assert lines[-1][1:4] == ["–", "751.6 s / 150 + 120", "–"]


def test_a_row_may_list_its_papers_methods_only(tmp_path):
    # a second row of one run, shown for another column beside it, lists no other method again
    rows = [{"method": m, "status": "success", "full_mse": 1e-3} for m in ("fnode", "collocation")]
    _store(tmp_path, "run-a", rows)
    table = Table(
        "e",
        "E",
        "compare",
        (
            Row("A", "run-a", {"fnode": 1e-3}),
            Row("A again", "run-a", {"fnode": 1e-3}, others=False),
        ),
        methods=("fnode",),
    )
    listed = set(_lines(render_table(table, tmp_path)))
    assert listed == {("A", "fnode"), ("A", "collocation"), ("A again", "fnode")}


def test_a_row_may_score_a_column_subset(tmp_path):
    table = Table(
        "c",
        "C",
        "compare",
        (Row("crank", "run-c", {"fnode": 0.17}, metric="independent_full_mse"),),
        methods=("fnode",),
    )
    row = {"method": "fnode", "status": "success", "full_mse": 9.0, "test_mse": 9.0}
    _store(tmp_path, "run-c", [{**row, "independent_full_mse": 0.34, "independent_test_mse": 0.5}])
    cells = _lines(render_table(table, tmp_path))[("crank", "fnode")]
    assert cells[3:7] == ["3.4e-1", "2", "0", "5.0e-1"]


def test_every_published_row_names_registered_methods_problems_and_presets():
    from collocnode import problems
    from collocnode.compare.methods import registry

    for table in TABLES:
        if table.kind == "compare":
            assert set(table.methods) <= set(registry.available()), table.key
            for row in table.rows:
                assert set(row.published) <= set(table.methods), row.system
    # the problem and preset of every comparison run of reproduce.sh exist
    script = (ROOT / "benchmarks" / "reproduce.sh").read_text().replace("\\\n", " ")
    pattern = (
        r"^\s*(?:compare_\w+ [\w.-]+|run [\w.-]+ python scripts/compare\.py) (\w+)"
        r"(?:[^\n]*?--preset (\w+))?"
    )
    runs = re.findall(pattern, script, flags=re.M)
    assert len(runs) >= 12
    for problem, preset in runs:
        problems.get(problem, preset or None)


def test_the_authors_code_column_reads_its_own_run(tmp_path):
    table = Table(
        "d",
        "D",
        "compare",
        (
            Row(
                "pendulum",
                "run-d",
                {"fnode": 0.14, "lstm": 0.76, "mbdnode": 0.2},
                authors=("their", "Pendulum"),
            ),
            Row("spring", "run-d", {"fnode": 1e-4}),
        ),
        methods=("fnode", "lstm", "mbdnode"),
    )
    ours = [
        {"method": "fnode", "status": "success", "full_mse": 0.3},
        {"method": "collocation", "status": "success", "full_mse": 0.01},
    ]
    _store(tmp_path, "run-d", ours)
    (tmp_path / "their").mkdir()
    entries = [
        {"method": "fnode", "test_case": "Pendulum", "status": "success", "full_mse": 0.2},
        {"method": "lstm", "test_case": "Pendulum", "status": "timeout", "full_mse": None},
        {"method": "fnode", "test_case": "Spring", "status": "success", "full_mse": 9.0},
        {"method": "mbdnode", "test_case": "Spring", "status": "success", "full_mse": 9.0},
    ]
    (tmp_path / "their" / "authors_code.json").write_text(
        json.dumps({"command": "python benchmarks/authors_code_fnode.py X", "runs": entries})
    )
    text = render_table(table, tmp_path)
    assert "| authors' code here, whole trajectory |" in text
    rows = _lines(text)
    assert rows[("pendulum", "fnode")][3:7] == ["3.0e-1", "2.1", "0", "2.0e-1"]
    assert rows[("pendulum", "lstm")][6] == "timeout"  # a run without errors says why
    assert rows[("pendulum", "mbdnode")][6] == "not run here"  # the paper's, not run here
    assert rows[("pendulum", "collocation")][6] == "–"  # not a method of theirs
    assert rows[("spring", "fnode")][6] == "–"  # the row names no authors' run
    assert "`their`: `python benchmarks/authors_code_fnode.py X`" in text
    # their code trained again with other seeds: the median and range of all, the seeds listed
    for seed, mse in ((0, 0.1), (1, 0.4)):
        (tmp_path / "their" / f"seed{seed}").mkdir()
        (tmp_path / "their" / f"seed{seed}" / "authors_code.json").write_text(
            json.dumps(
                {
                    "command": f"python benchmarks/authors_code_fnode.py X --seed {seed}",
                    "settings": {"seed": seed},
                    "code_commit": "abc",
                    "runs": [{**entries[0], "full_mse": mse}],
                }
            )
        )
    text = render_table(table, tmp_path)
    rows = _lines(text)
    assert rows[("pendulum", "fnode")][6] == "2.0e-1 (1.0e-1–4.0e-1), 3 seeds"
    assert rows[("pendulum", "lstm")][6] == "timeout"  # run with the published seed only
    assert "`their`: `python benchmarks/authors_code_fnode.py X`" in text
    # ... rerun by the entry <name>-seeds
    assert "`their-seeds` (seeds 0, 1): `python benchmarks/authors_code_fnode.py X --seed 0`" in (
        text
    )
    for seed in (0, 1):
        shutil.rmtree(tmp_path / "their" / f"seed{seed}")
    # a table without authors' runs keeps its columns
    assert "authors' code" not in render_table(TABLE, tmp_path)
    # before the authors' run is stored: the paper's methods say so, ours stay "–"
    (tmp_path / "their" / "authors_code.json").unlink()
    rows = _lines(render_table(table, tmp_path))
    assert rows[("pendulum", "fnode")][6] == "no stored run"
    assert rows[("pendulum", "collocation")][6] == "–"


def test_check_says_what_it_checked(monkeypatch, capsys):
    from reproduction.command import reproduction_report

    monkeypatch.chdir(ROOT)
    assert reproduction_report(["--check"]) == 0
    out = capsys.readouterr().out
    expected = rf"docs/results.md is current: {len(TABLES)} generated tables against \d+ of"
    assert re.search(expected, out), out


def test_check_names_the_stale_table(tmp_path, capsys):
    from reproduction.command import reproduction_report

    doc = tmp_path / "doc.md"
    doc.write_text(
        "".join(f"<!-- generated: {t.key} -->\n<!-- end generated: {t.key} -->\n" for t in TABLES)
    )
    argv = ["--check", "--document", str(doc), "--results", str(tmp_path)]
    assert reproduction_report(argv) == 1
    err = capsys.readouterr().err
    assert "is stale in" in err and TABLES[0].key in err


def _seed(root: Path, name: str, seed: int, rows: list[dict], top: bool = False) -> None:
    folder = root / name if top else root / name / f"seed{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    command = f"python scripts/compare.py x --seed {seed} --out runs/{name}/seed{seed}"
    meta = {"command": command, "seed": seed, "machine": "CPU", "created": f"day {seed}"}
    (folder / "compare.json").write_text(json.dumps({"problem": "x", "meta": meta, "rows": rows}))


def test_several_seeds_give_the_median_and_range_and_the_width_of_a_range_covering_one(
    tmp_path,
):
    row = {"method": "fnode", "status": "success", "train_time_s": 10.0}
    for seed, (full, status) in enumerate([(2e-3, "success"), (5e-4, "budget"), (1e-3, "success")]):
        mbdnode = {"method": "mbdnode", "status": "diverged" if seed == 1 else "success"}
        mbdnode["full_mse"] = None if seed == 1 else 3e-3 * (seed + 1)
        rows = [{**row, "full_mse": full, "test_mse": 2 * full, "status": status}, mbdnode]
        _seed(tmp_path, "run-a", seed, rows, top=seed == 0)
    text = render_table(TABLE, tmp_path)
    fnode = _lines(text)[("system A", "fnode")]
    # the paper's 1e-3 lies in the seeds' range [5e-4, 2e-3]: said with that range's width
    assert fnode[3:6] == [
        "1.0e-3 (5.0e-4–2.0e-3)",
        "1 (0.5–2), the seeds' 4× range covers 1",
        "0, 1, 2",
    ]
    assert "within noise" not in text
    assert fnode[6] == "2.0e-3 (1.0e-3–4.0e-3)" and fnode[8] == "10.0 (10.0–10.0)"
    assert fnode[9] == "success ×2, budget ×1"
    mbdnode = _lines(text)[("system A", "mbdnode")]
    # the seed that could not be scored is named, the others give the spread; 3e-3..9e-3 lies
    # above the paper's 2e-3, so the ratio is not within noise
    assert mbdnode[3:5] == ["6.0e-3 (3.0e-3–9.0e-3); diverged", "3 (1.5–4.5)"]
    assert "`run-a` (seeds 0, 1, 2): `python scripts/compare.py x --seed 0" in text
    assert "median (min–max) over them" in text


def test_seeds_run_on_different_machines_name_each_machine_with_its_seeds(tmp_path):
    rows = [{"method": "fnode", "status": "success", "full_mse": 1e-3, "train_time_s": 10.0}]
    for seed in (0, 1, 2):
        _seed(tmp_path, "run-a", seed, rows)
    for seed in (1, 2):
        compare = tmp_path / "run-a" / f"seed{seed}" / "compare.json"
        data = json.loads(compare.read_text())
        data["meta"]["machine"] = "another CPU"
        compare.write_text(json.dumps(data))
    text = render_table(TABLE, tmp_path)
    assert "(CPU (seed 0); another CPU (seeds 1, 2), day 0 to day 2)" in text


def test_the_units_a_resumed_run_reused_are_named_with_it(tmp_path):
    from reproduction.published import SNDE_BASELINES

    folder = tmp_path / "snde-baselines-dcdc"
    folder.mkdir()
    record = {"command": "python benchmarks/snde_stable_time.py", "machine": "CPU", "results": []}
    (folder / "stable_time.json").write_text(
        json.dumps({**record, "units_reused": ["dcdc-seed0", "dcdc-seed2"]})
    )
    text = render_table(SNDE_BASELINES, tmp_path)
    assert "(CPU; dcdc-seed0, dcdc-seed2 stored by an earlier run)" in text
    (folder / "stable_time.json").write_text(json.dumps({**record, "units_reused": []}))
    assert "(CPU)" in render_table(SNDE_BASELINES, tmp_path)


def test_two_stored_runs_of_one_seed_are_refused(tmp_path):
    row = [{"method": "fnode", "status": "success", "full_mse": 1e-3}]
    _seed(tmp_path, "run-a", 1, row, top=True)
    _seed(tmp_path, "run-a", 1, row)
    with pytest.raises(ValueError, match=r"'run-a' holds more than one fnode row with seed 1"):
        render_table(TABLE, tmp_path)


def test_one_seed_may_hold_methods_run_apart_and_mixed_commands_are_said(tmp_path):
    _seed(tmp_path, "run-a", 1, [{"method": "fnode", "status": "success", "full_mse": 1e-3}])
    elsewhere = tmp_path / "run-a" / "seed1-cuda"
    elsewhere.mkdir()
    meta = {"command": "python scripts/compare.py x --methods mbdnode --device cuda", "seed": 1}
    rows = [{"method": "mbdnode", "status": "success", "full_mse": 4e-3}]
    (elsewhere / "compare.json").write_text(json.dumps({"meta": meta, "rows": rows}))
    text = render_table(TABLE, tmp_path)
    cells = _lines(text)
    assert cells[("system A", "fnode")][3:6] == ["1.0e-3", "1", "1"]
    assert cells[("system A", "mbdnode")][3:6] == ["4.0e-3", "2", "1"]
    assert cells[("system A", "fnode")][10].endswith("different commands (the runs below)")
    assert "--device cuda" in text


def test_a_method_run_on_several_devices_gets_a_line_per_device(tmp_path):
    for seed in (0, 1):
        for device, full in (("cpu", 1e-3 * (seed + 1)), ("cuda", 4e-3)):
            folder = tmp_path / "run-a" / f"seed{seed}-{device}"
            folder.mkdir(parents=True)
            command = f"python scripts/compare.py x --device {device} --seed {seed}"
            created = f"2026-11-2{7 - seed}T08:00:00"  # seed 1 ran first
            meta = {"command": command, "seed": seed, "device": device, "created": created}
            row = {"method": "mbdnode", "status": "success", "full_mse": full}
            (folder / "compare.json").write_text(json.dumps({"meta": meta, "rows": [row]}))
    text = render_table(TABLE, tmp_path)
    cells = _lines(text)
    # the same seed on two devices is not a duplicate; the CPU's line comes first
    assert cells[("system A", "mbdnode")][3:6] == [
        "1.5e-3 (1.0e-3–2.0e-3)",
        "0.75 (0.5–1), the seeds' 2× range covers 1",
        "0, 1",
    ]
    assert cells[("system A", "mbdnode on cuda")][3:6] == [
        "4.0e-3 (4.0e-3–4.0e-3)",
        "2 (2–2)",
        "0, 1",
    ]
    names = [c[1] for c in cells.values()]
    assert names.index("mbdnode") + 1 == names.index("mbdnode on cuda")
    # each device's runs are listed once, their dates from the first to the last, under the
    # entry of benchmarks/reproduce.sh that reruns them
    assert text.count("--device cuda --seed 0") == 1
    assert "2026-11-26T08:00:00 to 2026-11-27T08:00:00" in text
    assert "- `run-a-lstm` (seeds 0, 1): `python scripts/compare.py x --device cuda" in text
    assert "- `run-a` (" not in text


def test_the_speed_table_reads_the_epoch_benchmark(tmp_path):
    from reproduction.published import EPOCH_TIME

    timing = {"wall_s": [1.0, 1.2], "cpu_s": [0.9, 1.1], "failures": []}
    result = {
        "case": EPOCH_TIME.rows[0].system,
        "method": "fnode",
        "problem": "smsd",
        "preset": "mbdnode_cubic",
        "theirs": ["fnode", "Single_Mass_Spring_Damper"],
        "note": "",
        "ours_epochs": timing,
        "theirs_epochs": {**timing, "cpu_s": [2.0, 2.0]},
        "ours_median_cpu_s": 1.0,
        "theirs_median_cpu_s": 2.0,
        "ratio_cpu_s": 0.5,
        "ours_median_wall_s": 1.1,
        "theirs_median_wall_s": None,
        "ratio_wall_s": None,
    }
    (tmp_path / "epoch-time").mkdir()
    (tmp_path / "epoch-time" / "epoch_time.json").write_text(
        json.dumps({"command": "python benchmarks/epoch_time.py", "results": [result]})
    )
    lines = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in render_table(EPOCH_TIME, tmp_path).splitlines()
        if line.startswith("| ") and not line.startswith("| case")
    ]
    assert lines[0][1:] == [
        "fnode",
        "smsd (mbdnode_cubic); theirs: fnode Single_Mass_Spring_Damper",
        "1",
        "2",
        "0.50",
        "1.1",
        "–",
        "–",
        "2 / 2",
        "–",
    ]
    assert lines[1][3] == "not in the run"


def _cells(text: str) -> list[list[str]]:
    """The body rows of a rendered table, split at the unescaped pipes."""
    return [
        [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        for line in text.splitlines()
        if line.startswith("| ") and "---" not in line
    ][1:]


def test_a_discovery_row_reads_the_benchmark_file(tmp_path):
    from reproduction.published import MNN_DISCOVERY

    methods = {
        "sindy": {
            "status": "success",
            "train_time_s": 0.2,
            "equations": ["x' = y"],
            "coefficient_errors": None,  # a form SINDy cannot express
            "vector_field_error": {"box": 1.79, "trajectory": 0.15},
        },
        "collocation": {
            "status": "success",
            "network_status": "time_limit",  # the re-fit succeeds from a network cut short
            "train_time_s": 30.0,
            "equations": ["x' = tanh(2 y)"],
            "coefficient_errors": {
                "max_relative_error": 0.012,
                "exact_support": False,
                "spurious": ["x': x^2"],
                "missed": [],
            },
            "vector_field_error": {"box": 0.02, "trajectory": 0.01},
        },
    }
    (tmp_path / "mnn-discovery").mkdir()
    (tmp_path / "mnn-discovery" / "discovery.json").write_text(
        json.dumps(
            {
                "command": "python benchmarks/mnn_discovery.py",
                "systems": {"tanh": {"methods": methods}},
            }
        )
    )
    rows = _cells(render_table(MNN_DISCOVERY, tmp_path))
    tanh = next(r for r in rows if r[0] == "tanh")
    assert tanh[1:10] == [
        "sindy",
        "x' = y",
        "form not expressible",
        "–",
        "1.79",
        "0.15",
        "0.2",
        "success",
        "reproduced: field error 1.79 in the box, 0.15 on the trajectory",
    ]
    assert tanh[10].startswith("paper (its system is lost)")
    follow = rows[rows.index(tanh) + 1]
    assert follow[:5] == ["", "collocation", "x' = tanh(2 y)", "spurious x': x^2", "0.012"]
    assert follow[8] == "success; network: time_limit"
    assert next(r for r in rows if r[0] == "lorenz")[2] == "not in the run"


def test_a_parameters_row_reads_the_benchmark_file(tmp_path):
    from reproduction.published import MNN_PHYSICAL

    scores = {"force_mse": 0.5, "cosine_similarity": 0.9, "mass_ratio": 2.1}
    result = {
        "methods": {
            "mnn": {"train_time_s": 12.0, **scores},
            "collocation": {
                "train_time_s": 40.0,
                "network": {**scores, "mass_ratio": 1.95},
                "closed_form": {
                    **scores,
                    "mass_ratio": 2.0,
                    "equations": ["force[0] = 2 rx/|r|^3"],
                },
            },
        }
    }
    (tmp_path / "mnn-two-body").mkdir()
    (tmp_path / "mnn-two-body" / "two_body.json").write_text(json.dumps(result))
    rows = _cells(render_table(MNN_PHYSICAL, tmp_path))
    assert rows[0][1:8] == ["sonode", "879", "-0.26", "2.11", "not in the run", "–", "–"]
    assert rows[1][1:9] == ["mnn", "345", "0.85", "2.02", "0.5", "0.9", "2.1", "12.0"]
    assert rows[2][1] == "collocation (network)" and rows[2][7] == "1.95"
    assert rows[3][1] == "collocation (closed form: force[0] = 2 rx/\\|r\\|^3)"
    assert rows[3][7] == "2"


def test_a_parameters_row_tells_a_mass_ratio_near_the_truth_from_the_truth(tmp_path):
    from reproduction.published import MNN_PHYSICAL

    near = {"force_mse": 1.2e-4, "cosine_similarity": 0.99981, "mass_ratio": 2.0031}
    (tmp_path / "mnn-two-body").mkdir()
    (tmp_path / "mnn-two-body" / "two_body.json").write_text(
        json.dumps({"methods": {"mnn": {"train_time_s": 1.0, **near}}})
    )
    rows = _cells(render_table(MNN_PHYSICAL, tmp_path))
    assert rows[1][5:8] == ["1.2e-4", "0.9998", "2.003"]


def test_a_solver_timing_row_reads_the_benchmark_file(tmp_path):
    from reproduction.published import MNN_TABLE2

    lengths = [
        {
            "steps": 40,
            "neurlp": {"time_s": 1.2, "loss": 0.29},
            "rk4": {"time_s": 25.8, "loss": 0.3},
        }
    ]
    (tmp_path / "mnn-table2-gpu").mkdir()
    (tmp_path / "mnn-table2-gpu" / "solver_timing.json").write_text(
        json.dumps({"config": {"device": "cuda"}, "lengths": lengths})
    )
    rows = _cells(render_table(MNN_TABLE2, tmp_path))
    assert rows[0][:13] == [
        "40",
        "mnn-table2-gpu",
        "cuda",
        "1.52",
        "28.06",
        "18",
        "11.4",
        "29.3",
        "1.2",
        "25.8",
        "22",
        "0.29",
        "0.3",
    ]
    assert rows[0][13].startswith("the paper's model") and rows[1][13] == ""
    assert rows[1][8] == "not measured in the run"
    assert rows[5][1:3] == ["mnn-table2-cpu", "–"] and rows[5][8] == "no stored run"


def _result(root: Path, run: str, seed: int, total_s: float, status: str) -> None:
    folder = root / run / f"seed{seed}"
    folder.mkdir(parents=True)
    command = f"python scripts/train_collocation.py qvm --seed {seed}"
    (folder / "result.json").write_text(
        json.dumps(
            {
                "command": command,
                "settings": {"seed": seed},
                "status": status,
                "iterations": 40,
                "wall_time_s": {"total": total_s},
            }
        )
    )


def test_a_seed_that_did_not_finish_is_named_in_its_row_and_counted_in_the_ratio(tmp_path):
    row = Row(
        "strategy X",
        "run-x",
        {"total_s": 50.0},
        unfinished={1: "did not finish: stopped by hand; no stored run"},
    )
    table = Table("x", "X", "collocation", (row,), seeds=(0, 1, 2))
    _result(tmp_path, "run-x", 0, 100.0, "success")
    _result(tmp_path, "run-x", 2, 200.0, "iteration_limit")
    (line,) = [c for c in _cells(render_table(table, tmp_path)) if c[0] == "strategy X"]
    # the ratio over the finished seeds, then with the unfinished one as the slowest
    assert (
        line[3] == "3 (2–4) over the finished seeds; at least 4 with seed 1, which did not finish"
    )
    assert line[4] == "0, 2 (2 of 3 seeds; seed 1 did not finish: stopped by hand; no stored run)"
    # stored as a failure (an IPOPT wall-time limit), its time is a lower bound of its own
    _result(tmp_path, "run-x", 1, 300.0, "time_limit")
    (line,) = [c for c in _cells(render_table(table, tmp_path)) if c[0] == "strategy X"]
    assert (
        line[3] == "3 (2–4) over the finished seeds; at least 4 with seed 1, which did not finish"
    )
    assert line[4] == "0, 1, 2"
    assert line[5] == "success ×1, time_limit ×1, iteration_limit ×1"


def test_a_method_line_missing_a_seed_of_the_protocol_says_so(tmp_path):
    table = Table("d", "D", "compare", TABLE.rows, methods=TABLE.methods, seeds=(0, 1, 2))
    for seed in (1, 2):
        _seed(tmp_path, "run-a", seed, [{"method": "fnode", "status": "success", "full_mse": 1e-3}])
    fnode = _lines(render_table(table, tmp_path))[("system A", "fnode")]
    assert fnode[5] == "1, 2 (2 of 3 seeds; seed 0 not stored)"


def _authors_run(root: Path, name: str, entries: list[dict]) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "authors_code.json").write_text(
        json.dumps({"command": "python benchmarks/authors_code_mbdnode.py", "runs": entries})
    )


def test_the_authors_code_table_gives_their_runs_and_committed_arrays_one_run_each(tmp_path):
    from reproduction.published import MBDNODE_AUTHORS, MBDNODE_TABLE4

    entries = [
        {  # the paper's 8.6e-4: their committed arrays give it, their run here 0.08×
            "method": "mbdnode",
            "test_case": "Single_Mass_Spring_Damper",
            "status": "success",
            "full_mse": 7e-5,
            "train_mse": 1e-9,
            "wall_s": 300.0,
            "committed": {"full_mse": 8.6e-4, "component_mse": [3e-5, 1.7e-3]},
        },
        {  # the paper's 1.3e-6: the committed arrays hold it in the first component only
            "method": "mbdnode",
            "test_case": "Single_Mass_Spring_Symplectic",
            "status": "success",
            "full_mse": 3.5e-6,
            "component_mse": [2e-6, 5e-6],
            "committed": {"full_mse": 2.5e-6, "component_mse": [1.4e-6, 3.5e-6]},
        },
        {
            "method": "mbdnode",
            "test_case": "Single_Mass_Spring",
            "status": "failed (exit 1)",
            "full_mse": None,
            "committed": None,
            "log_tail": "Traceback\nRuntimeError: sizes 400 and 3000\n",
        },
    ]
    _authors_run(tmp_path, "mbdnode-table4-authors-code", entries)
    text = render_table(MBDNODE_AUTHORS, tmp_path)
    rows = {(c[1], c[2]): c for c in _cells(text)}
    smsd = rows[(MBDNODE_TABLE4.rows[1].system, "mbdnode")]
    assert smsd[3:8] == ["8.6e-4", "8.6e-4", "1", "7.0e-5", "0.081"]
    cartesian = rows[("MBD-NODE, Cartesian coordinates, RK4", "mbdnode")]
    assert cartesian[6] == "failed (exit 1): RuntimeError: sizes 400 and 3000"
    assert "within 1.5× of the paper in 0 of the 2 entries it scored" in text
    assert "in 1 of the 2 entries they hold" in text
    assert "- single mass-spring, mbdnode_symplectic: committed 1.4e-6, 3.5e-6" in text
    # the table's own column beside our rows: their run and their committed arrays
    table4 = _lines(render_table(MBDNODE_TABLE4, tmp_path))
    assert (
        table4[(MBDNODE_TABLE4.rows[1].system, "mbdnode")][6] == "7.0e-5; committed arrays 8.6e-4"
    )


def test_not_reproduced_lists_each_claim_the_stored_runs_do_not_bear_out(tmp_path):
    from reproduction.published import NOT_REPRODUCED, NOT_RUN

    methods = {
        "sindy": {"status": "success", "vector_field_error": {"box": 0.9, "trajectory": 0.09}},
        "mnn": {
            "status": "success",
            "coefficient_errors": {"exact_support": False, "spurious": ["a", "b"], "missed": []},
            "vector_field_error": {"box": 300.0, "trajectory": 5.5},
        },
    }
    (tmp_path / "mnn-discovery").mkdir()
    (tmp_path / "mnn-discovery" / "discovery.json").write_text(
        json.dumps(
            {
                "command": "python benchmarks/mnn_discovery.py",
                "systems": {"lorenz": {"methods": methods}, "rational": {"methods": methods}},
            }
        )
    )
    for seed in (0, 1, 2):  # the cart-pole LSTM at 20× the paper's 3.2e-4 on every seed
        rows = [{"method": "lstm", "status": "success", "full_mse": 6.4e-3 * (1 + seed / 10)}]
        _seed(tmp_path, "mbdnode-table4-cart_pole", seed, rows)
    _result(tmp_path, "gdopt-table1-I", 0, 400.0, "iteration_limit")
    text = render_table(NOT_REPRODUCED, tmp_path)
    found, unmeasured = text.split("Claims no stored run measures:")
    assert (
        "- MNN §5.1, lorenz, mnn: the paper: recovers the exact equations; ours: 2 spurious terms "
        "(`mnn-discovery`)" in found
    )
    assert (
        "MNN §5.1, rational, mnn: the paper: its field is more accurate than SINDy's; ours: "
        "field error 300 in the box, SINDy's 0.9" in found
    )
    assert "cart-pole (preset mbdnode), lstm: the paper's 3.2e-4; ours 7.0e-3" in found
    assert "22 (20–24)× it over seeds 0, 1, 2" in found
    assert "strategy I (random weights): the paper's run converged; here 1 of 3 seeds" in found
    # a paper entry with no stored run, and the claims no run measures, are listed apart
    assert "FNODE Table 13, triple mass-spring-damper, fnode: no stored run" in unmeasured
    assert all(claim in unmeasured for claim, _ in NOT_RUN)


def test_the_report_lists_the_mnn_claims_it_does_not_reproduce():
    text = (ROOT / "docs" / "results.md").read_text()
    block = text[text.index("<!-- generated: not-reproduced -->") :]
    assert (
        "MNN §5.1, lorenz, mnn: the paper: recovers the exact equations; ours: 12 spurious" in block
    )
    assert (
        "MNN §5.1, rational, mnn: the paper: its field is more accurate than SINDy's; ours: "
        in block
    )
    # its table says so beside the run's status, which only says the benchmark ran
    discovery = text[text.index("<!-- generated: mnn-discovery -->") :]
    lorenz_mnn = next(line for line in discovery.splitlines() if "spurious x': 1, x': z" in line)
    assert "| success | not reproduced: 12 spurious terms |" in lorenz_mnn


def test_every_number_of_the_hand_written_text_is_in_the_ledger():
    from reproduction.prose import untracked

    problems = untracked((ROOT / "docs" / "results.md").read_text())
    assert not problems, "\n".join(problems)


def test_a_number_typed_into_the_hand_written_text_fails():
    from reproduction.prose import untracked

    text = (ROOT / "docs" / "results.md").read_text()
    anchor = "- **HNN on the single mass-spring"
    typed = text.replace(anchor, anchor + " Their committed rollout scores 1.94e-2.", 1)
    assert any("1.94e-2" in p and "not among the numbers" in p for p in untracked(typed))
    # a factor or unit written onto the number does not hide it
    typed = text.replace(anchor, anchor + " Ours is 770x better, in 19min.", 1)
    assert any("770, 19" in p for p in untracked(typed))
    # a paragraph of its own
    before = "## Not reproduced\n"
    typed = text.replace(before, "Table 5's model scores 0.924 here.\n\n" + before, 1)
    (problem,) = untracked(typed)
    assert "0.924 typed in a paragraph the ledger does not list" in problem
    # a number taken out of a paragraph leaves the ledger stale
    gone = text.replace("its seeds 0.97–2.3×, a 2.4× range", "its seeds' range", 1)
    assert any("no longer holds" in p and "0.97" in p for p in untracked(gone))
    # references, dates, seeds and code name rather than measure; a generated block is the
    # generator's
    named = text.replace(
        before,
        "See Table 4, Fig. 10, eq. 19, §5.1 and App. C.4 of 2026-11-27 on seeds 0, 1 and 2 "
        "(`--epochs 450`).\n\n" + before,
        1,
    )
    assert untracked(named) == []
    inside = text.replace(
        "<!-- end generated: mnn-table2 -->", "0.924\n<!-- end generated: mnn-table2 -->", 1
    )
    assert untracked(inside) == []


def test_the_ledger_names_stored_runs_that_exist():
    from reproduction.hand_copied import HAND_COPIED

    results = ROOT / "benchmarks" / "results"
    missing = [run for entry in HAND_COPIED for run in entry.stored if not (results / run).is_dir()]
    assert not missing
    assert all(entry.stored or entry.source for entry in HAND_COPIED)
    assert len({entry.anchor for entry in HAND_COPIED}) == len(HAND_COPIED)
