"""A dynamic optimization problem transcribed into one structured NLP (paper eq. 12).

Unknowns ``z = [v_00, v_01, ..., v_{n m_n}, p]``: per mesh node (node-major, the initial point
first) its unknowns ``v = [x, z, u_c]`` (states, algebraic states, controls; see
:mod:`.variables`), followed by the time-invariant parameters (and the final time when it is
free).

Constraints, one block per collocation node k (interval i, stage j), then the boundary block:

    Σ_l D_jl x_il − h_i f(x_ij, p, u_ij, t_ij) = 0        (12b, n_states rows)
    0 = g_alg(x_ij, p, u_ij, t_ij, z_ij)                    (n_algebraic rows)
    g_lb <= g(x_ij, p, u_ij, t_ij) <= g_ub                  (12c, n_path rows)
    r_lb <= r(x_00, x_last, p) <= r_ub                      (12d, n_boundary rows, once)

Objective: M(x_00, x_last, p) + Σ_k w_k L(x_k, p, u_k, t_k), w_k = h_i b_j        (12a, 10)
           + Σ_s w_s ℓ(Σ_l l~_l(σ_s) x_il, p, u_s, t_s, d_s)       (data terms at sample times)
           + ½ Σ_i rho_i (z_{S_i} − c_i)²     (an optional proximal term; rho, c: NLP parameters)

where sample s lies in interval i at local time σ_s: its state is the interval's collocation
polynomial there (a constant basis row over the interval's m + 1 node states, computed once), so
each data term touches only its interval's node states and p.

Why this shape: every node's equations depend on the shared parameters p, so the Lagrangian
Hessian is an arrowhead (small per-node state blocks, a dense node-by-p border, a dense p-p
block summed over all nodes). CasADi's global colouring is very slow on such a border (casadi
#2454, #1400), so the derivatives are never discovered globally. Three modules share the work:
:mod:`.node_functions` builds one symbolic function per node type with its local Jacobian and
Hessian nonzeros; :mod:`.assembly` computes the global sparsity and the scatter of node nonzeros
into it once in numpy; this module evaluates the node functions over all nodes with
``Function.map`` (the p-p block with a reduction, so the sum over nodes happens inside CasADi)
and scatters the results with constant sparse matrices, giving the CasADi Functions that both
IPOPT backends call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sp

from ...tools.threads import available_threads
from ..mesh import Mesh
from ..problem import DynamicOptimizationProblem
from ..radau import lagrange_basis, radau_table
from .assembly import NLPLayout, NLPSize, NodePatterns, SamplePatterns
from .hessian import nlp_mode
from .node_functions import (
    BoundaryFunctions,
    NodeFunctions,
    SampleFunctions,
    build_boundary_functions,
    build_node_functions,
    build_sample_functions,
)

__all__ = ["NLPSize", "StructuredNLP"]


#: bytes that one map may hold for the per-node copies of a summed output: CasADi sums a mapped
#: output (``reduce_out``) only after every node's copy exists, so a network's parameter-block
#: Hessian (n_params² / 2 per node) over 30,000 nodes would need tens of GB
REDUCE_BUFFER_BYTES = 64 * 2**20

#: CasADi names of the NLP's Functions (attribute -> name)
_FUNCTION_NAMES = {
    "fn_f": "f",
    "fn_g": "g",
    "fn_grad": "grad",
    "fn_jac": "jac_nz",
    "fn_hess": "hess_nz",
    "fn_hess_parts": "hess_parts",
}


class _NodeMap:
    """Evaluates a node function over N nodes in ``threads`` chunks of serial maps.

    CasADi's "thread" map starts one thread per evaluation, which is ruinous for thousands of
    cheap node evaluations; so the nodes are split into one serial map per thread and only the
    outer map is threaded. When the summed outputs are large (``reduced_nnz`` numbers per node),
    each chunk is itself a serial map over blocks of at most REDUCE_BUFFER_BYTES worth of nodes,
    so that no buffer holds every node's copy. N is padded to a multiple of the chunk size with
    neutral nodes (h = w = 0 and zero multipliers, so they add nothing to any reduced output);
    padded outputs are dropped.
    """

    def __init__(self, n: int, threads: int, reduced_nnz: int = 0) -> None:
        self.n = n
        self.threads = max(1, min(threads, n))
        per_thread = -(-n // self.threads)
        self.block = max(1, min(per_thread, REDUCE_BUFFER_BYTES // (8 * max(1, reduced_nnz))))
        self.chunk = self.block * -(-per_thread // self.block)
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

    def pad_columns(self, data: list, shared: tuple[int, ...], zero: tuple[int, ...]) -> list:
        """Pad every input but the ``shared`` ones: the ``zero`` ones with zeros (weights, so
        padded entries add nothing to a reduced output), the others by repeating their last
        column."""
        if not self.pad:
            return data
        out = []
        for k, a in enumerate(data):
            if k in shared:
                out.append(a)
            elif a.shape[0] == 0:
                out.append(ca.DM(0, self.n + self.pad))
            elif k in zero:
                out.append(ca.horzcat(a, ca.DM.zeros(a.shape[0], self.pad)))
            else:
                out.append(ca.horzcat(a, ca.repmat(a[:, -1], 1, self.pad)))
        return out

    def function(self, f: ca.Function, reduce_in: list[int], reduce_out: list[int]) -> ca.Function:
        """``f`` mapped over all (padded) nodes: blocks, chunks of blocks, threads of chunks."""
        g = f
        for name, mode, count in (
            ("serial", "serial", self.block),
            ("blocks", "serial", self.chunk // self.block),
            ("threads", "thread", self.threads),
        ):
            if count > 1:
                g = g.map(f"{f.name()}_{name}", mode, count, reduce_in, reduce_out, {})
        return g

    def wrap(self, f: ca.Function, reduce_in: list[int], reduce_out: list[int]):
        g = self.function(f, reduce_in, reduce_out)

        def call(*args):
            outs = g(*args)
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            return [
                o if k in reduce_out or not self.pad else o[:, : self.n] for k, o in enumerate(outs)
            ]

        return call


def _summed_nnz(functions: list[tuple[ca.Function, tuple[int, ...]]]) -> int:
    """The largest number of nonzeros that one node adds to the summed outputs of a function."""
    return max(sum(f.nnz_out(k) for k in outputs) for f, outputs in functions)


def _vcat(*parts):
    """vertcat that ignores empty parts (0x1 and 1x0 alike; CasADi insists on matching widths)."""
    parts = [ca.vec(q) for q in parts if q.numel() > 0]
    return ca.vertcat(*parts) if parts else ca.MX(0, 1)


def _dm_sparse(a: sp.spmatrix) -> ca.DM:
    a = sp.csc_matrix(a)
    a.sort_indices()
    return ca.DM(ca.Sparsity(a.shape[0], a.shape[1], a.indptr.tolist(), a.indices.tolist()), a.data)


class SampleGroup:
    """The data terms of the samples that lie in intervals of ``m`` stages (all segments), with
    the constants their function is mapped over.

    Attributes: ``m``; per sample ``first_node`` (n_s,) the global node index of x_i0 of its
    interval, ``segment`` (n_s,), ``t`` (n_s,) [s], ``beta`` (n_s, m + 1) the Lagrange basis row
    at its local time, ``u`` (n_s, n_u), ``data`` (n_s, n_data), ``weights`` (n_s,); ``fn``
    its :class:`.node_functions.SampleFunctions` (set when the NLP is built).
    """

    def __init__(self, m: int, parts: list[dict[str, np.ndarray]]) -> None:
        self.m = m
        cat = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
        self.first_node, self.segment, self.t = cat["first_node"], cat["segment"], cat["t"]
        self.beta, self.u, self.data = cat["beta"], cat["u"], cat["data"]
        self.weights = cat["weights"]
        self.fn: SampleFunctions | None = None

    @property
    def n(self) -> int:
        return int(self.t.size)


def place_samples(
    dop: DynamicOptimizationProblem, meshes: list[Mesh], node_start: np.ndarray
) -> list[SampleGroup]:
    """Every segment's samples located on its mesh, grouped by the stage count of their
    interval (increasing m); samples with weight 0 are dropped (they add nothing)."""
    parts: dict[int, list[dict[str, np.ndarray]]] = {}
    for k, (seg, mesh) in enumerate(zip(dop.all_segments(), meshes, strict=True)):
        samples = seg.samples
        if samples is None:
            continue
        keep = np.flatnonzero(samples.weights > 0)
        if not keep.size:
            continue
        t = samples.t[keep]
        interval, local = mesh.locate(t)
        u = seg.inputs(t)
        m_of = mesh.stages[interval]
        for m in np.unique(m_of).tolist():
            sel = np.flatnonzero(m_of == m)
            parts.setdefault(m, []).append(
                {
                    "first_node": int(node_start[k]) + mesh.interval_start[interval[sel]],
                    "segment": np.full(sel.size, k),
                    "t": t[sel],
                    "beta": lagrange_basis(radau_table(m), local[sel]),
                    "u": u[sel],
                    "data": samples.data[keep[sel]],
                    "weights": samples.weights[keep[sel]],
                }
            )
    return [SampleGroup(m, parts[m]) for m in sorted(parts)]


def proximal_indices(indices: object, n_z: int) -> np.ndarray:
    """The unknowns of a proximal term: distinct integers in [0, n_z), (n,) int64 (empty for
    None)."""
    if indices is None:
        return np.zeros(0, np.int64)
    arr = np.asarray(indices)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"proximal must be a 1-d array of unknown indices, got {indices!r:.80}")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n_z or np.unique(arr).size != arr.size):
        raise ValueError(f"proximal indices must be distinct and in [0, {n_z}), got {arr!r:.80}")
    return arr


def rate_penalty_terms(
    dop: DynamicOptimizationProblem, meshes: list[Mesh], node_start: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The controls' rate penalty ``rho Σ_k |u_{k+1} - u_k|² / Δt_k`` (consecutive collocation
    nodes of each segment) as ½ zᵀQz: the upper-triangle triplets (rows, cols, values) of the
    constant Q in the NLP's scaled unknowns; duplicates are to be summed. Empty without one."""
    empty = np.zeros(0, np.int64)
    if dop.controls is None or dop.controls.rate_penalty == 0.0:
        return empty, empty, np.zeros(0)
    width, first = dop.node_width, dop.n_states + dop.n_algebraic
    nominal = dop.controls.nominal
    rows, cols, vals = [], [], []
    for mesh, n0 in zip(meshes, node_start, strict=False):
        nodes = int(n0) + mesh.collocation_index
        dt = np.diff(mesh.node_times[mesh.collocation_index])
        for c in range(dop.controls.n):
            i = nodes[:-1] * width + first + c
            j = nodes[1:] * width + first + c
            q = 2.0 * dop.controls.rate_penalty * nominal[c] ** 2 / dt
            rows += [i, j, i]
            cols += [i, j, j]
            vals += [q, q, -q]
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


