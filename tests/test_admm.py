"""Consensus ADMM training: it reaches the single NLP's optimum where that optimum is unique, its
windows join into one trajectory, its blocks run alike in this process and as Dask actors, and
bad settings are refused before any work."""

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    ConsensusADMM,
    HybridModel,
    IpoptOptions,
    Parameter,
    RadauIIA,
    SolverStatus,
    TrainingProblem,
    solve,
)
from collocnode.strategies import ConsensusADMMRecord
from tests.helpers import RATE, decay_problem

INNER = RadauIIA(20, 3, ipopt=IpoptOptions(tol=1e-10, print_level=0))


def admm(**fields) -> ConsensusADMM:
    settings = {"rho": 1.0, "max_rounds": 300, "eps_abs": 1e-6, "eps_rel": 1e-5, "balance": 2.0}
    settings.update(fields)
    return ConsensusADMM(INNER, **settings)


@pytest.fixture(scope="module")
def monolithic():
    return {n: solve(decay_problem(n), INNER, check=False) for n in (1, 4)}


@pytest.mark.parametrize("blocks", [1, 2, 4])
def test_trajectory_blocks_reach_the_single_nlp_optimum(monolithic, blocks):
    res = solve(decay_problem(4), admm(blocks=blocks), check=False).record(ConsensusADMM)
    assert isinstance(res, ConsensusADMMRecord)
    assert res.converged and res.status == SolverStatus.SUCCESS, res.solution.message
    assert res.solution.p[0] == pytest.approx(monolithic[4].p[0], rel=1e-4)
    assert res.solution.p[0] == pytest.approx(RATE, rel=1e-2)
    # the states are the blocks' own, in the trajectories' order
    sol = res.solution
    assert sol.n_segments == 4
    for k in range(4):
        d = sol.problem.trajectories[k]
        np.testing.assert_allclose(sol.solution.states(d.t, k)[:, 0], d.x[:, 0], atol=0.05)
    last = res.rounds[-1]
    assert last.primal_residual <= last.eps_primal and last.dual_residual <= last.eps_dual


@pytest.mark.parametrize("blocks", [2, 3])
def test_windows_join_into_one_trajectory_at_the_single_nlp_optimum(monolithic, blocks):
    res = solve(decay_problem(1), admm(blocks=blocks, split="windows"), check=False).record(
        ConsensusADMM
    )
    assert res.converged, res.solution.message
    # the chain of windows converges slowly (a join's information moves one window per round)
    assert res.solution.p[0] == pytest.approx(monolithic[1].p[0], rel=5e-4)
    sol = res.solution.solution
    assert sol.mesh == INNER.mesh_for((0.0, 2.0))
    # the joined node states are the monolithic ones (the joins agree to the tolerance)
    np.testing.assert_allclose(sol.x_nodes, monolithic[1].solution.x_nodes, atol=1e-4)
    # the result simulates and is checked like any trained model
    x = res.solution.simulate(np.linspace(0, 2, 5)).x[:, 0]
    np.testing.assert_allclose(
        x, sol.x_nodes[0, 0] * np.exp(-res.solution.p[0] * np.linspace(0, 2, 5))
    )


@pytest.mark.parametrize(
    ("n_trajectories", "fields"),
    [(4, {"blocks": 4, "balance": 0.0}), (1, {"blocks": 2, "split": "windows"})],
)
def test_acceleration_reaches_the_optimum_in_fewer_rounds(monolithic, n_trajectories, fields):
    # measured on this problem: 47 -> 30 rounds (4 blocks, fixed rho), 52 -> 39 (2 windows)
    plain = solve(decay_problem(n_trajectories), admm(**fields), check=False).record(ConsensusADMM)
    fast = solve(
        decay_problem(n_trajectories), admm(acceleration=True, **fields), check=False
    ).record(ConsensusADMM)
    assert plain.converged and fast.converged, fast.solution.message
    rel = 1e-4 if n_trajectories > 1 else 5e-4
    assert fast.solution.p[0] == pytest.approx(monolithic[n_trajectories].p[0], rel=rel)
    assert len(fast.rounds) < len(plain.rounds)


