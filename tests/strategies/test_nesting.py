"""The algorithm protocol: wrappers nest, traits are checked before any work, phases hand on a
better guess and step aside for a warm start, and limits reach every solve of a nest."""

import time

import numpy as np
import pytest

from collocnode import (
    AdaptiveRefinement,
    ConsensusADMM,
    DynamicOptimizationProblem,
    InconsistentModelWarning,
    IpoptOptions,
    Pretrained,
    RadauIIA,
    SolveContext,
    SolverStatus,
    StopWhenStagnant,
    TimeLimit,
    TrainingSolution,
    UntilConsistent,
    WarmStarted,
    solve,
)
from collocnode.algorithm import final
from collocnode.strategies import ConsensusADMMRecord, PhasedRecord, UntilConsistentRecord
from tests.helpers import RATE, decay_problem

QUIET = IpoptOptions(tol=1e-10, print_level=0)
LEAF = RadauIIA(20, 3, ipopt=QUIET)
ADMM = {"rho": 1.0, "max_rounds": 300, "eps_abs": 1e-6, "eps_rel": 1e-5, "balance": 2.0}


@pytest.fixture(scope="module")
def single():
    return {n: solve(decay_problem(n), LEAF, check=False) for n in (1, 4)}


@pytest.mark.parametrize(("split", "n"), [("trajectories", 4), ("windows", 1)])
def test_admm_blocks_refined_until_consistent_around_a_warm_started_solve(single, split, n):
    """ConsensusADMM(UntilConsistent(WarmStarted(RadauIIA))) reaches the single NLP's (unique)
    optimum; every block's model was checked by the refinement loop."""
    inner = UntilConsistent(WarmStarted(LEAF), max_rounds=2)
    sol = solve(decay_problem(n), ConsensusADMM(inner, blocks=2, split=split, **ADMM))
    res = sol.record(ConsensusADMM)
    assert isinstance(res, ConsensusADMMRecord) and isinstance(sol, TrainingSolution)
    assert res.converged and res.status == SolverStatus.SUCCESS, res.solution.message
    # the chain of windows converges slowly (as with plain blocks, tests/test_admm.py)
    assert sol.p[0] == pytest.approx(single[n].p[0], rel=1e-4 if n > 1 else 5e-4)
    assert sol.p[0] == pytest.approx(RATE, rel=2e-2)
    assert final(res) is res.solution and res.solution.consistency.consistent
    if split == "windows":  # the windows join into the whole horizon's mesh
        assert res.solution.solution.mesh.n_intervals == 20


def test_nested_admm_blocks_keep_the_plain_blocks_rounds(single):
    """A RadauIIA wrapped in a wrapper that changes nothing takes the generic block path
    (a new NLP each round); it ends where the built-once path ends."""
    plain = solve(decay_problem(4), ConsensusADMM(LEAF, blocks=2, **ADMM), check=False)
    nested = solve(
        decay_problem(4), ConsensusADMM(TimeLimit(LEAF, 60.0), blocks=2, **ADMM), check=False
    )
    assert nested.p[0] == pytest.approx(plain.p[0], rel=1e-6)
    plain, nested = plain.record(ConsensusADMM), nested.record(ConsensusADMM)
    assert nested.converged and plain.converged
    assert len(nested.rounds) == len(plain.rounds)


def dop() -> DynamicOptimizationProblem:
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -x, n_states=1, n_params=0, tspan=(0.0, 1.0), x0=[1.0]
    )


@pytest.mark.parametrize(
    ("problem", "alg", "kwargs", "error", "match"),
    [
        (dop, UntilConsistent(LEAF), {}, TypeError, "UntilConsistent solves a TrainingProblem"),
        (
            dop,
            AdaptiveRefinement(WarmStarted(LEAF)),
            {},
            TypeError,
            "AdaptiveRefinement solves a TrainingProblem",
        ),
        (
            lambda: decay_problem(4),
            UntilConsistent(ConsensusADMM(LEAF)),
            {"callback": lambda s: None},
            ValueError,
            "callback is not supported with UntilConsistent",
        ),
        (lambda: decay_problem(4), "RadauIIA", {}, TypeError, "alg must be an algorithm object"),
        (
            lambda: decay_problem(4),
            Pretrained(LEAF),
            {},
            ValueError,
            "Pretrained pre-trains on the start of one trajectory, the problem has 4",
        ),
        (
            lambda: decay_problem(1),
            UntilConsistent(LEAF),
            {"check": False},
            ValueError,
            "check=False turns it off",
        ),
    ],
)
def test_a_nest_that_cannot_solve_the_problem_is_refused_before_any_work(
    problem, alg, kwargs, error, match
):
    with pytest.raises(error, match=match):
        solve(problem(), alg, **kwargs)


