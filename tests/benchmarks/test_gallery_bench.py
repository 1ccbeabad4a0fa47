"""benchmarks/gallery.py: docs/gallery.md's table holds what the stored full-size run measured
(status, iterations, the consistency verdict), and each figure it shows was drawn."""

import json
import re

import pytest
from load_benchmark import ROOT, load_benchmark

STORED = sorted((ROOT / "benchmarks" / "results" / "gallery").glob("*.json"))
PAGE = ROOT / "docs" / "gallery.md"


def row(name: str) -> list[str]:
    line = next(x for x in PAGE.read_text().splitlines() if x.startswith(f"| `{name}.py`"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_every_example_is_stored():
    names = sorted(p.stem for p in (ROOT / "examples" / "gallery").glob("*.py"))
    assert [p.stem for p in STORED] == names


@pytest.mark.parametrize("path", STORED, ids=[p.stem for p in STORED])
def test_the_table_row_is_the_stored_run(path):
    result = json.loads(path.read_text())["result"]
    cells = row(path.stem)
    status, iterations, _seconds, deviation = cells[4:8]
    assert status == result["status"]
    assert iterations.split(" + ")[0] == str(result["iterations"])
    verdict = "(consistent)" if result["consistent"] else "(inconsistent)"
    assert verdict in deviation or deviation.endswith(", consistent (closed form)")
    shown = float(re.match(r"[0-9.e-]+", deviation).group())
    assert shown == pytest.approx(result["largest_deviation"], rel=0.05)
    assert (ROOT / "docs" / "figures" / "gallery" / f"{path.stem}.png").is_file()


def test_the_runner_runs_an_example_as_a_user_does(monkeypatch):
    bench = load_benchmark("gallery")
    seen = {}

    def run(command, **kwargs):
        seen["command"] = command

        class Done:
            returncode, stdout, stderr = 0, '{"example": "x", "status": "success"}', ""

        return Done()

    monkeypatch.setattr(bench.subprocess, "run", run)
    assert bench.run_example("spiral_neural_ode")["status"] == "success"
    assert seen["command"][1].endswith("spiral_neural_ode.py") and "--figure" in seen["command"]
