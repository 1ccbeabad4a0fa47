"""Discovered: train a network, find its closed form, re-fit the closed form by collocation --
and keep the network, with one warning naming the cause, where discovery fails."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from collocnode import (
    Discovered,
    DiscoveryWarning,
    HybridModel,
    IpoptOptions,
    RadauIIA,
    SolverStatus,
    SparseRegression,
    TrainingProblem,
    TrainingSolution,
    Trajectory,
    WarmStarted,
    solve,
)
from collocnode.algorithm import final
from collocnode.nn import MLP
from collocnode.strategies import DiscoveredRecord, PhasedRecord

ps = pytest.importorskip("pysindy")

ALPHA, BETA, GAMMA, DELTA = 1.3, 0.9, 0.8, 1.8
LEAF = RadauIIA(40, 3, ipopt=IpoptOptions(tol=1e-8, max_iter=300, print_level=0))


def physics(x, u, t, blocks, params):
    f = blocks["interaction"](x)
    return [ALPHA * x[0] + f[0], -DELTA * x[1] + f[1]]


@pytest.fixture(scope="module")
def problem():
    """Noise-free Lotka-Volterra at 21 times on [0, 5]; a 2-5-2 network for the interaction."""
    t = np.linspace(0.0, 5.0, 21)

    def rhs(_, z):
        return [ALPHA * z[0] - BETA * z[0] * z[1], GAMMA * z[0] * z[1] - DELTA * z[1]]

    x = solve_ivp(rhs, (0, 5), [3.0, 1.5], t_eval=t, rtol=1e-12, atol=1e-12).y.T
    data = Trajectory(t, x)
    net = MLP((2, 5, 2), "tanh", input_scale=tuple(x.std(axis=0)))
    model = HybridModel(n_states=2, blocks={"interaction": net}, rhs=physics)
    return TrainingProblem(
        model, data, regularization=1e-6, initial_state="data", state_guess="data"
    )


@pytest.fixture(scope="module")
def discovered(problem):
    alg = Discovered(LEAF, "interaction", SparseRegression(ps.PolynomialLibrary(degree=2)))
    return solve(problem, alg, seed=0).record(Discovered)


def test_learn_discover_refit_finds_the_interaction(discovered):
    r = discovered
    assert isinstance(r, DiscoveredRecord) and r.error == ""
    assert r.status == SolverStatus.SUCCESS and final(r) is r.refits[-1]
    for found in (r.found, r.refitted):
        table = found.coefficient_table()
        assert list(table["interaction[0]"]) == ["x0 x1"]
        assert list(table["interaction[1]"]) == ["x0 x1"]
    coefficients = r.refitted.coefficient_table()
    assert coefficients["interaction[0]"]["x0 x1"] == pytest.approx(-BETA, rel=1e-3)
    assert coefficients["interaction[1]"]["x0 x1"] == pytest.approx(GAMMA, rel=1e-3)
    # the consistency check ran on both models: the network here, the closed form in solve
    assert r.trained is final(r.network) and r.trained.model.blocks
    assert r.trained.consistency is not None and final(r).consistency.consistent
    assert set(r.times) == {"train", "discover", "refit"}
    assert r.iterations == final(r.network).iterations + final(r).iterations
    summary = json.loads(json.dumps(r.to_dict(), default=float))
    assert summary["refitted"]["equations"] == r.refitted.equations()
    assert summary["network"]["consistency"]["consistent"] in (True, False)


def test_a_nested_inner_algorithm_trains_and_refits(problem):
    """Discovered(WarmStarted(RadauIIA)): the network and the closed form both go through the
    nest; the results wrap, and final() reaches the re-fitted closed form."""
    r = solve(problem, Discovered(WarmStarted(LEAF), "interaction"), seed=0).record(Discovered)
    assert isinstance(r.network, PhasedRecord) and isinstance(r.refits[0], PhasedRecord)
    assert isinstance(r.trained, TrainingSolution) and r.trained.model is problem.model
    assert final(r).model.fitted == ["interaction[0]:x0 x1", "interaction[1]:x0 x1"]
    assert r.status.ok


def test_the_refitted_model_is_the_closed_form(discovered):
    model = final(discovered).model
    assert model.blocks == {} and model.fitted == ["interaction[0]:x0 x1", "interaction[1]:x0 x1"]
    x = np.array([2.0, 1.0])
    xdot = np.asarray(model.function(x, final(discovered).p, [], 0.0)[0]).ravel()
    c = discovered.refitted.coefficient_table()
    assert xdot == pytest.approx(
        [
            ALPHA * 2.0 + 2.0 * c["interaction[0]"]["x0 x1"],
            -DELTA + 2.0 * c["interaction[1]"]["x0 x1"],
        ]
    )


def test_a_pruning_pass_drops_small_terms_and_refits(problem):
    """STLSQ at a low threshold keeps spurious terms; the pass drops those under 5 % of their
    output and re-fits once more."""
    regression = SparseRegression(
        ps.PolynomialLibrary(degree=2), optimizer=ps.STLSQ(threshold=1e-3), criterion="none"
    )
    r = solve(problem, Discovered(LEAF, "interaction", regression, prune=0.05), seed=0).record(
        Discovered
    )
    assert len(r.refits) == 2 and r.refitted.n_terms < r.found.n_terms
    assert r.refitted.n_terms >= 2 and r.status.ok


def test_the_refit_may_change_fields_of_the_problem(problem):
    """The closed form estimates the initial state as well (the network's training pinned it
    to the first sample)."""
    alg = Discovered(LEAF, "interaction", refit_changes={"initial_state": None})
    r = solve(problem, alg, seed=0).record(Discovered)
    assert r.network.problem.initial_state == "data"
    assert final(r).problem.initial_state is None and final(r).status.ok
    # noise-free data: the estimated initial state is the true one
    assert final(r).solution.states(0.0) == pytest.approx(problem.data.x[0], rel=1e-3)
    assert final(r).solution.states(0.0).tolist() != problem.data.x[0].tolist()
    with pytest.raises(ValueError, match=r"refit_changes: .*'intial_state'"):
        solve(problem, Discovered(LEAF, refit_changes={"intial_state": None}))
    with pytest.raises(ValueError, match="refit_changes may not set 'model'"):
        Discovered(LEAF, refit_changes={"model": problem.model})


def test_discovery_only_keeps_the_network(problem):
    r = solve(problem, Discovered(LEAF, "interaction", refit=False), seed=0).record(Discovered)
    assert r.refits == [] and r.refitted is None and r.found is not None
    assert isinstance(final(r), TrainingSolution) and final(r).model is problem.model


@pytest.mark.parametrize(
    ("regression", "match"),
    [
        (
            lambda: {"optimizer": ps.STLSQ(threshold=100.0), "criterion": "none"},
            "threshold removes every term",
        ),
        (lambda: {"form": "tanh"}, "tanh form needs outputs in"),
    ],
    ids=["threshold", "tanh"],
)
def test_a_failed_discovery_warns_and_keeps_the_network(problem, regression, match):
    settings = SparseRegression(ps.PolynomialLibrary(1), **regression())
    with pytest.warns(DiscoveryWarning, match=match + ".*the trained network is kept"):
        r = solve(problem, Discovered(LEAF, "interaction", settings), seed=0).record(Discovered)
    assert match in r.error and r.found is None and r.refits == []
    network = final(r)
    assert network is r.network and network.model is problem.model and network.status.ok
    assert network.consistency is not None


def test_an_unknown_block_is_refused_before_any_work(problem):
    calls = []
    with pytest.raises(ValueError, match="block 'friction' is not a block of the model"):
        solve(problem, Discovered(LEAF, "friction"), callback=calls.append)
    assert calls == []


@pytest.mark.parametrize(
    ("fields", "error", "match"),
    [
        ({"inner": "RadauIIA"}, TypeError, "Discovered.inner must be an algorithm object"),
        ({"block": 3}, TypeError, "block must be a block name or None"),
        ({"regression": {}}, TypeError, "regression must be a SparseRegression"),
        ({"refit": "yes"}, TypeError, "refit must be True or False"),
        ({"prune": -0.1}, ValueError, "prune"),
        ({"refit_changes": [("loss", "samples")]}, TypeError, "refit_changes must be a mapping"),
    ],
)
def test_bad_settings_are_named(fields, error, match):
    with pytest.raises(error, match=match):
        Discovered(**fields)
