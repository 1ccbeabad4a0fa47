"""First tries without an expert: the defaults of ``solve(problem)`` against an expert's settings.

Problems that no preset covers, each posed as a newcomer would (no λ, no mesh, no algorithm):

- ``spiral``: torchdiffeq's spiral, a neural ODE y' = NN(y³) from one trajectory (gallery);
- ``lv_ude``: SciML's Lotka-Volterra UDE, known linear terms and a network, 21 noisy samples
  (gallery);
- ``robertson``: Robertson's stiff kinetics (rate constants 0.04, 3e7, 1e4) with the first rate
  fitted, on a log-spaced record;
- ``duffing``: a forced Duffing oscillator q'' + 0.1 q' + k q + NN(q) = u(t) with a known input,
  the stiffness k fitted beside the network;
- ``fitzhugh_nagumo``: only the voltage v measured, the recovery w hidden, the cubic learned;
- ``gappy_lv``: Lotka-Volterra at irregular times with 18 % of the values missing (NaN), the
  interaction learned, the loss at the samples.

Four hybrid models of kinds met outside the project (``--cases hybrid``), their networks
without any scaling given, each with targets that make the model useful and a verdict:

- ``predator_prey_holling``: a predator's mortality fitted beside a learned functional
  response (Holling type II), 31 samples with 5 % noise, forecast past the data;
- ``pk_infusion``: two-compartment pharmacokinetics with a known infusion, the peripheral
  compartment never measured, the elimination (Michaelis-Menten) learned, 15 samples at
  irregular times, the exchange rates fitted, scored on an unseen dosing regimen (the rates are
  reported too; one dose does not identify them beside a learned elimination);
- ``relaxation_oscillator``: a stiff relaxation oscillator (Van der Pol in Liénard form,
  μ = 10) with its cubic learned;
- ``cstr_coolant``: an exothermic stirred tank at 340-360 K, four coolant profiles, the rate
  constant k(T) learned, scored on an unseen coolant profile.

For each: the expert's run (λ, mesh and algorithm as a tuned run sets them), and the default
(``solve(problem, seed=0)``: :class:`collocnode.Auto`); ``--runs given --lambda X`` adds the
default with λ = X given (no regularization path), to tell the path's choice from the rest.
Reported: the error against the truth (each case's own measure, on data the training did not
see), wall time, IPOPT iterations, the consistency verdict, and for the default the cost of its
regularization path against its final solve.

    python benchmarks/first_try.py                       # every case
    python benchmarks/first_try.py --cases lv_ude robertson --out runs/first_try
    python benchmarks/first_try.py --cases fitzhugh_nagumo gappy_lv --runs given --lambda 1e-3
    python benchmarks/first_try.py --cases hybrid --budget 600 --out runs/hybrid
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp

from collocnode import (
    Auto,
    HybridModel,
    IpoptOptions,
    Mesh,
    Parameter,
    RadauIIA,
    SimulationError,
    SolverStatus,
    TimeLimit,
    TrainingProblem,
    Trajectory,
    UntilConsistent,
    solve,
)
from collocnode.nn import MLP
from collocnode.strategies import AutoRecord
from collocnode.tools._io import write_json
from collocnode.tools._machine import describe, load_average

QUIET = IpoptOptions(tol=1e-7, max_iter=1000, print_level=0)


def ode(rhs: Callable, t: np.ndarray, x0: Any, method: str = "DOP853") -> np.ndarray:
    sol = solve_ivp(rhs, (t[0], t[-1]), x0, t_eval=t, method=method, rtol=1e-11, atol=1e-12)
    return sol.y.T


def rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


@dataclass(frozen=True)
class Case:
    """A problem as a newcomer poses it, an expert's λ and algorithm, and the score."""

    name: str
    problem: Callable[[], TrainingProblem]
    expert_lambda: float | None
    expert: Any
    score: Callable[[Any], dict[str, Any]]
    note: str
    #: the largest value of each score that makes the model useful (the verdict's measure)
    targets: dict[str, float] = field(default_factory=dict)


# ---- the cases ----------------------------------------------------------------------------

