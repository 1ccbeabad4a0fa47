"""State bounds and path constraints of a training problem: hard constraints, held at the
solution and in the guess, checked against the data."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    HybridModel,
    IpoptOptions,
    Parameter,
    PathConstraint,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    solve,
)

TIGHT = IpoptOptions(print_level=0, tol=1e-12, max_iter=200)
# three samples a line cannot fit: (0, 1), (1, 0), (2, 0)
DATA = Trajectory([0.0, 1.0, 2.0], [1.0, 0.0, 0.0], state_names=("c",))


def drift() -> HybridModel:
    """c' = p (p fitted): the trajectory is the line c(0) + p t."""
    return HybridModel(
        1, {}, lambda x, u, t, b, p: [p["p"]], parameters={"p": Parameter(0.0, fit=True)}
    )


def fitted_line(**kwargs) -> tuple[float, float, np.ndarray]:
    prob = TrainingProblem(drift(), DATA, loss="samples", sample_weights="cells", **kwargs)
    sol = solve(prob, RadauIIA(2, 2, ipopt=TIGHT), seed=0)
    assert sol.success
    return float(sol.solution.x_nodes[0, 0]), sol.params["p"], sol.solution.x_nodes[:, 0]


def test_without_bounds_the_least_squares_line_goes_negative():
    # samples weighted by their cells (1/2, 1, 1/2): c(0) = 3/4, p = -1/2, c(2) = -1/4
    c0, p, _ = fitted_line()
    assert c0 == pytest.approx(0.75, abs=1e-9) and p == pytest.approx(-0.5, abs=1e-9)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(x_lb=0.0),
        dict(x_lb=[0.0]),
        dict(x_lb={"c": 0.0}),
        dict(path=PathConstraint(lambda x, u, t, b, p: x[0])),  # c >= 0 at the nodes
        dict(path=[PathConstraint(lambda x, u, t, b, p: [-x[0]], lb=-np.inf, ub=0.0)]),
    ],
    ids=["scalar", "array", "by-name", "path", "path-as-upper-bound"],
)
def test_a_bound_is_held_at_the_solution(kwargs):
    """With c >= 0 the line's end sits on the bound, c(0) + 2p = 0, and the weighted least
    squares 1/2 (c0 - 1)² + (c0/2)² give c(0) = 2/3, p = -1/3."""
    c0, p, nodes = fitted_line(**kwargs)
    assert c0 == pytest.approx(2 / 3, abs=1e-7) and p == pytest.approx(-1 / 3, abs=1e-7)
    assert nodes.min() >= -1e-8 and nodes[-1] == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize(
    "state_guess",
    ["constant", "data", lambda t: -np.ones((np.size(t), 1)), Trajectory([0, 2], [-1, -3])],
    ids=["constant", "data", "callable", "trajectory"],
)
def test_every_guess_is_projected_into_the_bounds(state_guess):
    data = Trajectory(np.linspace(0, 2, 5), [0.7, 0.5, 0.1, 0.1, 0.3])
    prob = TrainingProblem(drift(), data, x_lb=0.05, x_ub=0.8, state_guess=state_guess)
    guess = prob.to_dop(np.zeros(1)).state_guess(np.linspace(0, 2, 50))
    assert guess.min() >= 0.05 and guess.max() <= 0.8


