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
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

import numpy as np
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


def run(small: bool = False, seed: int = 0) -> dict:
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
    try:
        x = sol.simulate(test.t, test.x[0], inputs=u_test).x
        result["held_out_rmse"] = float(np.sqrt(np.mean((x - test.x) ** 2)))
        result["held_out_reference_rms"] = float(np.sqrt(np.mean(test.x**2)))
    except SimulationError as exc:
        result.update(held_out_rmse=None, simulation_error=str(exc))
    return result


if __name__ == "__main__":
    print(json.dumps(run(small="--small" in sys.argv[1:]), indent=2))