SPIRAL_A = np.array([[-0.1, 2.0], [-2.0, -0.1]])


def spiral() -> Case:
    def truth(t, y0=(2.0, 0.0)):
        return ode(lambda _, y: (y**3) @ SPIRAL_A, t, y0)

    t = np.linspace(0.0, 25.0, 251)
    data = Trajectory(t, truth(t), state_names=("y1", "y2"))
    scales = {
        "input_scale": tuple((data.x**3).std(axis=0)),
        "output_scale": tuple(np.gradient(data.x, t, axis=0).std(axis=0)),
    }
    net = MLP((2, 16, 2), "tanh", **scales)

    def problem() -> TrainingProblem:
        model = HybridModel(2, {"net": net}, lambda x, u, tt, b, p: b["net"](x**3))
        return TrainingProblem(model, data, initial_state="data", state_guess="data")

    def score(sol) -> dict[str, Any]:
        held = np.array([1.5, 0.5])
        try:
            return {"held_out_rmse": rmse(sol.simulate(t, held).x, truth(t, held))}
        except SimulationError:
            return {"held_out_rmse": None}

    return Case(
        "spiral",
        problem,
        1e-5,
        RadauIIA(250, 3, jit=True, ipopt=QUIET),
        score,
        "another initial state over [0, 25]",
    )


LV = (1.3, 0.9, 0.8, 1.8)


def lv_truth(t: np.ndarray, x0: Any) -> np.ndarray:
    a, b, c, d = LV
    return ode(lambda _, z: [a * z[0] - b * z[0] * z[1], c * z[0] * z[1] - d * z[1]], t, x0)


def lv_model(x_std: np.ndarray) -> HybridModel:
    a, _, _, d = LV
    net = MLP((2, 5, 5, 2), "tanh", input_scale=tuple(x_std))

    def physics(x, u, t, blocks, params):
        inter = blocks["interaction"](x)
        return [a * x[0] + inter[0], -d * x[1] + inter[1]]

    return HybridModel(2, {"interaction": net}, physics)


def lv_ude() -> Case:
    rng = np.random.default_rng(0)
    x0 = 5.0 * rng.random(2)
    t = np.linspace(0.0, 5.0, 21)
    x = lv_truth(t, x0)
    noisy = x + 0.05 * x.mean(axis=0) * rng.standard_normal(x.shape)
    data = Trajectory(t, noisy, state_names=("prey", "predator"))

    def problem() -> TrainingProblem:
        return TrainingProblem(
            lv_model(noisy.std(axis=0)), data, initial_state="data", state_guess="data"
        )

    def score(sol) -> dict[str, Any]:
        t_all = np.linspace(0.0, 10.0, 401)
        try:
            err = sol.simulate(t_all, noisy[0]).x - lv_truth(t_all, x0)
        except SimulationError:
            return {"held_out_rmse": None}
        return {"held_out_rmse": float(np.sqrt(np.mean(err[t_all > 5.0] ** 2)))}

    return Case(
        "lv_ude",
        problem,
        1e-4,
        RadauIIA(160, 3, jit=True, ipopt=QUIET),
        score,
        "(5, 10], past the data",
    )


def robertson() -> Case:
    k2, k3 = 3e7, 1e4

    def rhs(x, u, t, blocks, params):
        k1 = params["k1"]
        return ca.vertcat(
            -k1 * x[0] + k3 * x[1] * x[2],
            k1 * x[0] - k3 * x[1] * x[2] - k2 * x[1] ** 2,
            k2 * x[1] ** 2,
        )

    def true_rhs(_, x):
        return [
            -0.04 * x[0] + k3 * x[1] * x[2],
            0.04 * x[0] - k3 * x[1] * x[2] - k2 * x[1] ** 2,
            k2 * x[1] ** 2,
        ]

    t = np.r_[0.0, np.geomspace(1e-5, 40.0, 60)]
    x = ode(true_rhs, t, [1.0, 0.0, 0.0], method="Radau")
    noisy = x * (1 + 0.002 * np.random.default_rng(1).standard_normal(x.shape))
    data = Trajectory(t, noisy, state_names=("A", "B", "C"))

    def problem() -> TrainingProblem:
        model = HybridModel(3, {}, rhs, parameters={"k1": Parameter(0.02, fit=True, lb=0, ub=1)})
        return TrainingProblem(model, data, initial_state="data", scale="std")

    grid = np.r_[0.0, np.geomspace(1e-5, 40.0, 80)]
    expert = RadauIIA(mesh=Mesh.from_grid(grid, np.full(grid.size - 1, 3)), ipopt=QUIET)

    def score(sol) -> dict[str, Any]:
        return {"k1_relative_error": abs(float(sol.params["k1"]) - 0.04) / 0.04}

    return Case("robertson", problem, None, expert, score, "the fitted rate constant")


