"""A hidden state: FitzHugh-Nagumo with only the voltage measured.

The FitzHugh-Nagumo neuron model (FitzHugh 1961; the parameters of Scholarpedia's article),

    v' = v − v³/3 − w + I,      w' = (v + a − b w) / τ,      a, b, τ, I = 0.7, 0.8, 12.5, 0.5,

is recorded in its voltage v only, at 301 times on [0, 60] with noise σ = 0.02; the recovery
variable w is never measured. The model keeps the known recovery equation and the coupling −w,
and learns the voltage's own nonlinearity with a 1-8-8-1 tanh network:

    v' = NN(v) − w + I,      w' = (v + a − b w) / τ.

The data hold one column named "v"; the model's second state, "w", is hidden: no placeholder
data, its initial value free, its initial guess the recovery equation driven by the measured
voltage (``state_guess="data"``), its scaling and the consistency check's scale from the model.

Errors against the truth: the hidden w recovered on the training window, the learned
nonlinearity against v − v³/3 over the voltages seen, and the re-simulated voltage on (60, 100],
which the data never saw.

    python examples/gallery/fitzhugh_nagumo_hidden.py            # full size
    python examples/gallery/fitzhugh_nagumo_hidden.py --small    # the size the test suite runs
    python examples/gallery/fitzhugh_nagumo_hidden.py --figure fhn.png  # and draw the fit
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

A, B, TAU, CURRENT = 0.7, 0.8, 12.5, 0.5
X0 = np.array([-1.0, 1.0])
T_TRAIN, T_END = 60.0, 100.0


def truth(t: np.ndarray, x0: np.ndarray = X0) -> np.ndarray:
    """The FitzHugh-Nagumo trajectory (v, w) from ``x0`` on the times ``t`` (n,), shape (n, 2)."""

    def rhs(_: float, z: np.ndarray) -> np.ndarray:
        v, w = z
        return np.array([v - v**3 / 3 - w + CURRENT, (v + A - B * w) / TAU])

    sol = solve_ivp(rhs, (t[0], t[-1]), x0, t_eval=t, method="DOP853", rtol=1e-12, atol=1e-12)
    return sol.y.T


def physics(x, u, t, blocks, params):
    """The known recovery equation and coupling, the learned voltage nonlinearity."""
    v, w = x[0], x[1]
    return [blocks["nonlinearity"](v) - w + CURRENT, (v + A - B * w) / TAU]


def make_data(seed: int = 0, n: int = 301) -> Trajectory:
    """The voltage alone, noisy: a one-column trajectory named "v"."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, T_TRAIN, n)
    v = truth(t)[:, 0] + 0.02 * rng.standard_normal(t.size)
    return Trajectory(t, v[:, None], state_names=("v",))


def draw(path: str, data: Trajectory, t: np.ndarray, sim, v_grid: np.ndarray, learned) -> None:
    """Left, the measured voltage, the truth of both states and the model's re-simulation
    (the hidden w included), the held-out window shaded; right, the learned nonlinearity."""
    fig = Figure(figsize=(8, 4), dpi=100, layout="constrained")
    states, curve = fig.subplots(1, 2, width_ratios=(1.8, 1))
    states.axvspan(T_TRAIN, T_END, color="0.92", label="held out")
    true = truth(t)
    states.plot(data.t, data.x[:, 0], "o", color="k", ms=2, label="v: data")
    for j, name in enumerate(("v", "w (hidden)")):
        color = f"C{j}"
        states.plot(t, true[:, j], color=color, lw=5, alpha=0.3, label=f"{name}: truth")
        if sim is not None:
            states.plot(t, sim[:, j], color=color, lw=1.2, label=f"{name}: model")
    states.set(xlabel="time t", ylabel="v, w", xlim=(0, T_END))
    handles, labels = states.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=6, fontsize="small")
    exact = v_grid - v_grid**3 / 3
    curve.plot(v_grid, exact, color="k", lw=5, alpha=0.3, label="v − v³/3")
    curve.plot(v_grid, learned, color="C2", lw=1.2, label="NN(v)")
    curve.set(xlabel="voltage v", ylabel="nonlinearity", title="over the voltages seen")
    curve.legend(fontsize="small")
    fig.savefig(path)


def run(small: bool = False, seed: int = 0, figure: str | None = None) -> dict:
    data = make_data(seed, 61 if small else 301)
    net = MLP((1, 8, 8, 1), "tanh", input_scale=(float(data.x.std()),))
    model = HybridModel(
        n_states=2, blocks={"nonlinearity": net}, rhs=physics, state_names=("v", "w")
    )
    problem = TrainingProblem(model, data, regularization=1e-5, state_guess="data")
    alg = RadauIIA(
        intervals=30 if small else 200,
        stages=3,
        jit=not small,
        ipopt=IpoptOptions(tol=1e-7, max_iter=30 if small else 500, print_level=0),
    )
    start = time.perf_counter()
    sol = solve(problem, alg, seed=seed)
    elapsed = time.perf_counter() - start
    t_train = data.t
    w_true = truth(t_train)[:, 1]
    v_grid = np.linspace(data.x.min(), data.x.max(), 201)
    learned = net.numpy(v_grid[:, None], sol.params["nonlinearity"])[:, 0]
    result = {
        "example": "fitzhugh_nagumo_hidden",
        "status": sol.status.value,
        "iterations": sol.iterations,
        "train_time_s": elapsed,
        "n_params": model.n_params,
        "consistent": sol.consistency.consistent,
        "largest_deviation": sol.consistency.largest,
        "scale_sources": list(sol.consistency.scale_sources),
        "hidden_w_rmse": float(np.sqrt(np.mean((sol(t_train)[:, 1] - w_true) ** 2))),
        "nonlinearity_rmse": float(np.sqrt(np.mean((learned - (v_grid - v_grid**3 / 3)) ** 2))),
    }
    t_all = np.linspace(0.0, T_END, 1001)
    held_out = t_all > T_TRAIN
    sim = None
    try:
        sim = sol.simulate(t_all).x
        err = sim[:, 0] - truth(t_all)[:, 0]
        result["held_out_rmse"] = float(np.sqrt(np.mean(err[held_out] ** 2)))
    except SimulationError as exc:
        result.update(held_out_rmse=None, simulation_error=str(exc))
    if figure is not None:
        draw(figure, data, t_all, sim, v_grid, learned)
    return result


if __name__ == "__main__":
    args = sys.argv[1:]
    figure = args[args.index("--figure") + 1] if "--figure" in args else None
    print(json.dumps(run(small="--small" in args, figure=figure), indent=2))
