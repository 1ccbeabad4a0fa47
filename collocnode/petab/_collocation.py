"""An imported PEtab problem as one dynamic optimization problem (Radau IIA collocation).

Every experiment is a segment of the DOP; all share the NLP parameters
``p = [θ (estimation scale), x_ss of each pre-equilibration condition]``. Its constant numbers
(`NumericModel`'s ``c``, which states it re-initialises, which steady state it
starts from) are the segment's known inputs ``u``, constant in time.

The initial state of an experiment may depend on θ (an initial assignment ``A = a0``, a
condition that sets ``B0`` to an estimated parameter, a pre-equilibration): such a state is an
offset ``x̃ = x − x0(p, u)`` in the NLP, which starts at 0 in every experiment, so the initial
value is exact for any θ without boundary rows per segment. Every other state is itself, its
initial value fixed per experiment; a species among them that the start's simulation keeps
non-negative is bounded below by 0 (IPOPT keeps bounds strictly, so a Hill term's fractional
power of a concentration is never evaluated at a negative one).

A pre-equilibration steady state is a block of p, held by boundary rows: the model's amount
rates projected onto the span they can take equal 0, and the conserved moieties (the directions
no rate can change: reactions' and rate rules' alike)
keep the values of the pre-equilibration condition's initial state.

The objective is the negative log-likelihood of every measurement, ``Σ_i ℓ_i(x(t_i), θ)``, with
x(t_i) the collocation polynomial at the measurement time (the DOP's sample loss), plus the
negative log prior as the Mayer term.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import casadi as ca
import numpy as np
import sympy as sp

from ..transcription._mesh import Mesh
from ..transcription._problem import (
    Constraint,
    DynamicOptimizationProblem,
    Inputs,
    Samples,
    Segment,
)
from ._numeric import NumericModel
from ._simulate import SETTLED_TIME, Simulation
from ._symbolic import to_casadi
from ._tables import sym

MIN_HORIZON = 1e-6  # an experiment measured only at t = 0 still needs an interval


@dataclass(frozen=True)
class Layout:
    """Where things live in the DOP's p and u."""

    n_theta: int
    n_x: int
    n_c: int
    pre_instances: tuple[int, ...]  # the condition instances that are pre-equilibrations
    settling: tuple[int, ...] = ()  # the experiments measured at their steady state
    offset: np.ndarray | None = None  # per state: is it an offset from x0(p, u)?

    @property
    def n_pre(self) -> int:
        return len(self.pre_instances)

    @property
    def n_blocks(self) -> int:
        """Steady states in p: the pre-equilibrations', then the settling experiments'."""
        return self.n_pre + len(self.settling)

    @property
    def n_p(self) -> int:
        return self.n_theta + self.n_blocks * self.n_x

    @property
    def n_u(self) -> int:
        """c, the re-initialised states, the pre-equilibration one-hot, the time shift."""
        return self.n_c + self.n_x + self.n_pre + 1

    def steady(self, p: Any, k: int) -> Any:
        first = self.n_theta + k * self.n_x
        return p[first : first + self.n_x]


def layout_of(numeric: NumericModel) -> Layout:
    pre = tuple(sorted({k for k in numeric.preequilibration_instance if k is not None}))
    problem = numeric.problem
    settling = tuple(k for k in range(len(problem.experiments)) if problem.settles(k).size)
    layout = Layout(numeric.n_theta, numeric.n_x, int(numeric.c.numel()), pre, settling)
    p = ca.SX.sym("p", layout.n_p)
    u = ca.SX.sym("u", layout.n_u)
    x0 = initial_state(numeric, layout, p, u)
    offset = np.array([ca.depends_on(x0[i], p) for i in range(layout.n_x)], dtype=bool)
    return replace(layout, offset=offset)