def duffing() -> Case:
    def forcing(amplitude):
        return lambda tt: amplitude * np.cos(1.2 * np.asarray(tt))[..., None]

    def truth(t, amplitude):
        u = forcing(amplitude)
        return ode(lambda tt, z: [z[1], u(tt)[0] - 0.1 * z[1] - z[0] - z[0] ** 3], t, [0.5, 0.0])

    t = np.linspace(0.0, 30.0, 301)
    x = truth(t, 0.5)
    noisy = x + 0.01 * np.random.default_rng(2).standard_normal(x.shape)
    data = Trajectory(t, noisy, u=forcing(0.5)(t), state_names=("q", "v"))

    def model() -> HybridModel:
        net = MLP((1, 8, 1), "tanh", input_scale=(float(x[:, 0].std()),))

        def rhs(z, u, tt, blocks, params):
            return [z[1], u[0] - 0.1 * z[1] - params["k"] * z[0] - blocks["cubic"](z[0:1])[0]]

        return HybridModel(
            2, {"cubic": net}, rhs, n_inputs=1, parameters={"k": Parameter(0.5, fit=True)}
        )

    def problem() -> TrainingProblem:
        return TrainingProblem(model(), data, initial_state="data", inputs=forcing(0.5))

    def score(sol) -> dict[str, Any]:
        t_test = np.linspace(0.0, 30.0, 601)
        out = {"stiffness_relative_error": abs(float(sol.params["k"]) - 1.0)}
        try:
            sim = sol.simulate(t_test, x[0], inputs=forcing(0.8)).x
            out["unseen_forcing_rmse"] = rmse(sim, truth(t_test, 0.8))
        except SimulationError:
            out["unseen_forcing_rmse"] = None
        return out

    return Case(
        "duffing",
        problem,
        1e-4,
        RadauIIA(300, 3, jit=True, ipopt=QUIET),
        score,
        "k against 1, and a forcing amplitude 0.8 the data never had",
    )


def fitzhugh_nagumo() -> Case:
    a, b, eps, current = 0.7, 0.8, 0.08, 0.5

    def true_rhs(_, z):
        v, w = z
        return [v - v**3 / 3 - w + current, eps * (v + a - b * w)]

    t = np.linspace(0.0, 60.0, 301)
    x = ode(true_rhs, t, [-1.0, 1.0])
    v = x[:, 0] + 0.02 * np.random.default_rng(3).standard_normal(t.size)
    data = Trajectory(t, np.column_stack([v, np.full(t.size, np.nan)]), state_names=("v", "w"))

    def problem() -> TrainingProblem:
        net = MLP((1, 8, 1), "tanh", input_scale=(float(v.std()),))

        def rhs(z, u, tt, blocks, params):
            return [blocks["cubic"](z[0:1])[0] - z[1] + current, eps * (z[0] + a - b * z[1])]

        model = HybridModel(2, {"cubic": net}, rhs)
        return TrainingProblem(model, data, initial_state=[np.nan, 1.0], state_guess="data")

    def score(sol) -> dict[str, Any]:
        coll = sol(t)
        return {"hidden_w_rmse": rmse(coll[:, 1], x[:, 1]), "v_rmse": rmse(coll[:, 0], x[:, 0])}

    return Case(
        "fitzhugh_nagumo",
        problem,
        1e-4,
        UntilConsistent(RadauIIA(200, 3, jit=True, ipopt=QUIET)),
        score,
        "the hidden w and v against the noise-free truth",
    )


