"""The MX graph of a `StructuredNLP`, shared by both IPOPT backends.

The node functions of `collocnode.transcription._nlp.node_functions` are evaluated over all
collocation nodes with ``Function.map`` (`NodeMap`: the sums over nodes, such as the p-p Hessian
block, happen inside CasADi), the data terms over their samples likewise, and their outputs are
scattered into the NLP's global nonzeros by the constant sparse matrices of the layout
(`NLPLayout`). The build goes in four named steps: the symbols and the per-node
data (`_GraphBuilder`), the values (objective and constraints), the first derivatives
(the Jacobian's nonzeros and the dense gradient) and the Lagrangian Hessian's nonzeros (exact,
none, or the exact part of a partial quasi-Newton mode). The values and first derivatives are
built twice: from the separate value and derivative maps (what ``nlpsol``'s own f and g
evaluate) and from one map of the fused node functions (what one callback evaluation for all
four uses).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import casadi as ca
import numpy as np
import scipy.sparse as sp

from .node_map import NodeMap, summed_nnz
from .samples import SampleGroup

if TYPE_CHECKING:
    from .structured import StructuredNLP


def vcat(*parts):
    """vertcat that ignores empty parts (0x1 and 1x0 alike; CasADi insists on matching widths)."""
    parts = [ca.vec(q) for q in parts if q.numel() > 0]
    return ca.vertcat(*parts) if parts else ca.MX(0, 1)


def dm_sparse(a: sp.spmatrix) -> ca.DM:
    """A scipy sparse matrix as a CasADi DM of the same sparsity (a constant of the graph)."""
    a = sp.csc_matrix(a)
    a.sort_indices()
    sparsity = ca.Sparsity(a.shape[0], a.shape[1], a.indptr.tolist(), a.indices.tolist())
    if a.nnz and np.all(a.data == 1.0):
        # the 0/1 scatter matrices: a copy of numpy's values costs ~0.15 µs per entry (0.9 s for
        # the quarter vehicle's Hessian scatter), a constant fill almost nothing
        return ca.DM(sparsity, 1.0)
    return ca.DM(sparsity, a.data)


@dataclass(frozen=True)
class NLPGraph:
    """The symbols and expressions of the NLP.

    Symbols: ``z`` (n_z,) the scaled unknowns, ``sigma`` the objective factor, ``lam`` (n_c,)
    the constraint multipliers, ``prm`` (2 len(S),) the proximal term's rho then c (CasADi
    ``nlpsol``'s p; empty without a proximal term). Expressions of them: ``f`` the objective
    (1x1 dense), ``g`` (n_c,) the constraints, ``grad`` (n_z,) the dense objective gradient,
    ``jac_nz`` / ``hess_nz`` the nonzeros of the Jacobian and of the upper triangle of the
    Lagrangian Hessian (the layout's ``jac_sparsity`` / ``hess_sparsity`` order). In a partial
    quasi-Newton mode also ``hess_parts`` [exact node blocks, boundary and data terms] (their
    sum is ``hess_nz``) and ``lag_grad`` [lx (n_x, N), lp (n_p,)] the node Lagrangian's gradient.
    ``fused``: (f, g, grad, jac_nz) again, equal to the above, but from one map of the fused node
    (and data term) functions, so that one evaluation gives all four (the forward pass over the
    nodes computed once).
    """

    z: ca.MX
    sigma: ca.MX
    lam: ca.MX
    prm: ca.MX
    f: ca.MX
    g: ca.MX
    grad: ca.MX
    jac_nz: ca.MX
    hess_nz: ca.MX
    hess_parts: tuple[ca.MX, ca.MX] | None = None
    lag_grad: tuple[ca.MX, ca.MX] | None = None
    fused: tuple[ca.MX, ca.MX, ca.MX, ca.MX] | None = None

    @property
    def first(self) -> tuple[ca.MX, ca.MX, ca.MX, ca.MX]:
        """(f, g, grad, jac_nz) from one evaluation of the fused node functions where the
        graph has them (``fused``), else from the separate values and first derivatives."""
        return self.fused or (self.f, self.g, self.grad, self.jac_nz)

    def functions(self) -> dict[str, tuple[list[ca.MX], list[ca.MX]]]:
        """The callbacks as (inputs, outputs), by the NLP's attribute name: ``fn_f``, ``fn_g``,
        ``fn_grad``, ``fn_jac``, ``fn_hess``, ``fn_fused`` (z -> f, g, grad, jac_nz from one
        evaluation) and, in a partial mode, ``fn_hess_parts``; the outputs dense, as both backends
        want them."""
        z, sigma, lam = self.z, self.sigma, self.lam
        functions: dict[str, tuple[list[ca.MX], list[ca.MX]]] = {}
        f, g, grad, jac_nz = self.first
        functions["fn_fused"] = ([z], [f, ca.densify(g), grad, ca.densify(jac_nz)])
        if self.hess_parts is not None:
            functions["fn_hess_parts"] = ([z, sigma, lam], [ca.densify(h) for h in self.hess_parts])
        functions.update(
            fn_f=([z], [self.f]),
            fn_g=([z], [ca.densify(self.g)]),
            fn_grad=([z], [self.grad]),
            fn_jac=([z], [ca.densify(self.jac_nz)]),
            fn_hess=([z, sigma, lam], [ca.densify(self.hess_nz)]),
        )
        return functions


def build_graph(nlp: StructuredNLP, threads: int, step: Callable[[str], None]) -> NLPGraph:
    """The graph of ``nlp`` (its layout, node functions, per-node constants, sample groups,
    quadratic and proximal terms and Hessian mode), its maps over ``threads`` threads;
    ``step("build")`` between the steps (it may raise to abandon the build)."""
    builder = _GraphBuilder(nlp, threads)
    step("build")
    f, g = builder.values()
    step("build")
    jac_nz, grad = builder.first_derivatives()
    step("build")
    fused = builder.fused()
    hess_nz, hess_parts, lag_grad = builder.hessian(step)
    return NLPGraph(
        z=builder.z,
        sigma=builder.sigma,
        lam=builder.lam,
        prm=builder.prm,
        f=f,
        g=g,
        grad=grad,
        jac_nz=jac_nz,
        hess_nz=hess_nz,
        hess_parts=hess_parts,
        lag_grad=lag_grad,
        fused=fused,
    )


class _GraphBuilder:
    """One build of the graph: the symbols, views of z and the per-node data over the padded
    nodes, then one method per step; the values step also prepares what the later steps share
    (the data terms, the quadratic and proximal terms)."""

    def __init__(self, nlp: StructuredNLP, threads: int) -> None:
        layout = self.layout = nlp.layout
        self.node, self.bnd, self.mode, self.threads = nlp.node, nlp.bnd, nlp.hessian_mode, threads
        self.n_inputs = nlp.dop.n_inputs
        self.sample_groups, self.quadratic, self.proximal = (
            nlp.sample_groups,
            nlp.quadratic,
            nlp.proximal,
        )
        nx, nd, nn, N, coll_node = layout.nx, layout.nd, layout.nn, layout.N, layout.coll_node
        self.z = ca.MX.sym("z", layout.n_z)
        self.sigma = ca.MX.sym("sigma")
        self.lam = ca.MX.sym("lam", layout.n_c)
        X = ca.reshape(self.z[: layout.P0], nx, nn)
        self.P = self.z[layout.P0 :]
        # one segment: the collocation nodes are every node but the initial point, a slice
        consecutive = np.array_equal(coll_node, np.arange(1, nn))
        Xc = X[:, 1:] if consecutive else X[:, coll_node.tolist()]
        self.x0s, self.xfs = X[:nd, 0], X[:nd, layout.last0]
        U = ca.DM(nlp.u_coll.T) if self.n_inputs else ca.DM(0, N)
        T, H, W = (ca.DM(a[None, :]) for a in (nlp.t_coll, nlp.h_coll, nlp.w_coll))
        self.node_map = NodeMap(N, threads, summed_nnz(self._summed_node_outputs()))
        self.data = self.node_map.pad_data([Xc, self.P, U, T, H, W])
        self.prm = ca.MX.sym("prm", 2 * self.proximal.size)

    def _summed_node_outputs(self) -> list[tuple[ca.Function, tuple[int, ...]]]:
        node = self.node
        summed = [(node.values, (2,)), (node.first, (2,))]
        if node.fused is not None:
            summed.append((node.fused, (2, 5)))
        if self.mode == "exact":
            summed.append((node.second, (2,)))
        elif node.lag_grad is not None:
            summed.append((node.lag_grad, (1,)))
        return summed

    # ---- step 1: the objective and the constraints ---------------------------------------------
    def values(self) -> tuple[ca.MX, ca.MX]:
        """(f, g): the node terms, the boundary terms, the data terms, the rate penalty and
        the proximal term; g the node equations (with the constant collocation part D z) then
        the boundary constraints."""
        res, gpath, objL = self.node_map.wrap(self.node.values, [1], [2])(*self.data)
        # the data terms at sample times: objective, gradient and Hessian parts per group
        self.samples = [self._sample_terms(group) for group in self.sample_groups]
        self.Qz = self._rate_penalty_gradient()
        self.proximal_value = self._proximal_term()
        return self._assemble_values(res, gpath, objL, [s["obj"] for s in self.samples])

    def _assemble_values(
        self, res: ca.MX, gpath: ca.MX, objL: ca.MX, objS: list[ca.MX]
    ) -> tuple[ca.MX, ca.MX]:
        """(f, g) from the mapped node values (res (n_x, N), gpath (n_g, N), objL summed) and
        the data terms' summed objectives (one per group), with the boundary, quadratic and
        proximal terms."""
        layout, z = self.layout, self.z
        n_node_rows = layout.N * (layout.nd + layout.ng)
        r, M = self.bnd.values(self.x0s, self.xfs, self.P)
        g_nodes = ca.vec(ca.vertcat(res, gpath))
        D_lin = dm_sparse(layout.collocation[:n_node_rows, :])
        g = vcat(g_nodes + ca.mtimes(D_lin, z), r)
        f = objL + M + sum(objS) if objS else objL + M
        if self.Qz is not None:
            f = f + 0.5 * ca.dot(z, self.Qz)
        if self.proximal_value is not None:
            f = f + self.proximal_value
        return ca.densify(f), g  # f: dense when empty

    def _rate_penalty_gradient(self) -> ca.MX | None:
        """Qz of the constant quadratic ½ zᵀQz (the controls' rate penalty; Q from its upper
        triangle), or None without one."""
        q_rows, q_cols, q_vals = self.quadratic
        if not q_vals.size:
            return None
        n_z = self.layout.n_z
        Q = sp.coo_matrix((q_vals, (q_rows, q_cols)), shape=(n_z, n_z)).tocsc()
        Q = Q + sp.triu(Q, 1).T
        return ca.mtimes(dm_sparse(Q), self.z)

    def _proximal_term(self) -> ca.MX | None:
        """½ Σ_i rho_i (z_{S_i} - c_i)² with (rho, c) the NLP parameters ``prm``, or None without
        one; sets ``rho`` and the term's gradient ``prox_grad`` (None without the term), which
        the later steps share."""
        S = self.proximal
        self.rho, self.prox_grad = None, None
        if not S.size:
            return None
        rho, center = ca.vertsplit(self.prm, [0, S.size, 2 * S.size])
        gap = self.z[S.tolist()] - center
        embed = sp.csc_matrix((np.ones(S.size), (S, np.arange(S.size))), (self.layout.n_z, S.size))
        self.rho = rho
        self.prox_grad = ca.mtimes(dm_sparse(embed), rho * gap)
        return 0.5 * ca.dot(rho, gap * gap)

    def _sample_terms(self, group: SampleGroup) -> dict[str, Any]:
        """One group's data terms mapped over its samples: ``obj`` (summed), ``first``
        [gx (n_local, n_s), gp (summed)] and, unless the Hessian is left to IPOPT, ``second``
        [hxx (nnz, n_s), hxp (nnz, n_s), hpp (summed)], in the layout's source order."""
        fn, nx, n = group.fn, self.layout.nx, group.n
        n_local = nx * (group.m + 1)
        # z-indices of each sample's interval states, sample-major: consecutive from x_i0
        index = group.first_node[None, :] * nx + np.arange(n_local)[:, None]
        Xi = ca.reshape(self.z[index.ravel(order="F").tolist()], n_local, n)
        summed = [(fn.values, (0,)), (fn.first, (1,))]
        if fn.fused is not None:
            summed.append((fn.fused, (0, 2)))
        if fn.second is not None:
            summed.append((fn.second, (2,)))
        smap = NodeMap(n, self.threads, summed_nnz(summed))
        data = smap.pad_columns(
            [
                Xi,
                ca.DM(group.beta.T),
                self.P,
                ca.DM(group.u.T) if self.n_inputs else ca.DM(0, n),
                ca.DM(group.t[None, :]),
                ca.DM(group.data.T),
                ca.DM(group.weights[None, :]),
            ],
            shared=(2,),
            zero=(6,),
        )
        (obj,) = smap.wrap(fn.values, [2], [0])(*data)
        out: dict[str, Any] = {"obj": obj, "first": smap.wrap(fn.first, [2], [1])(*data)}
        if fn.fused is not None:
            out["fused"] = smap.wrap(fn.fused, [2], [0, 2])(*data)
        if fn.second is not None:
            out["second"] = smap.wrap(fn.second, [2, 7], [2])(*data, self.sigma)
        return out

    # ---- step 2: the Jacobian's nonzeros and the objective's gradient --------------------------
    def first_derivatives(self) -> tuple[ca.MX, ca.MX]:
        """(jac_nz, grad): node and boundary Jacobian nonzeros scattered with the constant
        collocation entries added; the dense gradient of every objective term."""
        jnz, gx, gp = self.node_map.wrap(self.node.first, [1], [2])(*self.data)
        return self._assemble_first(jnz, gx, gp, [s["first"] for s in self.samples])

    def _assemble_first(
        self, jnz: ca.MX, gx: ca.MX, gp: ca.MX, sample_first: list[list[ca.MX]]
    ) -> tuple[ca.MX, ca.MX]:
        """(jac_nz, grad) from the mapped node derivatives (jnz (nnz, N), gx (n_x, N), gp
        summed) and the data terms' [gx (n_local, n_s), gp (summed)] per group, with the boundary,
        quadratic and proximal terms."""
        layout = self.layout
        jr_nz, gM = self.bnd.first(self.x0s, self.xfs, self.P)
        jac_nz = ca.mtimes(dm_sparse(layout.jac_scatter), vcat(jnz, jr_nz)) + ca.DM(
            layout.jac_constant
        )
        grad_parts = [gx, gp, gM, *(part for parts in sample_first for part in parts)]
        grad = ca.mtimes(dm_sparse(layout.grad_scatter), vcat(*grad_parts))
        grad = ca.densify(grad if self.Qz is None else grad + self.Qz)
        if self.prox_grad is not None:
            grad = grad + self.prox_grad
        return jac_nz, grad

    def fused(self) -> tuple[ca.MX, ca.MX, ca.MX, ca.MX] | None:
        """(f, g, grad, jac_nz) from one map of the fused node function and one per data-term
        group (None when the functions have no fused form): the same assembly as
        `values` and `first_derivatives`, so the same numbers."""
        if self.node.fused is None or any("fused" not in s for s in self.samples):
            return None
        outs = self.node_map.wrap(self.node.fused, [1], [2, 5])(*self.data)
        res, gpath, objL, jnz, gx, gp = outs
        sample_obj = [s["fused"][0] for s in self.samples]
        sample_first = [s["fused"][1:] for s in self.samples]
        f, g = self._assemble_values(res, gpath, objL, sample_obj)
        jac_nz, grad = self._assemble_first(jnz, gx, gp, sample_first)
        return f, g, grad, jac_nz

    # ---- step 3: the Lagrangian Hessian's nonzeros --------------------------------------------
    def hessian(
        self, step: Callable[[str], None]
    ) -> tuple[ca.MX, tuple[ca.MX, ca.MX] | None, tuple[ca.MX, ca.MX] | None]:
        """(hess_nz, hess_parts, lag_grad) for the Hessian mode (see `NLPGraph`)."""
        layout, lam = self.layout, self.lam
        n_node_rows = layout.N * (layout.nd + layout.ng)
        extra = self._exact_extra_sources()
        lam_nodes = ca.reshape(lam[:n_node_rows], layout.nd + layout.ng, layout.N)
        lag_data = [
            *self.data,
            self.sigma,
            self.node_map.pad_zeros(lam_nodes[: layout.nd, :]),
            self.node_map.pad_zeros(lam_nodes[layout.nd :, :]),
        ]
        step("build")
        hb = self.bnd.second(self.x0s, self.xfs, self.P, self.sigma, lam[n_node_rows:])
        S_H = layout.hess_scatter
        if self.mode == "exact":
            hxx, hxp, hpp = self.node_map.wrap(self.node.second, [1, 6], [2])(*lag_data)
            return ca.mtimes(dm_sparse(S_H), vcat(hxx, hxp, hpp, hb, *extra)), None, None
        if self.mode == "none":
            return ca.DM.zeros(S_H.shape[0], 1), None, None
        return self._partial_hessian(lag_data, hb, extra)

    def _exact_extra_sources(self) -> list[ca.MX]:
        """The Hessian sources that are always exact (their Hessian costs no more than their
        gradient): the data terms' blocks and σ times the quadratic terms' constant entries;
        in the partial quasi-Newton modes they join the boundary part, outside the node
        Lagrangian."""
        hs = [part for s in self.samples for part in s.get("second", ())]
        q_vals, S = self.quadratic[2], self.proximal
        if q_vals.size or S.size:
            hs.append(self.sigma * vcat(ca.DM(q_vals), self.rho if S.size else ca.DM(0, 1)))
        return hs

    def _partial_hessian(
        self, lag_data: list, hb: ca.MX, extra: list[ca.MX]
    ) -> tuple[ca.MX, tuple[ca.MX, ca.MX], tuple[ca.MX, ca.MX]]:
        """The exact node blocks ("xx", and "xp" in mode "partial-pp") and the exact boundary
        part; `collocnode.transcription._nlp.quasi_newton` adds the rest from the node Lagrangian's
        gradient."""
        layout, S_H, wrap = self.layout, self.layout.hess_scatter, self.node_map.wrap
        exact = wrap(self.node.second, [1, 6], [])(*lag_data)
        blocks = ("xx", "xp") if self.mode == "partial-pp" else ("xx",)
        k_exact = layout.hessian_columns(blocks[-1]).stop
        hess_node = ca.mtimes(dm_sparse(S_H[:, :k_exact]), vcat(*exact))
        # the boundary and the samples are the last sources: one exact part
        first_exact = layout.hessian_columns("boundary").start
        hess_b = ca.mtimes(dm_sparse(S_H[:, first_exact:]), vcat(hb, *extra))
        lx, lp = wrap(self.node.lag_grad, [1, 6], [1])(*lag_data)
        return hess_node + hess_b, (hess_node, hess_b), (lx, lp)