def initial_state(numeric: NumericModel, layout: Layout, p: Any, u: Any) -> Any:
    """x0(p, u) of a segment (module docstring)."""
    theta, c = p[: layout.n_theta], u[: layout.n_c]
    x0 = numeric.initial(theta, c)
    if not layout.n_pre:
        return x0
    reinit = u[layout.n_c : layout.n_c + layout.n_x]
    onehot = u[layout.n_c + layout.n_x : layout.n_c + layout.n_x + layout.n_pre]
    steady = sum(onehot[k] * layout.steady(p, k) for k in range(layout.n_pre))
    return reinit * x0 + (1 - reinit) * steady


def segment_inputs(numeric: NumericModel, layout: Layout, k: int) -> np.ndarray:
    """The constant ``u`` of experiment ``k``, (n_u,)."""
    cond = numeric.condition_data[numeric.simulation_instance[k]]
    pre = numeric.preequilibration_instance[k]
    onehot = np.zeros(layout.n_pre)
    reinit = np.ones(layout.n_x)
    if pre is not None:
        onehot[layout.pre_instances.index(pre)] = 1.0
        reinit = cond.reinitialised.astype(float)
    return np.concatenate([cond.c, reinit, onehot])


def _segment_inputs(values: np.ndarray, switches: np.ndarray, horizon: float) -> Inputs:
    """The segment's constant ``u`` and, last, a time shift: −1e-10·horizon at a switching time,
    0 elsewhere. A switching time is a mesh boundary, so the node there is the last Radau node
    of the interval before it; shifted, the right-hand side takes its value from the left
    (``t >= t_dose`` is still false there), as the interval's polynomial needs."""
    row = values[None, :]
    shift = 1e-10 * horizon

    def u(t: np.ndarray) -> np.ndarray:
        t = np.atleast_1d(np.asarray(t, dtype=float))
        at_switch = np.any(np.abs(t[:, None] - switches[None, :]) <= 1e-12 * horizon, axis=1)
        return np.column_stack([np.repeat(row, t.size, axis=0), -shift * at_switch])

    return Inputs.from_function(u, values.size + 1)


def build_dop(
    numeric: NumericModel,
    theta0: np.ndarray,
    simulation: Simulation,
    lb: np.ndarray,
    ub: np.ndarray,
) -> DynamicOptimizationProblem:
    """The DOP of the imported problem, its guess from ``simulation`` (a CVODES run at
    ``theta0``)."""
    layout = layout_of(numeric)
    problem = numeric.problem
    m = problem.measurements
    data = numeric.measurement_data
    nt = layout.n_theta

    offset = ca.DM(layout.offset.astype(float))

    def full(x: Any, p: Any, u: Any) -> Any:
        if not np.any(layout.offset):
            return x
        return x + offset * initial_state(numeric, layout, p, u)

    def dynamics(x: Any, p: Any, u: Any, t: Any) -> Any:
        x_full = full(x, p, u)
        return numeric.rhs(x_full, p[:nt], u[: layout.n_c], t + u[layout.n_u - 1])

    def sample_loss(x: Any, p: Any, u: Any, t: Any, d: Any) -> Any:
        x_full = full(x, p, u)
        return numeric.nll(x_full, p[:nt], u[: layout.n_c], t, d)

    lower = _state_lower_bounds(numeric, layout, simulation)
    p_guess = np.concatenate(
        [theta0, *[_steady_guess(simulation, numeric, layout, j) for j in range(layout.n_blocks)]]
    )
    segments, offsets = [], []
    for k, e in enumerate(problem.experiments):
        u = segment_inputs(numeric, layout, k)
        c_sim = numeric.condition_data[numeric.simulation_instance[k]].c
        x0 = np.asarray(initial_state(numeric, layout, ca.DM(p_guess), ca.DM(u))).ravel()
        grid, states = simulation.grids[k], simulation.states[k] - layout.offset * x0
        offsets.append(states)
        horizon = max(e.tmax, MIN_HORIZON)
        segments.append(
            Segment(
                tspan=(0.0, horizon),
                inputs=_segment_inputs(u, numeric.breakpoints(theta0, c_sim, horizon), horizon),
                x0=np.where(layout.offset, 0.0, x0),
                x_guess=_interpolant(grid, np.maximum(states, lower)),
                samples=_finite_samples(m.time[e.rows], data[e.rows]),
            )
        )
    p_lb = np.concatenate([lb, np.full(layout.n_blocks * layout.n_x, -np.inf)])
    p_ub = np.concatenate([ub, np.full(layout.n_blocks * layout.n_x, np.inf)])
    prior = numeric.prior(numeric.theta)
    has_prior = not (prior.is_constant() and float(ca.DM(prior)) == 0.0)
    return DynamicOptimizationProblem(
        dynamics=dynamics,
        n_states=layout.n_x,
        n_params=layout.n_p,
        tspan=segments[0].tspan,
        inputs=segments[0].inputs,
        segments=tuple(segments),
        sample_loss=sample_loss,
        sample_groups=_sample_groups(numeric),
        mayer=_mayer(numeric, layout) if has_prior or layout.settling else None,
        boundary=_steady_state_rows(numeric, layout),
        p_lb=p_lb,
        p_ub=p_ub,
        p_guess=np.clip(p_guess, p_lb, p_ub),
        x_nominal=_nominal(offsets, simulation),
        x_lb=lower,
        state_names=problem.model.states,
        param_names=tuple(p.id for p in problem.parameters)
        + tuple(f"{s}@steady{j}" for j in range(layout.n_blocks) for s in problem.model.states),
    )