def test_a_round_limit_is_reported_as_such():
    res = solve(
        decay_problem(4), admm(blocks=2, max_rounds=2, rho=1e3, balance=0), check=False
    ).record(ConsensusADMM)
    assert not res.converged
    assert res.status == SolverStatus.ITERATION_LIMIT
    assert "max_rounds = 2" in res.solution.message
    assert [r.round for r in res.rounds] == [-1, 0, 1]  # the warm start, then two rounds


@pytest.mark.parametrize(
    "problem, alg, error, match",
    [
        (decay_problem(4), admm(blocks=5), ValueError, "blocks = 5 is more than the problem's 4"),
        (decay_problem(4), admm(blocks=2, split="windows"), ValueError, "cuts one trajectory"),
        (
            decay_problem(1),
            admm(blocks=21, split="windows"),
            ValueError,
            "blocks = 21 windows need at least one collocation interval each, the mesh has 20",
        ),
    ],
)
def test_a_split_that_does_not_fit_is_refused(problem, alg, error, match):
    with pytest.raises(error, match=match):
        solve(problem, alg)


@pytest.mark.parametrize(
    "fields, match",
    [
        ({"blocks": 0}, "blocks"),
        ({"split": "rows"}, "split"),
        ({"rho": 0.0}, "rho"),
        ({"relaxation": 2.0}, r"relaxation must lie in \(0, 2\), got 2.0"),
        ({"balance": 0.5}, "balance must be 0"),
        ({"factor": 1.0}, "factor must be > 1"),
        ({"inner": "radau"}, "inner must be an algorithm object"),
        ({"restart": 1.0}, r"restart must lie in \(0, 1\), got 1.0"),
        ({"acceleration": "yes"}, "acceleration must be True or False, got 'yes'"),
        ({"acceleration": True, "relaxation": 1.5}, "acceleration needs relaxation = 1"),
    ],
)
def test_bad_settings_name_the_field(fields, match):
    with pytest.raises((TypeError, ValueError), match=match):
        ConsensusADMM(**fields)


def test_admm_needs_a_training_problem_and_no_callback():
    dop = decay_problem(4).to_dop(np.array([0.5]))
    with pytest.raises(TypeError, match="ConsensusADMM solves a TrainingProblem"):
        solve(dop, admm())
    with pytest.raises(ValueError, match="callback is not supported with ConsensusADMM"):
        solve(decay_problem(4), admm(), callback=lambda state: None)


def test_blocks_as_dask_actors_take_the_same_rounds_as_in_process(cluster):
    from distributed import Client

    problem = decay_problem(4)
    local = solve(problem, admm(blocks=2), check=False).record(ConsensusADMM)
    with Client(cluster.scheduler_address) as client:
        remote = solve(problem, admm(blocks=2, client=client), check=False).record(ConsensusADMM)
    assert remote.converged
    assert len(remote.rounds) == len(local.rounds)
    # the projection to one worker per block: the slowest build and block of every round
    builds = max(remote.build_s)
    assert builds < remote.critical_path_s <= builds + sum(sum(r.block_s) for r in remote.rounds)
    assert remote.solution.p[0] == pytest.approx(local.solution.p[0], rel=1e-10)
    for a, b in zip(remote.rounds, local.rounds, strict=True):
        assert a.primal_residual == pytest.approx(b.primal_residual, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("losses", [1, 2])
def test_a_lost_worker_is_rebuilt_as_dask_allows_then_the_rounds_end_failed(monkeypatch, losses):
    """The worker holding block 0 is killed before round 2 (and before round 4), with Dask's
    allowed-failures at 1: the first loss rebuilds the block on a live worker and the run
    converges to the same optimum; a second loss of the same block ends the rounds with status
    FAILED and the consensus so far (a partial result, as SciML returns a failed retcode with
    the last iterate), not an exception that discards every round."""
    import os
    import signal

    import dask
    from distributed import Client, LocalCluster

    from collocnode.strategies._admm import blocks as admm_blocks

    original = admm_blocks.Actors.solve
    rounds = []

    def solve_and_kill(self, rho, center):
        rounds.append(len(rounds))
        if rounds[-1] in (2, 4)[:losses]:
            address = self.actors[0]._address
            pid = self.client.run(os.getpid, workers=[address])[address]
            os.kill(pid, signal.SIGKILL)
        return original(self, rho, center)

    monkeypatch.setattr(admm_blocks.Actors, "solve", solve_and_kill)
    problem = decay_problem(4)
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 1}),
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        res = solve(problem, admm(blocks=2, client=client), check=False).record(ConsensusADMM)
    reference = solve(problem, admm(blocks=2), check=False).record(ConsensusADMM)
    assert res.events[0].startswith("block 0: worker lost")
    if losses == 1:
        assert res.converged, res.solution.message
        assert len(res.events) == 1
        assert res.solution.p[0] == pytest.approx(reference.solution.p[0], rel=1e-4)
        return
    assert res.status == SolverStatus.FAILED and not res.converged
    message = res.solution.solution.message
    assert "ADMM block 0: its worker was lost 2 times" in message
    assert "allowed-failures = 1" in message
    # every round before the loss is kept, and the consensus parameters are a usable model
    assert len(res.rounds) == 1 + 4  # the warm start and rounds 0-3
    assert np.all(np.isfinite(res.solution.p)) and abs(res.solution.p[0] - RATE) < abs(
        0.5 - RATE
    )  # from k = 0.5
    t = np.linspace(0.0, 1.0, 5)
    assert np.all(np.isfinite(res.solution.simulate(t, np.array([1.0])).x))


