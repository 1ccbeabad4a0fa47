"""The advisory on slow exact-Hessian iterations: nodes x states x parameters² past a measured
limit warns once before the build, naming the numbers and what to try; below it, or with another
Hessian, nothing is said."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from collocnode import (
    FactorizationCostWarning,
    IpoptOptions,
    Mesh,
    NeuralODE,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP
from collocnode.transcription._nlp import build
from collocnode.transcription._nlp.build import check_factorization, factorization_work
from tests.helpers import too_large_for_memory


def training(k: int = 2, hidden: int = 3) -> TrainingProblem:
    """K short trajectories of a linear oscillator, two 2-h-1 networks."""
    t = np.linspace(0.0, 1.0, 11)
    data = [
        Trajectory(t, np.column_stack([a * np.cos(t), -a * np.sin(t)]))
        for a in np.linspace(1.0, 2.0, k)
    ]
    model = NeuralODE([MLP((2, hidden, 1), "tanh") for _ in range(2)])
    return TrainingProblem(model, data, regularization=1e-4, initial_state="data")


def dop_and_meshes(k: int = 2, intervals: int = 5, stages: int = 3):
    problem = training(k)
    dop = problem.to_dop(params_guess=problem.model.init_params(np.random.default_rng(0)))
    meshes = [Mesh.equidistant(*seg.tspan, intervals, stages) for seg in dop.all_segments()]
    return dop, meshes


def test_the_work_is_nodes_times_states_times_parameters_squared():
    dop, meshes = dop_and_meshes(k=2, intervals=5, stages=3)
    n_params = 2 * (2 * 3 + 3 + 3 + 1)  # two 2-3-1 networks: 26 weights
    assert dop.n_nlp_params == n_params
    assert factorization_work(dop, meshes) == (2 * 5 * 3) * 2 * n_params**2


@pytest.fixture(autouse=True)
def few_parameters_warn_too(monkeypatch):
    """The small test problems have 26 parameters: below the least that warns (but see
    :func:`test_many_nodes_and_few_weights_are_not_told_to_leave_the_exact_hessian`)."""
    monkeypatch.setattr(build, "MIN_WARNED_PARAMS", 1)


def test_it_warns_above_the_limit_and_names_the_numbers(monkeypatch):
    dop, meshes = dop_and_meshes()
    work = factorization_work(dop, meshes)  # 30 nodes x 2 states x 26² = 40,560
    monkeypatch.setattr(build, "FACTORIZATION_WORK_LIMIT", work - 1)
    with pytest.warns(FactorizationCostWarning) as caught:
        check_factorization(dop, meshes, "exact")
    (message,) = [str(w.message) for w in caught]
    assert "\n" not in message
    assert "30 collocation nodes x 2 states x 26 parameters² = 4.06e+04" in message
    low, high = (s * work for s in build.S_PER_FACTORIZATION_WORK)
    assert f"about {low:.2g}-{high:.2g} s per IPOPT iteration" in message
    assert 'hessian="limited-memory"' in message
    assert "ConsensusADMM" in message  # several trajectories


def test_one_trajectory_is_not_told_to_split_into_blocks(monkeypatch):
    dop, meshes = dop_and_meshes(k=1)
    monkeypatch.setattr(build, "FACTORIZATION_WORK_LIMIT", 0)
    with pytest.warns(FactorizationCostWarning) as caught:
        check_factorization(dop, meshes, "exact")
    assert "ConsensusADMM" not in str(caught[0].message)


@pytest.mark.parametrize("hessian", ["exact", "limited-memory"])
def test_at_or_below_the_limit_or_without_the_exact_hessian_it_is_silent(monkeypatch, hessian):
    dop, meshes = dop_and_meshes()
    limit = factorization_work(dop, meshes) if hessian == "exact" else 0
    monkeypatch.setattr(build, "FACTORIZATION_WORK_LIMIT", limit)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FactorizationCostWarning)
        check_factorization(dop, meshes, hessian)


def test_a_solve_warns_before_it_builds_and_solves_as_before(monkeypatch):
    monkeypatch.setattr(build, "FACTORIZATION_WORK_LIMIT", 1000)
    alg = RadauIIA(5, 3, ipopt=IpoptOptions(max_iter=2, print_level=0))
    with pytest.warns(FactorizationCostWarning, match=re.escape("15 collocation nodes x 2 states")):
        sol = solve(training(k=1), alg, seed=0, check=False)
    assert sol.iterations == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", FactorizationCostWarning)
        alg = RadauIIA(5, 3, hessian="limited-memory", ipopt=alg.ipopt)
        solve(training(k=1), alg, seed=0, check=False)


def test_many_nodes_and_few_weights_are_not_told_to_leave_the_exact_hessian(monkeypatch):
    monkeypatch.setattr(build, "MIN_WARNED_PARAMS", 200)
    # 26 weights on 2 x 30,000 x 3 nodes: work 2.4e9, past the limit, but few weights
    dop, meshes = dop_and_meshes(k=2, intervals=30_000, stages=3)
    assert factorization_work(dop, meshes) > build.FACTORIZATION_WORK_LIMIT
    with warnings.catch_warnings():
        warnings.simplefilter("error", FactorizationCostWarning)
        check_factorization(dop, meshes, "exact")
    monkeypatch.setattr(build, "MIN_WARNED_PARAMS", 26)
    with pytest.warns(FactorizationCostWarning):
        check_factorization(dop, meshes, "exact")


def test_the_default_limit_is_far_above_a_small_problem():
    dop, meshes = dop_and_meshes()
    assert factorization_work(dop, meshes) < build.FACTORIZATION_WORK_LIMIT / 1000


@pytest.mark.parametrize("intervals, warns", [(49, False), (50, True)])
def test_the_measured_limit_lies_between_these_two_meshes(intervals, warns):
    # two trajectories, two 2-51-1 networks (410 weights): 294 or 300 nodes x 2 states x 410²
    # = 9.88e7 or 1.0086e8 against the limit of 1e8
    problem = training(k=2, hidden=51)
    dop = problem.to_dop(params_guess=problem.model.init_params(np.random.default_rng(0)))
    meshes = [Mesh.equidistant(*seg.tspan, intervals, 3) for seg in dop.all_segments()]
    assert dop.n_nlp_params == 410
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_factorization(dop, meshes, "exact")
    found = [str(w.message) for w in caught if w.category is FactorizationCostWarning]
    assert bool(found) is warns
    if warns:
        assert found[0].startswith(
            "the exact-Hessian NLP has 300 collocation nodes x 2 states x 410 parameters² = "
            "1.01e+08 (above 1e+08), about 0.15-1.5 s per IPOPT iteration; try "
        )


def test_an_nlp_refused_for_memory_is_not_also_warned_about():
    dop = too_large_for_memory()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FactorizationCostWarning)
        with pytest.raises(ValueError, match="GB this process may use"):
            solve(dop, RadauIIA(10, 3))
