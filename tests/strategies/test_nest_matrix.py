"""Every wrapper in every position: each ordered pair of wrappers around one collocation leaf
either solves a small training problem, returning the one solution type with the records of
the nest, or is refused at validation with one error naming both levels (and nothing else is
refused)."""

import warnings

import numpy as np
import pytest

from collocnode import (
    Auto,
    ConsensusADMM,
    ConsistencyCheck,
    Discovered,
    IpoptOptions,
    Multistart,
    NeuralODE,
    Pretrained,
    RadauIIA,
    RegularizationPath,
    SolveContext,
    SolverStatus,
    StopWhenSettled,
    StopWhenStagnant,
    TimeLimit,
    TrainingProblem,
    TrainingSolution,
    Trajectory,
    UntilConsistent,
    WarmStarted,
    solve,
)
from collocnode.algorithm import Wrapper
from collocnode.nn import MLP
from collocnode.strategies import PhasedRecord, RegularizationPathRecord, UntilConsistentRecord
from collocnode.training._callbacks import block_outputs

LEAF = RadauIIA(8, 2, ipopt=IpoptOptions(print_level=0, max_iter=60))
GRID = np.column_stack([np.linspace(-1.0, 1.0, 4), np.linspace(1.0, -1.0, 4)])

#: one factory per wrapper, each with settings that keep a nest of two small
WRAPPERS = {
    "Auto": lambda inner: Auto(
        inner, until_consistent=1, path=RegularizationPath(lambdas=(1e-3, 1e-6), refit=False)
    ),
    "AdaptiveRefinement": lambda inner: _adaptive(inner),
    "UntilConsistent": lambda inner: UntilConsistent(inner, max_rounds=2),
    "WarmStarted": WarmStarted,
    "Pretrained": lambda inner: Pretrained(inner, fraction=0.5),
    "StopWhenStagnant": lambda inner: StopWhenStagnant(inner, window=5, rtol=1e-6),
    "StopWhenSettled": lambda inner: StopWhenSettled(inner, block_outputs("f", GRID), rtol=1e-3),
    "TimeLimit": lambda inner: TimeLimit(inner, 120.0),
    "RegularizationPath": lambda inner: RegularizationPath(inner, lambdas=(1e-3, 1e-6)),
    "Multistart": lambda inner: Multistart(inner, starts=2),
    "ConsensusADMM": lambda inner: ConsensusADMM(
        inner, blocks=2, split="windows", rho=1.0, max_rounds=4
    ),
    "Discovered": Discovered,
}

#: the wrappers that hand their inner algorithm meshes, and those that hand it a warm start
HANDS_MESHES = ("AdaptiveRefinement", "UntilConsistent", "ConsensusADMM")
HANDS_WARM = (*HANDS_MESHES, "RegularizationPath")
#: the pairs refused at validation (outer, inner), with what the message says: a level that
#: hands down a context field the level below would ignore, a level that needs the problem's own
#: model around one that replaces it, and Auto, whose final solve refines until consistent
REFUSED = {
    **{
        (o, i): rf"{o} hands meshes to {i}, which would ignore"
        for o in HANDS_MESHES
        for i in ("ConsensusADMM", "RegularizationPath", "Auto")
    },
    **{(o, "Multistart"): rf"{o} hands a warm start to Multistart" for o in HANDS_WARM},
    **{
        ("Auto", i): rf"Auto solves by \w+\({i}\): .* which would ignore"
        for i in ("ConsensusADMM", "RegularizationPath", "Auto", "Multistart")
    },
    **{
        (o, "Discovered"): rf"{o} needs Discovered to train the problem's own model"
        for o in ("ConsensusADMM", "Discovered")
    },
}


def _adaptive(inner):
    from collocnode import AdaptiveRefinement

    return AdaptiveRefinement(inner, tol=1e-4, max_rounds=2)


def oscillator() -> TrainingProblem:
    """x' = y, y' = -x, lightly noisy; a linear network represents it exactly."""
    t = np.linspace(0.0, 4.0, 21)
    x = np.column_stack([np.cos(t), -np.sin(t)])
    x += 0.01 * np.random.default_rng(0).standard_normal(x.shape)
    model = NeuralODE(MLP((2, 2), "identity"))
    return TrainingProblem(model, Trajectory(t, x), initial_state="data")


def record_types(alg) -> tuple[type, ...]:
    """The record classes the wrappers of a nest may leave (Auto's: also those of the nest it
    builds)."""
    kinds = set()
    while isinstance(alg, Wrapper):
        if alg.record_type is not None:
            kinds.add(alg.record_type)
        if isinstance(alg, Auto):
            kinds |= {UntilConsistentRecord, PhasedRecord, RegularizationPathRecord}
        alg = alg.inner
    return tuple(kinds)


PAIRS = [(o, i) for o in WRAPPERS for i in WRAPPERS]


@pytest.mark.parametrize(("outer", "inner"), PAIRS, ids=[f"{o}({i})" for o, i in PAIRS])
def test_every_pair_of_wrappers_solves_or_is_refused_at_validation(outer, inner):
    alg = WRAPPERS[outer](WRAPPERS[inner](LEAF))
    problem = oscillator()
    if (outer, inner) in REFUSED:
        with pytest.raises(TypeError, match=REFUSED[outer, inner]):
            alg.validate(problem, SolveContext(check=ConsistencyCheck()))
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # inconsistent, unverified, undiscovered: all allowed
        sol = solve(problem, alg, seed=0)
    assert isinstance(sol, TrainingSolution)
    assert isinstance(sol.status, SolverStatus) and np.all(np.isfinite(sol.p))
    allowed = record_types(alg)
    assert all(isinstance(r, allowed) for r in sol.records), [type(r) for r in sol.records]
    if WRAPPERS[outer](LEAF).record_type is not None:
        assert sol.records[0] is sol.record(type(alg))
    assert len(sol.describe().splitlines()) == len(sol.records)
    assert sol.summary().splitlines()[0].startswith("status")
