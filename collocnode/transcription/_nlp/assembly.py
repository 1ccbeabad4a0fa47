"""The global sparsity of the collocation NLP and the scatter of node nonzeros into it (numpy).

Unknowns ``z = [x_00, x_01, ..., x_{n m_n}, p]``: the states at every mesh node of every segment
(node-major, each segment's initial point first) followed by the parameters. Constraint rows: one
block of n_x + n_g rows per collocation node (collocated dynamics, then path constraints), then
the n_r boundary rows.

Every derivative output of the NLP is a list of *sources* -- the per-node nonzeros of
`collocnode.transcription._nlp.node_functions` for all N nodes (flattened node-major, the order of
``casadi.vec`` of a mapped output), then the boundary nonzeros, then the nonzeros of the data terms
at sample times (per group of samples in intervals of one stage count, sample-major) -- and each
source entry lands on one global
(row, col). The global pattern and a constant 0/1 scatter matrix (global nonzeros x sources) are
computed here once from the local patterns and the mesh; the scatter also sums entries that land
on the same place (the linear D part and the nonlinear part of one Jacobian entry; the p-p block;
the boundary terms and the node terms of the last node). CasADi never discovers the global
pattern, which is what makes the transcription fast (casadi #2454, #1400).
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .._mesh import Mesh
from .._radau import radau_table

Pattern = tuple[np.ndarray, np.ndarray]  # (rows, cols) of structural nonzeros, int64

# the Hessian's sources in the order of the scatter's columns (see NLPLayout.hessian_positions)
HESSIAN_BLOCKS = ("xx", "xp", "pp", "boundary", "samples", "quadratic")


@dataclass
class NLPSize:
    """Size of the NLP: variables, constraints, and structural nonzeros of its Jacobian and of
    the upper triangle of its Lagrangian Hessian."""

    n_variables: int
    n_constraints: int
    nnz_jacobian: int
    nnz_hessian: int  # upper triangle


class Assembly:
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

    def finish(self, dense: bool = False) -> tuple[ca.Sparsity, sp.csc_matrix, np.ndarray]:
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


def coupled_groups(pattern: Pattern, n: int) -> list[np.ndarray]:
    """Groups of parameters coupled by a structural Hessian pattern (connected components),
    sorted; uncoupled parameters with a diagonal entry form singleton groups."""
    a, b = pattern
    graph = sp.coo_matrix((np.ones(a.size), (a, b)), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    touched = np.zeros(n, bool)
    touched[a], touched[b] = True, True
    return [g for g in (np.flatnonzero(label == k) for k in np.unique(label)) if touched[g].any()]


def block_triu(groups: list[np.ndarray]) -> Pattern:
    """(row, col) of the dense upper triangles of the given index groups."""
    rows, cols = [], []
    for g in groups:
        i, j = np.triu_indices(g.size)
        rows.append(g[i])
        cols.append(g[j])
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows), np.concatenate(cols)


def collocation_entries(
    meshes: list[Mesh], node_start: np.ndarray, nx: int, ng: int, nd: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, values) of the linear part Σ_l D_jl x_il of the collocated dynamics: row
    (k, s) of collocation node k, column (node(i, l), s), value D[j - 1, l]; no duplicates.
    ``nx`` unknowns per node, of which the first ``nd`` (default all) are differential states;
    ``nd + ng`` rows per collocation node."""
    nd = nx if nd is None else nd
    dr, dc, dv = [], [], []
    k0 = 0  # collocation nodes of the previous segments
    for m_s, n0 in zip(meshes, node_start, strict=False):
        for i in range(m_s.n_intervals):
            m = int(m_s.stages[i])
            D = radau_table(m).D
            ks = k0 + np.flatnonzero(m_s.collocation_interval == i)
            start = int(n0 + m_s.interval_start[i])
            for jj, kk in enumerate(ks):
                for ll in range(m + 1):
                    dr.append(kk * (nd + ng) + np.arange(nd))
                    dc.append((start + ll) * nx + np.arange(nd))
                    dv.append(np.full(nd, D[jj, ll]))
        k0 += m_s.n_collocation
    return np.concatenate(dr), np.concatenate(dc), np.concatenate(dv)


