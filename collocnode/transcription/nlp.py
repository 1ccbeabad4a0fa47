"""A dynamic optimization problem transcribed into one structured NLP (paper eq. 12).

Unknowns ``z = [x_00, x_01, ..., x_{n m_n}, p]``: the states at every mesh node (node-major, the
initial point first) followed by the time-invariant parameters.

Constraints, one block per collocation node k (interval i, stage j), then the boundary block:

    Σ_l D_jl x_il − h_i f(x_ij, p, u_ij, t_ij) = 0        (12b, n_states rows)
    g_lb <= g(x_ij, p, u_ij, t_ij) <= g_ub                  (12c, n_path rows)
    r_lb <= r(x_00, x_last, p) <= r_ub                      (12d, n_boundary rows, once)

Objective: M(x_00, x_last, p) + Σ_k w_k L(x_k, p, u_k, t_k), w_k = h_i b_j        (12a, 10)

Why this shape: every node's equations depend on the shared parameters p, so the Lagrangian
Hessian is an arrowhead (small per-node state blocks, a dense node-by-p border, a dense p-p
block summed over all nodes). CasADi's global colouring is very slow on such a border (casadi
#2454, #1400), so the derivatives are never discovered globally. Instead one symbolic function
per node type gives the per-node Jacobian and Hessian nonzeros; it is evaluated over all nodes
with ``Function.map`` (the p-p block with a reduction, so the sum over nodes happens inside
CasADi); and the global sparsity and the scatter of node nonzeros into it are computed once in
numpy from the per-node patterns and the mesh. The scatter is a constant sparse 0/1 matrix,
which also sums duplicate entries (the linear D part and the nonlinear part of the same
Jacobian entry; the boundary terms and the node terms of the last node).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

import casadi as ca
import numpy as np
import scipy.sparse as sp

from .mesh import Mesh
from .problem import DynamicOptimizationProblem
from .radau import radau_table


@dataclass(frozen=True)
class NodeFunctions:
    """Per-node symbolic functions and the local sparsity of their derivative outputs.

    Inputs of every node function: x (n_x), p (n_p), u (n_u), t, h (interval length),
    w (quadrature weight h b_j); the Hessian adds sigma (objective factor, shared), lam_c (n_x)
    and lam_g (n_g).
    """

    values: ca.Function  # -> res = -h f (n_x), g (n_g), obj = w L (1)
    first: ca.Function  # -> jac_nz, gx (n_x), gp (n_p)
    second: ca.Function | None  # -> the exactly computed blocks among hxx_nz, hxp_nz, hpp_nz
    jac: tuple[np.ndarray, np.ndarray]  # local (row, col) of jac_nz; col < n_x: x, else p
    hxx: tuple[np.ndarray, np.ndarray]
    hxp: tuple[np.ndarray, np.ndarray]  # col indexes p
    hpp: tuple[np.ndarray, np.ndarray]
    lag_grad: ca.Function | None = None  # (..., sigma, lam_c, lam_g) -> lx (n_x), lp (n_p)


@dataclass(frozen=True)
class BoundaryFunctions:
    """Functions of vb = [x0 (n_x), xf (n_x), p (n_p)]: r and M and their derivatives."""

    values: ca.Function  # (x0, xf, p) -> r (n_r), M (1)
    first: ca.Function  # -> jac_r_nz, grad_M (2 n_x + n_p)
    second: ca.Function  # (x0, xf, p, sigma, lam_r) -> hess_nz (upper triangle over vb)
    jac: tuple[np.ndarray, np.ndarray]
    hess: tuple[np.ndarray, np.ndarray]


def _nz(expr: ca.SX) -> tuple[ca.SX, tuple[np.ndarray, np.ndarray]]:
    """The structural nonzeros of ``expr`` as a column, and their (row, col) in that order."""
    sparsity = expr.sparsity()
    rows, cols = sparsity.get_triplet()
    return ca.vertcat(*expr.nonzeros()) if expr.nnz() else ca.SX(0, 1), (
        np.asarray(rows, dtype=np.int64),
        np.asarray(cols, dtype=np.int64),
    )


def _as_column(name: str, value: object, n: int | None) -> ca.SX:
    expr = ca.SX(value) if not isinstance(value, ca.SX) else value
    if expr.is_empty() and (n in (None, 0)):
        return ca.SX(0, 1)
    if expr.shape[1] != 1 and expr.shape[0] == 1:
        expr = expr.T
    if expr.shape[1] != 1 or (n is not None and expr.shape[0] != n):
        want = f"({n}, 1)" if n is not None else "a column"
        raise ValueError(f"{name} must return {want}, got shape {expr.shape}")
    return expr


HESSIAN_MODES = ("exact", "partial-pp", "partial-xp-pp", "none")


def _pattern(sp_: ca.Sparsity) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = sp_.get_triplet()
    return np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)


def build_node_functions(dop: DynamicOptimizationProblem, hessian: str = "exact") -> NodeFunctions:
    """The per-node functions. ``hessian`` says which Lagrangian Hessian blocks are computed
    symbolically: all ("exact"), the state-state and state-parameter blocks ("partial-pp"), the
    state-state block only ("partial-xp-pp"), or none ("none"); the patterns of the blocks left
    to a quasi-Newton update are structural (sparsity propagation, no second derivatives)."""
    nx, npar, nu = dop.n_states, dop.n_params, dop.n_inputs
    ng = dop.path.n if dop.path else 0
    x, p, u = ca.SX.sym("x", nx), ca.SX.sym("p", npar), ca.SX.sym("u", nu)
    t, h, w = ca.SX.sym("t"), ca.SX.sym("h"), ca.SX.sym("w")
    sigma, lam_c, lam_g = ca.SX.sym("sigma"), ca.SX.sym("lam_c", nx), ca.SX.sym("lam_g", ng)

    nom = dop.x_nominal
    xp_ = x * nom  # the NLP's variables are x / x_nominal
    f = _as_column("dynamics", dop.dynamics(xp_, p, u, t), nx) / nom
    g = _as_column("path constraint", dop.path.fn(xp_, p, u, t), ng) if dop.path else ca.SX(0, 1)
    L = (
        _as_column("lagrange", dop.lagrange(xp_, p, u, t), 1)
        if dop.lagrange is not None
        else ca.SX(1, 1)
    )
    res = -h * f
    obj = w * L
    xp = ca.vertcat(x, p)
    args = [x, p, u, t, h, w]
    names = ["x", "p", "u", "t", "h", "w"]

    values = ca.Function("node_values", args, [res, g, obj], names, ["res", "g", "obj"])

    jac_nz, jac_pat = _nz(ca.jacobian(ca.vertcat(res, g), xp))
    grad = ca.densify(ca.gradient(obj, xp))
    first = ca.Function(
        "node_first", args, [jac_nz, grad[:nx], grad[nx:]], names, ["jac", "gx", "gp"]
    )

    lag = sigma * obj + ca.dot(lam_c, res) + ca.dot(lam_g, g)
    lag_args, lag_names = [*args, sigma, lam_c, lam_g], [*names, "sigma", "lam_c", "lam_g"]
    if hessian == "exact":
        H, _ = ca.hessian(lag, xp)
        hxx_nz, hxx_pat = _nz(ca.triu(H[:nx, :nx]))
        hxp_nz, hxp_pat = _nz(H[:nx, nx:])
        hpp_nz, hpp_pat = _nz(ca.triu(H[nx:, nx:]))
        second = ca.Function(
            "node_second", lag_args, [hxx_nz, hxp_nz, hpp_nz], lag_names, ["hxx", "hxp", "hpp"]
        )
        return NodeFunctions(values, first, second, jac_pat, hxx_pat, hxp_pat, hpp_pat)
    # Partial quasi-Newton (paper §2.5.4): the p-p block costs n_p second-derivative sweeps
    # per node, the x-p block n_x sweeps, the x-x block n_x sweeps of a much smaller graph.
    lx, lp = ca.gradient(lag, x), ca.gradient(lag, p)
    lag_grad = ca.Function("node_lag_grad", lag_args, [lx, lp], lag_names, ["lx", "lp"])
    hxx_nz, hxx_pat = _nz(ca.triu(ca.jacobian(lx, x)))
    hpp_pat = _pattern(ca.triu(ca.jacobian_sparsity(lp, p)))
    second: ca.Function | None
    if hessian == "partial-pp":
        hxp_nz, hxp_pat = _nz(ca.jacobian(lx, p))
        second = ca.Function("node_second", lag_args, [hxx_nz, hxp_nz], lag_names, ["hxx", "hxp"])
    elif hessian == "partial-xp-pp":
        hxp_pat = _pattern(ca.jacobian_sparsity(lx, p))
        second = ca.Function("node_second", lag_args, [hxx_nz], lag_names, ["hxx"])
    else:
        # "none": IPOPT approximates the whole Hessian; the patterns only size the unused one
        hxp_pat = _pattern(ca.jacobian_sparsity(lx, p))
        second, lag_grad = None, None
    return NodeFunctions(
        values, first, second, jac_pat, hxx_pat, hxp_pat, hpp_pat, lag_grad=lag_grad
    )


def build_boundary_functions(dop: DynamicOptimizationProblem) -> BoundaryFunctions:
    nx, npar = dop.n_states, dop.n_params
    nr = dop.boundary.n if dop.boundary else 0
    x0, xf, p = ca.SX.sym("x0", nx), ca.SX.sym("xf", nx), ca.SX.sym("p", npar)
    sigma, lam_r = ca.SX.sym("sigma"), ca.SX.sym("lam_r", nr)
    nom = dop.x_nominal
    r = (
        _as_column("boundary constraint", dop.boundary.fn(x0 * nom, xf * nom, p), nr)
        if dop.boundary
        else ca.SX(0, 1)
    )
    M = (
        _as_column("mayer", dop.mayer(x0 * nom, xf * nom, p), 1)
        if dop.mayer is not None
        else ca.SX(1, 1)
    )
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


class _Assembly:
    """Collects (row, col) contributions from several sources and derives the global pattern.

    A source is a flat vector of values (node outputs flattened column-major, i.e. node-major);
    each of its entries lands on one global (row, col). Entries that land on the same (row, col)
    are summed. Constant contributions are folded into one constant vector.
    """

    def __init__(self, shape: tuple[int, int]) -> None:
        self.shape = shape
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.src: list[np.ndarray] = []  # position in the concatenated source vector, or -1
        self.const: list[np.ndarray] = []
        self.n_src = 0

    def add_source(self, rows: np.ndarray, cols: np.ndarray) -> None:
        # 2-D (nnz_local, N) arrays are flattened column-major, the order of ``casadi.vec``
        n = rows.size
        self.rows.append(np.asarray(rows).ravel(order="F"))
        self.cols.append(np.asarray(cols).ravel(order="F"))
        self.src.append(self.n_src + np.arange(n))
        self.const.append(np.zeros(n))
        self.n_src += n

    def add_constant(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        self.rows.append(rows.ravel())
        self.cols.append(cols.ravel())
        self.src.append(np.full(rows.size, -1))
        self.const.append(values.ravel())

    def finish(self, dense: bool = False):
        """(sparsity, scatter (nnz x n_src) CSC, constant (nnz,)) in CasADi's column-major order.

        With ``dense`` the target is a dense vector of length shape[0] (cols must be 0).
        """
        nrow, ncol = self.shape
        rows = np.concatenate(self.rows) if self.rows else np.zeros(0, np.int64)
        cols = np.concatenate(self.cols) if self.cols else np.zeros(0, np.int64)
        src = np.concatenate(self.src) if self.src else np.zeros(0, np.int64)
        const = np.concatenate(self.const) if self.const else np.zeros(0)
        if dense:
            uniq_rows = np.arange(nrow)
            inv = rows
            sparsity = ca.Sparsity.dense(nrow, 1)
        else:
            key = cols.astype(np.int64) * nrow + rows
            uniq, inv = np.unique(key, return_inverse=True)
            uniq_cols, uniq_rows = np.divmod(uniq, nrow)
            colind = np.searchsorted(uniq_cols, np.arange(ncol + 1))
            sparsity = ca.Sparsity(nrow, ncol, colind.tolist(), uniq_rows.tolist())
        nnz = uniq_rows.size
        m = src >= 0
        scatter = sp.csc_matrix((np.ones(int(m.sum())), (inv[m], src[m])), shape=(nnz, self.n_src))
        constant = np.bincount(inv[~m], weights=const[~m], minlength=nnz)
        return sparsity, scatter, constant


class _NodeMap:
    """Evaluates a node function over N nodes in ``threads`` chunks of serial maps.

    CasADi's "thread" map starts one thread per evaluation, which is ruinous for thousands of
    cheap node evaluations; so the nodes are split into one serial map per thread and only the
    outer map is threaded. N is padded to a multiple of the chunk size with neutral nodes (h = w = 0
    and zero multipliers, so they add nothing to any reduced output); padded outputs are dropped.
    """

    def __init__(self, n: int, threads: int) -> None:
        self.n = n
        self.threads = max(1, min(threads, n))
        self.chunk = -(-n // self.threads)
        self.pad = self.threads * self.chunk - n

    def pad_data(self, data: list) -> list:
        """Pad [Xc, P, U, T, H, W]: states repeat the last node, h and w get zeros."""
        if not self.pad:
            return data
        Xc, P, U, T, H, W = data
        last = lambda a: ca.repmat(a[:, -1], 1, self.pad)  # noqa: E731
        return [
            ca.horzcat(Xc, last(Xc)),
            P,
            ca.horzcat(U, last(U)) if U.shape[0] else ca.DM(0, self.n + self.pad),
            ca.horzcat(T, last(T)),
            ca.horzcat(H, ca.DM.zeros(1, self.pad)),
            ca.horzcat(W, ca.DM.zeros(1, self.pad)),
        ]

    def pad_zeros(self, a):
        return ca.horzcat(a, ca.MX.zeros(a.shape[0], self.pad)) if self.pad else a

    def wrap(self, f: ca.Function, reduce_in: list[int], reduce_out: list[int]):
        total = self.threads * self.chunk
        if total == 1:
            g = f
        else:
            g = f.map(f"{f.name()}_serial", "serial", self.chunk, reduce_in, reduce_out, {})
            if self.threads > 1:
                g = g.map(f"{f.name()}_threads", "thread", self.threads, reduce_in, reduce_out, {})

        def call(*args):
            outs = g(*args)
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            return [
                o if k in reduce_out or not self.pad else o[:, : self.n] for k, o in enumerate(outs)
            ]

        return call


def _coupled_groups(pattern: tuple[np.ndarray, np.ndarray], n: int) -> list[np.ndarray]:
    """Groups of parameters coupled by a structural Hessian pattern (connected components),
    sorted; uncoupled parameters with a diagonal entry form singleton groups."""
    from scipy.sparse.csgraph import connected_components

    a, b = pattern
    graph = sp.coo_matrix((np.ones(a.size), (a, b)), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    touched = np.zeros(n, bool)
    touched[a], touched[b] = True, True
    return [g for g in (np.flatnonzero(label == k) for k in np.unique(label)) if touched[g].any()]


def _block_triu(groups: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of the dense upper triangles of the given index groups."""
    rows, cols = [], []
    for g in groups:
        i, j = np.triu_indices(g.size)
        rows.append(g[i])
        cols.append(g[j])
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows), np.concatenate(cols)


