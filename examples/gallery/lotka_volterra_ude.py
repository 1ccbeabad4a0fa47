"""A hybrid model: known linear terms, one network for the unknown interaction (a universal
differential equation).

The setup of SciML's tutorial "Automatically discover missing physics by embedding machine
learning into differential equations": Lotka-Volterra with α, β, γ, δ = 1.3, 0.9, 0.8, 1.8,

    x' = α x − β x y,      y' = γ x y − δ y,

observed at 21 times on [0, 5] with 5 % noise (relative to each state's mean). The model keeps
the known linear terms α x and −δ y and learns the interaction with one 2-5-5-2 network:

    x' = α x + NN₁(x, y),  y' = −δ y + NN₂(x, y).

Held-out error: the re-simulation from the first sample over (5, 10] against the true system.

    python examples/gallery/lotka_volterra_ude.py            # full size
    python examples/gallery/lotka_volterra_ude.py --small    # the size the test suite runs
    python examples/gallery/lotka_volterra_ude.py --figure lv.png  # and draw the fit
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from matplotlib.figure import Figure
from scipy.integrate import solve_ivp

from collocnode import (
    HybridModel,
    IpoptOptions,
    RadauIIA,
    SimulationError,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP

ALPHA, BETA, GAMMA, DELTA = 1.3, 0.9, 0.8, 1.8
T_TRAIN, T_END = 5.0, 10.0


def truth(t: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """The Lotka-Volterra trajectory from ``x0`` on the times ``t`` (n,), shape (n, 2)."""

    def rhs(_: float, z: np.ndarray) -> np.ndarray:
        x, y = z
        return np.array([ALPHA * x - BETA * x * y, GAMMA * x * y - DELTA * y])

    sol = solve_ivp(rhs, (t[0], t[-1]), x0, t_eval=t, method="DOP853", rtol=1e-12, atol=1e-12)
    return sol.y.T


def physics(x, u, t, blocks, params):
    """Known linear terms plus the learned interaction (CasADi expressions)."""
    interaction = blocks["interaction"](x)
    return [ALPHA * x[0] + interaction[0], -DELTA * x[1] + interaction[1]]


def make_data(seed: int = 0) -> tuple[np.ndarray, Trajectory]:
    rng = np.random.default_rng(seed)
    x0 = 5.0 * rng.random(2)
    t = np.linspace(0.0, T_TRAIN, 21)
    x = truth(t, x0)
    noisy = x + 0.05 * x.mean(axis=0) * rng.standard_normal(x.shape)
    return x0, Trajectory(t, noisy, state_names=("prey", "predator"))


def draw(path: str, data: Trajectory, t: np.ndarray, true: np.ndarray, sim) -> None:
    """The data, the truth and the model's re-simulation, the held-out window shaded."""
    fig = Figure(figsize=(8, 4), dpi=100, layout="constrained")
    ax = fig.subplots()
    ax.axvspan(T_TRAIN, T_END, color="0.92", label="held out")
    for j, (name, color) in enumerate(zip(data.state_names, ("C0", "C1"), strict=True)):
        ax.plot(t, true[:, j], color=color, lw=5, alpha=0.3, label=f"{name}: truth")
        if sim is not None:
            ax.plot(t, sim[:, j], color=color, lw=1.5, label=f"{name}: model")
        ax.plot(data.t, data.x[:, j], "o", color=color, ms=4, label=f"{name}: data")
    ax.set(xlabel="time t", ylabel="population", xlim=(0, T_END), ylim=(0, 1.3 * true.max()))
    fig.legend(loc="outside right upper", fontsize="small")
    fig.savefig(path)


def run(small: bool = False, seed: int = 0, figure: str | None = None) -> dict:
    x0, data = make_data(seed)
    net = MLP((2, 5, 5, 2), "tanh", input_scale=tuple(data.x.std(axis=0)))
    model = HybridModel(n_states=2, blocks={"interaction": net}, rhs=physics)
    problem = TrainingProblem(
        model, data, regularization=1e-4, initial_state="data", state_guess="data"
    )
    alg = RadauIIA(
        intervals=20 if small else 160,
        stages=3,
        jit=not small,
        ipopt=IpoptOptions(tol=1e-7, max_iter=30 if small else 500, print_level=0),
    )
    start = time.perf_counter()
    sol = solve(problem, alg, seed=seed)
    elapsed = time.perf_counter() - start
    t_all = np.linspace(0.0, T_END, 401)
    held_out = t_all > T_TRAIN
    result = {
        "example": "lotka_volterra_ude",
        "status": sol.status.value,
        "iterations": sol.iterations,
        "train_time_s": elapsed,
        "n_params": model.n_params,
        "consistent": sol.consistency.consistent,
        "largest_deviation": sol.consistency.largest,
    }
    true, sim = truth(t_all, x0), None
    try:
        sim = sol.simulate(t_all, data.x[0]).x
        err = sim - true
        result["train_rmse"] = float(np.sqrt(np.mean(err[~held_out] ** 2)))
        result["held_out_rmse"] = float(np.sqrt(np.mean(err[held_out] ** 2)))
    except SimulationError as exc:
        result.update(train_rmse=None, held_out_rmse=None, simulation_error=str(exc))
    if figure is not None:
        draw(figure, data, t_all, true, sim)
    return result


if __name__ == "__main__":
    args = sys.argv[1:]
    figure = args[args.index("--figure") + 1] if "--figure" in args else None
    print(json.dumps(run(small="--small" in args, figure=figure), indent=2))