@dataclass(frozen=True)
class NodePatterns:
    """Local (row, col) patterns of the node and boundary derivative outputs.

    Node columns < n_x index the node's states, the rest the parameters; ``hxp`` columns index
    the parameters. Boundary columns index vb = [x(t0) (n_x), x(tf) (n_x), p (n_p)].
    """

    jac: Pattern
    hxx: Pattern
    hxp: Pattern
    hpp: Pattern
    bnd_jac: Pattern
    bnd_hess: Pattern


@dataclass(frozen=True)
class SamplePatterns:
    """One group of data terms at sample times: samples in intervals of the same stage count m.

    ``first_col`` (n_s,) is the z-index of x_i0 of each sample's interval; the interval's m + 1
    node states are the ``n_local = n_x (m + 1)`` consecutive entries of z from there. The local
    patterns are those of `SampleFunctions`: ``hxx`` over those states,
    ``hxp`` states by parameters, ``hpp`` over the parameters (summed over the samples).
    """

    first_col: np.ndarray
    n_local: int
    hxx: Pattern
    hxp: Pattern
    hpp: Pattern

    @property
    def n(self) -> int:
        return int(self.first_col.size)

    def hessian_sources(self) -> int:
        """Number of Hessian source entries of this group (x-x and x-p per sample, p-p once)."""
        return (self.hxx[0].size + self.hxp[0].size) * self.n + self.hpp[0].size


