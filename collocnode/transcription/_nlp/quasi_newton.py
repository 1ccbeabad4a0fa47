"""Partial quasi-Newton Lagrangian Hessians (seed paper §2.5.4).

The Hessian of the collocation NLP's Lagrangian has three kinds of blocks: per-node state-state
blocks (tiny, cheap), a dense node-by-parameter border H_xp and the parameter-parameter block
H_pp, which is summed over all nodes and costs n_p second-derivative sweeps per node. For wide
networks H_pp dominates the Hessian's cost (and H_xp, at n_x sweeps per node, a little of it).
Here the cheap blocks stay exact and only the expensive ones are learned from gradient
differences, as the paper proposes:

* ``blocks="pp"``: H_xx and H_xp exact; H_pp by a symmetric update from the secant pair
  (s_p, r_p), r_p = y_p − H_px s_x.
* ``blocks="xp+pp"``: H_xx exact; H_xp by a general rank-one (Broyden) update of each of its rows
  restricted to the row's structural pattern (Schubert's sparse update), then H_pp as above
  with r_p = y_p − C s_x. Together they satisfy the full secant equation B s = y.

y is the change of the gradient of the node Lagrangian between consecutive iterates at the new
multipliers (the boundary terms and the linear collocation part are handled exactly and cancel).
H_pp is kept dense over each group of structurally coupled parameters (for instance one group
per network when every state has its own network): the true Hessian is block diagonal over
those groups, so each group gets its own secant pair and update (a partitioned update).
"""

from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np

from .hessian import HESSIAN_NAMES, PartialQuasiNewton, hessian_from_name
from .structured import StructuredNLP

# the Hessian choice's vocabulary lives in .hessian; these names are kept importable from here
__all__ = [
    "HESSIAN_NAMES",
    "HessianCallback",
    "PartialQuasiNewton",
    "PartialQuasiNewtonHessian",
    "hessian_from_name",
]