class StructuredNLP:
    """The transcribed NLP: bounds, initial guess, and CasADi Functions for every IPOPT callback.

    The same Functions serve both IPOPT backends: CasADi's ``nlpsol`` (wrapped with CasADi's
    naming) and cyipopt (called with numpy arrays).

    Args:
        dop: the problem.
        mesh: the collocation mesh, or one mesh per segment of a multi-trajectory problem.
        jit: compile the node functions to C (cached on disk, see :mod:`.jit`).
        threads: worker threads for the map over nodes (default:
            :func:`collocnode.tools.threads.available_threads`).
        hessian: which Hessian blocks are computed exactly: a Hessian choice of
            :mod:`.hessian` ("exact", "limited-memory", a ``PartialQuasiNewton``) or an NLP mode
            ("partial-pp" / "partial-xp-pp" leave the p-p (and x-p) blocks to a quasi-Newton
            update, see :mod:`.quasi_newton`, and ``fn_hess`` then gives only the exact part;
            "none" leaves the whole Hessian to IPOPT's limited-memory approximation).
        checkpoint: called with the phase ("build" or "compile") at every step of the build; it
            may raise to abandon the build (see :mod:`.collocation`, which builds in a worker
            thread so that Ctrl-C needs not wait for a long CasADi call).
        proximal: indices S of unknowns (into z, scaled units) in a proximal term
            ``½ Σ_i rho_i (z_{S_i} − c_i)²`` whose rho and c are the NLP's parameters
            (``prm_sym``, CasADi ``nlpsol``'s p): :meth:`set_proximal` sets their values
            (initially 0) without a rebuild. Used by consensus ADMM (:mod:`.proximal`).

    Attributes: the sizes and index maps of :class:`.assembly.NLPLayout` (``nx``, ``np``,
    ``ng``, ``nr``, ``nn``, ``N``, ``P0``, ``n_z``, ``n_c``, ``node_start``, ``coll_node``,
    ``pp_blocks``, ``pp_pattern``) and the layout itself as ``layout``; ``jac_sparsity`` and
    ``hess_sparsity`` (upper triangle); per collocation node ``t_coll``, ``h_coll``,
    ``w_coll`` (N,) and ``u_coll`` (N, n_u); the data terms at sample times as
    ``sample_groups`` (:class:`SampleGroup`); the Functions ``fn_f``, ``fn_g``, ``fn_grad``,
    ``fn_jac`` (Jacobian nonzeros), ``fn_hess`` (Hessian nonzeros, of ``(z, sigma, lam)``);
    bounds ``lbz``, ``ubz``, ``lbg``, ``ubg``.
    """

    def __init__(
        self,
        dop: DynamicOptimizationProblem,
        mesh: Mesh | list[Mesh],
        jit: bool = False,
        threads: int | None = None,
        hessian: object = "exact",
        checkpoint: Callable[[str], None] | None = None,
        proximal: np.ndarray | None = None,
    ) -> None:
        step = checkpoint or (lambda phase: None)
        step("build")
        mode = nlp_mode(hessian)
        self.hessian_mode = mode
        segments = dop.all_segments()
        meshes = [mesh] if isinstance(mesh, Mesh) else list(mesh)
        if len(meshes) != len(segments):
            raise ValueError(f"got {len(meshes)} meshes for {len(segments)} segments")
        self.dop, self.meshes, self.mesh = dop, meshes, meshes[0]
        ng = dop.n_node_constraints
        nr = dop.boundary.n if dop.boundary else 0

        node_start = np.cumsum([0] + [m.n_nodes for m in meshes])
        n_z = int(node_start[-1]) * dop.node_width + dop.n_nlp_params
        self.proximal = proximal_indices(proximal, n_z)
        self.quadratic = rate_penalty_terms(dop, meshes, node_start)
        self.sample_groups = place_samples(dop, meshes, node_start)
        self.node, self.bnd, sample_fns = self._functions(
            dop, mode, jit, step, [g.m for g in self.sample_groups]
        )
        for g, fn in zip(self.sample_groups, sample_fns, strict=True):
            g.fn = fn
        step("build")
        layout = NLPLayout(
            dop.node_width,
            dop.n_nlp_params,
            ng,
            nr,
            meshes,
            NodePatterns(
                self.node.jac,
                self.node.hxx,
                self.node.hxp,
                self.node.hpp,
                self.bnd.jac,
                self.bnd.hess,
            ),
            exact_pp=mode == "exact",
            samples=tuple(
                SamplePatterns(
                    g.first_node * dop.node_width,
                    dop.node_width * (g.m + 1),
                    g.fn.hxx,
                    g.fn.hxp,
                    g.fn.hpp,
                )
                for g in self.sample_groups
            ),
            nd=dop.n_states,
            # the rate penalty's entries, then the proximal term's diagonal
            quadratic=(
                np.concatenate([self.quadratic[0], self.proximal]),
                np.concatenate([self.quadratic[1], self.proximal]),
            ),
        )
        self.layout = layout
        self.nx, self.np, self.ng, self.nr = layout.nx, layout.np, layout.ng, layout.nr
        self.nd = layout.nd
        self.nn, self.N, self.P0 = layout.nn, layout.N, layout.P0
        self.n_z, self.n_c = layout.n_z, layout.n_c
        self.node_start, self.coll_node = layout.node_start, layout.coll_node
        self.pp_blocks, self.pp_pattern = layout.pp_blocks, layout.pp_pattern
        self.jac_sparsity, self.hess_sparsity = layout.jac_sparsity, layout.hess_sparsity
        self.size: NLPSize = layout.size

        # ---- constant per-node data, all segments concatenated ----
        self.t_coll = np.concatenate([m.node_times[m.collocation_index] for m in meshes])
        self.h_coll = np.concatenate([m.h[m.collocation_interval] for m in meshes])
        self.w_coll = np.concatenate([m.quadrature_weights for m in meshes])
        self.u_coll = np.concatenate(
            [
                seg.inputs(m.node_times[m.collocation_index])
                for m, seg in zip(meshes, segments, strict=True)
            ]
        )
        step("build")
        self._graph(threads or available_threads(), step)
        step("build")
        self._bounds()

    @staticmethod
    def _functions(
        dop: DynamicOptimizationProblem,
        mode: str,
        jit: bool,
        step: Callable[[str], None],
        sample_stages: list[int],
    ) -> tuple[NodeFunctions, BoundaryFunctions, list[SampleFunctions]]:
        node = build_node_functions(dop, mode)
        step("build")
        bnd = build_boundary_functions(dop)
        samples = [build_sample_functions(dop, m, second=mode != "none") for m in sample_stages]
        if jit:
            step("compile")
            # Only the derivative functions are compiled: nlpsol differentiates the f/g graph
            # (for its internal ``nlp_grad``), which needs symbolic value functions.
            from .jit import compile_functions

            names = [k for k in ("first", "second", "lag_grad") if getattr(node, k) is not None]
            sample_fns = [fn for s in samples for fn in (s.first, s.second) if fn is not None]
            *compiled, bf, bs = compile_functions(
                [*(getattr(node, k) for k in names), *sample_fns, bnd.first, bnd.second]
            )
            node = replace(node, **dict(zip(names, compiled[: len(names)], strict=True)))
            compiled_samples = iter(compiled[len(names) :])
            samples = [
                replace(
                    s,
                    first=next(compiled_samples),
                    second=next(compiled_samples) if s.second is not None else None,
                )
                for s in samples
            ]
            bnd = BoundaryFunctions(bnd.values, bf, bs, bnd.jac, bnd.hess)
        return node, bnd, samples

    def _graph(self, threads: int, step: Callable[[str], None]) -> None:
        """The MX graph shared by both backends: node functions mapped over all nodes, their
        outputs scattered into the global nonzeros by the layout's constant matrices."""
        layout, node, bnd = self.layout, self.node, self.bnd
        nx, nd, ng, nn, N = self.nx, self.nd, self.ng, self.nn, self.N
        # the Functions of z (and sigma, lam): attribute -> (inputs, outputs)
        functions: dict[str, tuple[list, list]] = {}
        coll_node = self.coll_node
        U = ca.DM(self.u_coll.T) if self.dop.n_inputs else ca.DM(0, N)
        T, Hh, W = (ca.DM(a[None, :]) for a in (self.t_coll, self.h_coll, self.w_coll))

        z = ca.MX.sym("z", self.n_z)
        sigma = ca.MX.sym("sigma")
        lam = ca.MX.sym("lam", self.n_c)
        X = ca.reshape(z[: self.P0], nx, nn)
        P = z[self.P0 :]
        Xc = X[:, 1:] if np.array_equal(coll_node, np.arange(1, nn)) else X[:, coll_node.tolist()]
        x0s, xfs = X[:nd, 0], X[:nd, layout.last0]
        data = [Xc, P, U, T, Hh, W]

        summed = [(node.values, (2,)), (node.first, (2,))]
        if self.hessian_mode == "exact":
            summed.append((node.second, (2,)))
        elif node.lag_grad is not None:
            summed.append((node.lag_grad, (1,)))
        node_map = _NodeMap(N, threads, _summed_nnz(summed))
        mapped = node_map.wrap
        data = node_map.pad_data(data)

        step("build")
        res, gpath, objL = mapped(node.values, [1], [2])(*data)
        r, M = bnd.values(x0s, xfs, P)
        g_nodes = ca.vec(ca.vertcat(res, gpath))
        D_lin = _dm_sparse(layout.collocation[: N * (nd + ng), :])
        g_expr = _vcat(g_nodes + ca.mtimes(D_lin, z), r)
        # the data terms at sample times: objective, gradient and Hessian parts per group
        samples = [self._sample_terms(g, z, P, sigma, threads) for g in self.sample_groups]
        objS = [s["obj"] for s in samples]
        f_expr = objL + M + sum(objS) if objS else objL + M
        # a constant quadratic ½ zᵀQz (the controls' rate penalty): gradient Qz, Hessian σQ
        q_rows, q_cols, q_vals = self.quadratic
        Qz = None
        if q_vals.size:
            Q = sp.coo_matrix((q_vals, (q_rows, q_cols)), shape=(self.n_z, self.n_z)).tocsc()
            Q = Q + sp.triu(Q, 1).T
            Qz = ca.mtimes(_dm_sparse(Q), z)
            f_expr = f_expr + 0.5 * ca.dot(z, Qz)
        # the proximal term ½ Σ_i rho_i (z_{S_i} - c_i)², (rho, c) the NLP parameters
        S = self.proximal
        prm = ca.MX.sym("prm", 2 * S.size)
        prox_grad = None
        if S.size:
            rho, center = ca.vertsplit(prm, [0, S.size, 2 * S.size])
            gap = z[S.tolist()] - center
            f_expr = f_expr + 0.5 * ca.dot(rho, gap * gap)
            embed = sp.csc_matrix((np.ones(S.size), (S, np.arange(S.size))), (self.n_z, S.size))
            prox_grad = ca.mtimes(_dm_sparse(embed), rho * gap)
        f_expr = ca.densify(f_expr)  # dense when empty

        step("build")
        jnz, gx, gp = mapped(node.first, [1], [2])(*data)
        jr_nz, gM = bnd.first(x0s, xfs, P)
        jac_nz = ca.mtimes(_dm_sparse(layout.jac_scatter), _vcat(jnz, jr_nz)) + ca.DM(
            layout.jac_constant
        )
        grad_parts = [gx, gp, gM, *(part for s in samples for part in s["first"])]
        grad = ca.mtimes(_dm_sparse(layout.grad_scatter), _vcat(*grad_parts))
        grad = ca.densify(grad if Qz is None else grad + Qz)
        if prox_grad is not None:
            grad = grad + prox_grad
        # always exact (their Hessian costs no more than their gradient): in the partial
        # quasi-Newton modes they join the boundary part, outside the node Lagrangian
        hs = [part for s in samples for part in s.get("second", ())]
        if q_vals.size or S.size:
            hs.append(sigma * _vcat(ca.DM(q_vals), rho if S.size else ca.DM(0, 1)))

        lam_nodes = ca.reshape(lam[: N * (nd + ng)], nd + ng, N)
        lag_data = [
            *data,
            sigma,
            node_map.pad_zeros(lam_nodes[:nd, :]),
            node_map.pad_zeros(lam_nodes[nd:, :]),
        ]
        step("build")
        hb = bnd.second(x0s, xfs, P, sigma, lam[N * (nd + ng) :])
        S_H = layout.hess_scatter
        if self.hessian_mode == "exact":
            hxx, hxp, hpp = mapped(node.second, [1, 6], [2])(*lag_data)
            hess_nz = ca.mtimes(_dm_sparse(S_H), _vcat(hxx, hxp, hpp, hb, *hs))
        elif self.hessian_mode == "none":
            hess_nz = ca.DM.zeros(S_H.shape[0], 1)
        else:
            # exact node blocks and the (exact) boundary part; quasi_newton adds the rest
            exact = mapped(node.second, [1, 6], [])(*lag_data)
            blocks = ("xx", "xp") if self.hessian_mode == "partial-pp" else ("xx",)
            k_exact = layout.hessian_columns(blocks[-1]).stop
            hess_node = ca.mtimes(_dm_sparse(S_H[:, :k_exact]), _vcat(*exact))
            # the boundary and the samples are the last sources: one exact part
            first_exact = layout.hessian_columns("boundary").start
            hess_b = ca.mtimes(_dm_sparse(S_H[:, first_exact:]), _vcat(hb, *hs))
            hess_nz = hess_node + hess_b
            lx, lp = mapped(node.lag_grad, [1, 6], [1])(*lag_data)
            functions["fn_hess_parts"] = (
                [z, sigma, lam],
                [ca.densify(hess_node), ca.densify(hess_b)],
            )
            self.fn_lag_grad = ca.Function("lag_grad", [z, sigma, lam], [lx, lp])

        self.z_sym, self.sigma_sym, self.lam_sym, self.prm_sym = z, sigma, lam, prm
        self.prm_values = np.zeros(0)
        self.f_expr, self.g_expr = f_expr, g_expr
        functions.update(
            fn_f=([z], [f_expr]),
            fn_g=([z], [ca.densify(g_expr)]),
            fn_grad=([z], [grad]),
            fn_jac=([z], [ca.densify(jac_nz)]),
            fn_hess=([z, sigma, lam], [ca.densify(hess_nz)]),
        )
        self._grad_expr, self._jac_nz, self._hess_nz = grad, jac_nz, hess_nz
        if S.size:
            # Functions of (z, ..., prm), evaluated with the values set by set_proximal
            self._with_prm = {
                name: ca.Function(_FUNCTION_NAMES[name], [*ins, prm], outs)
                for name, (ins, outs) in functions.items()
            }
            self.set_proximal(np.zeros(S.size), np.zeros(S.size))
        else:
            for name, (ins, outs) in functions.items():
                setattr(self, name, ca.Function(_FUNCTION_NAMES[name], ins, outs))

    def set_proximal(self, rho: np.ndarray, center: np.ndarray) -> None:
        """Set the NLP parameters of the proximal term ``½ Σ_i rho_i (z_{S_i} - c_i)²`` (S: the
        ``proximal`` indices; rho >= 0 and c (len(S),) in the NLP's scaled unknowns). Nothing is
        rebuilt: the callbacks evaluate the same graph with the new values."""
        n = self.proximal.size
        rho = np.asarray(rho, dtype=float).ravel()
        center = np.asarray(center, dtype=float).ravel()
        if rho.shape != (n,) or center.shape != (n,):
            raise ValueError(
                f"the proximal term has {n} entries: rho and center must have shape ({n},), got "
                f"{rho.shape} and {center.shape}"
            )
        if not (np.all(np.isfinite(rho)) and np.all(np.isfinite(center)) and np.all(rho >= 0)):
            raise ValueError("the proximal term's rho must be finite and >= 0, its center finite")
        self.prm_values = np.concatenate([rho, center])
        values = ca.DM(self.prm_values)
        for name, full in self._with_prm.items():
            ins = full.mx_in()[:-1]
            outs = full.call([*ins, values])
            setattr(self, name, ca.Function(full.name(), ins, outs))

    def _sample_terms(
        self, group: SampleGroup, z: ca.MX, P: ca.MX, sigma: ca.MX, threads: int
    ) -> dict[str, Any]:
        """One group's data terms mapped over its samples: ``obj`` (summed), ``first``
        [gx (n_local, n_s), gp (summed)] and, unless the Hessian is left to IPOPT, ``second``
        [hxx (nnz, n_s), hxp (nnz, n_s), hpp (summed)], in the layout's source order."""
        fn, nx, n = group.fn, self.nx, group.n
        n_local = nx * (group.m + 1)
        # z-indices of each sample's interval states, sample-major: consecutive from x_i0
        index = group.first_node[None, :] * nx + np.arange(n_local)[:, None]
        Xi = ca.reshape(z[index.ravel(order="F").tolist()], n_local, n)
        summed = [(fn.values, (0,)), (fn.first, (1,))]
        if fn.second is not None:
            summed.append((fn.second, (2,)))
        smap = _NodeMap(n, threads, _summed_nnz(summed))
        data = smap.pad_columns(
            [
                Xi,
                ca.DM(group.beta.T),
                P,
                ca.DM(group.u.T) if self.dop.n_inputs else ca.DM(0, n),
                ca.DM(group.t[None, :]),
                ca.DM(group.data.T),
                ca.DM(group.weights[None, :]),
            ],
            shared=(2,),
            zero=(6,),
        )
        (obj,) = smap.wrap(fn.values, [2], [0])(*data)
        out: dict[str, Any] = {"obj": obj, "first": smap.wrap(fn.first, [2], [1])(*data)}
        if fn.second is not None:
            out["second"] = smap.wrap(fn.second, [2, 7], [2])(*data, sigma)
        return out

    def _bounds(self) -> None:
        dop, nx, nd, nn, N, ng, nr = self.dop, self.nx, self.nd, self.nn, self.N, self.ng, self.nr
        nom = dop.node_vector("nominal")
        p_lb, p_ub = dop.p_lb, dop.p_ub
        if dop.free_final_time:
            p_lb, p_ub = np.append(p_lb, dop.tf_bounds[0]), np.append(p_ub, dop.tf_bounds[1])
        self.lbz = np.concatenate([np.tile(dop.node_vector("lb") / nom, nn), p_lb])
        self.ubz = np.concatenate([np.tile(dop.node_vector("ub") / nom, nn), p_ub])
        for seg, n0, mesh in zip(dop.all_segments(), self.node_start, self.meshes, strict=False):
            i0 = int(n0) * nx
            if seg.x0 is not None:  # NaN entries of x0 stay free
                fixed = np.flatnonzero(np.isfinite(seg.x0))
                self.lbz[i0 + fixed] = self.ubz[i0 + fixed] = seg.x0[fixed] / nom[fixed]
            if nx > nd:
                # a trajectory's initial point is no collocation node: its algebraic states and
                # controls appear in no function, so they are fixed (IPOPT drops fixed unknowns)
                extra = dop.node_guess(mesh.node_times[:1])[0] / nom[nd:]
                self.lbz[i0 + nd : i0 + nx] = self.ubz[i0 + nd : i0 + nx] = extra
        g_lb = np.zeros((N, nd + ng))
        g_ub = np.zeros((N, nd + ng))
        if dop.path:
            g_lb[:, nd + dop.n_algebraic :] = dop.path.lb
            g_ub[:, nd + dop.n_algebraic :] = dop.path.ub
        self.lbg = np.concatenate([g_lb.ravel(), dop.boundary.lb if nr else []])
        self.ubg = np.concatenate([g_ub.ravel(), dop.boundary.ub if nr else []])

    def hessian_positions(self, block: str) -> np.ndarray:
        """Index into the Hessian nonzeros (``hess_sparsity`` order, the output of ``fn_hess``)
        of every entry of one block's source: "xx", "xp" (node-major: per collocation node the
        local pattern ``node.hxx`` / ``node.hxp``), "pp" (``pp_pattern``), "boundary"."""
        return self.layout.hessian_positions(block)

    # ---- helpers --------------------------------------------------------------------------------
    def initial_guess(
        self, x_nodes: np.ndarray | None = None, p: np.ndarray | None = None
    ) -> np.ndarray:
        """z from physical node values and parameters; defaults from the problem.

        Args:
            x_nodes: per node of every segment the states (n_nodes, n_states), or all node
                unknowns [x, z, u_c] (n_nodes, node_width); the algebraic states and controls
                of the former come from the problem's guesses.
            p: the problem's parameters (n_params,), or with a free final time also tf
                (n_params + 1,); default ``p_guess`` (and ``tspan[1]``).
        """
        dop = self.dop
        times = np.concatenate([m.node_times for m in self.meshes])
        if x_nodes is None:
            x_nodes = np.vstack(
                [dop.state_guess(m.node_times, k) for k, m in enumerate(self.meshes)]
            )
        x_nodes = np.asarray(x_nodes, float)
        if x_nodes.shape[1] == self.nd < self.nx:
            x_nodes = np.hstack([x_nodes, dop.node_guess(times)])
        p = dop.p_guess if p is None else np.asarray(p, float)
        if dop.free_final_time and p.size == dop.n_params:
            p = np.append(p, dop.tspan[1])
        scaled = x_nodes / dop.node_vector("nominal")
        z = np.concatenate([scaled.ravel(), p])
        return np.clip(z, self.lbz, self.ubz)

    def node_unknowns(self, z: np.ndarray) -> np.ndarray:
        """All node unknowns [x, z, u_c] in physical units, shape (n_nodes, node_width)."""
        z = np.asarray(z, dtype=float).ravel()
        return z[: self.P0].reshape(self.nn, self.nx) * self.dop.node_vector("nominal")

    def split(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Physical node states (all segments' nodes, n_states) and parameters (n_params) from
        z (without a free final time: :meth:`final_time`)."""
        z = np.asarray(z, dtype=float).ravel()
        p = z[self.P0 : self.P0 + self.dop.n_params]
        return self.node_unknowns(z)[:, : self.nd], p

    def final_time(self, z: np.ndarray) -> float:
        """The final time at z: the free one, or ``tspan[1]``."""
        if not self.dop.free_final_time:
            return float(self.dop.tspan[1])
        return float(np.asarray(z, dtype=float).ravel()[self.P0 + self.dop.n_params])

    def segment_states(self, z: np.ndarray) -> list[np.ndarray]:
        """Physical node states of each segment, [(n_nodes_s, n_states), ...]."""
        X, _ = self.split(z)
        return [X[a:b] for a, b in zip(self.node_start[:-1], self.node_start[1:], strict=True)]

    def segment_unknowns(self, z: np.ndarray) -> list[np.ndarray]:
        """All physical node unknowns of each segment, [(n_nodes_s, node_width), ...]."""
        V = self.node_unknowns(z)
        return [V[a:b] for a, b in zip(self.node_start[:-1], self.node_start[1:], strict=True)]

    def casadi_callbacks(self) -> dict[str, ca.Function]:
        """Custom callbacks for ``nlpsol`` with CasADi's naming conventions."""
        z, sigma, lam, p = self.z_sym, self.sigma_sym, self.lam_sym, self.prm_sym
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
        z = np.asarray(z, dtype=float).ravel()
        Xc = z[: self.P0].reshape(self.nn, self.nx)[self.coll_node].T
        p = z[self.P0 :]
        U = self.u_coll.T if self.dop.n_inputs else np.zeros((0, self.N))
        out = [np.asarray(o) for o in _call_columns(self.node.values, Xc, p, U, self)]
        return {"res": out[0], "g": out[1], "obj": out[2]}


def _call_columns(f: ca.Function, Xc, p, U, nlp: StructuredNLP):
    fm = f.map(nlp.N) if nlp.N > 1 else f
    return fm(Xc, p, U, nlp.t_coll[None, :], nlp.h_coll[None, :], nlp.w_coll[None, :])