class NLPLayout:
    """Where every unknown, constraint and derivative nonzero of the NLP lives.

    Args:
        nx, npar, ng, nr: numbers of unknowns per node, parameters, node constraints beyond
            the dynamics (algebraic equations and path constraints) and boundary constraints.
        meshes: one mesh per segment.
        patterns: the local patterns of the node and boundary functions.
        exact_pp: the p-p block's pattern is the exact Hessian's (True) or, for a quasi-Newton
            p-p block, dense over each group of coupled parameters (False).
        samples: the groups of data terms at sample times (their Hessian is always exact).
        nd: differential states, the first ``nd`` unknowns of each node (default ``nx``); the
            rest (algebraic states, controls) have no collocation equations of their own.
        quadratic: the upper triangle (rows, cols) of a constant quadratic term ½ zᵀQz of the
            objective (the controls' rate penalty); its Hessian entries are the last source.

    Attributes (sizes): ``node_start[s]`` first node of segment s, ``nn`` nodes, ``N``
    collocation nodes, ``P0`` index of p in z, ``n_z`` variables, ``n_c`` constraints;
    ``coll_node`` (N,) node index of every collocation node; ``last0`` the last node of segment 0
    (the boundary terms see segment 0's end points); ``vb_map`` z-index of every boundary
    argument. Patterns: ``jac_sparsity`` / ``hess_sparsity`` (upper triangle) with their
    scatter matrices ``jac_scatter`` (+ constant ``jac_constant``), ``hess_scatter`` and the
    dense gradient's ``grad_scatter``; ``collocation`` the constant D part of the Jacobian.
    """

    def __init__(
        self,
        nx: int,
        npar: int,
        ng: int,
        nr: int,
        meshes: list[Mesh],
        patterns: NodePatterns,
        exact_pp: bool = True,
        samples: tuple[SamplePatterns, ...] = (),
        nd: int | None = None,
        quadratic: Pattern | None = None,
    ) -> None:
        self.node_start = np.cumsum([0] + [m.n_nodes for m in meshes])
        nn = int(self.node_start[-1])
        N = sum(m.n_collocation for m in meshes)
        nd = nx if nd is None else nd
        self.nx, self.np, self.ng, self.nr, self.nn, self.N = nx, npar, ng, nr, nn, N
        self.nd = nd
        self.P0 = nn * nx
        self.n_z = nn * nx + npar
        self.n_c = N * (nd + ng) + nr
        self.coll_node = np.concatenate(
            [m.collocation_index + s0 for m, s0 in zip(meshes, self.node_start, strict=False)]
        )
        self.last0 = int(self.node_start[1]) - 1
        self.vb_map = np.concatenate(
            [np.arange(nd), self.last0 * nx + np.arange(nd), self.P0 + np.arange(npar)]
        )
        self.col_x = self.coll_node * nx  # first z index of each collocation node's states
        self.samples = tuple(samples)
        self.quadratic = quadratic or (np.zeros(0, np.int64), np.zeros(0, np.int64))
        # a quasi-Newton p-p block is dense over each group of coupled parameters
        self.pp_blocks = [] if exact_pp else coupled_groups(patterns.hpp, npar)
        self.pp_pattern = patterns.hpp if exact_pp else block_triu(self.pp_blocks)
        self._assemble_jacobian(meshes, patterns)
        self._assemble_hessian(patterns)
        self._assemble_gradient()
        self.size = NLPSize(self.n_z, self.n_c, self.jac_sparsity.nnz(), self.hess_sparsity.nnz())

    def _node_cols(self, local_cols: np.ndarray) -> np.ndarray:
        """(nnz_local, N) global columns of node-local columns: < nx this node's unknown, else
        a parameter."""
        lc = local_cols[:, None]
        return np.where(lc < self.nx, self.col_x[None, :] + lc, self.P0 + lc - self.nx)

    def _assemble_jacobian(self, meshes: list[Mesh], patterns: NodePatterns) -> None:
        """Node nonzeros, the constant collocation part D, boundary nonzeros."""
        nx, nd, ng, N = self.nx, self.nd, self.ng, self.N
        row0 = np.arange(N) * (nd + ng)  # first constraint row of each collocation node
        jac = Assembly((self.n_c, self.n_z))
        jr, jc = patterns.jac
        jac.add_source(jr[:, None] + row0[None, :], self._node_cols(jc))
        d_rows, d_cols, d_vals = collocation_entries(meshes, self.node_start, nx, ng, nd)
        jac.add_constant(d_rows, d_cols, d_vals)
        self.collocation = sp.csc_matrix((d_vals, (d_rows, d_cols)), shape=(self.n_c, self.n_z))
        br, bc = patterns.bnd_jac
        jac.add_source(N * (nd + ng) + br, self.vb_map[bc])
        self.jac_sparsity, self.jac_scatter, self.jac_constant = jac.finish()

    def _assemble_hessian(self, patterns: NodePatterns) -> None:
        """The upper triangle: x-x, x-p, p-p, boundary, samples, quadratic, in HESSIAN_BLOCKS
        order, and where each block's sources start and stop among the scatter's columns."""
        N, P0, col_x = self.N, self.P0, self.col_x
        hes = Assembly((self.n_z, self.n_z))
        a, b = patterns.hxx
        hes.add_source(col_x[None, :] + a[:, None], col_x[None, :] + b[:, None])
        a, b = patterns.hxp
        hes.add_source(col_x[None, :] + a[:, None], P0 + np.repeat(b[:, None], N, 1))
        a, b = self.pp_pattern
        hes.add_source(P0 + a, P0 + b)
        a, b = patterns.bnd_hess
        ga, gb = self.vb_map[a], self.vb_map[b]
        hes.add_source(np.minimum(ga, gb), np.maximum(ga, gb))
        # data terms: the interval's node states are consecutive in z, so local index a of the
        # states is global first_col + a; x-x stays an upper triangle (a <= b)
        for g in self.samples:
            first = g.first_col[None, :]
            a, b = g.hxx
            hes.add_source(first + a[:, None], first + b[:, None])
            a, b = g.hxp
            hes.add_source(first + a[:, None], P0 + np.repeat(b[:, None], g.n, 1))
            a, b = g.hpp
            hes.add_source(P0 + a, P0 + b)
        hes.add_source(*self.quadratic)
        self.hess_sparsity, hess_scatter, _ = hes.finish()
        self.hess_scatter = hess_scatter.tocsc()
        self.hess_scatter.sort_indices()
        n_src = [
            patterns.hxx[0].size * N,
            patterns.hxp[0].size * N,
            self.pp_pattern[0].size,
            patterns.bnd_hess[0].size,
            sum(g.hessian_sources() for g in self.samples),
            self.quadratic[0].size,
        ]
        self.hessian_source_start = dict(
            zip(HESSIAN_BLOCKS, np.cumsum([0, *n_src[:-1]]).tolist(), strict=True)
        )
        self._hessian_source_stop = dict(
            zip(HESSIAN_BLOCKS, np.cumsum(n_src).tolist(), strict=True)
        )

    def _assemble_gradient(self) -> None:
        """The objective's dense gradient: node x and p parts, the boundary part, the samples'
        x and p parts."""
        nx, npar, N, P0 = self.nx, self.np, self.N, self.P0
        grad = Assembly((self.n_z, 1))
        grad.add_source(self.col_x[None, :] + np.arange(nx)[:, None], np.zeros((nx, N), np.int64))
        grad.add_source(P0 + np.arange(npar), np.zeros(npar, np.int64))
        grad.add_source(self.vb_map, np.zeros(self.vb_map.size, np.int64))
        for g in self.samples:
            rows = g.first_col[None, :] + np.arange(g.n_local)[:, None]
            grad.add_source(rows, np.zeros_like(rows))
            grad.add_source(P0 + np.arange(npar), np.zeros(npar, np.int64))
        _, self.grad_scatter, _ = grad.finish(dense=True)

    def hessian_columns(self, block: str) -> slice:
        """The columns of ``hess_scatter`` (the sources) of one block of `HESSIAN_BLOCKS`."""
        if block not in HESSIAN_BLOCKS:
            raise ValueError(f"block must be one of {HESSIAN_BLOCKS}, got {block!r}")
        return slice(self.hessian_source_start[block], self._hessian_source_stop[block])

    def hessian_positions(self, block: str) -> np.ndarray:
        """Index into the Hessian's nonzeros (``hess_sparsity`` order) of every source entry of
        one block of `HESSIAN_BLOCKS`, in source order: "xx" and "xp" node-major (per node
        the local pattern), "pp" the p-p pattern (``pp_pattern``), "boundary" the boundary
        Hessian's pattern, "samples" per group of ``samples`` its x-x (sample-major), x-p
        (sample-major) and p-p entries. Every source entry lands on exactly one nonzero."""
        # a 0/1 scatter with one entry per column: its row indices are the positions
        return self.hess_scatter.indices[self.hessian_columns(block)].astype(np.int64)


