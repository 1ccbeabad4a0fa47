"""A neural ODE with a known input, trained on several trajectories: a Duffing oscillator under
multisine excitation, the structure of the Silverbox benchmark (Wigren & Schoukens, "Three free
data sets for development and benchmarking in nonlinear system identification", ECC 2013).

    q'' + 0.2 q' + q + q³ = u(t),    u: a random-phase multisine (10 tones up to 0.5 Hz)

Three recordings of 20 s with different multisine phases train one second-order neural ODE
q'' = NN(q, q', u) (a 3-8-8-1 tanh network, 113 weights; several trajectories share its
weights, and the known inputs enter exactly). Held-out error: the RMSE of q and q' on a fourth,
unseen multisine, simulated from its own initial state.

    python examples/gallery/duffing_inputs.py            # full size
    python examples/gallery/duffing_inputs.py --small    # the size the test suite runs
    python examples/gallery/duffing_inputs.py --figure duffing.png  # and draw the fit
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

import numpy as np
from matplotlib.figure import Figure
from scipy.integrate import solve_ivp

from collocnode import (
    IpoptOptions,
    NeuralODE,
    RadauIIA,
    SimulationError,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP

FREQUENCIES = 0.05 * np.arange(1, 11)  # [Hz]
T_END = 20.0


def multisine(seed: int) -> Callable[[np.ndarray], np.ndarray]:
    """``u(t: (n,)) -> (n, 1)``: equal-amplitude tones with random phases, peak about 1."""
    phases = np.random.default_rng(seed).uniform(0.0, 2 * np.pi, FREQUENCIES.size)
    amplitude = 1.0 / np.sqrt(FREQUENCIES.size)

    def u(t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        waves = np.sin(2 * np.pi * FREQUENCIES * t[..., None] + phases)
        return (amplitude * waves.sum(axis=-1))[..., None]

    return u


def recording(seed: int, n: int) -> tuple[Trajectory, Callable[[np.ndarray], np.ndarray]]:
    """One noise-free recording of [q, q'] on n samples over [0, 20] s, and its input."""
    u = multisine(seed)

    def rhs(t: float, z: np.ndarray) -> np.ndarray:
        q, v = z
        return np.array([v, u(np.array([t]))[0, 0] - 0.2 * v - q - q**3])

    t = np.linspace(0.0, T_END, n)
    sol = solve_ivp(
        rhs, (0.0, T_END), [0.0, 0.0], t_eval=t, method="DOP853", rtol=1e-11, atol=1e-11
    )
    return Trajectory(t, sol.y.T, u=u(t), state_names=("q", "v"), input_names=("u",)), u


def draw(path: str, recordings: dict, sims: dict) -> None:
    """Each recording (the first training one, the held-out one) with its input: the data and
    the model's re-simulation from the recording's initial state."""
    fig = Figure(figsize=(8, 4), dpi=100, layout="constrained")
    axes = fig.subplots(2, 2, sharex=True, height_ratios=(3, 1))
    for (title, data), top, bottom in zip(recordings.items(), *axes, strict=True):
        every = max(1, data.t.size // 100)  # about 100 dots
        for j, (name, color) in enumerate(zip(("q", "q'"), ("C0", "C1"), strict=True)):
            top.plot(
                data.t[::every], data.x[::every, j], "o", color=color, ms=2.5, label=f"{name}: data"
            )
            if sims.get(title) is not None:
                top.plot(data.t, sims[title][:, j], color=color, lw=1.2, label=f"{name}: model")
        top.set(title=title)
        bottom.plot(data.t, data.u[:, 0], color="0.4", lw=1)
        bottom.set(xlabel="time t [s]", ylabel="input u")
    axes[0, 0].set(ylabel="q, q'")
    axes[0, 0].legend(fontsize="small", ncol=2)
    fig.savefig(path)


def run(small: bool = False, seed: int = 0, figure: str | None = None) -> dict:
    n = 101 if small else 401
    train = [recording(k, n) for k in (1, 2, 3)]
    test, u_test = recording(99, 801)
    net = MLP((3, 8, 1) if small else (3, 8, 8, 1), "tanh")
    model = NeuralODE(net, n_inputs=1, second_order=True, state_names=("q", "v"))
    problem = TrainingProblem(
        model,
        [d for d, _ in train],
        inputs=[u for _, u in train],
        regularization=1e-5,
        initial_state="data",
        state_guess="data",
    )
    alg = RadauIIA(
        intervals=50 if small else 200,
        stages=3,
        jit=not small,
        ipopt=IpoptOptions(tol=1e-7, max_iter=30 if small else 500, print_level=0),
    )
    start = time.perf_counter()
    sol = solve(problem, alg, seed=seed)
    elapsed = time.perf_counter() - start
    result = {
        "example": "duffing_inputs",
        "status": sol.status.value,
        "iterations": sol.iterations,
        "train_time_s": elapsed,
        "n_params": model.n_params,
        "consistent": sol.consistency.consistent,
        "largest_deviation": sol.consistency.largest,
        "n_trajectories": len(train),
    }
    sims = {}
    try:
        x = sims["held out: an unseen multisine"] = sol.simulate(test.t, test.x[0], inputs=u_test).x
        result["held_out_rmse"] = float(np.sqrt(np.mean((x - test.x) ** 2)))
        result["held_out_reference_rms"] = float(np.sqrt(np.mean(test.x**2)))
    except SimulationError as exc:
        result.update(held_out_rmse=None, simulation_error=str(exc))
    if figure is not None:
        first = train[0][0]
        try:
            sims["training recording 1"] = sol.simulate(first.t, first.x[0]).x
        except SimulationError:
            pass
        recordings = {"training recording 1": first, "held out: an unseen multisine": test}
        draw(figure, recordings, sims)
    return result


if __name__ == "__main__":
    args = sys.argv[1:]
    figure = args[args.index("--figure") + 1] if "--figure" in args else None
    print(json.dumps(run(small="--small" in args, figure=figure), indent=2))