#: measurements per observable from which the samples are grouped by observable
GROUP_FROM = 20


def _sample_groups(numeric: NumericModel) -> tuple[int, ...]:
    """The columns of a measurement's ``d`` that the NLP groups the samples by: the observable's
    one-hot columns, where there are many measurements per observable. Each group's data term
    is then built with them as constants, so that a measurement of one observable does not
    carry the derivatives of all the others: 16 observables and 9,600 measurements
    (Lang_PLOSComputBiol2024) build in a seventh of the time. With few measurements the extra
    functions cost more than they save (75 states, 4 observables, 18 measurements: 9.7 s
    grouped, 5.7 s not), and the overrides' columns are never grouped by (where they vary,
    nearly every measurement would be a group of its own)."""
    n_obs = len(numeric.observable_ids)
    if n_obs < 2 or numeric.measurement_data.shape[0] < GROUP_FROM * n_obs:
        return ()
    return tuple(range(1, 1 + n_obs))


def _state_lower_bounds(
    numeric: NumericModel, layout: Layout, simulation: Simulation
) -> np.ndarray:
    """0 for each species that is no offset and that the start's simulation keeps non-negative
    in every experiment, -inf for every other state."""
    lower = np.full(layout.n_x, -np.inf)
    n_species = numeric.problem.model.n_species
    for i in range(n_species):
        if layout.offset[i]:
            continue
        values = np.concatenate([s[:, i] for s in simulation.states])
        scale = max(float(np.max(np.abs(values))), 1e-300)
        if np.min(values) >= -1e-9 * scale:
            lower[i] = 0.0
    return lower


def _finite_samples(t: np.ndarray, d: np.ndarray) -> Samples | None:
    """The measurements at finite times (those at ``inf`` are the Mayer term's)."""
    finite = np.isfinite(t)
    return Samples(t[finite], d[finite]) if np.any(finite) else None


def _steady_guess(sim: Simulation, numeric: NumericModel, layout: Layout, j: int) -> np.ndarray:
    """The simulated steady state of block ``j`` of p (`Layout.n_blocks`)."""
    if j >= layout.n_pre:
        return np.asarray(sim.settled[layout.settling[j - layout.n_pre]], dtype=float)
    instance = layout.pre_instances[j]
    k = numeric.preequilibration_instance.index(instance)
    return np.asarray(sim.steady[k], dtype=float)


