"""Progress a person can watch: the phases of a solve and its iterations, as tqdm bars on a
terminal and as plain lines in a log; IPOPT's own log only at the verbose level; every option
of the command lines described, with its default."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from helpers import decay_problem

from collocnode import IpoptOptions, PhaseProgress, RadauIIA, SolverStatus, solve
from collocnode.tools import _progress as progress

QUIET = IpoptOptions(print_level=0, max_iter=50)
# the paper's cold start: one solve, whose 12 iterations all run
TINY = (
    "vdp",
    "--intervals",
    "20",
    "--stages",
    "3",
    "--max-iter",
    "12",
    "--no-jit",
    "--no-warm-start",
)
LINE = re.compile(r"^\[ *\d+\.\d s\] \S")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_a_terminal_the_phases_and_iterations_are_plain_lines():
    log = io.StringIO()
    with progress.watching(PhaseProgress(file=log, every=5)) as shown:
        sol = solve(decay_problem(), RadauIIA(30, 3, ipopt=QUIET), seed=0)
        shown.close()
    assert sol.status.ok
    text = log.getvalue()
    assert "\r" not in text and "\x1b" not in text  # no bars, no cursor movements
    lines = text.splitlines()
    assert all(LINE.match(line) for line in lines), lines
    phases = [line.split("] ", 1)[1] for line in lines if "iteration" not in line]
    assert phases == ["build", "solve", "check"]
    iterations = [line for line in lines if "solve: iteration" in line]
    # the iteration limit beside the count, not as its denominator: IPOPT converges before it
    assert "] solve: iteration 0 (limit 50), objective " in iterations[0]
    assert ", inf_pr " in iterations[0] and ", inf_du " in iterations[0]
    # every fifth iteration, and the last one
    numbers = [int(re.search(r"iteration (\d+)", line).group(1)) for line in iterations]
    assert numbers[:-1] == list(range(0, 5 * (len(numbers) - 1), 5))
    assert numbers[-1] == sol.iterations > numbers[-2]


def test_the_phases_of_a_strategy_are_named_after_its_parts():
    from collocnode import Pretrained

    log = io.StringIO()
    with progress.watching(PhaseProgress(file=log, every=5)) as shown:
        solve(decay_problem(1), Pretrained(RadauIIA(30, 3, ipopt=QUIET), fraction=0.5), seed=0)
        shown.close()
    phases = [line.split("] ", 1)[1] for line in log.getvalue().splitlines()]
    named = [p for p in phases if "iteration" not in p]
    assert named == [
        "pretraining: build",
        "pretraining: solve",
        "simulation",
        "full problem: build",
        "full problem: solve",
        "check",
    ]
    assert any(p.startswith("full problem: solve: iteration 0 (limit 50)") for p in phases)


def test_on_a_terminal_each_phase_is_a_bar_with_its_elapsed_time():
    screen = _Terminal()
    shown = PhaseProgress(file=screen)
    assert shown.bars
    with progress.watching(shown):
        solve(decay_problem(), RadauIIA(30, 3, ipopt=QUIET), seed=0)
    shown.close()
    text = screen.getvalue()
    assert "\rbuild: " in text and re.search(r"check: \d+\.\d s", text)
    # the solve's bar counts iterations without a total (IPOPT stops when it converges, not at
    # its limit: "8/200 4 %" read as a run cut short) and shows objective and infeasibility
    assert re.search(r"solve: \d+ iterations \[", text), text
    assert "/50" not in text and "%" not in text
    assert "objective=" in text and "inf_pr=" in text


def test_a_jit_build_tells_each_phase_once(monkeypatch):
    """The build goes on after the JIT compile (the NLP is assembled around the compiled node
    functions): the watcher was told "build" a second time, and train_collocation.py printed
    "full problem: build" twice."""
    from collocnode.transcription._nlp import jit

    # the compile's place in the build without gcc's seconds
    monkeypatch.setattr(
        jit, "compile_derivatives", lambda node, bnd, samples, *_: (node, bnd, samples)
    )
    log = io.StringIO()
    with progress.watching(PhaseProgress(file=log, every=5)) as shown:
        sol = solve(decay_problem(), RadauIIA(30, 3, jit=True, ipopt=QUIET), seed=0)
        shown.close()
    assert sol.status.ok
    phases = [line.split("] ", 1)[1] for line in log.getvalue().splitlines()]
    assert [p for p in phases if "iteration" not in p] == ["build", "compile", "solve", "check"]


def test_a_progress_bar_counts_epochs_to_their_number_and_iterations_without_a_total():
    from collocnode import ProgressBar
    from collocnode.transcription._ipopt.iteration import RunInfo

    for unit, total in (("epoch", 40), ("iteration", None)):
        screen = io.StringIO()
        bar = ProgressBar(file=screen)
        bar.on_start(RunInfo(max_iterations=40, n_states=1, n_params=1, unit=unit))
        assert bar.bar.total == total
        bar.on_end()
        shown = screen.getvalue()
        assert ("0/40" in shown) is (total is not None), shown
        assert ("0 iterations [" in shown) is (total is None), shown


def test_progress_is_off_by_default_and_a_switch_of_solve():
    assert progress.current() is None
    with pytest.raises(TypeError, match="progress must be True or False"):
        solve(decay_problem(), RadauIIA(30, 3, ipopt=QUIET), progress="yes")


def test_solve_progress_true_writes_to_standard_error(capsys):
    solve(decay_problem(), RadauIIA(30, 3, ipopt=QUIET), seed=0, progress=True)
    err = capsys.readouterr().err
    assert "] build" in err and "] solve: iteration 0 (limit 50)" in err and "] check" in err
    assert progress.current() is None  # uninstalled after the solve


def test_a_failing_watcher_neither_stops_nor_fails_the_solve():
    class Broken:
        def phase(self, name):
            pass

        def iterations(self):
            def boom(state):
                raise RuntimeError("watcher bug")

            return boom

    seen = []
    with progress.watching(Broken()):
        sol = solve(
            decay_problem(),
            RadauIIA(30, 3, ipopt=QUIET),
            seed=0,
            callback=lambda s: seen.append(s.iteration),
        )
    assert sol.status.ok and seen and sol.status != SolverStatus.CALLBACK_ERROR
    assert "user_callback" in sol.timings


def _train(argv, capfd, tmp_path):
    from collocnode._cli import train_collocation

    code = train_collocation([*argv, "--out", str(tmp_path / "run")])
    out, err = capfd.readouterr()
    return code, out, err


def test_the_script_shows_phases_as_lines_in_a_log_and_ipopt_only_when_verbose(capfd, tmp_path):
    _, out, err = _train(TINY, capfd, tmp_path)
    assert "\r" not in err
    phases = [line.split("] ", 1)[1] for line in err.splitlines() if LINE.match(line)]
    assert phases[:2] == ["build", "solve"] and "evaluation" in phases and "plots" in phases
    assert any(p.startswith("solve: iteration 10 (limit 12)") for p in phases)
    assert "This is Ipopt" not in out and "iter    objective" not in out
    _, out, err = _train((*TINY, "--verbose", "--overwrite"), capfd, tmp_path)
    assert "iter    objective" in out  # IPOPT's own log
    _, out, err = _train((*TINY, "--no-progress", "--overwrite"), capfd, tmp_path)
    assert not [line for line in err.splitlines() if LINE.match(line)]
    assert "iter    objective" not in out


def _actions(parser):
    return [a for a in parser._actions if a.option_strings and a.dest != "help"]


def _helps(parser):
    formatter = parser._get_formatter()
    return {a.option_strings[-1]: formatter._expand_help(a) for a in _actions(parser)}


def test_every_option_of_the_scripts_has_a_description_and_its_default(monkeypatch):
    from collocnode import _experiments as experiments
    from collocnode._cli.compare_command import _parser as compare_parser
    from collocnode._cli.train_command import _parser as train_parser

    # the reproduction report's command is repository bookkeeping in benchmarks/, not the package
    monkeypatch.syspath_prepend(Path(__file__).resolve().parents[1] / "benchmarks")
    from reproduction.command import _parser as report_parser

    parsers = {"compare": compare_parser(), "reproduction_report": report_parser()}
    names = sorted(experiments.EXPERIMENTS)
    for name in names:
        exp = experiments.get(name)
        options_cls, _ = exp.load()
        parsers[name] = train_parser(exp.summary, names, options_cls)
    for script, parser in parsers.items():
        for flag, text in _helps(parser).items():
            description = text.split("(default")[0].strip()
            assert len(description) > 3, (script, flag, text)
            assert "default" in text, (script, flag, text)
            assert "\n" not in text, (script, flag)
    helps = _helps(parsers["vdp"])
    assert helps["--stages"] == "Radau IIA stages per interval (order 2·stages − 1) (default: 5)"
    assert helps["--no-jit"].endswith("(default: auto)")
    assert helps["--hidden"].endswith("(default: 5,5)")
    # the command line decides IPOPT's output level: --help says so, not the recipe's 5
    assert helps["--print-level"].endswith("(default: 0, or 5 with --verbose)")
    assert _helps(parsers["compare"])["--seed"].endswith("(default: 0)")
