"""Small problems shared by several test modules."""

import casadi as ca
import numpy as np

from collocnode import HybridModel, Parameter, TrainingProblem, Trajectory

RATE = 1.3  # the true decay rate k of x' = -k x


def decay_problem(n_trajectories: int = 4, **fields) -> TrainingProblem:
    """x' = -k x with k fitted (one parameter: the optimum is unique), noisy data from
    several initial states."""
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 2.0, 41)
    data = []
    for x0 in np.linspace(0.5, 2.0, n_trajectories):
        x = x0 * np.exp(-RATE * t) + 0.01 * rng.normal(size=t.size)
        data.append(Trajectory(t=t, x=x[:, None]))
    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, b, p: ca.vertcat(-p["k"] * x[0]),
        parameters={"k": Parameter(0.5, fit=True)},
    )
    return TrainingProblem(model, data if n_trajectories > 1 else data[0], **fields)