def _interpolant(grid: np.ndarray, states: np.ndarray) -> Any:
    def guess(t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        return np.column_stack([np.interp(t, grid, states[:, j]) for j in range(states.shape[1])])

    return guess


def _nominal(offsets: list[np.ndarray], sim: Simulation) -> np.ndarray:
    """A typical magnitude per state: the spread of its offsets, else of its values, else 1."""
    spread = np.max([np.max(np.abs(o), axis=0) for o in offsets], axis=0)
    size = np.max([np.max(np.abs(s), axis=0) for s in sim.states], axis=0)
    out = np.where(spread > 1e-8 * np.maximum(size, 1e-300), spread, size)
    return np.where(out > 0, out, 1.0)


def _mayer(numeric: NumericModel, layout: Layout) -> Any:
    """The negative log prior, plus the measurements at a steady state (time ``inf``), each at
    its experiment's steady-state block of p."""
    problem = numeric.problem
    data = numeric.measurement_data
    nt = layout.n_theta
    settled = [
        (
            layout.n_pre + q,
            numeric.condition_data[numeric.simulation_instance[k]].c,
            problem.settles(k),
        )
        for q, k in enumerate(layout.settling)
    ]

    def mayer(x0: Any, xf: Any, p: Any) -> Any:
        total = numeric.prior(p[:nt])
        for block, c, rows in settled:
            x_post = layout.steady(p, block)
            for i in rows:
                total += numeric.nll(x_post, p[:nt], c, SETTLED_TIME, data[i])
        return total

    return mayer


def _steady_state_rows(numeric: NumericModel, layout: Layout) -> Constraint | None:
    """Boundary rows that make each steady-state block of p a steady state (module docstring):
    a pre-equilibration's, whose moieties are those of its condition's initial state, and a
    settling experiment's, whose moieties are those of the experiment's initial state. None
    without such blocks."""
    if not layout.n_blocks:
        return None
    blocks = []
    for j, instance in enumerate(layout.pre_instances):
        c = numeric.condition_data[instance].c

        def start(p: Any, c: np.ndarray = c) -> Any:
            return numeric.initial(p[: layout.n_theta], c)

        blocks.append((j, instance, c, start))
    for q, k in enumerate(layout.settling):
        instance = numeric.simulation_instance[k]
        u = segment_inputs(numeric, layout, k)

        def start(p: Any, u: np.ndarray = u) -> Any:
            return initial_state(numeric, layout, p, ca.DM(u))

        blocks.append((layout.n_pre + q, instance, numeric.condition_data[instance].c, start))
    rows_of = []
    for j, instance, c, start in blocks:
        volume = _volume(numeric, instance)
        rng, conserved = _rate_subspaces(numeric, volume, c, layout)
        rows_of.append((j, c, start, volume, rng, conserved))

    def rows(x0: Any, xf: Any, p: Any) -> Any:
        theta = p[: layout.n_theta]
        out = []
        for j, c, start, volume, rng, conserved in rows_of:
            x_ss = layout.steady(p, j)
            V = volume(theta)
            out.append(ca.mtimes(rng.T, V * numeric.rhs(x_ss, theta, c, SETTLED_TIME)))
            if conserved.shape[1]:
                out.append(ca.mtimes(conserved.T, V * (x_ss - start(p))))
        return ca.vertcat(*out)

    return Constraint.make("steady state", rows, layout.n_blocks * layout.n_x, 0.0, 0.0)


def _volume(numeric: NumericModel, instance: int) -> ca.Function:
    """The compartment size each state's value is divided by, in condition ``instance``, as a
    function of θ."""
    constants, _ = numeric.instances[instance]
    subs = {sym(k): e for k, e in constants.items()}
    volumes = [
        to_casadi(sp.sympify(v).xreplace(subs), numeric.theta_lin)
        for v in numeric.problem.model.volumes
    ]
    return ca.Function("volume", [numeric.theta], [ca.vertcat(*volumes)])


def _rate_subspaces(
    numeric: NumericModel, volume: ca.Function, c: np.ndarray, layout: Layout
) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal bases of the span of the amount rates V ⊙ f(x, θ) and of its complement
    (the conserved moieties: L with Lᵀ(V ⊙ f) ≡ 0), found from the rates at random states and
    parameters (positive states, θ uniform in its bounds): rate rules and reactions alike."""
    rng = np.random.default_rng(0)
    n = layout.n_x
    bounds = numeric.problem.parameters
    # an unbounded entry (a network weight) is drawn within one of its nominal value
    lb = np.array([p.lb if np.isfinite(p.lb) else p.nominal - 1.0 for p in bounds])
    ub = np.array([p.ub if np.isfinite(p.ub) else p.nominal + 1.0 for p in bounds])
    columns = []
    for _ in range(3 * n + 5):
        theta = rng.uniform(lb, ub)
        x = rng.uniform(0.1, 2.0, n)
        t = float(rng.uniform(0.0, 1.0))
        rate = np.asarray(volume(theta) * numeric.rhs(x, theta, c, t), dtype=float).ravel()
        if np.all(np.isfinite(rate)):
            columns.append(rate / max(1.0, float(np.max(np.abs(rate)))))
    F = np.column_stack(columns) if columns else np.eye(n)
    u, s, _ = np.linalg.svd(F, full_matrices=True)
    rank = int(np.sum(s > 1e-9 * max(float(s.max()) if s.size else 0.0, 1e-300)))
    return u[:, :rank], u[:, rank:]


def halved(mesh: Mesh) -> Mesh:
    """``mesh`` with every interval split in two (h-refinement), stages kept."""
    grid = np.asarray(mesh.grid)
    middle = 0.5 * (grid[:-1] + grid[1:])
    stages = np.repeat(np.asarray(mesh.stages), 2)
    return Mesh.from_grid(np.sort(np.concatenate([grid, middle])), stages)


def warm_started(dop: DynamicOptimizationProblem, previous: Any) -> DynamicOptimizationProblem:
    """``dop`` with the states and parameters of a ``previous`` solution of it as its guess
    (its collocation polynomials, evaluated on the new mesh)."""
    segments = tuple(
        replace(seg, x_guess=_states_of(previous, k)) for k, seg in enumerate(dop.segments)
    )
    p = np.clip(np.asarray(previous.p, dtype=float), dop.p_lb, dop.p_ub)
    return dop.remake(segments=segments, p_guess=p)


def _states_of(solution: Any, segment: int) -> Any:
    def guess(t: np.ndarray) -> np.ndarray:
        return np.asarray(solution.states(np.asarray(t, dtype=float), segment))

    return guess


def meshes(
    numeric: NumericModel, simulation: Simulation, intervals: int, stages: int, theta: np.ndarray
) -> list[Mesh]:
    """Per experiment a mesh of about ``intervals`` intervals that equidistributes the simulated
    states' variation (half of the intervals) and time (the other half), with an interval
    boundary at every time where the right-hand side switches at ``theta`` (a dose at a fixed
    time, a piecewise input): no collocation polynomial straddles a discontinuity."""
    out = []
    for k, e in enumerate(numeric.problem.experiments):
        horizon = max(e.tmax, MIN_HORIZON)
        grid, states = simulation.grids[k], simulation.states[k]
        points = _equidistributed(grid, states, horizon, intervals)
        c = numeric.condition_data[numeric.simulation_instance[k]].c
        switches = numeric.breakpoints(theta, c, horizon)
        if switches.size:
            gap = 1e-6 * horizon
            far = np.all(np.abs(points[:, None] - switches[None, :]) > gap, axis=1)
            points = np.union1d(points[far | (points == 0) | (points == horizon)], switches)
        out.append(Mesh.from_grid(points, stages))
    return out


def _equidistributed(
    grid: np.ndarray, states: np.ndarray, horizon: float, intervals: int
) -> np.ndarray:
    if grid.size < 3:
        return np.linspace(0.0, horizon, intervals + 1)
    scale = np.max(np.abs(states), axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    variation = np.sum(np.abs(np.diff(states / scale, axis=0)), axis=1)
    if variation.sum() <= 0:
        return np.linspace(0.0, horizon, intervals + 1)
    density = 0.5 * variation / variation.sum() + 0.5 * np.diff(grid) / (grid[-1] - grid[0])
    cumulative = np.concatenate([[0.0], np.cumsum(density)])
    levels = np.linspace(0.0, cumulative[-1], intervals + 1)
    points = np.interp(levels, cumulative, grid)
    points[0], points[-1] = 0.0, horizon
    return np.unique(points)