def test_path_constraints_see_the_blocks_and_the_parameters_as_the_physics_does():
    # 2 c(t) <= limit, with the limit a per-trajectory parameter
    model = HybridModel(
        1,
        {},
        lambda x, u, t, b, p: [p["p"]],
        parameters={
            "p": Parameter(0.0, fit=True),
            "limit": Parameter(0.0, per_trajectory=True),
        },
    )
    data = Trajectory([0.0, 1.0, 2.0], [1.0, 0.0, 0.0], params={"limit": 0.0})
    prob = TrainingProblem(
        model,
        data,
        loss="samples",
        sample_weights="cells",
        path=PathConstraint(lambda x, u, t, b, p: p["limit"] - 2 * x[0], lb=-np.inf, ub=0.0),
    )
    sol = solve(prob, RadauIIA(2, 2, ipopt=TIGHT), seed=0)
    assert sol.params["p"] == pytest.approx(-1 / 3, abs=1e-7)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(x_lb=[0.0, 0.0]), ValueError, r"^x_lb must be a number, one per state \(1\) or a "),
        (dict(x_lb="zero"), TypeError, r"^x_lb must be an array of real numbers, got 'zero'"),
        (dict(x_lb=np.nan), ValueError, r"^x_lb must not be NaN"),
        (dict(x_ub={"d": 1.0}), ValueError, r"^x_ub names 'd', which is no state \(c\)$"),
        (dict(x_lb=1.0, x_ub=0.5), ValueError, r"^x_lb\[0\] = 1\.0 is above x_ub\[0\] = 0\.5"),
        (
            dict(x_lb=0.1),
            ValueError,
            r"^data\[0\]\.x\[1, 0\] = 0\.0 \('c'\) is below the bound x_lb\[0\] = 0\.1: measured "
            r"and fixed values must satisfy the state bounds$",
        ),
        (
            dict(x_ub=0.5, initial_state=[0.4]),
            ValueError,
            r"^data\[0\]\.x\[0, 0\] = 1\.0 \('c'\) is above the bound x_ub\[0\] = 0\.5",
        ),
        (
            dict(x_ub=2.0, initial_state=[3.0]),
            ValueError,
            r"^initial state of data\[0\]\[0\] = 3\.0 \('c'\) is above the bound x_ub\[0\]",
        ),
        (dict(path=5), TypeError, r"^path must be a PathConstraint, a sequence of them or None"),
        (dict(path=[5]), TypeError, r"^path\[0\] must be a PathConstraint, got 5"),
        (
            dict(path=PathConstraint(lambda x, u, t, b, p: [x[0], x[0]])),
            ValueError,
            r"^path\[0\]\.fn must return 1 values, got shape \(2, 1\)",
        ),
    ],
)
def test_bad_bounds_are_one_clear_error(kwargs, error, match):
    with pytest.raises(error, match=match):
        TrainingProblem(drift(), DATA, loss="samples", sample_weights="cells", **kwargs)


def test_a_missing_value_outside_the_bounds_is_no_violation():
    x = np.array([1.0, -5.0, 0.0])  # -5 is a placeholder the mask marks missing
    prob = TrainingProblem(
        drift(),
        Trajectory([0.0, 1.0, 2.0], x),
        loss="samples",
        sample_weights="cells",
        mask=np.array([[True], [False], [True]]),
        x_lb=0.0,
    )
    assert prob.state_bounds()[0][0] == 0.0


@pytest.mark.parametrize(
    "fields, error, match",
    [
        (dict(fn=5), TypeError, r"^PathConstraint\.fn must be callable, got 5"),
        (dict(n=0), ValueError, r"^PathConstraint\.n must be a positive integer, got 0"),
        (dict(lb=[0, 0]), ValueError, r"^PathConstraint\.lb must be a scalar or have 1 entries"),
        (dict(lb=1.0, ub=0.0), ValueError, r"^PathConstraint needs lb <= ub"),
    ],
)
def test_a_path_constraint_checks_what_needs_no_model(fields, error, match):
    with pytest.raises(error, match=match):
        PathConstraint(**{"fn": lambda x, u, t, b, p: x[0], **fields})


def test_path_constraint_bounds_broadcast_to_its_values():
    pc = PathConstraint(lambda x, u, t, b, p: ca.vertcat(x[0], x[0]), n=2, lb=0.0, ub=[1.0, 2.0])
    np.testing.assert_array_equal(pc.lb, [0.0, 0.0])
    np.testing.assert_array_equal(pc.ub, [1.0, 2.0])