def test_allowed_failures_is_dasks_own_setting():
    import dask

    from collocnode.strategies._admm.blocks import allowed_failures

    assert allowed_failures() == dask.config.get("distributed.scheduler.allowed-failures") == 3
    with dask.config.set({"distributed.scheduler.allowed-failures": 7}):
        assert allowed_failures() == 7


def test_workers_that_cannot_import_collocnode_are_refused_before_any_work(cluster, monkeypatch):
    from distributed import Client

    from collocnode.strategies._admm import blocks as admm_blocks

    # what a worker without the package answers to find_spec("collocnode")
    monkeypatch.setattr(admm_blocks, "find_spec", lambda name: None)
    with Client(cluster.scheduler_address) as client:
        with pytest.raises(ValueError, match=r"client: 2 of 2 workers cannot import collocnode"):
            solve(decay_problem(4), admm(blocks=2, client=client))


class _LockedInputs:
    """Known inputs that cannot be sent to another process (they hold a lock)."""

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()

    def __call__(self, t):
        return np.zeros((np.size(t), 1))


def test_a_problem_that_cannot_be_sent_to_the_workers_is_named(cluster):
    from distributed import Client

    data = decay_problem(4).data
    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, b, p: ca.vertcat(-p["k"] * x[0] + u[0]),
        parameters={"k": Parameter(0.5, fit=True)},
        n_inputs=1,
    )
    problem = TrainingProblem(model, data, inputs=[_LockedInputs()] * 4)
    with Client(cluster.scheduler_address) as client:
        with pytest.raises(ValueError, match=r"cannot be sent to the workers.*TypeError.*lock"):
            solve(problem, admm(blocks=2, client=client), check=False)


def test_the_result_saves_and_loads_like_any_trained_model(tmp_path):
    from collocnode import NeuralODE
    from collocnode.nn import MLP
    from collocnode.serialize import load_model, save_model

    data = decay_problem(4).data
    problem = TrainingProblem(NeuralODE([MLP((1, 3, 1), "tanh")]), data, regularization=1e-4)
    res = solve(problem, admm(blocks=2, max_rounds=3), seed=0, check=False).record(ConsensusADMM)
    path = save_model(tmp_path / "model.json", res.solution)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.p, res.solution.p)
    t = np.linspace(0.0, 2.0, 5)
    np.testing.assert_allclose(
        loaded.simulate(t, np.array([1.0])).x,
        res.solution.simulate(t, np.array([1.0])).x,
        rtol=1e-12,
    )


def test_a_scheduler_address_is_connected_to_checked_and_closed(cluster):
    res = solve(
        decay_problem(4), admm(blocks=2, client=cluster.scheduler_address), check=False
    ).record(ConsensusADMM)
    assert res.converged
    with pytest.raises(ValueError, match=r"scheduler = 'tcp://127\.0\.0\.1:9' cannot be reached"):
        solve(decay_problem(4), admm(blocks=2, client="tcp://127.0.0.1:9"))
    with pytest.raises(TypeError, match=r"client must be a distributed\.Client"):
        admm(client=8786)