def gappy_lv() -> Case:
    rng = np.random.default_rng(4)
    x0 = np.array([1.0, 1.5])
    t = np.sort(rng.uniform(0.0, 8.0, 60))
    t[0] = 0.0
    x = lv_truth(t, x0)
    noisy = x + 0.03 * x.std(axis=0) * rng.standard_normal(x.shape)
    missing = rng.random(noisy.shape) < 0.18
    missing[0] = False
    gappy = np.where(missing, np.nan, noisy)
    data = Trajectory(t, gappy, state_names=("prey", "predator"))

    def problem() -> TrainingProblem:
        return TrainingProblem(
            lv_model(np.nanstd(gappy, axis=0)),
            data,
            loss="samples",
            mask="finite",
            initial_state="data",
            interpolation="linear",
        )

    def score(sol) -> dict[str, Any]:
        t_all = np.linspace(0.0, 16.0, 641)
        try:
            err = sol.simulate(t_all, noisy[0]).x - lv_truth(t_all, x0)
        except SimulationError:
            return {"held_out_rmse": None}
        return {"held_out_rmse": float(np.sqrt(np.mean(err[t_all > 8.0] ** 2)))}

    return Case(
        "gappy_lv",
        problem,
        1e-4,
        RadauIIA(160, 3, jit=True, ipopt=QUIET),
        score,
        "(8, 16], past the data",
    )


# ---- hybrid models of four kinds met outside the project --------------------------------------
# Posed as a newcomer would: networks without any input or output scaling, no λ, no mesh.


def forecast_rmse(sol: Any, truth: Callable, t_all: np.ndarray, after: float) -> float | None:
    """RMSE of the trained model re-simulated over ``t_all`` from its collocated start against
    ``truth(t_all)`` at the times past ``after``; None where the simulation fails."""
    try:
        sim = sol.simulate(t_all, check_range=False).x
    except SimulationError:
        return None
    late = t_all > after
    return rmse(sim[late], truth(t_all)[late])


def holling(x: np.ndarray) -> np.ndarray:
    """The predation rate of the plankton case: Holling's type II, 1.2 x / (1 + 0.96 x)."""
    return 1.2 * x / (1.0 + 1.2 * 0.8 * x)


def predator_prey_holling() -> Case:
    r, k, e, m = 1.0, 5.0, 0.5, 0.4

    def truth(t):
        return ode(
            lambda _, z: [
                r * z[0] * (1 - z[0] / k) - holling(z[0]) * z[1],
                e * holling(z[0]) * z[1] - m * z[1],
            ],
            t,
            [3.0, 1.0],
        )

    t = np.linspace(0.0, 30.0, 31)
    x = truth(t)
    noisy = x * (1 + 0.05 * np.random.default_rng(5).standard_normal(x.shape))
    data = Trajectory(t, noisy, state_names=("prey", "predator"))

    def problem() -> TrainingProblem:
        def rhs(z, u, tt, blocks, params):
            f = blocks["predation"](z[0])
            return [r * z[0] * (1 - z[0] / k) - f * z[1], e * f * z[1] - params["m"] * z[1]]

        model = HybridModel(
            2,
            {"predation": MLP((1, 8, 1), "tanh")},
            rhs,
            parameters={"m": Parameter(1.0, fit=True, lb=0.0)},
        )
        return TrainingProblem(model, data)

    def score(sol) -> dict[str, Any]:
        error = forecast_rmse(sol, truth, np.linspace(0.0, 45.0, 451), 30.0)
        return {
            "m_relative_error": abs(float(sol.params["m"]) - m) / m,
            "forecast_relative_rmse": None if error is None else error / float(x.std()),
        }

    return Case(
        "predator_prey_holling",
        problem,
        1e-4,
        UntilConsistent(RadauIIA(120, 3, ipopt=QUIET)),
        score,
        "the fitted mortality m, and (30, 45] past the data relative to the states' spread",
        {"m_relative_error": 0.1, "forecast_relative_rmse": 0.2},
    )


