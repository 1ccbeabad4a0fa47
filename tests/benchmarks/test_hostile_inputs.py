"""``benchmarks/hostile_inputs.py``: its classifier on cases with known outcomes (a clear library
error, a RuntimeError, an accepting fake, a crash, a hang, script exits) and the case list's
coverage of every public constructor."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from load_benchmark import load_benchmark

hi = load_benchmark("hostile_inputs")
Case = hi.Case


def run(case: Case, tmp_path: Path) -> tuple[str, str]:
    result = hi.run_case(case, tmp_path)
    return result.outcome, result.message


def test_a_clear_library_error_is_classified_clear(tmp_path):
    from collocnode import IpoptOptions

    case = Case("IpoptOptions", "tol=-1", "tol", call=lambda: IpoptOptions(tol=-1.0))
    outcome, message = run(case, tmp_path)
    assert outcome == "clear"
    assert message.startswith("ValueError: ") and "tol" in message


def test_an_error_that_does_not_name_the_field_is_a_traceback(tmp_path):
    from collocnode import IpoptOptions

    case = Case("IpoptOptions", "tol=-1", "max_iter", call=lambda: IpoptOptions(tol=-1.0))
    assert run(case, tmp_path)[0] == "traceback"


def fails_inside() -> None:
    raise RuntimeError("something broke deep inside")


def test_a_runtime_error_is_a_traceback_even_if_it_names_the_field(tmp_path):
    case = Case("fake", "raises RuntimeError", "inside", call=fails_inside)
    outcome, message = run(case, tmp_path)
    assert outcome == "traceback"
    assert message == "RuntimeError: something broke deep inside"


def test_a_fake_that_accepts_bad_input_is_silent(tmp_path):
    case = Case("fake", "accepts anything", "x", call=lambda: 42)
    outcome, message = run(case, tmp_path)
    assert outcome == "silent"
    assert "42" in message


def test_legitimate_input_accepted_sanely_is_accepted_and_insanely_is_silent(tmp_path):
    sane = Case("fake", "int for float", expect="accept", call=lambda: 2.0, sane=lambda r: r == 2)
    assert run(sane, tmp_path)[0] == "accepted"
    insane = Case("fake", "int for float", expect="accept", call=lambda: 3.0, sane=lambda r: r == 2)
    assert run(insane, tmp_path)[0] == "silent"


def test_a_clear_error_on_legitimate_input_is_refused_unless_either_is_fine(tmp_path):
    def refuse() -> None:
        raise ValueError("x must be a float, got 2")

    assert run(Case("fake", "int", "x", "accept", refuse), tmp_path)[0] == "refused"
    assert run(Case("fake", "int", "x", "either", refuse), tmp_path)[0] == "clear"
    assert run(Case("fake", "int", "x", "either", lambda: 2), tmp_path)[0] == "accepted"


def segfault() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def exhaust_memory() -> bytearray:
    return bytearray(2 * hi.MEMORY_HEADROOM)


def test_a_dying_process_or_memory_exhaustion_is_a_crash_and_the_runner_survives(tmp_path):
    assert run(Case("fake", "segfault", "x", call=segfault), tmp_path)[0] == "crash"
    outcome, message = run(Case("fake", "huge allocation", "x", call=exhaust_memory), tmp_path)
    assert outcome == "crash"
    assert "MemoryError" in message


def test_a_case_past_its_time_limit_is_a_hang(tmp_path):
    case = Case("fake", "sleeps", "x", call=lambda: time.sleep(60), timeout=1.0)
    start = time.perf_counter()
    assert run(case, tmp_path)[0] == "hang"
    assert time.perf_counter() - start < 10


def script(code: str, field: str = "--foo", expect: str = "error", **kw) -> Case:
    return Case("fake.py", "fake script", field, expect, argv=[sys.executable, "-c", code], **kw)


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (
            "import sys; sys.stderr.write('p: error: --foo must be > 0, got -1\\n'); sys.exit(2)",
            "clear",
        ),
        ("import sys; sys.stderr.write('p: error: bad value\\n'); sys.exit(2)", "traceback"),
        ("import sys; sys.stderr.write('--foo\\nsecond line\\n'); sys.exit(2)", "traceback"),
        ("raise ValueError('--foo is bad')", "traceback"),
        (
            "import sys; sys.stderr.write('error in phase train: --foo\\n'); sys.exit(1)",
            "traceback",
        ),
        ("pass", "silent"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "crash"),
    ],
)
def test_script_exits_are_classified_by_code_and_stderr(tmp_path, code, outcome):
    assert run(script(code), tmp_path)[0] == outcome


def test_a_script_that_does_not_converge_may_exit_1_when_the_input_is_legitimate(tmp_path):
    case = script("import sys; sys.exit(1)", expect="accept", codes=(0, 1))
    assert run(case, tmp_path)[0] == "accepted"


def test_a_real_script_case_from_the_list_is_clear(tmp_path):
    (case,) = [c for c in hi.all_cases() if c.label == "train_collocation.py: vdp --stages '0'"]
    outcome, message = run(case, tmp_path)
    assert outcome == "clear", message
    assert "stages" in message


def test_the_cases_cover_every_public_constructor_and_entry_point():
    cases = hi.all_cases()
    targets = {c.target for c in cases}
    wanted = {
        "Trajectory", "MLP", "RationalChebyshev", "HybridModel", "NeuralODE", "Parameter",
        "TrainingProblem", "DynamicOptimizationProblem", "Constraint", "Inputs", "Mesh",
        "RadauIIA", "IpoptOptions", "OrderingTrial", "PartialQuasiNewton", "AdaptiveRefinement",
        "solve", "simulate", "TrainingSolution.simulate", "problems.get", "save_model",
        "load_model", "SystemRecipe", "compare.make_trainer", "train_collocation.py", "compare.py",
    }  # fmt: skip
    assert wanted <= targets, wanted - targets
    assert len(cases) >= 300
    assert len({c.label for c in cases}) == len(cases)
    assert any("BlockConstraint" in c.name for c in cases)
