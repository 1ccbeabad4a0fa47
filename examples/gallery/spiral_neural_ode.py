"""A neural ODE learned from one trajectory: torchdiffeq's spiral.

The system of torchdiffeq's ``examples/ode_demo.py``: y' = (y³) A with
A = [[-0.1, 2.0], [-2.0, -0.1]], y(0) = (2, 0), observed on [0, 25] (251 samples). As in that
demo, the neural ODE is y' = NN(y³) (the cube taken elementwise before the network): one
2-16-2 tanh network, 82 weights, inputs and outputs scaled by the data's spread, trained by
collocation on that trajectory (250 intervals of 3 stages). The held-out data is the trajectory
from another initial state, y(0) = (1.5, 0.5), which winds through the same region; its error
is the RMSE of the learned model's re-simulation over [0, 25].

    python examples/gallery/spiral_neural_ode.py            # full size
    python examples/gallery/spiral_neural_ode.py --small    # the size the test suite runs
    python examples/gallery/spiral_neural_ode.py --figure spiral.png  # and draw the fit
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

A = np.array([[-0.1, 2.0], [-2.0, -0.1]])
Y0 = np.array([2.0, 0.0])
T_END = 25.0
Y0_HELD_OUT = np.array([1.5, 0.5])


def truth(t: np.ndarray, y0: np.ndarray = Y0) -> np.ndarray:
    """The spiral from ``y0`` on the times ``t`` (n,), shape (n, 2)."""
    sol = solve_ivp(
        lambda _, y: (y**3) @ A,
        (t[0], t[-1]),
        y0,
        t_eval=t,
        method="DOP853",
        rtol=1e-12,
        atol=1e-12,
    )
    return sol.y.T


def cubed(x, u, t, blocks, params):
    """The demo's vector field NN(y³) (CasADi expressions; the power is elementwise)."""
    return blocks["net"](x**3)


def draw(path: str, data: Trajectory, t: np.ndarray, sims: dict) -> None:
    """The phase plane of both initial states (the data, the truth, the model's re-simulation)
    and the held-out initial state's states over time."""
    fig = Figure(figsize=(8, 4), dpi=100, layout="constrained")
    plane, series = fig.subplots(1, 2, width_ratios=(1, 1.4))
    plane.plot(data.x[:, 0], data.x[:, 1], "o", color="k", ms=2, label="data")
    for label, y0, color in (("training", Y0, "C0"), ("held out", Y0_HELD_OUT, "C1")):
        true = truth(np.linspace(0.0, T_END, 2001), y0)  # finer: the first turns are fast
        plane.plot(true[:, 0], true[:, 1], color=color, lw=5, alpha=0.3, label=f"{label}: truth")
        if sims.get(label) is not None:
            plane.plot(*sims[label].T, color=color, lw=1.2, label=f"{label}: model")
    plane.set(xlabel="y₁", ylabel="y₂", aspect="equal", title="phase plane")
    fig.legend(*plane.get_legend_handles_labels(), loc="outside lower center", ncol=5)
    true = truth(t, Y0_HELD_OUT)
    for j, color in enumerate(("C2", "C3")):
        series.plot(t, true[:, j], color=color, lw=5, alpha=0.3, label=f"y{'₁₂'[j]}: truth")
        if sims.get("held out") is not None:
            series.plot(t, sims["held out"][:, j], color=color, lw=1.2, label=f"y{'₁₂'[j]}: model")
    series.set(xlabel="time t", ylabel="y₁, y₂", title="held out: y(0) = (1.5, 0.5)")
    series.legend(fontsize="small", ncol=2, loc="lower right")
    fig.savefig(path)


def run(small: bool = False, seed: int = 0, figure: str | None = None) -> dict:
    t = np.linspace(0.0, T_END, 51 if small else 251)
    data = Trajectory(t, truth(t), state_names=("y1", "y2"))
    scales = {
        "input_scale": tuple((data.x**3).std(axis=0)),
        "output_scale": tuple(np.gradient(data.x, t, axis=0).std(axis=0)),
    }
    net = MLP((2, 8 if small else 16, 2), "tanh", **scales)
    problem = TrainingProblem(
        HybridModel(n_states=2, blocks={"net": net}, rhs=cubed),
        data,
        regularization=1e-5,
        initial_state="data",
        state_guess="data",
    )
    alg = RadauIIA(
        intervals=25 if small else 250,
        stages=3,
        jit=not small,
        ipopt=IpoptOptions(tol=1e-7, max_iter=30 if small else 300, print_level=0),
    )
    start = time.perf_counter()
    sol = solve(problem, alg, seed=seed)
    elapsed = time.perf_counter() - start
    t_all = np.linspace(0.0, T_END, 501)
    result = {
        "example": "spiral_neural_ode",
        "status": sol.status.value,
        "iterations": sol.iterations,
        "train_time_s": elapsed,
        "n_params": sol.model.n_params,
        "consistent": sol.consistency.consistent,
        "largest_deviation": sol.consistency.largest,
    }
    sims = {}  # the re-simulations, by initial state
    try:
        sims["training"] = sol.simulate(t_all, Y0).x
        err = sims["training"] - truth(t_all)
        result["train_rmse"] = float(np.sqrt(np.mean(err**2)))
        sims["held out"] = sol.simulate(t_all, Y0_HELD_OUT).x
        err = sims["held out"] - truth(t_all, Y0_HELD_OUT)
        result["held_out_rmse"] = float(np.sqrt(np.mean(err**2)))
    except SimulationError as exc:
        result.update(train_rmse=None, held_out_rmse=None, simulation_error=str(exc))
    if figure is not None:
        draw(figure, data, t_all, sims)
    return result


if __name__ == "__main__":
    args = sys.argv[1:]
    figure = args[args.index("--figure") + 1] if "--figure" in args else None
    print(json.dumps(run(small="--small" in args, figure=figure), indent=2))