class PartialQuasiNewtonHessian:
    """Stateful Hessian evaluator: ``(z, sigma, lam) -> nonzeros`` in ``nlp.layout.hess_sparsity``
    order. One instance per solve; IPOPT calls it once per iteration at the new iterate."""

    def __init__(self, nlp: StructuredNLP, options: PartialQuasiNewton) -> None:
        if nlp.hessian_mode != options.nlp_mode:
            raise ValueError(
                f"the NLP was built with hessian={nlp.hessian_mode!r}, "
                f"{options!r} needs {options.nlp_mode!r}"
            )
        self.nlp, self.opts = nlp, options
        layout = nlp.layout
        self.nnz = layout.hess_sparsity.nnz()
        rows, cols = nlp.hessian_structure()
        self._rows, self._cols = rows, cols
        self._offdiag = rows != cols
        # state z-index and parameter index of every x-p entry, node-major like its source
        a, b = nlp.node.hxp
        col_x = layout.coll_node * layout.nx
        self._xp_pos = layout.hessian_positions("xp")
        self._xp_row = (col_x[None, :] + a[:, None]).ravel(order="F")
        self._xp_col = np.repeat(b[:, None], layout.N, 1).ravel(order="F")
        self._pp_pos = layout.hessian_positions("pp")
        self._coll_idx = (col_x[None, :] + np.arange(layout.nx)[:, None]).ravel(order="F")
        self.groups = layout.pp_blocks
        # layout.pp_pattern lists each group's upper triangle in this order
        self._triu = [np.triu_indices(g.size) for g in self.groups]
        scale = options.initial_scale or 1.0
        self.B = [scale * np.eye(g.size) for g in self.groups]
        self._scaled = options.initial_scale is not None
        self.C = np.zeros(self._xp_pos.size) if options.blocks == "xp+pp" else None
        self.z_prev: np.ndarray | None = None
        self.n_updates = 0
        self.n_skipped = 0

    # ---- evaluation ------------------------------------------------------------------------
    def __call__(self, z: np.ndarray, sigma: float, lam: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=float).ravel()
        lam = np.asarray(lam, dtype=float).ravel()
        node, bnd = (np.asarray(o).ravel() for o in self.nlp.fn_hess_parts(z, sigma, lam))
        if self.z_prev is not None and not np.array_equal(z, self.z_prev):
            self._update(z, sigma, lam, node)
        self.z_prev = z.copy()
        out = node + bnd
        # positions are distinct within each set, so fancy-index addition is safe
        if self.C is not None:
            out[self._xp_pos] += self.C
        if self.groups:
            blocks = [B[i] for B, i in zip(self.B, self._triu, strict=True)]
            out[self._pp_pos] += np.concatenate(blocks)
        return out

    def _lag_grad(self, z: np.ndarray, sigma: float, lam: np.ndarray) -> np.ndarray:
        lx, lp = self.nlp.fn_lag_grad(z, sigma, lam)
        g = np.zeros(self.nlp.layout.n_z)
        g[self._coll_idx] = np.asarray(lx).ravel(order="F")
        g[self.nlp.layout.P0 :] = np.asarray(lp).ravel()
        return g

    def _sym_matvec(self, values: np.ndarray, s: np.ndarray) -> np.ndarray:
        """(U + Uᵀ − diag U) s for the upper-triangle nonzeros ``values``."""
        r, c, off = self._rows, self._cols, self._offdiag
        out = np.bincount(r, values * s[c], minlength=s.size)
        out += np.bincount(c[off], values[off] * s[r[off]], minlength=s.size)
        return out

    # ---- the secant update -----------------------------------------------------------------
    def _update(self, z: np.ndarray, sigma: float, lam: np.ndarray, node: np.ndarray) -> None:
        P0 = self.nlp.layout.P0
        s = z - self.z_prev
        y = self._lag_grad(z, sigma, lam) - self._lag_grad(self.z_prev, sigma, lam)
        r = y - self._sym_matvec(node, s)  # what the approximated blocks must explain
        s_p, r_p = s[P0:], r[P0:]
        if self.C is not None:
            sp_e = s_p[self._xp_col]
            # Schubert: each row of H_xp moves along s_p restricted to the row's pattern
            resid = r - np.bincount(self._xp_row, self.C * sp_e, minlength=s.size)
            denom = np.bincount(self._xp_row, sp_e**2, minlength=s.size)
            step = resid / np.where(denom > 0, denom, np.inf)  # rows with s_p = 0 stay
            self.C += step[self._xp_row] * sp_e
            r_p = r_p - np.bincount(self._xp_col, self.C * s[self._xp_row], minlength=s_p.size)
        for k, g in enumerate(self.groups):
            sg, rg = s_p[g], r_p[g]
            if not np.any(sg):
                continue
            if not self._scaled:
                sr = float(sg @ rg)
                gamma = abs(float(rg @ rg) / sr) if sr != 0 else 1.0
                self.B[k] = np.clip(gamma, 1e-8, 1e8) * np.eye(g.size)
            self.B[k] = (self._sr1 if self.opts.update == "sr1" else self._bfgs)(self.B[k], sg, rg)
        self._scaled = True

    def _sr1(self, B: np.ndarray, s: np.ndarray, r: np.ndarray) -> np.ndarray:
        u = r - B @ s
        if not np.any(u):  # the secant equation holds already
            return B
        den = float(u @ s)
        if abs(den) <= self.opts.skip_tol * np.linalg.norm(u) * np.linalg.norm(s):
            self.n_skipped += 1
            return B
        self.n_updates += 1
        return B + np.outer(u, u) / den

    def _bfgs(self, B: np.ndarray, s: np.ndarray, r: np.ndarray) -> np.ndarray:
        Bs = B @ s
        sBs = float(s @ Bs)
        if sBs <= 0:
            self.n_skipped += 1
            return B
        sr = float(s @ r)
        if sr < 0.2 * sBs:  # Powell damping keeps B positive definite
            theta = 0.8 * sBs / (sBs - sr)
            r = theta * r + (1 - theta) * Bs
            sr = float(s @ r)
        self.n_updates += 1
        return B + np.outer(r, r) / sr - np.outer(Bs, Bs) / sBs


class HessianCallback(ca.Callback):
    """A stateful Python Hessian as the ``hess_lag`` Function of CasADi's ``nlpsol``."""

    def __init__(self, nlp: StructuredNLP, evaluate: Any) -> None:
        ca.Callback.__init__(self)
        self.nlp, self.evaluate = nlp, evaluate
        self.construct("nlp_hess_l", {})

    def get_n_in(self) -> int:
        return 4

    def get_n_out(self) -> int:
        return 1

    def get_name_in(self, i: int) -> str:
        return ("x", "p", "lam_f", "lam_g")[i]

    def get_name_out(self, i: int) -> str:
        return "triu_hess_gamma_x_x"

    def get_sparsity_in(self, i: int) -> ca.Sparsity:
        layout = self.nlp.layout
        return ca.Sparsity.dense((layout.n_z, self.nlp.prm_values.size, 1, layout.n_c)[i], 1)

    def get_sparsity_out(self, i: int) -> ca.Sparsity:
        return self.nlp.layout.hess_sparsity

    def eval(self, arg: list[Any]) -> list[Any]:
        z = np.asarray(arg[0]).ravel()
        values = self.evaluate(z, float(arg[2]), np.asarray(arg[3]).ravel())
        return [ca.DM(self.nlp.layout.hess_sparsity, values)]