def _vcat(*parts):
    """vertcat that ignores empty parts (0x1 and 1x0 alike; CasADi insists on matching widths)."""
    parts = [ca.vec(q) for q in parts if q.numel() > 0]
    return ca.vertcat(*parts) if parts else ca.MX(0, 1)


def _dm_sparse(a: sp.spmatrix) -> ca.DM:
    a = sp.csc_matrix(a)
    a.sort_indices()
    return ca.DM(ca.Sparsity(a.shape[0], a.shape[1], a.indptr.tolist(), a.indices.tolist()), a.data)


@dataclass
class NLPSize:
    n_variables: int
    n_constraints: int
    nnz_jacobian: int
    nnz_hessian: int  # upper triangle


class StructuredNLP:
    """The transcribed NLP: bounds, initial guess, and CasADi Functions for every IPOPT callback.

    The same Functions serve both IPOPT backends: CasADi's ``nlpsol`` (wrapped with CasADi's
    naming) and cyipopt (called with numpy arrays).

    Args:
        dop: the problem.
        mesh: the collocation mesh.
        jit: compile the node functions to C (cached on disk, see :mod:`.jit`).
        threads: worker threads for the map over nodes (default: all cores).
        hessian: "exact"; "partial-pp" / "partial-xp-pp" to leave the p-p (and x-p) blocks
            to a quasi-Newton update (see :mod:`.quasi_newton`; ``fn_hess`` then gives only
            the exact part); "none" for IPOPT's own limited-memory approximation.
    """

    def __init__(
        self,
        dop: DynamicOptimizationProblem,
        mesh: Mesh | list[Mesh],
        jit: bool = False,
        threads: int | None = None,
        hessian: str = "exact",
    ) -> None:
        if hessian not in HESSIAN_MODES:
            raise ValueError(f"hessian must be one of {HESSIAN_MODES}, got {hessian!r}")
        self.hessian_mode = hessian
        segments = dop.all_segments()
        meshes = [mesh] if isinstance(mesh, Mesh) else list(mesh)
        if len(meshes) != len(segments):
            raise ValueError(f"got {len(meshes)} meshes for {len(segments)} segments")
        self.dop, self.meshes, self.mesh = dop, meshes, meshes[0]
        nx, npar = dop.n_states, dop.n_params
        ng = dop.path.n if dop.path else 0
        nr = dop.boundary.n if dop.boundary else 0
        # nodes of all segments one after the other; node_start[s] is segment s's first node
        self.node_start = np.cumsum([0] + [m.n_nodes for m in meshes])
        nn = int(self.node_start[-1])
        N = sum(m.n_collocation for m in meshes)
        self.nx, self.np, self.ng, self.nr, self.nn, self.N = nx, npar, ng, nr, nn, N
        self.P0 = nn * nx
        self.n_z = nn * nx + npar
        self.n_c = N * (nx + ng) + nr
        threads = threads or os.cpu_count() or 1

        node = build_node_functions(dop, hessian)
        bnd = build_boundary_functions(dop)
        if jit:
            # Only the derivative functions are compiled: nlpsol differentiates the f/g graph
            # (for its internal ``nlp_grad``), which needs symbolic value functions.
            from .jit import compile_functions

            names = [k for k in ("first", "second", "lag_grad") if getattr(node, k) is not None]
            *compiled, bf, bs = compile_functions(
                [*(getattr(node, k) for k in names), bnd.first, bnd.second]
            )
            node = replace(node, **dict(zip(names, compiled, strict=True)))
            bnd = BoundaryFunctions(bnd.values, bf, bs, bnd.jac, bnd.hess)
        self.node, self.bnd = node, bnd

        # ---- constant per-node data, all segments concatenated ----
        coll_node = np.concatenate(
            [m.collocation_index + s0 for m, s0 in zip(meshes, self.node_start, strict=False)]
        )
        t_c = np.concatenate([m.node_times[m.collocation_index] for m in meshes])
        h_c = np.concatenate([m.h[m.collocation_interval] for m in meshes])
        w_c = np.concatenate([m.quadrature_weights for m in meshes])
        u_c = np.concatenate(
            [
                seg.inputs(m.node_times[m.collocation_index])
                for m, seg in zip(meshes, segments, strict=True)
            ]
        )
        self.coll_node, self.t_coll, self.u_coll = coll_node, t_c, u_c
        self.h_coll, self.w_coll = h_c, w_c
        U = ca.DM(u_c.T) if dop.n_inputs else ca.DM(0, N)
        T, Hh, W = ca.DM(t_c[None, :]), ca.DM(h_c[None, :]), ca.DM(w_c[None, :])

        # ---- global patterns ----
        jac_asm, hes_asm, grad_asm = (
            _Assembly((self.n_c, self.n_z)),
            _Assembly((self.n_z, self.n_z)),
            _Assembly((self.n_z, 1)),
        )
        k = np.arange(N)
        row0 = k * (nx + ng)  # first constraint row of each collocation node
        col_x = coll_node * nx  # first z index of each collocation node's states

        def node_cols(local_cols: np.ndarray) -> np.ndarray:
            # (nnz_local, N) global columns; local col < nx: this node's state, else parameter
            lc = local_cols[:, None]
            return np.where(lc < nx, col_x[None, :] + lc, self.P0 + lc - nx)

        jr, jc = node.jac
        jac_asm.add_source(jr[:, None] + row0[None, :], node_cols(jc))
        # linear collocation part D x (constant): row (k, s), col (node(i, l), s), value D[j-1, l]
        dr, dc, dv = [], [], []
        k0 = 0  # collocation nodes of the previous segments
        for m_s, n0 in zip(meshes, self.node_start, strict=False):
            for i in range(m_s.n_intervals):
                m = int(m_s.stages[i])
                D = radau_table(m).D
                ks = k0 + np.flatnonzero(m_s.collocation_interval == i)
                start = int(n0 + m_s.interval_start[i])
                for jj, kk in enumerate(ks):
                    for ll in range(m + 1):
                        dr.append(kk * (nx + ng) + np.arange(nx))
                        dc.append((start + ll) * nx + np.arange(nx))
                        dv.append(np.full(nx, D[jj, ll]))
            k0 += m_s.n_collocation
        D_rows, D_cols, D_vals = np.concatenate(dr), np.concatenate(dc), np.concatenate(dv)
        jac_asm.add_constant(D_rows, D_cols, D_vals)
        self._D_lin = sp.csc_matrix((D_vals, (D_rows, D_cols)), shape=(self.n_c, self.n_z))

        last0 = int(self.node_start[1]) - 1  # the boundary terms see segment 0's end points
        vb_map = np.concatenate(
            [np.arange(nx), last0 * nx + np.arange(nx), self.P0 + np.arange(npar)]
        )
        br, bc = bnd.jac
        jac_asm.add_source(N * (nx + ng) + br, vb_map[bc])

        a, b = node.hxx
        hes_asm.add_source(col_x[None, :] + a[:, None], col_x[None, :] + b[:, None])
        a, b = node.hxp
        hes_asm.add_source(col_x[None, :] + a[:, None], self.P0 + np.repeat(b[:, None], N, 1))
        # a quasi-Newton p-p block is dense over each group of coupled parameters
        self.pp_blocks = _coupled_groups(node.hpp, npar) if hessian != "exact" else []
        a, b = node.hpp if hessian == "exact" else _block_triu(self.pp_blocks)
        self.pp_pattern = (a, b)
        hes_asm.add_source(self.P0 + a, self.P0 + b)
        a, b = bnd.hess
        ga, gb = vb_map[a], vb_map[b]
        hes_asm.add_source(np.minimum(ga, gb), np.maximum(ga, gb))

        grad_asm.add_source(col_x[None, :] + np.arange(nx)[:, None], np.zeros((nx, N), np.int64))
        grad_asm.add_source(self.P0 + np.arange(npar), np.zeros(npar, np.int64))
        grad_asm.add_source(vb_map, np.zeros(vb_map.size, np.int64))

        self.jac_sparsity, S_J, c_J = jac_asm.finish()
        self.hess_sparsity, S_H, _ = hes_asm.finish()
        _, S_G, _ = grad_asm.finish(dense=True)
        self.size = NLPSize(self.n_z, self.n_c, self.jac_sparsity.nnz(), self.hess_sparsity.nnz())

        # ---- the MX graph shared by both backends ----
        z = ca.MX.sym("z", self.n_z)
        sigma = ca.MX.sym("sigma")
        lam = ca.MX.sym("lam", self.n_c)
        X = ca.reshape(z[: self.P0], nx, nn)
        P = z[self.P0 :]
        Xc = X[:, 1:] if np.array_equal(coll_node, np.arange(1, nn)) else X[:, coll_node.tolist()]
        x0s, xfs = X[:, 0], X[:, last0]
        data = [Xc, P, U, T, Hh, W]

        node_map = _NodeMap(N, threads)
        mapped = node_map.wrap
        data = node_map.pad_data(data)

        res, gpath, objL = mapped(node.values, [1], [2])(*data)
        r, M = bnd.values(x0s, xfs, P)
        g_nodes = ca.vec(ca.vertcat(res, gpath))
        D_lin = _dm_sparse(self._D_lin[: N * (nx + ng), :])
        g_expr = _vcat(g_nodes + ca.mtimes(D_lin, z), r)
        f_expr = ca.densify(objL + M)  # dense even when the problem has no objective

        jnz, gx, gp = mapped(node.first, [1], [2])(*data)
        jr_nz, gM = bnd.first(x0s, xfs, P)
        jac_nz = ca.mtimes(_dm_sparse(S_J), _vcat(jnz, jr_nz)) + ca.DM(c_J)
        grad = ca.densify(ca.mtimes(_dm_sparse(S_G), _vcat(gx, gp, gM)))

        lam_nodes = ca.reshape(lam[: N * (nx + ng)], nx + ng, N)
        lag_data = [
            *data,
            sigma,
            node_map.pad_zeros(lam_nodes[:nx, :]),
            node_map.pad_zeros(lam_nodes[nx:, :]),
        ]
        hb = bnd.second(x0s, xfs, P, sigma, lam[N * (nx + ng) :])
        n_src = [node.hxx[0].size * N, node.hxp[0].size * N, self.pp_pattern[0].size]
        # global nonzero index of every source entry (each lands on exactly one)
        S_H = S_H.tocsc()
        S_H.sort_indices()
        self._hess_src_pos = S_H.indices.astype(np.int64)  # one entry per source column
        self._hess_src_start = np.cumsum([0, *n_src])
        if hessian == "exact":
            hxx, hxp, hpp = mapped(node.second, [1, 6], [2])(*lag_data)
            hess_nz = ca.mtimes(_dm_sparse(S_H), _vcat(hxx, hxp, hpp, hb))
        elif hessian == "none":
            hess_nz = ca.DM.zeros(S_H.shape[0], 1)
        else:
            # exact node blocks and the (exact) boundary part; quasi_newton adds the rest
            exact = mapped(node.second, [1, 6], [])(*lag_data)
            k_exact = n_src[0] + (n_src[1] if hessian == "partial-pp" else 0)
            hess_node = ca.mtimes(_dm_sparse(S_H[:, :k_exact]), _vcat(*exact))
            hess_b = ca.mtimes(_dm_sparse(S_H[:, sum(n_src) :]), _vcat(hb))
            hess_nz = hess_node + hess_b
            lx, lp = mapped(node.lag_grad, [1, 6], [1])(*lag_data)
            self.fn_hess_parts = ca.Function(
                "hess_parts", [z, sigma, lam], [ca.densify(hess_node), ca.densify(hess_b)]
            )
            self.fn_lag_grad = ca.Function("lag_grad", [z, sigma, lam], [lx, lp])

        self.z_sym, self.sigma_sym, self.lam_sym = z, sigma, lam
        self.f_expr, self.g_expr = f_expr, g_expr
        self.fn_f = ca.Function("f", [z], [f_expr])
        self.fn_g = ca.Function("g", [z], [ca.densify(g_expr)])
        self.fn_grad = ca.Function("grad", [z], [grad])
        self.fn_jac = ca.Function("jac_nz", [z], [ca.densify(jac_nz)])
        self.fn_hess = ca.Function("hess_nz", [z, sigma, lam], [ca.densify(hess_nz)])
        self._grad_expr, self._jac_nz, self._hess_nz = grad, jac_nz, hess_nz

        # ---- bounds and initial guess ----
        nom = dop.x_nominal
        self.lbz = np.concatenate([np.tile(dop.x_lb / nom, nn), dop.p_lb])
        self.ubz = np.concatenate([np.tile(dop.x_ub / nom, nn), dop.p_ub])
        for seg, n0 in zip(segments, self.node_start, strict=False):
            if seg.x0 is not None:
                i0 = int(n0) * nx
                self.lbz[i0 : i0 + nx] = self.ubz[i0 : i0 + nx] = seg.x0 / nom
        g_lb = np.zeros((N, nx + ng))
        g_ub = np.zeros((N, nx + ng))
        if ng:
            g_lb[:, nx:], g_ub[:, nx:] = dop.path.lb, dop.path.ub
        self.lbg = np.concatenate([g_lb.ravel(), dop.boundary.lb if nr else []])
        self.ubg = np.concatenate([g_ub.ravel(), dop.boundary.ub if nr else []])

    # ---- helpers --------------------------------------------------------------------------------
    def initial_guess(
        self, x_nodes: np.ndarray | None = None, p: np.ndarray | None = None
    ) -> np.ndarray:
        """z from physical node states (n_nodes, n_x) and parameters (n_p); defaults from the
        problem."""
        if x_nodes is None:
            x_nodes = np.vstack(
                [self.dop.state_guess(m.node_times, k) for k, m in enumerate(self.meshes)]
            )
        p = self.dop.p_guess if p is None else p
        scaled = np.asarray(x_nodes, float) / self.dop.x_nominal
        z = np.concatenate([scaled.ravel(), np.asarray(p, float)])
        return np.clip(z, self.lbz, self.ubz)

    def split(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Physical node states (all segments' nodes, n_x) and parameters (n_p) from z."""
        z = np.asarray(z, dtype=float).ravel()
        return z[: self.P0].reshape(self.nn, self.nx) * self.dop.x_nominal, z[self.P0 :]

    def segment_states(self, z: np.ndarray) -> list[np.ndarray]:
        """Physical node states of each segment, [(n_nodes_s, n_x), ...]."""
        X, _ = self.split(z)
        return [X[a:b] for a, b in zip(self.node_start[:-1], self.node_start[1:], strict=True)]

    def casadi_callbacks(self) -> dict[str, ca.Function]:
        """Custom callbacks for ``nlpsol`` with CasADi's naming conventions."""
        z, sigma, lam = self.z_sym, self.sigma_sym, self.lam_sym
        p = ca.MX.sym("p", 0)
        grad_f = ca.Function(
            "nlp_grad_f", [z, p], [self.f_expr, self._grad_expr], ["x", "p"], ["f", "grad_f_x"]
        )
        jac_g = ca.Function(
            "nlp_jac_g",
            [z, p],
            [self.g_expr, ca.MX(self.jac_sparsity, self._jac_nz)],
            ["x", "p"],
            ["g", "jac_g_x"],
        )
        hess_lag = ca.Function(
            "nlp_hess_l",
            [z, p, sigma, lam],
            [ca.MX(self.hess_sparsity, self._hess_nz)],
            ["x", "p", "lam_f", "lam_g"],
            ["triu_hess_gamma_x_x"],
        )
        return {"grad_f": grad_f, "jac_g": jac_g, "hess_lag": hess_lag}

    def jacobian_structure(self) -> tuple[np.ndarray, np.ndarray]:
        rows, cols = self.jac_sparsity.get_triplet()
        return np.asarray(rows), np.asarray(cols)

    def hessian_structure(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols) of the upper triangle in CasADi order (cyipopt wants the lower one:
        swap them)."""
        rows, cols = self.hess_sparsity.get_triplet()
        return np.asarray(rows), np.asarray(cols)

    def node_values(self, z: np.ndarray) -> dict[str, np.ndarray]:
        """Per-collocation-node dynamics residual parts, path values and Lagrange terms at z."""
        X, p = self.split(z)
        Xc = (X / self.dop.x_nominal)[self.coll_node].T
        U = self.u_coll.T if self.dop.n_inputs else np.zeros((0, self.N))
        out = [np.asarray(o) for o in _call_columns(self.node.values, Xc, p, U, self)]
        return {"res": out[0], "g": out[1], "obj": out[2]}


def _call_columns(f: ca.Function, Xc, p, U, nlp: StructuredNLP):
    fm = f.map(nlp.N) if nlp.N > 1 else f
    return fm(Xc, p, U, nlp.t_coll[None, :], nlp.h_coll[None, :], nlp.w_coll[None, :])