def estimated_nonzeros(nx: int, npar: int, ng: int, nr: int, meshes: list[Mesh]) -> dict[str, int]:
    """Upper bounds on the NLP's sizes from its dimensions alone (dense node blocks, a dense
    node-by-parameter border and a dense parameter block), before anything is built.

    Returns ``{"nodes", "variables", "jacobian", "hessian", "hessian_border", "hessian_pp"}``:
    collocation nodes N, unknowns, Jacobian nonzeros (node rows (n_x + n_g) x (n_x + n_p), the
    collocation matrix, the boundary rows) and upper-triangle Hessian nonzeros (node blocks
    n_x(n_x + 1)/2, the border n_x n_p per node, the p-p block n_p(n_p + 1)/2, the boundary
    block), with the border and the p-p block also on their own.
    """
    N = sum(m.n_collocation for m in meshes)
    nodes = sum(m.n_nodes for m in meshes)
    stage_d = sum(int(np.sum(m.stages * (m.stages + 1))) for m in meshes)  # D entries per state
    nb = 2 * nx + npar
    border = N * nx * npar
    pp = npar * (npar + 1) // 2
    return {
        "nodes": N,
        "variables": nodes * nx + npar,
        "jacobian": N * (nx + ng) * (nx + npar) + stage_d * nx + nr * nb,
        "hessian": N * nx * (nx + 1) // 2 + border + pp + nb * (nb + 1) // 2,
        "hessian_border": border,
        "hessian_pp": pp,
    }