def pk_infusion() -> Case:
    k12, k21, vmax, km = 0.6, 0.3, 2.0, 0.5

    def infusion(tt, start=0.1, stop=1.0, rate=5.0):
        tt = np.asarray(tt, dtype=float)
        return (rate * (np.tanh((tt - start) / 0.05) - np.tanh((tt - stop) / 0.05)))[..., None]

    def second_dose(tt):  # the unseen regimen: half the rate for 2 h, again at 12 h
        return infusion(tt, 0.1, 2.1, 2.5) + infusion(tt, 12.0, 14.0, 2.5)

    def truth(t, dose=infusion):
        def rhs(tt, z):
            c1, c2 = z
            return [
                dose(tt)[0] - k12 * c1 + k21 * c2 - vmax * c1 / (km + c1),
                k12 * c1 - k21 * c2,
            ]

        return ode(rhs, t, [0.0, 0.0], method="Radau")

    t = np.array([0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24.0])
    x = truth(t)
    central = x[:, 0] * (1 + 0.05 * np.random.default_rng(6).standard_normal(t.size))
    data = Trajectory(
        t,
        np.column_stack([central, np.full(t.size, np.nan)]),
        u=infusion(t),
        state_names=("central", "peripheral"),
    )

    def problem() -> TrainingProblem:
        def rhs(z, u, tt, blocks, params):
            a, b = params["k12"], params["k21"]
            return [
                u[0] - a * z[0] + b * z[1] - blocks["elimination"](z[0]),
                a * z[0] - b * z[1],
            ]

        model = HybridModel(
            2,
            {"elimination": MLP((1, 8, 1), "tanh")},
            rhs,
            n_inputs=1,
            parameters={
                "k12": Parameter(1.0, fit=True, lb=0.0),
                "k21": Parameter(1.0, fit=True, lb=0.0),
            },
        )
        return TrainingProblem(
            model, data, inputs=infusion, initial_state=[0.0, 0.0], loss="samples"
        )

    def score(sol) -> dict[str, Any]:
        out = {
            "k12_relative_error": abs(float(sol.params["k12"]) - k12) / k12,
            "k21_relative_error": abs(float(sol.params["k21"]) - k21) / k21,
            "peripheral_relative_rmse": rmse(sol(t)[:, 1], x[:, 1]) / float(x[:, 1].max()),
        }
        t_all = np.linspace(0.0, 24.0, 241)
        expected = truth(t_all, second_dose)[:, 0]
        try:
            sim = sol.simulate(t_all, [0.0, 0.0], inputs=second_dose, check_range=False).x
        except SimulationError:
            return out | {"unseen_dose_relative_rmse": None}
        out["unseen_dose_relative_rmse"] = rmse(sim[:, 0], expected) / float(expected.max())
        return out

    return Case(
        "pk_infusion",
        problem,
        1e-4,
        UntilConsistent(RadauIIA(80, 3, ipopt=QUIET)),
        score,
        "the central concentration under an unseen dosing regimen (the target), the fitted "
        "exchange rates and the never-measured peripheral concentration",
        {"unseen_dose_relative_rmse": 0.1},
    )


def relaxation_oscillator() -> Case:
    mu = 10.0

    def truth(t):
        return ode(
            lambda _, z: [mu * (z[0] - z[0] ** 3 / 3 - z[1]), z[0] / mu],
            t,
            [2.0, 0.0],
            method="Radau",
        )

    t = np.linspace(0.0, 32.0, 321)
    x = truth(t)
    noisy = x + 0.02 * np.random.default_rng(7).standard_normal(x.shape)
    data = Trajectory(t, noisy, state_names=("x", "y"))

    def problem() -> TrainingProblem:
        model = HybridModel(
            2,
            {"cubic": MLP((1, 8, 1), "tanh")},
            lambda z, u, tt, blocks, params: [mu * (blocks["cubic"](z[0]) - z[1]), z[0] / mu],
        )
        return TrainingProblem(model, data)

    def score(sol) -> dict[str, Any]:
        grid = np.linspace(-2.0, 2.0, 81)
        learned = sol.model.blocks["cubic"].numpy(grid[:, None], sol.p[: sol.model.n_weights])
        return {
            "cubic_max_error": float(np.max(np.abs(learned.ravel() - (grid - grid**3 / 3)))),
            "forecast_rmse": forecast_rmse(sol, truth, np.linspace(0.0, 48.0, 961), 32.0),
        }

    return Case(
        "relaxation_oscillator",
        problem,
        1e-5,
        UntilConsistent(RadauIIA(400, 3, ipopt=QUIET)),
        score,
        "the learned cubic over [-2, 2], and (32, 48] past the data",
        {"cubic_max_error": 0.1, "forecast_rmse": 0.2},
    )