def test_final_follows_the_results_of_a_nest():
    trained = solve(decay_problem(1), UntilConsistent(WarmStarted(LEAF)))
    res = trained.record(UntilConsistent)
    assert isinstance(res, UntilConsistentRecord) and res is trained.records[0]
    assert isinstance(res.solution, PhasedRecord) and trained.record(WarmStarted) is res.solution
    assert final(res) is trained
    assert isinstance(trained, TrainingSolution) and trained.consistency.consistent
    assert res.status == trained.status == SolverStatus.SUCCESS
    assert trained.p[0] == pytest.approx(RATE, rel=2e-2)


def test_a_phase_steps_aside_for_a_warm_start():
    problem = decay_problem(1)
    first = solve(problem, WarmStarted(LEAF), check=False).record(WarmStarted)
    assert isinstance(first, PhasedRecord) and first.regression is not None
    assert first.times["warm_start"] > 0 and first.notes["regression"]["iterations"] > 0
    again = WarmStarted(LEAF).solve_problem(problem, SolveContext(warm=first))
    assert isinstance(again, TrainingSolution)  # no regression: the inner solve alone
    assert again.iterations <= 3
    assert again.p[0] == pytest.approx(first.solution.p[0], rel=1e-8)


def test_pretraining_hands_its_weights_to_the_full_problem():
    problem = decay_problem(1)
    alg = Pretrained(LEAF, pretrain=RadauIIA(5, 3, ipopt=QUIET), fraction=0.25)
    res = solve(problem, alg).record(Pretrained)
    pre = final(res.phases["pretrain"])
    assert pre.problem.trajectories[0].tf == pytest.approx(0.5)  # the first quarter of [0, 2]
    assert res.notes["simulation_ok"] and res.times["simulate"] >= 0
    assert final(res).status == SolverStatus.SUCCESS
    assert final(res).p[0] == pytest.approx(RATE, rel=2e-2)
    assert res.iterations == final(res).iterations + pre.iterations


def test_a_users_stop_in_the_pretraining_ends_the_strategy_there():
    alg = StopWhenStagnant(Pretrained(LEAF, fraction=0.25), window=50, rtol=1e-12)
    with pytest.warns(InconsistentModelWarning):  # stopped at its first iterate
        res = solve(decay_problem(1), alg, callback=lambda state: state.iteration == 1)
    res = res.record(Pretrained)
    assert isinstance(res, PhasedRecord) and res.phases == {}
    assert final(res).status == SolverStatus.STOPPED
    assert final(res).problem.trajectories[0].tf == pytest.approx(0.5)


def test_the_stagnation_rule_stops_every_solve_with_its_reason():
    leaf = RadauIIA(20, 3, ipopt=IpoptOptions(tol=1e-14, print_level=0, max_iter=200))
    res = solve(decay_problem(1), StopWhenStagnant(leaf, window=2, rtol=1.0), check=False)
    assert res.status == SolverStatus.STOPPED and "stagnated" in res.message


def test_a_time_limit_caps_every_solve_of_the_nest():
    leaf = RadauIIA(200, 3, ipopt=IpoptOptions(print_level=0, max_iter=3000, tol=1e-14))
    start = time.perf_counter()
    with pytest.warns(InconsistentModelWarning):  # stopped at its first iterate
        res = solve(decay_problem(4), TimeLimit(UntilConsistent(leaf), 1e-3), check=True)
    assert time.perf_counter() - start < 60
    assert final(res).status == SolverStatus.TIME_LIMIT
    # an outer limit that ends sooner wins over a longer inner one
    res = solve(decay_problem(1), TimeLimit(TimeLimit(leaf, 3600.0), 1e-3), check=False)
    assert res.status == SolverStatus.TIME_LIMIT


def test_the_traits_of_a_nest_are_those_all_its_levels_share():
    assert UntilConsistent(LEAF).kinds() == frozenset({"training"})
    assert AdaptiveRefinement(LEAF).kinds() == frozenset({"dop", "training"})
    assert not UntilConsistent(ConsensusADMM(LEAF)).callbacks()
    assert Pretrained(LEAF, pretrain=UntilConsistent(LEAF)).kinds() == frozenset({"training"})
    nest = ConsensusADMM(UntilConsistent(WarmStarted(LEAF)))
    assert nest.leaf() is LEAF
    threaded = nest.map_leaves(lambda leaf: leaf.capped(5.0))
    assert threaded.leaf().ipopt.max_wall_time == 5.0 and nest.leaf().ipopt.max_wall_time is None


def test_a_leaf_without_a_mesh_override_uses_its_own():
    res = LEAF.solve_problem(decay_problem(1), SolveContext(check=None))
    assert res.solution.mesh.n_intervals == 20
    meshes = [RadauIIA(7, 2).mesh_for(h) for h in decay_problem(1).horizons()]
    res = LEAF.solve_problem(decay_problem(1), SolveContext(meshes=meshes))
    assert res.solution.mesh.n_intervals == 7 and int(res.solution.mesh.stages[0]) == 2
    assert np.isfinite(res.objective)
