"""The training problem linearised at a solution: the collocation states eliminated through the
collocation equations, the sensitivities of the fitted columns at the samples, and the reduced
Hessian of the training objective in the fitted quantities.

The NLP's unknowns are z = [node states, p] (the states scaled by ``x_nominal``), its constraints
c(z) = 0 the collocated dynamics (seed paper eq. 12b) and the block constraints. Split z into the
states at the collocation nodes x (determined by the rest through the collocation equations, whose
Jacobian A_x = ∂c/∂x is square and regular: one implicit Runge-Kutta step per interval) and the
fitted quantities θ (free parameters and free initial states,
`collocnode.training._uncertainty.quantities`). The implicit function theorem gives the
sensitivities

    S = dx/dθ = −A_x⁻¹ ∂c/∂θ,      Z = dz/dθ = [S; I]  (the held entries of z: 0),

one sparse LU factorisation and n_θ back-substitutions. Z is in scaled units of z per physical
unit of θ; the node states' sensitivities are reported in physical units (times the nominal).

At every sample the fitted columns' sensitivities g_sc = dq_c(t_s)/dθ
(`collocnode.training._uncertainty.points`) give the Fisher information of the samples for unit
noise, Σ_s g_sc g_scᵀ per column. The reduced Hessian of the objective f (data term and weight
penalty, eq. 21a) along Z, for ``exact=True``:

* Zᵀ ∇²ℒ Z with ℒ = f + μᵀc, the NLP's own exact Lagrangian Hessian evaluated with the
  adjoint multipliers μ = −A_x⁻ᵀ ∇ₓf (which equal IPOPT's at a converged solution; at any other
  iterate they make Zᵀ∇²ℒZ the second derivative of the reduced objective f(x(θ), θ)). The
  multipliers of active block constraints come from the least-squares fit of the reduced gradient.
* and its Gauss-Newton part, per fitted column c: 2 Σ_k w_kc g_kc g_kcᵀ over the loss points k
  (the collocation nodes with the Radau weights h_i b_j / s_c² for ``loss="nodes"``, the samples
  with the weights of ``sample_weights`` / s_c² for ``loss="samples"``), whose difference is the
  second-order part `collocnode.training._uncertainty.laplace` adds to the information.

The loss weights' sums W_c (what the objective's temperature needs) are always computed.

Active constraints on θ alone (block constraints such as F(0) = 0, eq. 17) leave θ a linear
subspace to move in: `Linearization.basis` (n_θ × n_φ), a few entries of θ (block weights
first) expressed through the others.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ...transcription._collocation import RadauIIA, build_nlp
from .points import OutputJacobians, chunks
from .quantities import FittedQuantities, initial_state_name, parameter_names

#: relative distance below which a parameter or a block constraint counts as at its bound
BOUND_TOL = 1e-7


@dataclass
class Linearization:
    """What the covariance is computed from (see the module docstring).

    Attributes:
        quantities: the fitted quantities θ.
        basis: T (n_θ, n_φ): θ moves in θ̂ + T φ (columns of the identity without active
            constraints on θ).
        independent: the entries of θ that φ is (T's rows there are the identity), (n_φ,) int.
        node_sensitivity: per trajectory dx/dθ at its mesh nodes, (n_nodes_s, n_states, n_θ),
            physical units.
        fisher: per fitted column c the Fisher information of its observations for unit noise,
            Σ_s g_sc g_scᵀ over its observed samples (g = dq_c(t_s)/dθ), (n_fit, n_θ, n_θ).
        objective_hessian: the exact reduced Hessian of the training objective Zᵀ∇²ℒZ (data
            term and weight penalty), (n_θ, n_θ), or None when not asked for.
        objective_gauss_newton: per fitted column the Gauss-Newton part of the objective's data
            term, 2 Σ_k w_kc g_kc g_kcᵀ over its loss points, (n_fit, n_θ, n_θ), or None.
        penalty: diagonal of the weight penalty's Hessian 2λ (0 outside the weights), (n_θ,).
        weight_sum: W_c, the sum of the loss weights of column c (objective units per squared
            unit of the column), (n_fit,).
        observed: n_c, the number of observed samples of column c inside the horizons, (n_fit,).
        residuals: per trajectory the data minus the fitted column at the samples inside its
            horizon, (n_samples_s, n_fit), NaN where not observed.
        sample_times: per trajectory the times of those samples, (n_samples_s,).
        reduced_gradient: Zᵀ∇f, (n_θ,): zero at a converged solution without active bounds.
        timings: wall time of each step [s].
    """

    quantities: FittedQuantities
    basis: np.ndarray
    independent: np.ndarray
    node_sensitivity: list[np.ndarray]
    fisher: np.ndarray
    objective_hessian: np.ndarray | None
    objective_gauss_newton: np.ndarray | None
    penalty: np.ndarray
    weight_sum: np.ndarray
    observed: np.ndarray
    residuals: list[np.ndarray]
    sample_times: list[np.ndarray]
    reduced_gradient: np.ndarray
    timings: dict[str, float] = field(default_factory=dict)


def nlp_of(sol: Any, exact: bool) -> Any:
    """The NLP a training solution was solved on, rebuilt (without JIT) when the solution holds
    none, or holds one without the exact Hessian and ``exact`` is asked for."""
    nlp = getattr(sol.solution, "nlp", None)
    if nlp is not None and (not exact or nlp.hessian_mode == "exact"):
        return nlp
    dop = sol.problem.to_dop(params_guess=np.asarray(sol.p, dtype=float))
    nlp, _ = build_nlp(dop, RadauIIA(), list(sol.solution.meshes))
    return nlp


def iterate(nlp: Any, sol: Any) -> np.ndarray:
    """The NLP's unknowns z (scaled) at the solution."""
    nominal = nlp.dop.node_vector("nominal")
    states = np.vstack(sol.solution.segment_states)
    return np.concatenate([(states / nominal).ravel(), np.asarray(sol.p, dtype=float)])


def linearize(sol: Any, exact: bool = False) -> Linearization:
    """The linearisation of ``sol``'s training problem at its solution (module docstring).

    Args:
        sol: a [`TrainingSolution`][collocnode.TrainingSolution].
        exact: also compute the exact reduced Hessian (needs the NLP's exact Hessian; rebuilt
            when the solve used a quasi-Newton one).
    """
    clock = _Clock()
    nlp = nlp_of(sol, exact)
    clock("nlp")
    z = iterate(nlp, sol)
    J = _matrix(nlp, "jac", nlp.fn_jac(z))
    grad = np.asarray(nlp.fn_grad(z)).ravel()
    clock("derivatives")

    quantities, theta_cols, per_unit = _quantities(nlp, sol, z)
    elim = _eliminate_states(nlp, J, theta_cols, per_unit)
    clock("sensitivities")

    active = _active_block_rows(nlp, z)
    C = np.asarray(J.tocsr()[active] @ elim.Z) if active.size else np.zeros((0, quantities.n))
    basis, independent = _elimination_basis(C, quantities)
    node_sensitivity = _node_sensitivity(nlp, elim.Z)
    residuals, times, observed, fisher = _at_samples(sol, node_sensitivity, quantities.p_index)
    clock("samples")

    penalty = np.zeros(quantities.n)
    penalty[quantities.of_kind("weight")] = 2.0 * sol.problem.lam
    exact_hessian = _exact_reduced_hessian(nlp, z, J, grad, elim, active, C) if exact else None
    gn, weight_sum = _objective_gauss_newton(sol, node_sensitivity, quantities.p_index, exact)
    if exact:
        clock("exact")
    return Linearization(
        quantities=quantities,
        basis=basis,
        independent=independent,
        node_sensitivity=node_sensitivity,
        fisher=fisher,
        objective_hessian=exact_hessian,
        objective_gauss_newton=gn,
        penalty=penalty,
        weight_sum=weight_sum,
        observed=observed,
        residuals=residuals,
        sample_times=times,
        reduced_gradient=elim.Z.T @ grad,
        timings=clock.times,
    )


class _Elimination(NamedTuple):
    """The node states eliminated through the collocation equations (module docstring)."""

    #: dz/dθ, (n_z, n_θ): scaled units of z per physical unit of θ
    Z: np.ndarray
    #: the sparse LU factors of A_x, the collocation equations' Jacobian in the node states
    lu: Any
    #: the rows of the collocation equations and the columns of the states they determine
    dyn_rows: np.ndarray
    dep_cols: np.ndarray


def _eliminate_states(
    nlp: Any, J: sp.csc_matrix, theta_cols: np.ndarray, per_unit: np.ndarray
) -> _Elimination:
    """Z = dz/dθ by the implicit function theorem: S = −A_x⁻¹ ∂c/∂θ at the states, the identity
    (per physical unit) at θ's own columns, zero at the held entries."""
    nx = nlp.layout.nx
    per_node = nlp.layout.nd + nlp.layout.ng
    dyn_rows = (np.arange(nlp.layout.N)[:, None] * per_node + np.arange(nlp.layout.nd)).ravel()
    dep_cols = (np.asarray(nlp.layout.coll_node)[:, None] * nx + np.arange(nlp.layout.nd)).ravel()
    J_dyn = J.tocsr()[dyn_rows]
    # the minimum-degree ordering of AᵀA keeps the factors of the interval-by-interval
    # (block-bidiagonal) collocation Jacobian sparse: half the fill of COLAMD
    lu = spla.splu(J_dyn[:, dep_cols].tocsc(), permc_spec="MMD_AT_PLUS_A")
    # S per unit of θ's z-column, then per physical unit of θ (initial states are scaled)
    S = -lu.solve(J_dyn[:, theta_cols].toarray()) * per_unit
    n_t = len(theta_cols)
    Z = np.zeros((nlp.layout.n_z, n_t))
    Z[dep_cols] = S
    Z[theta_cols, np.arange(n_t)] = per_unit
    return _Elimination(Z, lu, dyn_rows, dep_cols)


def _active_block_rows(nlp: Any, z: np.ndarray) -> np.ndarray:
    """The active boundary rows (the block constraints), which constrain θ: C dθ = 0;
    equalities always, inequalities where the value sits at a bound."""
    per_node = nlp.layout.nd + nlp.layout.ng
    bnd = np.arange(nlp.layout.N * per_node, nlp.layout.n_c)
    equal = nlp.lbg[bnd] == nlp.ubg[bnd]
    if equal.all():
        return bnd[equal]
    g = np.asarray(nlp.fn_g(z)).ravel()[bnd]
    scale = BOUND_TOL * (1.0 + np.abs(g))
    at_bound = (np.abs(g - nlp.lbg[bnd]) <= scale) | (np.abs(g - nlp.ubg[bnd]) <= scale)
    return bnd[equal | at_bound]


def _node_sensitivity(nlp: Any, Z: np.ndarray) -> list[np.ndarray]:
    """Per trajectory dx/dθ at its mesh nodes in physical units, (n_nodes_s, n_states, n_θ)."""
    nx = nlp.layout.nx
    nominal = nlp.dop.node_vector("nominal")
    Xs = (Z[: nlp.layout.nn * nx].reshape(nlp.layout.nn, nx, Z.shape[1])) * nominal[:nx, None]
    return [
        Xs[a:b, : nlp.layout.nd]
        for a, b in zip(nlp.layout.node_start[:-1], nlp.layout.node_start[1:], strict=True)
    ]


def _exact_reduced_hessian(
    nlp: Any,
    z: np.ndarray,
    J: sp.csc_matrix,
    grad: np.ndarray,
    elim: _Elimination,
    active: np.ndarray,
    C: np.ndarray,
) -> np.ndarray:
    """Zᵀ∇²ℒZ with the adjoint multipliers μ = −A_x⁻ᵀ ∇ₓf of the collocation equations and the
    least-squares multipliers of the active block constraints (module docstring)."""
    Z = elim.Z
    mu = np.zeros(nlp.layout.n_c)
    mu[elim.dyn_rows] = -elim.lu.solve(grad[elim.dep_cols], trans="T")
    if active.size:
        # the multipliers of the active block constraints: the least-squares fit of the
        # reduced gradient (zero for a stationary point without them)
        nu = la.lstsq(C.T, -(Z.T @ (grad + J.T @ mu)))[0]
        mu[active] = nu
    upper = _matrix(nlp, "hess", nlp.fn_hess(z, 1.0, mu))
    H = upper + sp.triu(upper, 1).T
    hessian = Z.T @ (H @ Z)
    return 0.5 * (hessian + hessian.T)


#: NLP -> the compressed-column index arrays of its Jacobian and Hessian patterns (reading
#: them from CasADi costs tens of ms on a large NLP; an NLP's patterns never change)
_PATTERNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _matrix(nlp: Any, which: str, nonzeros: Any) -> sp.csc_matrix:
    """The NLP's Jacobian (``which="jac"``) or upper-triangle Hessian (``"hess"``) from its
    nonzeros (CasADi's column-major order) as a scipy matrix."""
    sparsity = nlp.layout.jac_sparsity if which == "jac" else nlp.layout.hess_sparsity
    patterns = _PATTERNS.setdefault(nlp, {})
    if which not in patterns:
        colind, row = sparsity.get_ccs()
        patterns[which] = (np.asarray(colind, dtype=np.int64), np.asarray(row, dtype=np.int64))
    indptr, indices = patterns[which]
    data = np.asarray(nonzeros, dtype=float).ravel()
    return sp.csc_matrix((data, indices, indptr), shape=(sparsity.size1(), sparsity.size2()))


class _Clock:
    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self.last = time.perf_counter()

    def __call__(self, step: str) -> None:
        now = time.perf_counter()
        self.times[step] = now - self.last
        self.last = now


def _quantities(nlp: Any, sol: Any, z: np.ndarray) -> tuple[FittedQuantities, np.ndarray, Any]:
    """θ: the free entries of p (model layout), then the free initial states; their z-columns
    and, per entry, dz/dθ of its z-column (1 for parameters, 1 / nominal for a state)."""
    model = sol.model
    if nlp.layout.nx != nlp.layout.nd or nlp.layout.ng:
        raise ValueError(
            "the uncertainty of a training problem needs states only at the nodes (no algebraic "
            "states, controls or path constraints)"
        )
    if nlp.dop.free_final_time:
        raise ValueError("the uncertainty of a problem with a free final time is not supported")
    names, kinds, p_index, state, cols, scale, values = [], [], [], [], [], [], []
    held: dict[str, str] = {}
    p_names = parameter_names(model)
    for j in range(model.n_params):
        col = nlp.layout.P0 + j
        lb, ub, value = nlp.lbz[col], nlp.ubz[col], z[col]
        if lb == ub:
            held[p_names[j]] = "fixed"
            continue
        if np.isfinite(lb) and value - lb <= BOUND_TOL * (1.0 + abs(lb)):
            held[p_names[j]] = "at lower bound"
            continue
        if np.isfinite(ub) and ub - value <= BOUND_TOL * (1.0 + abs(ub)):
            held[p_names[j]] = "at upper bound"
            continue
        names.append(p_names[j])
        kinds.append("weight" if j < model.n_weights else "parameter")
        p_index.append(j)
        state.append((-1, -1))
        cols.append(col)
        scale.append(1.0)
        values.append(value)
    nominal = nlp.dop.node_vector("nominal")
    n_seg = len(nlp.meshes)
    for k, first in enumerate(nlp.layout.node_start[:-1]):
        for i in range(nlp.layout.nd):
            col = int(first) * nlp.layout.nx + i
            if nlp.lbz[col] == nlp.ubz[col]:
                continue
            names.append(initial_state_name(model, k, i, n_seg))
            kinds.append("initial_state")
            p_index.append(-1)
            state.append((k, i))
            cols.append(col)
            scale.append(1.0 / nominal[i])
            values.append(z[col] * nominal[i])
    quantities = FittedQuantities(
        names=tuple(names),
        kinds=tuple(kinds),
        p_index=np.asarray(p_index, dtype=np.int64),
        state=np.asarray(state, dtype=np.int64).reshape(-1, 2),
        values=np.asarray(values, dtype=float),
        held=held,
    )
    return quantities, np.asarray(cols, dtype=np.int64), np.asarray(scale, dtype=float)


def _elimination_basis(
    C: np.ndarray, quantities: FittedQuantities
) -> tuple[np.ndarray, np.ndarray]:
    """T (n_θ, n_φ) spanning {dθ : C dθ = 0}: as many entries of θ as C has independent rows
    are expressed through the others (block weights chosen first, by pivoted QR), so that the
    remaining entries keep their names."""
    n = quantities.n
    if C.shape[0] == 0 or not np.any(C):
        return np.eye(n), np.arange(n)
    rank = np.linalg.matrix_rank(C)
    weights = quantities.of_kind("weight")
    order = np.concatenate([weights, np.setdiff1d(np.arange(n), weights)])
    for pool in (weights, order):
        if pool.size < rank:
            continue
        _, R, piv = la.qr(C[:, pool], mode="economic", pivoting=True)
        if np.linalg.matrix_rank(R[:, :rank]) == rank:
            dependent = pool[piv[:rank]]
            break
    independent = np.setdiff1d(np.arange(n), dependent)
    # C_d dθ_d + C_i dθ_i = 0 on the independent rows of C
    _, _, rows = la.qr(C.T, mode="economic", pivoting=True)
    Cr = C[rows[:rank]]
    T = np.zeros((n, independent.size))
    T[independent, np.arange(independent.size)] = 1.0
    T[dependent] = -np.linalg.solve(Cr[:, dependent], Cr[:, independent])
    return T, independent


def _loss_points(problem: Any, sol: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The times of trajectory k's loss terms and their weights per fitted column in objective
    units (the Radau weights at the collocation nodes, or the samples' weights, over s_c²),
    shapes (n,), (n, n_fit)."""
    n_fit = len(problem.columns)
    if problem.loss == "samples":
        samples = problem.samples(k)
        return samples.t, samples.data[:, n_fit:]
    mesh = sol.solution.meshes[k]
    t = mesh.node_times[mesh.collocation_index]
    return t, mesh.quadrature_weights[:, None] / problem.scales()[None, :] ** 2


def _gram(g: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_n w_nc g_nc g_ncᵀ per column c: g (n, n_fit, n_θ), weights (n, n_fit) -> (n_fit, n_θ,
    n_θ), one BLAS product per column."""
    return np.stack([(g[:, c] * weights[:, c : c + 1]).T @ g[:, c] for c in range(g.shape[1])])


def _objective_gauss_newton(
    sol: Any, node_sensitivity: list[np.ndarray], p_columns: np.ndarray, with_hessian: bool
) -> tuple[np.ndarray | None, np.ndarray]:
    """Per fitted column the Gauss-Newton Hessian of its data term, 2 Σ_k w_kc g_kc g_kcᵀ over
    the loss points (n_fit, n_θ, n_θ; None unless ``with_hessian``), and W_c = Σ_k w_kc
    (n_fit,)."""
    problem = sol.problem
    n_fit, n_t = len(problem.columns), p_columns.size
    gn = np.zeros((n_fit, n_t, n_t)) if with_hessian else None
    weight_sum = np.zeros(n_fit)
    outputs = OutputJacobians(sol.model) if problem.model.n_outputs and with_hessian else None
    for k in range(problem.n_trajectories):
        t, w = _loss_points(problem, sol, k)
        weight_sum += w.sum(axis=0)
        if gn is None:
            continue
        for part, _, g in chunks(sol, k, t, node_sensitivity[k], p_columns, outputs):
            gn += 2.0 * _gram(g, w[part])
    return gn, weight_sum


def _at_samples(
    sol: Any, node_sensitivity: list[np.ndarray], p_columns: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray]:
    """At every sample inside each trajectory's horizon: the data minus the fitted column (NaN
    where not observed) and the sample times, per trajectory; the count of observed values per
    column; and per column the Fisher information of unit noise, Σ_s g_sc g_scᵀ over the
    observed samples (n_fit, n_θ, n_θ)."""
    problem = sol.problem
    n_fit, n_t = len(problem.columns), p_columns.size
    outputs = OutputJacobians(sol.model) if problem.model.n_outputs else None
    out, times = [], []
    observed = np.zeros(n_fit, dtype=np.int64)
    fisher = np.zeros((n_fit, n_t, n_t))
    for k in range(problem.n_trajectories):
        d = problem.trajectories[k]
        t0, tf = problem.horizon_of(k)
        tol = 1e-9 * max(1.0, tf - t0)
        inside = (d.t >= t0 - tol) & (d.t <= tf + tol)
        t = np.clip(d.t[inside], t0, tf)
        seen = problem.observed(k)[inside]
        targets = problem.targets(k)[inside]
        r = np.empty(seen.shape)
        for part, q, g in chunks(sol, k, t, node_sensitivity[k], p_columns, outputs):
            r[part] = np.where(seen[part], targets[part] - q, np.nan)
            fisher += _gram(g, seen[part].astype(float))
        out.append(r)
        times.append(t)
        observed += seen.sum(axis=0)
    return out, times, observed, fisher
