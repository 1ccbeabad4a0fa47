"""Learn, discover, control: a network for the unknown interaction, its closed form by sparse
regression at the collocation nodes, the closed form re-fitted by collocation, then an optimal
harvesting policy computed on it and applied to the true system.

The data and the universal differential equation are SciML's "missing physics" tutorial (as in
``lotka_volterra_ude.py``): Lotka-Volterra with α, β, γ, δ = 1.3, 0.9, 0.8, 1.8 observed at 21
times on [0, 5] with 5 % noise; the model keeps α x and −δ y and learns the interaction with a
2-5-5-2 network. ``Discovered`` trains it, regresses the network's outputs at the collocation
nodes on the cubic polynomials in (x, y) (pysindy), and re-fits the coefficients it keeps.

The control task, on [0, 10] from the populations (2, 2): harvest prey and predators at rates
u ∈ [0, 1]² (x' = ... − u₁ x, y' = ... − u₂ y) to hold the populations at (3, 1),

    minimize ∫ |(x, y) − (3, 1)|² + 0.1 |u|² dt,

a point that only a harvest matching β and γ holds (u = (α − β, γ·3 − δ) = (0.4, 0.6)). The
policy is computed three times, on the network, on the re-fitted closed form and on the true
system, and each policy is applied to the true system; the cost it scores there is reported.

    python examples/gallery/lotka_volterra_discovery.py            # full size
    python examples/gallery/lotka_volterra_discovery.py --small    # the size the test suite runs
    python examples/gallery/lotka_volterra_discovery.py --figure lvd.png  # and draw both models
"""

from __future__ import annotations

import json
import sys
import time

import casadi as ca
import numpy as np
import pysindy as ps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from scipy.integrate import solve_ivp

