"""The resolved PEtab problem as CasADi functions, shared by the simulation and the collocation.

Symbols: θ (the estimated parameters on their estimation scale, ``theta``), x (states), t, and
``c``, the constants of one condition. What differs between conditions -- a model constant,
an initial value -- is a *slot* of ``c``: one number, plus one indicator per distinct expression
over θ that some condition gives it (``value = c_0 + Σ_j c_j E_j(θ)``). What every condition
shares is built into the functions. The data of one measurement (``d``) are encoded the same way:
the measured value, a one-hot column per observable, and a slot per placeholder.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import casadi as ca
import numpy as np
import sympy as sp

from ._hybrid import hybrid_symbols
from ._sbml import TIME
from ._symbolic import UnsupportedMathError, to_casadi
from ._tables import Observable, PetabError, ResolvedProblem, sym

LOG_2PI = float(np.log(2.0 * np.pi))
LAPLACE_SMOOTHING = 1e-8  # |r| ≈ sqrt(r² + ε²) in the NLP, so its Hessian exists


class Slots:
    """Per slot, the expression each row gives it, encoded as numbers (module docstring)."""

    def __init__(self, columns: list[list[sp.Expr]]) -> None:
        self.n_rows = len(columns[0]) if columns else 0
        self.layout: list[tuple[int, list[sp.Expr]]] = []  # per slot: start, distinct exprs
        self.rows: list[list[np.ndarray]] = []
        start = 0
        for column in columns:
            distinct: list[sp.Expr] = []
            for e in column:
                if e.free_symbols and e not in distinct:
                    distinct.append(e)
            self.layout.append((start, distinct))
            start += 1 + len(distinct)
        self.width = start
        self.values = np.zeros((self.n_rows, self.width))
        for s, column in enumerate(columns):
            first, distinct = self.layout[s]
            for r, e in enumerate(column):
                if e.free_symbols:
                    self.values[r, first + 1 + distinct.index(e)] = 1.0
                else:
                    self.values[r, first] = float(e)

    def symbolic(self, c: Any, theta: dict[sp.Symbol, Any]) -> list[Any]:
        """Each slot's value as a CasADi expression of ``c`` (the row's numbers) and θ."""
        out = []
        for first, distinct in self.layout:
            value = c[first]
            for j, e in enumerate(distinct):
                value = value + c[first + 1 + j] * to_casadi(e, theta)
            out.append(value)
        return out


@dataclass(frozen=True)
class ConditionData:
    """The numbers of one condition instance: its ``c`` row and which states it re-initialises."""

    c: np.ndarray
    reinitialised: np.ndarray


class NumericModel:
    """CasADi functions of a `ResolvedProblem` (module docstring).

    Functions (all SX):
        ``rhs(x, theta, c, t) -> x'``; ``initial(theta, c) -> x0``;
        ``nll(x, theta, c, t, d) -> -log p(y | x)`` of one measurement (normal/laplace, each
        transformation, the Laplace |r| smoothed); ``observable(x, theta, c, t, d) -> h``;
        ``sigma(x, theta, c, t, d) -> σ``; ``prior(theta) -> -log prior``.
    """

    def __init__(self, problem: ResolvedProblem) -> None:
        self.problem = problem
        model = problem.model
        self.n_theta = len(problem.parameters)
        self.n_x = model.n_states
        # condition instances: each experiment's simulation condition, then each distinct
        # pre-equilibration condition
        self.instances: list[tuple[dict[str, sp.Expr], tuple[sp.Expr | None, ...]]] = []
        self.simulation_instance: list[int] = []
        self.preequilibration_instance: list[int | None] = []
        pre_index: dict[str, int] = {}
        for e in problem.experiments:
            self.simulation_instance.append(len(self.instances))
            self.instances.append((e.constants, e.initial))
        for e in problem.experiments:
            if e.preequilibration is None:
                self.preequilibration_instance.append(None)
                continue
            if e.key[0] not in pre_index:
                pre_index[e.key[0]] = len(self.instances)
                self.instances.append(e.preequilibration)
            self.preequilibration_instance.append(pre_index[e.key[0]])
        self._build()

    # ---- symbols ----------------------------------------------------------------------------
    def _build(self) -> None:
        problem, model = self.problem, self.problem.model
        self.theta = ca.SX.sym("theta", self.n_theta)
        self.theta_lin = {
            sym(p.id): p.unscale(self.theta[j]) for j, p in enumerate(problem.parameters)
        }
        if problem.networks:
            self.theta_lin.update(hybrid_symbols(problem.networks, self.theta_lin))
        constant_ids = list(model.constants)
        varying = [
            cid for cid in constant_ids if len({inst[0][cid] for inst in self.instances}) > 1
        ]
        self.varying = varying
        columns = [[inst[0][cid] for inst in self.instances] for cid in varying]
        initial_columns = []
        for k in range(self.n_x):
            column = []
            for constants, initial in self.instances:
                e = initial[k] if initial[k] is not None else self._initial_default(k, constants)
                column.append(e)
            initial_columns.append(column)
        self.constant_slots = Slots(columns) if columns else None
        self.initial_slots = Slots(initial_columns)
        n_c = (self.constant_slots.width if self.constant_slots else 0) + self.initial_slots.width
        self.c = ca.SX.sym("c", n_c)
        self.x = ca.SX.sym("x", self.n_x)
        self.t = ca.SX.sym("t")
        shared = self.instances[0][0]
        symbols: dict[sp.Symbol, Any] = dict(self.theta_lin)
        const_width = self.constant_slots.width if self.constant_slots else 0
        if self.constant_slots:
            for cid, value in zip(
                varying, self.constant_slots.symbolic(self.c, self.theta_lin), strict=True
            ):
                symbols[sym(cid)] = value
        for cid in constant_ids:
            if cid not in varying:
                symbols[sym(cid)] = to_casadi(shared[cid], self.theta_lin)
        symbols.update({sym(s): self.x[k] for k, s in enumerate(model.states)})
        symbols[TIME] = self.t
        self.symbols = symbols
        where = problem.files.get("sbml", "the SBML model")
        try:
            rhs = ca.vertcat(*[to_casadi(f, symbols) for f in model.rhs])
        except UnsupportedMathError as exc:
            raise PetabError(f"{where}: {exc}") from None
        x0 = ca.vertcat(*self.initial_slots.symbolic(self.c[const_width:], self.theta_lin))
        self.rhs = ca.Function("rhs", [self.x, self.theta, self.c, self.t], [rhs])
        self.initial = ca.Function("initial", [self.theta, self.c], [x0])
        switches = [to_casadi(b, symbols) for b in time_switches(model.rhs, model.states)]
        self.switches = ca.Function(
            "switches", [self.theta, self.c], [ca.vertcat(*switches) if switches else ca.DM(0, 1)]
        )
        self._observation()

    def _initial_default(self, k: int, constants: dict[str, sp.Expr]) -> sp.Expr:
        model = self.problem.model
        e = model.initial[k]
        subs = {sym(cid): constants[cid] for cid in model.constants}
        out = e.xreplace(subs)
        # an initial value may name another state's initial value
        others = {sym(s): model.initial[j].xreplace(subs) for j, s in enumerate(model.states)}
        return out.xreplace(others)

    # ---- observation model ------------------------------------------------------------------
    def _observation(self) -> None:
        problem = self.problem
        obs_ids = list(problem.observables)
        self.observable_ids = obs_ids
        m = problem.measurements
        placeholder_columns: list[list[sp.Expr]] = []
        self.placeholder_of: dict[sp.Symbol, int] = {}
        for oid in obs_ids:
            obs = problem.observables[oid]
            for name in obs.observable_placeholders + obs.noise_placeholders:
                self.placeholder_of[name] = len(placeholder_columns)
                placeholder_columns.append(
                    [
                        m.overrides[i].get(name, sp.Float(0.0))
                        if m.observable[i] == oid
                        else sp.Float(0.0)
                        for i in range(len(m.observable))
                    ]
                )
        self.placeholder_slots = Slots(placeholder_columns) if placeholder_columns else None
        n_obs = len(obs_ids)
        width = 1 + n_obs + (self.placeholder_slots.width if self.placeholder_slots else 0)
        self.d = ca.SX.sym("d", width)
        symbols = dict(self.symbols)
        if self.placeholder_slots:
            values = self.placeholder_slots.symbolic(self.d[1 + n_obs :], self.theta_lin)
            for name, k in self.placeholder_of.items():
                symbols[name] = values[k]
        y = self.d[0]
        h_all, s_all, nll_all = 0, 0, 0
        for k, oid in enumerate(obs_ids):
            obs = problem.observables[oid]
            h, sigma = self._formulas(obs, symbols)
            # selected, not multiplied: another observable's formula may be inf or NaN here
            # (a log of a zero state), and 0 * inf is NaN; CasADi's if_else_zero is 0
            chosen = self.d[1 + k] > 0.5
            h_all += ca.if_else(chosen, h, 0.0)
            s_all += ca.if_else(chosen, sigma, 0.0)
            nll_all += ca.if_else(chosen, _nll(obs, y, h, sigma), 0.0)
        args = [self.x, self.theta, self.c, self.t, self.d]
        self.observable = ca.Function("observable", args, [h_all])
        self.sigma = ca.Function("sigma", args, [s_all])
        self.nll = ca.Function("nll", args, [nll_all])
        self.prior = ca.Function("prior", [self.theta], [self._prior()])

    def _formulas(self, obs: Observable, symbols: dict[sp.Symbol, Any]) -> tuple[Any, Any]:
        model = self.problem.model
        known = dict(symbols)
        par = self.problem
        out = []
        for column, e in (("observableFormula", obs.formula), ("noiseFormula", obs.noise)):
            e = model.expand(e)
            for s in e.free_symbols:
                if s not in known and s.name in _fixed_parameters(par):
                    known[s] = _fixed_parameters(par)[s.name]
            try:
                out.append(to_casadi(e, known))
            except UnsupportedMathError as exc:
                where = par.files.get("observable", "the observable table")
                raise PetabError(
                    f"{where}, observable {obs.id!r}, column {column!r}: {exc}"
                ) from None
        return out[0], out[1]

    def _prior(self) -> Any:
        total = 0
        for j, p in enumerate(self.problem.parameters):
            if p.prior is None:
                continue
            kind, (a, b) = p.prior
            scaled = self.theta[j]
            lin = p.unscale(scaled)
            value = {
                "parameterScaleNormal": scaled,
                "parameterScaleLaplace": scaled,
                "normal": lin,
                "laplace": lin,
                "logNormal": ca.log(lin),
                "logLaplace": ca.log(lin),
            }.get(kind)
            if kind.endswith(("Normal", "normal")):
                total += 0.5 * LOG_2PI + np.log(b) + 0.5 * ((value - a) / b) ** 2
            elif kind.endswith(("Laplace", "laplace")):
                # |.| smoothed as in the Laplace noise model, so the NLP's Hessian exists
                total += np.log(2 * b) + ca.sqrt(((value - a) / b) ** 2 + LAPLACE_SMOOTHING**2)
            else:  # uniform on the bounds: a constant
                total += np.log(b - a)
            if kind in ("logNormal", "logLaplace"):
                total += ca.log(lin)  # the density of a log-distributed linear value
        return total

    def breakpoints(self, theta: np.ndarray, c: np.ndarray, horizon: float) -> np.ndarray:
        """The times in (0, horizon) where the right-hand side switches (sorted, unique)."""
        if not self.switches.size1_out(0):
            return np.zeros(0)
        times = np.asarray(self.switches(theta, c), dtype=float).ravel()
        times = times[np.isfinite(times) & (times > 0) & (times < horizon)]
        return np.unique(times)

    # ---- numbers of conditions and measurements ---------------------------------------------
    @cached_property
    def condition_data(self) -> list[ConditionData]:
        """Per condition instance its ``c`` row and re-initialised states."""
        out = []
        for i, (_, initial) in enumerate(self.instances):
            parts = []
            if self.constant_slots:
                parts.append(self.constant_slots.values[i])
            parts.append(self.initial_slots.values[i])
            out.append(
                ConditionData(
                    np.concatenate(parts), np.array([x is not None for x in initial], dtype=bool)
                )
            )
        return out

    @cached_property
    def measurement_data(self) -> np.ndarray:
        """The ``d`` row of every measurement, (n_measurements, width)."""
        m = self.problem.measurements
        n = len(m.observable)
        out = np.zeros((n, self.d.numel()))
        out[:, 0] = m.value
        for i, oid in enumerate(m.observable):
            out[i, 1 + self.observable_ids.index(oid)] = 1.0
        if self.placeholder_slots:
            out[:, 1 + len(self.observable_ids) :] = self.placeholder_slots.values
        return out


def time_switches(expressions: Any, states: Any) -> list[sp.Expr]:
    """The times at which the expressions switch: for each relation or Heaviside step whose
    argument is linear in t with a constant slope (``t >= t_dose``, ``Heaviside(t - 10)``), the
    time it changes side, as an expression of the constants. Relations of states are not
    time-triggered (``states``: the state ids) and are left out."""
    state_names = set(states)
    out: list[sp.Expr] = []
    seen: set[sp.Expr] = set()
    for expr in expressions:
        for node in sp.preorder_traversal(expr):
            if isinstance(node, sp.core.relational.Relational):
                gap = node.lhs - node.rhs
            elif isinstance(node, sp.Heaviside):
                gap = node.args[0]
            else:
                continue
            if not gap.has(TIME):
                continue
            slope = sp.diff(gap, TIME)
            if slope.has(TIME) or slope.free_symbols or slope == 0:
                continue
            rest = sp.expand(gap - slope * TIME)
            if rest.has(TIME) or any(s.name in state_names for s in rest.free_symbols):
                continue
            switch = sp.simplify(-rest / slope)
            if switch not in seen:
                seen.add(switch)
                out.append(switch)
    return out


def _fixed_parameters(problem: ResolvedProblem) -> dict[str, float]:
    return problem.fixed


def _nll(obs: Observable, y: Any, h: Any, sigma: Any) -> Any:
    """-log p(y | h, σ) for the observable's distribution and transformation (PEtab v1)."""
    if obs.transformation == "log":
        ty, th, jac = ca.log(y), ca.log(h), ca.log(y)
    elif obs.transformation == "log10":
        ty, th = ca.log(y) / np.log(10.0), ca.log(h) / np.log(10.0)
        jac = ca.log(y) + np.log(np.log(10.0))
    else:
        ty, th, jac = y, h, 0.0
    r = (ty - th) / sigma
    if obs.distribution == "laplace":
        return ca.log(2.0 * sigma) + ca.sqrt(r**2 + LAPLACE_SMOOTHING**2) + jac
    return 0.5 * LOG_2PI + ca.log(sigma) + 0.5 * r**2 + jac