def cstr_coolant() -> Case:
    q, c_in, t_in, heat, beta = 1.0, 1.0, 350.0, 20.0, 2.0

    def rate(temperature):
        return 0.4 * np.exp(0.04 * (temperature - 350.0))

    def coolant(base, amplitude, omega):
        return lambda tt: (base + amplitude * np.sin(omega * np.asarray(tt, dtype=float)))[
            ..., None
        ]

    def truth(t, tc):
        def rhs(tt, z):
            c, temp = z
            k = rate(temp)
            return [
                q * (c_in - c) - k * c,
                q * (t_in - temp) + heat * k * c - beta * (temp - tc(tt)[0]),
            ]

        return ode(rhs, t, [0.5, 350.0], method="Radau")

    t = np.linspace(0.0, 10.0, 51)
    rng = np.random.default_rng(8)
    profiles = [coolant(b, 5.0, 0.6) for b in (335.0, 342.0, 349.0, 356.0)]
    experiments = []
    for tc in profiles:
        x = truth(t, tc)
        noisy = x + np.array([0.005, 0.2]) * rng.standard_normal(x.shape)
        experiments.append(Trajectory(t, noisy, u=tc(t), state_names=("C", "T")))
    unseen = coolant(345.0, 8.0, 1.1)

    def problem() -> TrainingProblem:
        def rhs(z, u, tt, blocks, params):
            k = blocks["rate"](z[1])
            return [
                q * (c_in - z[0]) - k * z[0],
                q * (t_in - z[1]) + heat * k * z[0] - beta * (z[1] - u[0]),
            ]

        model = HybridModel(2, {"rate": MLP((1, 8, 1), "tanh")}, rhs, n_inputs=1)
        return TrainingProblem(model, experiments, inputs=profiles)

    def score(sol) -> dict[str, Any]:
        x_true = truth(t, unseen)
        out: dict[str, Any] = {}
        try:
            sim = sol.simulate(t, x_true[0], inputs=unseen, check_range=False).x
        except SimulationError:
            return {"unseen_T_rmse": None, "unseen_C_rmse": None}
        out["unseen_T_rmse"] = rmse(sim[:, 1], x_true[:, 1])
        out["unseen_C_rmse"] = rmse(sim[:, 0], x_true[:, 0])
        return out

    return Case(
        "cstr_coolant",
        problem,
        1e-4,
        UntilConsistent(RadauIIA(60, 3, ipopt=QUIET)),
        score,
        "an unseen coolant profile: T [K] and C",
        {"unseen_T_rmse": 1.0, "unseen_C_rmse": 0.02},
    )


CASES = {
    c.__name__: c
    for c in (
        spiral,
        lv_ude,
        robertson,
        duffing,
        fitzhugh_nagumo,
        gappy_lv,
        predator_prey_holling,
        pk_infusion,
        relaxation_oscillator,
        cstr_coolant,
    )
}
#: the four hybrid cases of kinds met outside the project (``--cases hybrid``)
HYBRID = ("predator_prey_holling", "pk_infusion", "relaxation_oscillator", "cstr_coolant")


# ---- the runs -----------------------------------------------------------------------------


def verdict(row: dict[str, Any], targets: dict[str, float]) -> str:
    """One phrase: failed (the status), inconsistent, off target (which score), or within
    the case's targets."""
    if not SolverStatus(row["status"]).ok:
        return f"failed: {row['status']}"
    if row["consistent"] is False:
        return "inconsistent"
    off = [
        f"{k} {'failed' if row.get(k) is None else format(row[k], '.3g')} > {v:g}"
        for k, v in targets.items()
        if row.get(k) is None or row[k] > v
    ]
    return "off target: " + ", ".join(off) if off else "within targets"


