"""MNN §5.1's benchmark: a run merged into a stored record keeps which run measured which cell."""

from __future__ import annotations

import pytest
from load_benchmark import load_benchmark

pytest.importorskip("pysindy")
discovery = load_benchmark("mnn_discovery")


def _record(command: str, created: str, systems: dict, **extra) -> dict:
    header = {"command": command, "machine": "m", "created": created, "load_at_start": 0.1}
    return {**header, "quick": False, "systems": systems, **extra}


def test_a_merged_run_adds_its_methods_and_lists_both_runs():
    earlier = _record(
        "python benchmarks/mnn_discovery.py --systems planar",
        "2026-11-26T18:33:07",
        {
            "planar": {"form": "identity", "methods": {"sindy": {"status": "success"}}},
            "lorenz": {"form": "identity", "methods": {"mnn": {"status": "success"}}},
        },
        note="lorenz without collocation",
    )
    run = _record(
        "python benchmarks/mnn_discovery.py --systems lorenz --methods collocation",
        "2026-12-03T21:00:00",
        {"lorenz": {"form": "identity", "methods": {"collocation": {"status": "time_limit"}}}},
    )
    out = discovery.merged(earlier, run)
    assert out["systems"]["planar"] == earlier["systems"]["planar"]
    assert set(out["systems"]["lorenz"]["methods"]) == {"mnn", "collocation"}
    assert out["systems"]["lorenz"]["methods"]["collocation"]["status"] == "time_limit"
    assert out["command"] == f"{earlier['command']} && {run['command']}"
    first, second = out["runs"]
    assert first["note"] == "lorenz without collocation" and "note" not in out
    assert first["created"] == "2026-11-26T18:33:07"
    assert second["systems"] == {"lorenz": ["collocation"]}
    # the inputs are not changed, and a third run appends to the list
    assert "runs" not in earlier and set(earlier["systems"]["lorenz"]["methods"]) == {"mnn"}
    again = discovery.merged(out, run)
    assert len(again["runs"]) == 3


def test_a_method_run_again_replaces_the_stored_one():
    earlier = _record("a", "t0", {"tanh": {"methods": {"mnn": {"status": "failed"}}}})
    run = _record("b", "t1", {"tanh": {"methods": {"mnn": {"status": "success"}}}})
    assert discovery.merged(earlier, run)["systems"]["tanh"]["methods"]["mnn"]["status"] == (
        "success"
    )
