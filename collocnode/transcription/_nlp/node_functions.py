"""The per-node symbolic functions of the collocation NLP and the local sparsity of their outputs.

One function per node type, built once from the problem's callables: the values (the dynamics
residual part −h f, the path constraints and the weighted Lagrange term), their first derivatives
(the node's Jacobian nonzeros and objective gradient), both from one function ("fused": the
forward pass computed once for both) and the node Lagrangian's Hessian blocks H_xx, H_xp, H_pp
(each as its structural nonzeros). Likewise for the boundary terms, which see
x(t0), x(tf) and p, and for the data terms at sample times (`Samples`), which
see the m + 1 node states of the sample's interval and p. `collocnode.transcription._nlp.assembly`
places these local nonzeros in the global NLP; `collocnode.transcription._nlp` evaluates them over
all nodes and samples.

Variables are scaled: the node functions see x / x_nominal, and the dynamics are divided by
x_nominal, so every state's collocation equations are of order one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import casadi as ca
import numpy as np

from .._problem import DynamicOptimizationProblem
from .hessian import NLP_MODES

Pattern = tuple[np.ndarray, np.ndarray]  # (rows, cols) of structural nonzeros, int64


@dataclass(frozen=True)
class NodeFunctions:
    """Per-node symbolic functions and the local sparsity of their derivative outputs.

    Inputs of every node function: x (the node's n_v unknowns [x, z, u_c]), p (the NLP's n_p
    parameters), u (n_u known inputs), t (mesh time), h (interval length), w (quadrature weight
    h b_j); the Hessian adds sigma (objective factor, shared), lam_c (n_states) and lam_g
    (n_algebraic + n_path).
    """

    values: ca.Function  # -> res = -h f (n_x), g (n_g), obj = w L (1)
    first: ca.Function  # -> jac_nz, gx (n_x), gp (n_p)
    second: ca.Function | None  # -> the exactly computed blocks among hxx_nz, hxp_nz, hpp_nz
    jac: tuple[np.ndarray, np.ndarray]  # local (row, col) of jac_nz; col < n_x: x, else p
    hxx: tuple[np.ndarray, np.ndarray]
    hxp: tuple[np.ndarray, np.ndarray]  # col indexes p
    hpp: tuple[np.ndarray, np.ndarray]
    lag_grad: ca.Function | None = None  # (..., sigma, lam_c, lam_g) -> lx (n_x), lp (n_p)
    # the outputs of ``values`` then of ``first`` from one evaluation (the forward pass shared):
    # -> res (n_x), g (n_g), obj (1), jac_nz, gx (n_x), gp (n_p)
    fused: ca.Function | None = None


@dataclass(frozen=True)
class BoundaryFunctions:
    """Functions of vb = [x0 (n_x), xf (n_x), p (n_p)]: r and M and their derivatives."""

    values: ca.Function  # (x0, xf, p) -> r (n_r), M (1)
    first: ca.Function  # -> jac_r_nz, grad_M (2 n_x + n_p)
    second: ca.Function  # (x0, xf, p, sigma, lam_r) -> hess_nz (upper triangle over vb)
    jac: tuple[np.ndarray, np.ndarray]
    hess: tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class SampleFunctions:
    """The data term of one sample in an interval of ``m`` stages and its derivatives.

    Inputs: xi (n_v (m + 1)): the interval's node unknowns v_i0..v_im, node-major (the term
    sees their states); beta (m + 1):
    the Lagrange basis over ``(0, c_1..c_m)`` at the sample's local time, so the state there is
    ``reshape(xi, n_x, m + 1) @ beta``; p (n_p), u (n_u), t, d (n_data), w; the Hessian adds
    sigma. Local columns of the patterns: < n_x (m + 1) index xi, the rest p (``hxp``: p).
    """

    m: int
    values: ca.Function  # -> obj = w ℓ (1)
    first: ca.Function  # -> gx (n_x (m + 1)), gp (n_p)
    second: ca.Function | None  # -> sigma-scaled hxx_nz, hxp_nz, hpp_nz
    hxx: tuple[np.ndarray, np.ndarray]
    hxp: tuple[np.ndarray, np.ndarray]
    hpp: tuple[np.ndarray, np.ndarray]
    # the outputs of ``values`` then of ``first`` from one evaluation: -> obj (1), gx, gp
    fused: ca.Function | None = None


def _nz(expr: ca.SX) -> tuple[ca.SX, tuple[np.ndarray, np.ndarray]]:
    """The structural nonzeros of ``expr`` as a column, and their (row, col) in that order."""
    sparsity = expr.sparsity()
    rows, cols = sparsity.get_triplet()
    return ca.vertcat(*expr.nonzeros()) if expr.nnz() else ca.SX(0, 1), (
        np.asarray(rows, dtype=np.int64),
        np.asarray(cols, dtype=np.int64),
    )


def _as_column(name: str, value: object, n: int | None) -> ca.SX:
    """The symbolic ``value`` returned by the user's function ``name`` as an (n, 1) column;
    a list of expressions is stacked; anything else is one error naming ``name``."""
    try:
        if isinstance(value, (list, tuple)):
            value = ca.vertcat(*value)
        expr = value if isinstance(value, ca.SX) else ca.SX(value)
    except (NotImplementedError, TypeError, ValueError, RuntimeError):
        # casadi's overload resolution raises NotImplementedError for a wrong type
        raise TypeError(
            f"{name} must return a CasADi expression or a list of them, got {value!r:.80}"
        ) from None
    if expr.is_empty() and (n in (None, 0)):
        return ca.SX(0, 1)
    if expr.shape[1] != 1 and expr.shape[0] == 1:
        expr = expr.T
    if expr.shape[1] != 1 or (n is not None and expr.shape[0] != n):
        want = f"({n}, 1)" if n is not None else "a column"
        raise ValueError(f"{name} must return {want}, got shape {expr.shape}")
    return expr


def _pattern(sp_: ca.Sparsity) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = sp_.get_triplet()
    return np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)


def _problem_params(dop: DynamicOptimizationProblem, p: ca.SX) -> ca.SX:
    """The problem's own parameters among the NLP's (tf follows them when it is free). Split at
    explicit offsets: a range slice of a (1, 1) symbol such as p[:0] is a 1 x 0 row, which
    vertcat would turn into a structural zero entry."""
    return ca.vertsplit(p, [0, dop.n_params, dop.n_nlp_params])[0]


def _time_scaling(dop: DynamicOptimizationProblem, p: ca.SX, t: ca.SX) -> tuple[ca.SX, ca.SX]:
    """(stretch, physical time) at mesh time ``t``: with a free final time the mesh lives on the
    guessed horizon [t0, tf_guess] and every length stretches by (tf - t0) / (tf_guess - t0)."""
    if not dop.free_final_time:
        return ca.SX(1), t
    t0, tf_guess = dop.tspan
    stretch = (p[dop.n_params] - t0) / (tf_guess - t0)
    return stretch, t0 + (t - t0) * stretch


@dataclass(frozen=True)
class _NodeSymbols:
    """The symbolic inputs of the node functions (see `NodeFunctions`): the node's scaled
    unknowns ``x`` (node_width), the NLP's parameters ``p``, the known inputs ``u``, the mesh
    time ``t``, the interval length ``h``, the quadrature weight ``w``; the Lagrangian's
    ``sigma``, ``lam_c`` (n_states) and ``lam_g`` (n_node_constraints)."""

    x: ca.SX
    p: ca.SX
    u: ca.SX
    t: ca.SX
    h: ca.SX
    w: ca.SX
    sigma: ca.SX
    lam_c: ca.SX
    lam_g: ca.SX

    NAMES: ClassVar[list[str]] = ["x", "p", "u", "t", "h", "w"]
    LAG_NAMES: ClassVar[list[str]] = [*NAMES, "sigma", "lam_c", "lam_g"]

    @classmethod
    def of(cls, dop: DynamicOptimizationProblem) -> _NodeSymbols:
        nv, npar, nu = dop.node_width, dop.n_nlp_params, dop.n_inputs
        x, p, u = ca.SX.sym("x", nv), ca.SX.sym("p", npar), ca.SX.sym("u", nu)
        t, h, w = ca.SX.sym("t"), ca.SX.sym("h"), ca.SX.sym("w")
        sigma = ca.SX.sym("sigma")
        lam_c = ca.SX.sym("lam_c", dop.n_states)
        lam_g = ca.SX.sym("lam_g", dop.n_node_constraints)
        return cls(x, p, u, t, h, w, sigma, lam_c, lam_g)

    @property
    def args(self) -> list[ca.SX]:
        return [self.x, self.p, self.u, self.t, self.h, self.w]

    @property
    def lag_args(self) -> list[ca.SX]:
        return [*self.args, self.sigma, self.lam_c, self.lam_g]


def _node_terms(dop: DynamicOptimizationProblem, s: _NodeSymbols) -> tuple[ca.SX, ca.SX, ca.SX]:
    """(res, g, obj) of one collocation node: the dynamics residual part −h f (n_states, scaled
    by the nominal states), the algebraic equations then the path constraints (n_g), and the
    weighted Lagrange term w L (1), all stretched with a free final time."""
    nx, na, nv = dop.n_states, dop.n_algebraic, dop.node_width
    nom = dop.node_vector("nominal")
    v_phys = s.x * nom  # the NLP's variables are v / nominal
    xs, zs, cs = ca.vertsplit(v_phys, [0, nx, nx + na, nv])  # explicit offsets, see below
    us = ca.vertcat(s.u, cs)
    stretch, t_phys = _time_scaling(dop, s.p, s.t)
    pu = _problem_params(dop, s.p)

    def call(name: str, fn, n: int) -> ca.SX:
        return _as_column(name, dop.call_node(fn, xs, pu, us, t_phys, zs), n)

    f = call("dynamics", dop.dynamics, nx) / nom[:nx]
    g_parts = []
    if dop.algebraic is not None:
        g_parts.append(call("algebraic", dop.algebraic.fn, na))
    if dop.path:
        g_parts.append(call("path constraint", dop.path.fn, dop.path.n))
    g = ca.vertcat(*g_parts) if g_parts else ca.SX(0, 1)
    L = call("lagrange", dop.lagrange, 1) if dop.lagrange is not None else ca.SX(1, 1)
    return -s.h * stretch * f, g, s.w * stretch * L


def build_node_functions(dop: DynamicOptimizationProblem, hessian: str = "exact") -> NodeFunctions:
    """The per-node functions. ``hessian`` says which Lagrangian Hessian blocks are computed
    symbolically: all ("exact"), the state-state and state-parameter blocks ("partial-pp"), the
    state-state block only ("partial-xp-pp"), or none ("none"); the patterns of the blocks left
    to a quasi-Newton update are structural (sparsity propagation, no second derivatives).
    The modes are `NLP_MODES`.

    A node's unknowns are ``v = [x (n_states), z (n_algebraic), u_c (n_controls)]``, scaled by
    their nominal values; its rows are the collocated dynamics (n_states), then the algebraic
    equations (n_algebraic) and the path constraints (n_path) as "g"."""
    if hessian not in NLP_MODES:
        raise ValueError(f"hessian must be one of {NLP_MODES}, got {hessian!r}")
    nv = dop.node_width
    s = _NodeSymbols.of(dop)
    res, g, obj = _node_terms(dop, s)
    xp = ca.vertcat(s.x, s.p)
    args, names = s.args, _NodeSymbols.NAMES

    values = ca.Function("node_values", args, [res, g, obj], names, ["res", "g", "obj"])

    jac_nz, jac_pat = _nz(ca.jacobian(ca.vertcat(res, g), xp))
    grad = ca.densify(ca.gradient(obj, xp))
    first = ca.Function(
        "node_first", args, [jac_nz, grad[:nv], grad[nv:]], names, ["jac", "gx", "gp"]
    )
    fused = ca.Function(
        "node_fused",
        args,
        [res, g, obj, jac_nz, grad[:nv], grad[nv:]],
        names,
        ["res", "g", "obj", "jac", "gx", "gp"],
    )
    parts = (values, first, jac_pat)
    lag = s.sigma * obj + ca.dot(s.lam_c, res) + ca.dot(s.lam_g, g)
    if hessian == "exact":
        functions = _with_exact_hessian(parts, s, lag, nv)
    else:
        functions = _with_partial_hessian(parts, s, lag, hessian)
    return replace(functions, fused=fused)


def _with_exact_hessian(
    parts: tuple[ca.Function, ca.Function, Pattern], s: _NodeSymbols, lag: ca.SX, nv: int
) -> NodeFunctions:
    """Every block of the node Lagrangian's Hessian, symbolically: x-x (upper triangle), x-p,
    p-p (upper triangle)."""
    H, _ = ca.hessian(lag, ca.vertcat(s.x, s.p))
    hxx_nz, hxx_pat = _nz(ca.triu(H[:nv, :nv]))
    hxp_nz, hxp_pat = _nz(H[:nv, nv:])
    hpp_nz, hpp_pat = _nz(ca.triu(H[nv:, nv:]))
    second = ca.Function(
        "node_second",
        s.lag_args,
        [hxx_nz, hxp_nz, hpp_nz],
        _NodeSymbols.LAG_NAMES,
        ["hxx", "hxp", "hpp"],
    )
    values, first, jac_pat = parts
    return NodeFunctions(values, first, second, jac_pat, hxx_pat, hxp_pat, hpp_pat)


def _with_partial_hessian(
    parts: tuple[ca.Function, ca.Function, Pattern], s: _NodeSymbols, lag: ca.SX, hessian: str
) -> NodeFunctions:
    """The blocks a partial quasi-Newton mode computes exactly, the Lagrangian's gradient for
    the update of the others, and the structural patterns of those."""
    # Partial quasi-Newton (paper §2.5.4): the p-p block costs n_p second-derivative sweeps
    # per node, the x-p block n_x sweeps, the x-x block n_x sweeps of a much smaller graph.
    lag_args, lag_names = s.lag_args, _NodeSymbols.LAG_NAMES
    lx, lp = ca.gradient(lag, s.x), ca.gradient(lag, s.p)
    lag_grad = ca.Function("node_lag_grad", lag_args, [lx, lp], lag_names, ["lx", "lp"])
    hxx_nz, hxx_pat = _nz(ca.triu(ca.jacobian(lx, s.x)))
    hpp_pat = _pattern(ca.triu(ca.jacobian_sparsity(lp, s.p)))
    second: ca.Function | None
    if hessian == "partial-pp":
        hxp_nz, hxp_pat = _nz(ca.jacobian(lx, s.p))
        second = ca.Function("node_second", lag_args, [hxx_nz, hxp_nz], lag_names, ["hxx", "hxp"])
    elif hessian == "partial-xp-pp":
        hxp_pat = _pattern(ca.jacobian_sparsity(lx, s.p))
        second = ca.Function("node_second", lag_args, [hxx_nz], lag_names, ["hxx"])
    else:
        # "none": IPOPT approximates the whole Hessian; the patterns only size the unused one
        hxp_pat = _pattern(ca.jacobian_sparsity(lx, s.p))
        second, lag_grad = None, None
    values, first, jac_pat = parts
    return NodeFunctions(
        values, first, second, jac_pat, hxx_pat, hxp_pat, hpp_pat, lag_grad=lag_grad
    )


def build_boundary_functions(dop: DynamicOptimizationProblem) -> BoundaryFunctions:
    """Functions of the (differential) states at t0 and tf and the NLP's parameters (with a
    free final time, tf is their last entry)."""
    nx, npar = dop.n_states, dop.n_nlp_params
    nr = dop.boundary.n if dop.boundary else 0
    x0, xf, p = ca.SX.sym("x0", nx), ca.SX.sym("xf", nx), ca.SX.sym("p", npar)
    sigma, lam_r = ca.SX.sym("sigma"), ca.SX.sym("lam_r", nr)
    nom = dop.x_nominal
    tf = p[dop.n_params] if dop.free_final_time else None
    pu = _problem_params(dop, p)

    def call(name: str, fn, n: int) -> ca.SX:
        return _as_column(name, dop.call_boundary(fn, x0 * nom, xf * nom, pu, tf), n)

    r = call("boundary constraint", dop.boundary.fn, nr) if dop.boundary else ca.SX(0, 1)
    M = call("mayer", dop.mayer, 1) if dop.mayer is not None else ca.SX(1, 1)
    vb = ca.vertcat(x0, xf, p)
    values = ca.Function("bnd_values", [x0, xf, p], [r, M], ["x0", "xf", "p"], ["r", "M"])
    jac_nz, jac_pat = _nz(ca.jacobian(r, vb))
    first = ca.Function(
        "bnd_first",
        [x0, xf, p],
        [jac_nz, ca.densify(ca.gradient(M, vb))],
        ["x0", "xf", "p"],
        ["jac", "grad"],
    )
    H, _ = ca.hessian(sigma * M + ca.dot(lam_r, r), vb)
    hess_nz, hess_pat = _nz(ca.triu(H))
    second = ca.Function(
        "bnd_second",
        [x0, xf, p, sigma, lam_r],
        [hess_nz],
        ["x0", "xf", "p", "sigma", "lam_r"],
        ["hess"],
    )
    return BoundaryFunctions(values, first, second, jac_pat, hess_pat)


def build_sample_functions(
    dop: DynamicOptimizationProblem,
    m: int,
    second: bool = True,
    fixed: dict[int, float] | None = None,
    name: str = "",
) -> SampleFunctions:
    """The data term ``w ℓ(x(t_s), p, u, t, d)`` of a sample in an interval of ``m`` stages, its
    gradient and (with ``second``) its exact Hessian blocks. For a term that is a quadratic in
    the state (a fitted state) the xi-xi block is constant in xi and p (it depends only on the
    basis row and the weights); a term through a model output also couples xi with p.

    ``fixed``: data columns the term takes as these constants (a sample group's shared values;
    the input ``d`` keeps its width, those entries unread), so that CasADi folds them and the
    derivatives hold only what this group's term touches; ``name`` tells the group's functions
    apart."""
    if dop.sample_loss is None:
        raise ValueError("the problem has no sample_loss")
    nx, npar, nu, nd = dop.n_states, dop.n_params, dop.n_inputs, dop.n_sample_data
    width = dop.node_width
    nv = width * (m + 1)
    xi, beta = ca.SX.sym("xi", nv), ca.SX.sym("beta", m + 1)
    p, u, d = ca.SX.sym("p", npar), ca.SX.sym("u", nu), ca.SX.sym("d", nd)
    t, w, sigma = ca.SX.sym("t"), ca.SX.sym("w"), ca.SX.sym("sigma")
    # scaled (differential) state at the sample time
    x = ca.mtimes(ca.vertsplit(ca.reshape(xi, width, m + 1), [0, nx, width])[0], beta)
    d_term = d
    if fixed:
        d_term = ca.vertcat(*[ca.SX(fixed[k]) if k in fixed else d[k] for k in range(nd)])
    loss = _as_column("sample_loss", dop.sample_loss(x * dop.x_nominal, p, u, t, d_term), 1)
    obj = w * loss
    v = ca.vertcat(xi, p)
    args, names = [xi, beta, p, u, t, d, w], ["xi", "beta", "p", "u", "t", "d", "w"]
    label = f"{m}{name}"  # unique per group: compiled code is named by the functions
    values = ca.Function(f"sample{label}_values", args, [obj], names, ["obj"])
    grad = ca.densify(ca.gradient(obj, v))
    first = ca.Function(f"sample{label}_first", args, [grad[:nv], grad[nv:]], names, ["gx", "gp"])
    fused = ca.Function(
        f"sample{label}_fused", args, [obj, grad[:nv], grad[nv:]], names, ["obj", "gx", "gp"]
    )
    H, _ = ca.hessian(sigma * obj, v)
    hxx_nz, hxx_pat = _nz(ca.triu(H[:nv, :nv]))
    hxp_nz, hxp_pat = _nz(H[:nv, nv:])
    hpp_nz, hpp_pat = _nz(ca.triu(H[nv:, nv:]))
    hess = (
        ca.Function(
            f"sample{label}_second",
            [*args, sigma],
            [hxx_nz, hxp_nz, hpp_nz],
            [*names, "sigma"],
            ["hxx", "hxp", "hpp"],
        )
        if second
        else None
    )
    return SampleFunctions(m, values, first, hess, hxx_pat, hxp_pat, hpp_pat, fused=fused)
