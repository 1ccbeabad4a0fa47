"""Auto's restarts from a suspect model, and TrainingSolution.explained."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from collocnode import Auto, HybridModel, Parameter, TrainingProblem, Trajectory, solve

BETA, GAMMA, I0 = 0.4, 0.1, 0.001


def sir_truth(t: np.ndarray) -> np.ndarray:
    def rhs(_: float, z: np.ndarray) -> list[float]:
        s, i, _r = z
        return [-BETA * s * i, BETA * s * i - GAMMA * i, GAMMA * i]

    sol = solve_ivp(rhs, (t[0], t[-1]), [1 - I0, I0, 0.0], t_eval=t, rtol=1e-11, atol=1e-12)
    return sol.y.T


def sir_rhs(x, u, t, blocks, p):
    s, i = x[0], x[1]
    return [-p["beta"] * s * i, p["beta"] * s * i - p["gamma"] * i, p["gamma"] * i]


def sir_problem(seed: int) -> TrainingProblem:
    """Only I measured (21 samples, noise 0.01), β, γ and I(0) fitted from a guess of 1."""
    model = HybridModel(
        n_states=3,
        blocks={},
        rhs=sir_rhs,
        parameters={
            "beta": Parameter(1.0, fit=True, lb=0.0),
            "gamma": Parameter(1.0, fit=True, lb=0.0),
        },
        state_names=("S", "I", "R"),
    )
    t = np.linspace(0.0, 100.0, 21)
    rng = np.random.default_rng(seed)
    infected = sir_truth(t)[:, 1] + 0.01 * rng.standard_normal(t.size)
    data = Trajectory(t, infected[:, None], state_names=("I",))
    return TrainingProblem(model, data, initial_state=[1 - I0, np.nan, 0.0])


# noise seeds on which the first solve of the default nest ends on I = 0 (inconsistent) or on
# a consistent model that fits I worse than its mean; 16 of 500 such cases over five SIR
# set-ups before Auto restarted, none after
@pytest.mark.parametrize("seed", [36, 92])
def test_auto_restarts_leave_a_spurious_optimum(seed: int) -> None:
    problem = sir_problem(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = solve(problem, Auto(restarts=0), seed=0)
        sol = solve(problem, seed=0)
    assert abs(first.p[0] - BETA) > 0.3 * BETA or abs(first.p[1] - GAMMA) > 0.3 * GAMMA
    record = sol.record(Auto)
    assert len(record.starts) >= 2 and record.kept > 0
    assert record.starts[record.kept].objective < record.starts[0].objective
    assert abs(sol.p[0] - BETA) < 0.1 * BETA and abs(sol.p[1] - GAMMA) < 0.1 * GAMMA
    assert sol.consistency.consistent and np.all(sol.explained() > 0.9)
    assert "restarts from perturbed starts" in record.describe()


def test_no_restart_where_the_first_model_is_sound() -> None:
    sol = solve(sir_problem(0), seed=0)
    assert sol.record(Auto).starts == [] and sol.record(Auto).kept == 0


def test_restarts_are_validated() -> None:
    with pytest.raises(ValueError, match="restarts"):
        Auto(restarts=-1)
    with pytest.raises(ValueError, match="restart_spread"):
        Auto(restart_spread=0.0)


def test_explained_is_one_minus_the_residual_share() -> None:
    """explained() against the residuals of the model's own re-simulation, by hand."""
    problem = sir_problem(0)
    sol = solve(problem, seed=0)
    t = problem.trajectories[0].t
    sim = sol.simulate(t, check_range=False, method="cvodes").x[:, 1]
    data = problem.trajectories[0].x[:, 1]
    expected = 1 - np.sum((sim - data) ** 2) / np.sum((data - data.mean()) ** 2)
    assert sol.explained() == pytest.approx([expected], rel=1e-9)