from collocnode import (
    Controls,
    Discovered,
    DynamicOptimizationProblem,
    HybridModel,
    IpoptOptions,
    LearnedDynamics,
    RadauIIA,
    SimulationError,
    SparseRegression,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP

ALPHA, BETA, GAMMA, DELTA = 1.3, 0.9, 0.8, 1.8
T_TRAIN, T_END = 5.0, 10.0
TARGET = np.array([3.0, 1.0])
START = np.array([2.0, 2.0])  # the populations when the harvest starts
EFFORT = 0.1  # weight of the harvest effort in the cost


def true_rhs(x, u=(0.0, 0.0)):
    """The true system with harvest rates u; works on numbers and CasADi symbols."""
    return [
        ALPHA * x[0] - BETA * x[0] * x[1] - u[0] * x[0],
        GAMMA * x[0] * x[1] - DELTA * x[1] - u[1] * x[1],
    ]


def truth(t: np.ndarray, x0: np.ndarray, policy=None) -> np.ndarray:
    """The true trajectory from ``x0`` at t[0] on ``t`` (n,), under ``policy(t) -> u`` (2,)."""

    def rhs(tt, z):
        return true_rhs(z, (0.0, 0.0) if policy is None else policy(tt))

    sol = solve_ivp(rhs, (t[0], t[-1]), x0, t_eval=t, method="DOP853", rtol=1e-10, atol=1e-10)
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


def harvest_policy(plant, x0: np.ndarray, small: bool):
    """The optimal harvest on [0, T_END] for the dynamics ``plant(x) -> x'`` (CasADi), as a
    function of time, and the solve's status."""

    def dynamics(x, p, u, t):
        return ca.vertcat(*plant(x)) - ca.vertcat(u[0] * x[0], u[1] * x[1])

    def cost(x, p, u, t):
        return ca.sumsqr(x - TARGET) + EFFORT * ca.sumsqr(u)

    dop = DynamicOptimizationProblem(
        dynamics=dynamics,
        n_states=2,
        n_params=0,
        tspan=(0.0, T_END),
        x0=x0,
        controls=Controls(2, lb=0.0, ub=1.0, guess=0.5),
        lagrange=cost,
        x_lb=1e-3,  # populations stay positive
    )
    ipopt = IpoptOptions(tol=1e-8, max_iter=200 if small else 1000, print_level=0)
    sol = solve(dop, RadauIIA(40 if small else 200, 3, ipopt=ipopt))
    return (lambda tt: np.clip(sol.controls(tt), 0.0, 1.0)), sol.status.value


def cost_on_truth(x0: np.ndarray, policy) -> float:
    """The cost the policy scores when applied to the true system."""
    t = np.linspace(0.0, T_END, 2001)
    x = truth(t, x0, policy)
    u = np.array([policy(tt) for tt in t])
    integrand = np.sum((x - TARGET) ** 2, axis=1) + EFFORT * np.sum(u**2, axis=1)
    return float(np.trapezoid(integrand, t))


def draw(path: str, data: Trajectory, t: np.ndarray, true: np.ndarray, models: dict) -> None:
    """Left, the data, the truth and each model's re-simulation; right, the interaction terms
    along the true trajectory: the truth (-β x y, γ x y), the network and the closed form."""
    fig = Figure(figsize=(8, 4), dpi=100, layout="constrained")
    states, terms = fig.subplots(1, 2)
    exact = (true[:, 0] * true[:, 1])[:, None] * np.array([-BETA, GAMMA])
    for ax in (states, terms):
        ax.axvspan(T_TRAIN, T_END, color="0.92")
    for j, color in enumerate(("C0", "C1")):
        states.plot(t, true[:, j], color=color, lw=5, alpha=0.3)
        states.plot(data.t, data.x[:, j], "o", color=color, ms=4)
        terms.plot(t, exact[:, j], color=color, lw=5, alpha=0.3)
        for (sim, term), style in zip(models.values(), ("--", "-"), strict=True):
            if sim is not None:
                states.plot(t, sim[:, j], style, color=color, lw=1.2)
            if term is not None:
                terms.plot(t, term[:, j], style, color=color, lw=1.2)
    states.set(xlabel="time t", ylabel="population", xlim=(0, T_END))
    states.set_ylim(0, 1.3 * true.max())
    terms.set(xlabel="time t", ylabel="interaction term", xlim=(0, T_END))
    terms.set_ylim(1.3 * exact.min(), 1.3 * exact.max())
    handles = [
        Line2D([], [], color="C0", label="prey"),
        Line2D([], [], color="C1", label="predator"),
        Line2D([], [], ls="", marker="o", color="0.3", ms=4, label="data"),
        Line2D([], [], color="0.3", lw=5, alpha=0.3, label="truth"),
        Line2D([], [], ls="--", color="0.3", label="network"),
        Line2D([], [], color="0.3", label="closed form"),
        Patch(color="0.92", label="held out"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=7, fontsize="small")
    fig.savefig(path)


def run(small: bool = False, seed: int = 0, figure: str | None = None) -> dict:
    x0, data = make_data(seed)
    net = MLP((2, 5, 5, 2), "tanh", input_scale=tuple(data.x.std(axis=0)))
    model = HybridModel(n_states=2, blocks={"interaction": net}, rhs=physics)
    problem = TrainingProblem(
        model, data, regularization=1e-4, initial_state="data", state_guess="data"
    )
    leaf = RadauIIA(
        intervals=20 if small else 160,
        stages=3,
        jit=not small,
        ipopt=IpoptOptions(tol=1e-7, max_iter=30 if small else 500, print_level=0),
    )
    library = ps.PolynomialLibrary(degree=3)
    start = time.perf_counter()
    # the closed form has two coefficients: it can estimate the initial state as well, where
    # the network's training pins it to the noisy first sample
    alg = Discovered(
        leaf, "interaction", SparseRegression(library), refit_changes={"initial_state": None}
    )
    closed = solve(problem, alg, seed=seed)  # the re-fit (the network where discovery failed)
    elapsed = time.perf_counter() - start
    found = closed.record(Discovered)  # what the discovery did
    network = found.trained
    result = {
        "example": "lotka_volterra_discovery",
        "status": network.status.value,
        "iterations": network.iterations,
        "train_time_s": found.times["train"],
        "discover_time_s": found.times.get("discover"),
        "refit_time_s": found.times.get("refit"),
        "total_time_s": elapsed,
        "n_params": model.n_params,
        "consistent": network.consistency.consistent,
        "largest_deviation": network.consistency.largest,
        "discovery_error": found.error,
    }
    if found.refitted is not None:
        truth_table = {
            "interaction[0]": {"prey predator": -BETA},
            "interaction[1]": {"prey predator": GAMMA},
        }
        result.update(
            discovered=found.found.equations(),
            refitted=found.refitted.equations(),
            coefficients=found.refitted.coefficient_errors(truth_table),
            refit_status=closed.status.value,
            refit_iterations=closed.iterations,
            refit_consistent=closed.consistency.consistent,
        )
    t_all = np.linspace(0.0, T_END, 401)
    held_out = t_all > T_TRAIN
    reference = truth(t_all, x0)
    sims = {}
    for key, sol in (("", network), ("closed_form_", closed)):
        try:
            sims[key] = sol.simulate(t_all).x  # from the model's own initial state
            err = sims[key] - reference
            result[key + "held_out_rmse"] = float(np.sqrt(np.mean(err[held_out] ** 2)))
            result[key + "held_out_relative_rmse"] = result[key + "held_out_rmse"] / float(
                np.sqrt(np.mean(reference[held_out] ** 2))
            )
        except SimulationError as exc:
            result[key + "held_out_rmse"] = None
            result[key + "simulation_error"] = str(exc)
    # control: the policy computed on each model, scored on the true system
    plants = {
        "network": LearnedDynamics.of(network),
        "closed_form": LearnedDynamics.of(closed),
    }
    control = {}
    for name, plant in plants.items():
        policy, status = harvest_policy(lambda x, f=plant: [f(x, [], 0.0)], START, small)
        control[name] = {"status": status, "cost_on_truth": cost_on_truth(START, policy)}
    policy, status = harvest_policy(true_rhs, START, small)
    control["true_model"] = {"status": status, "cost_on_truth": cost_on_truth(START, policy)}
    result["control"] = control
    if figure is not None:
        form = found.refitted if found.refitted is not None else found.found
        models = {  # the re-simulation and the interaction terms along the truth of each
            "network": (sims.get(""), net.numpy(reference, network.params["interaction"])),
            "closed form": (sims.get("closed_form_"), None if form is None else form(reference)),
        }
        draw(figure, data, t_all, reference, models)
    return result


if __name__ == "__main__":
    args = sys.argv[1:]
    figure = args[args.index("--figure") + 1] if "--figure" in args else None
    print(json.dumps(run(small="--small" in args, figure=figure), indent=2))