def run_one(
    case: Case, which: str, given: float | None = None, budget: float | None = None
) -> dict[str, Any]:
    problem = case.problem()
    if which == "given":  # the defaults with λ given: no path
        problem = replace(problem, regularization=given)
        alg = None
    elif which == "expert":
        if case.expert_lambda is not None:
            problem = replace(problem, regularization=case.expert_lambda)
        alg = case.expert
    else:
        alg = None
    if budget is not None:  # every run capped alike
        alg = TimeLimit(Auto() if alg is None else alg, seconds=budget)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trained = solve(problem, alg, seed=0)
    seconds = time.perf_counter() - start
    # the outermost record counts the IPOPT iterations of every level (Auto: the path's too)
    outer = trained.records[0] if trained.records else trained
    row: dict[str, Any] = {
        "case": case.name,
        "run": which,
        "status": trained.status.value,
        "iterations": int(outer.iterations),
        "seconds": seconds,
        "consistent": None if trained.consistency is None else trained.consistency.consistent,
        "largest_deviation": None if trained.consistency is None else trained.consistency.largest,
        "check_s": None if trained.consistency is None else trained.consistency.wall_time_s,
        "intervals": sum(m.n_intervals for m in trained.solution.meshes),
        "lambda": trained.problem.regularization,
        "warnings": sorted({type(w.message).__name__ for w in caught}),
        **case.score(trained),
    }
    if case.targets:
        row["targets"] = case.targets
        row["verdict"] = verdict(row, case.targets)
    auto = next((r for r in trained.records if isinstance(r, AutoRecord)), None)
    if auto is not None and auto.path is not None:
        row["path"] = auto.path.to_dict()
        row["path_s"] = auto.times.get("path")
        row["final_s"] = auto.times.get("solve")
    return row


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table of ``rows``, with a verdict column where the rows have one."""
    verdicts = all("verdict" in r for r in rows)
    lines = [
        "| case | run | status | λ | intervals | iterations | time [s] | consistent | error |"
        + (" verdict |" if verdicts else ""),
        "|---|---|---|---|---|---|---|---|---|" + ("---|" if verdicts else ""),
    ]
    for r in rows:
        errors = {k: v for k, v in r.items() if k.endswith(("rmse", "error"))}
        shown = ", ".join(
            f"{k} {v:.3g}" if v is not None else f"{k} failed" for k, v in errors.items()
        )
        lam = "-" if r["lambda"] is None else f"{r['lambda']:g}"
        lines.append(
            f"| {r['case']} | {r['run']} | {r['status']} | {lam} | {r['intervals']} | "
            f"{r['iterations']} | {r['seconds']:.1f} | {r['consistent']} | {shown} |"
            + (f" {r['verdict']} |" if verdicts else "")
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--cases",
        nargs="*",
        default=list(CASES),
        choices=[*CASES, "hybrid"],
        help="'hybrid': the four hybrid cases",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds for each run (TimeLimit around its algorithm); none by default",
    )
    parser.add_argument(
        "--runs", nargs="*", default=["expert", "default"], choices=["expert", "default", "given"]
    )
    parser.add_argument(
        "--lambda", dest="given", type=float, default=1e-3, help="λ of the 'given' run"
    )
    parser.add_argument("--out", type=Path, default=Path("runs/first_try"))
    args = parser.parse_args()
    command = "python benchmarks/first_try.py " + shlex.join(sys.argv[1:])
    load_before = load_average()
    rows = []
    names = [n for c in args.cases for n in (HYBRID if c == "hybrid" else (c,))]
    for name in names:
        case = CASES[name]()
        for which in args.runs:
            row = run_one(case, which, args.given, args.budget)
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "path"}, default=str))
    args.out.mkdir(parents=True, exist_ok=True)
    record = {
        "command": command,
        "machine": describe(),
        "load_average": {"before": load_before, "after": load_average()},
        "rows": rows,
    }
    record["budget_s"] = args.budget
    write_json(args.out / "first_try.json", record)
    (args.out / "first_try.md").write_text(markdown(rows) + "\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
