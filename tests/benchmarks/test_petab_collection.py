"""benchmarks/petab_collection.py: what docs/petab.md says of the stored runs is what the
generator writes from them."""

import json

import pytest
from load_benchmark import ROOT, load_benchmark

RESULTS = ROOT / "benchmarks" / "results"
COLLECTION = RESULTS / "petab-collection" / "petab_collection.json"
DISCONTINUITIES = RESULTS / "petab-collection" / "discontinuities.json"
SCIML = RESULTS / "petab-sciml-suite"
PAGE = ROOT / "docs" / "petab.md"


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("petab_collection")


def test_the_docs_table_and_summary_are_generated_from_the_stored_run(bench):
    run = json.loads(COLLECTION.read_text())
    page = PAGE.read_text()
    assert bench.markdown_table(run, run) in page
    assert bench.summary(run) in page


def test_the_discontinuity_models_sentence_is_generated(bench):
    run = json.loads(DISCONTINUITIES.read_text())
    assert bench.import_summary(run) in PAGE.read_text().replace("\n", " ")


@pytest.mark.parametrize("kind", ["ml_model_import", "sciml_problem_import", "initialization"])
def test_the_sciml_counts_are_the_stored_ones(kind):
    counts = json.loads((SCIML / f"{kind}.json").read_text())["counts"]
    text = " ".join(PAGE.read_text().split())
    assert (
        f"{counts['passed']} passed, {counts['failed']} failed, {counts['refused']} refused" in text
    )


def test_best_known_takes_the_smaller_objective(bench):
    entry = {"peer": {"petab_reference_objective": 5.0, "petab_min_objective": 4.0}}
    assert bench.best_known(entry, 7.0) == 4.0
    assert bench.best_known({"peer": None}, 7.0) == 7.0


def test_within_is_relative_to_the_best(bench):
    assert bench._within(100.05, 100.0)
    assert not bench._within(100.2, 100.0)
    assert not bench._within(None, 100.0)


def test_the_sciml_training_table_is_generated_from_the_stored_run():
    bench = load_benchmark("petab_sciml_training")
    run = json.loads((SCIML / "training.json").read_text())
    assert bench.markdown_table(run["results"]) in PAGE.read_text()


def test_a_model_stopped_at_the_timeout_keeps_what_it_finished(bench, monkeypatch, tmp_path):
    import argparse
    import subprocess

    finished = {"id": "M", "status": "imported", "fits": [{"start": 0, "objective": 3.0}]}

    def killed(command, **kwargs):
        lines = [json.dumps({"id": "M", "status": "imported"}), json.dumps(finished)]
        raise subprocess.TimeoutExpired(command, 9.0, output="\n".join(lines).encode())

    monkeypatch.setattr(bench.subprocess, "run", killed)
    args = argparse.Namespace(
        collection=tmp_path / "Benchmark-Models",
        starts=2,
        seed=0,
        start_seconds=1.0,
        budget=None,
        nominal_seconds=None,
        timeout=9.0,
    )
    record = bench._run_model(args, "M")
    assert record["fits"] == finished["fits"] and record["stopped"] == "timeout"
    assert record["reason"] == "9 s"


def test_the_random_starts_are_summarised_as_they_finish(bench):
    out = {"fits": [{"start": 0, "objective": 10.0}, {"start": 1, "status": "error"}]}
    bench._summarise(out, best=10.0)
    assert out["starts_run"] == 2 and out["best_objective"] == 10.0 and out["gap"] == 0.0
    assert out["fraction_within_0.1%"] == 1.0
