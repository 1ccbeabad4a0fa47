"""A dynamic optimization problem transcribed into one structured NLP (paper eq. 12).

Unknowns ``z = [v_00, v_01, ..., v_{n m_n}, p]``: per mesh node (node-major, the initial point
first) its unknowns ``v = [x, z, u_c]`` (states, algebraic states, controls; see
`collocnode.transcription._variables`), followed by the time-invariant parameters (and the final
time when it is free).

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
#2454, #1400), so the derivatives are never discovered globally. The modules of this package
share the work: `collocnode.transcription._nlp.node_functions` builds one symbolic function per node
type with its local Jacobian and Hessian nonzeros; `collocnode.transcription._nlp.samples` and
`collocnode.transcription._nlp.quadratic` place the data terms and the quadratic terms on the mesh;
`collocnode.transcription._nlp.assembly` computes the global sparsity and the scatter of node
nonzeros into it once in numpy (`NLPLayout`); `collocnode.transcription._nlp.graph` evaluates the
node functions over all nodes with ``Function.map`` (`collocnode.transcription._nlp.node_map`: the
p-p block with a reduction, so the sum over nodes happens inside CasADi) and scatters the results
with constant sparse matrices; `collocnode.transcription._nlp.bounds` gives the bounds. This module
puts them together into the CasADi Functions that both IPOPT backends call.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from ...tools._threads import available_threads
from .._mesh import Mesh
from .._problem import DynamicOptimizationProblem
from .assembly import NLPLayout, NLPSize, NodePatterns, SamplePatterns
from .bounds import nlp_bounds
from .graph import NLPGraph, build_graph
from .hessian import nlp_mode
from .node_functions import (
    BoundaryFunctions,
    NodeFunctions,
    SampleFunctions,
    build_boundary_functions,
    build_node_functions,
    build_sample_functions,
)
from .quadratic import proximal_indices, rate_penalty_terms
from .samples import place_samples

if TYPE_CHECKING:
    from .jit import Jit

__all__ = ["NLPSize", "StructuredNLP"]


#: CasADi names of the NLP's Functions (attribute -> name)
_FUNCTION_NAMES = {
    "fn_f": "f",
    "fn_g": "g",
    "fn_grad": "grad",
    "fn_jac": "jac_nz",
    "fn_hess": "hess_nz",
    "fn_hess_parts": "hess_parts",
    "fn_fused": "fused",
}


#: `StructuredNLP`'s estimate of what compiling its node functions costs and saves (``jit="auto"``)
NODE_SECONDS_SAVED = 3.0e-5
NODE_COMPILE_SECONDS = 2.0


class StructuredNLP:
    """The transcribed NLP: bounds, initial guess, and CasADi Functions for every IPOPT callback.

    The same Functions serve both IPOPT backends: CasADi's ``nlpsol`` (wrapped with CasADi's
    naming) and cyipopt (called with numpy arrays).

    Args:
        dop: the problem.
        mesh: the collocation mesh, or one mesh per segment of a multi-trajectory problem.
        jit: compile the node functions to C (cached on disk, see
            `collocnode.transcription._nlp.jit`): True, False, or "auto" (where it pays: the
            cached library, else compiled now for a large NLP, else compiled in the background
            for later runs).
        threads: worker threads for the map over nodes (default:
            `collocnode.tools._threads.available_threads`).
        hessian: which Hessian blocks are computed exactly: a Hessian choice of
            `collocnode.transcription._nlp.hessian` ("exact", "limited-memory", a
            ``PartialQuasiNewton``) or an NLP mode ("partial-pp" / "partial-xp-pp" leave the p-p
            (and x-p) blocks to a quasi-Newton update, see
            `collocnode.transcription._nlp.quasi_newton`, and ``fn_hess`` then gives only the exact
            part; "none" leaves the whole Hessian to IPOPT's limited-memory approximation).
        checkpoint: called with the phase ("build" or "compile") at every step of the build; it
            may raise to abandon the build (see `collocnode.transcription._collocation`, which
            builds in a worker thread so that Ctrl-C needs not wait for a long CasADi call).
        proximal: indices S of unknowns (into z, scaled units) in a proximal term
            ``½ Σ_i rho_i (z_{S_i} − c_i)²`` whose rho and c are the NLP's parameters
            (``graph.prm``, CasADi ``nlpsol``'s p): `set_proximal` sets their values
            (initially 0) without a rebuild. Used by consensus ADMM
            (`collocnode.transcription._proximal`).

    Attributes: ``layout`` (`NLPLayout`): the sizes and index maps of the
    unknowns, constraints and derivative nonzeros (``layout.n_z``, ``layout.P0``,
    ``layout.jac_sparsity``, ``layout.size``, ...); per collocation node ``t_coll``, ``h_coll``,
    ``w_coll`` (N,) and ``u_coll`` (N, n_u); the data terms at sample times as
    ``sample_groups`` (`SampleGroup`); ``graph`` (`NLPGraph`): the
    symbols and expressions; the Functions ``fn_f``, ``fn_g``, ``fn_grad``, ``fn_jac``
    (Jacobian nonzeros), ``fn_hess`` (Hessian nonzeros, of ``(z, sigma, lam)``), ``fn_fused``
    (z -> f, g, grad, Jacobian nonzeros: one pass over the nodes for all four); bounds
    ``lbz``, ``ubz``, ``lbg``, ``ubg``.
    """

    def __init__(
        self,
        dop: DynamicOptimizationProblem,
        mesh: Mesh | list[Mesh],
        jit: Jit = False,
        threads: int | None = None,
        hessian: object = "exact",
        checkpoint: Callable[[str], None] | None = None,
        proximal: np.ndarray | None = None,
    ) -> None:
        step = checkpoint or (lambda phase: None)
        step("build")
        self.hessian_mode = nlp_mode(hessian)
        segments = dop.all_segments()
        meshes = [mesh] if isinstance(mesh, Mesh) else list(mesh)
        if len(meshes) != len(segments):
            raise ValueError(f"got {len(meshes)} meshes for {len(segments)} segments")
        self.dop, self.meshes, self.mesh = dop, meshes, meshes[0]

        node_start = np.cumsum([0] + [m.n_nodes for m in meshes])
        n_z = int(node_start[-1]) * dop.node_width + dop.n_nlp_params
        self.proximal = proximal_indices(proximal, n_z)
        self.quadratic = rate_penalty_terms(dop, meshes, node_start)
        self.sample_groups = place_samples(dop, meshes, node_start)
        nodes = sum(int(np.size(m.collocation_index)) for m in meshes)
        self.node, self.bnd, sample_fns = self._functions(
            dop, self.hessian_mode, jit, step, [(g.m, g.fixed) for g in self.sample_groups], nodes
        )
        for g, fn in zip(self.sample_groups, sample_fns, strict=True):
            g.fn = fn
        step("build")
        self.layout = self._layout(meshes)

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
        self.graph = build_graph(self, threads or available_threads(), step)
        self._set_functions(self.graph)
        step("build")
        self.lbz, self.ubz, self.lbg, self.ubg = nlp_bounds(dop, self.layout, meshes)

    @staticmethod
    def _functions(
        dop: DynamicOptimizationProblem,
        mode: str,
        jit: Jit,
        step: Callable[[str], None],
        sample_groups: list[tuple[int, dict[int, float]]],
        nodes: int = 0,
    ) -> tuple[NodeFunctions, BoundaryFunctions, list[SampleFunctions]]:
        node = build_node_functions(dop, mode)
        step("build")
        bnd = build_boundary_functions(dop)
        samples = [
            build_sample_functions(
                dop, m, second=mode != "none", fixed=fixed, name=f"_g{k}" if fixed else ""
            )
            for k, (m, fixed) in enumerate(sample_groups)
        ]
        if jit:
            step("compile")
            from .jit import compile_derivatives, pays

            # the estimate's constants, measured on the Van der Pol default (2,500 nodes, one
            # core): compiled node derivatives saved 3.0e-5 s per node and iteration, the
            # compilation took 2.0 s; the code's size scales both alike
            worth = pays(nodes, NODE_SECONDS_SAVED, NODE_COMPILE_SECONDS)
            node, bnd, samples = compile_derivatives(node, bnd, samples, jit, worth)
        return node, bnd, samples

    def _layout(self, meshes: list[Mesh]) -> NLPLayout:
        """Where the unknowns, constraints and derivative nonzeros live, from the local patterns
        of the node, boundary and sample functions."""
        dop, node, bnd = self.dop, self.node, self.bnd
        width = dop.node_width
        return NLPLayout(
            width,
            dop.n_nlp_params,
            dop.n_node_constraints,
            dop.boundary.n if dop.boundary else 0,
            meshes,
            NodePatterns(node.jac, node.hxx, node.hxp, node.hpp, bnd.jac, bnd.hess),
            exact_pp=self.hessian_mode == "exact",
            samples=tuple(
                SamplePatterns(
                    g.first_node * width, width * (g.m + 1), g.fn.hxx, g.fn.hxp, g.fn.hpp
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

    def _set_functions(self, graph: NLPGraph) -> None:
        """The callbacks as CasADi Functions: ``fn_f``, ``fn_g``, ... of (z, sigma, lam); with a
        proximal term, through Functions of (z, ..., prm) evaluated at the values that
        `set_proximal` sets."""
        functions = graph.functions()
        if graph.lag_grad is not None:
            self.fn_lag_grad = ca.Function(
                "lag_grad", [graph.z, graph.sigma, graph.lam], list(graph.lag_grad)
            )
        self.prm_values = np.zeros(0)
        if self.proximal.size:
            self._with_prm = {
                name: ca.Function(_FUNCTION_NAMES[name], [*ins, graph.prm], outs)
                for name, (ins, outs) in functions.items()
            }
            self.set_proximal(np.zeros(self.proximal.size), np.zeros(self.proximal.size))
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
        if x_nodes.shape[1] == self.layout.nd < self.layout.nx:
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
        layout = self.layout
        return z[: layout.P0].reshape(layout.nn, layout.nx) * self.dop.node_vector("nominal")

    def split(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Physical node states (all segments' nodes, n_states) and parameters (n_params) from
        z (without a free final time: `final_time`)."""
        z = np.asarray(z, dtype=float).ravel()
        P0 = self.layout.P0
        p = z[P0 : P0 + self.dop.n_params]
        return self.node_unknowns(z)[:, : self.layout.nd], p

    def final_time(self, z: np.ndarray) -> float:
        """The final time at z: the free one, or ``tspan[1]``."""
        if not self.dop.free_final_time:
            return float(self.dop.tspan[1])
        return float(np.asarray(z, dtype=float).ravel()[self.layout.P0 + self.dop.n_params])

    def segment_states(self, z: np.ndarray) -> list[np.ndarray]:
        """Physical node states of each segment, [(n_nodes_s, n_states), ...]."""
        X, _ = self.split(z)
        starts = self.layout.node_start
        return [X[a:b] for a, b in pairwise(starts)]

    def segment_unknowns(self, z: np.ndarray) -> list[np.ndarray]:
        """All physical node unknowns of each segment, [(n_nodes_s, node_width), ...]."""
        V = self.node_unknowns(z)
        starts = self.layout.node_start
        return [V[a:b] for a, b in pairwise(starts)]

    def casadi_callbacks(self, fused: bool = True) -> dict[str, ca.Function]:
        """Custom callbacks for ``nlpsol`` with CasADi's naming conventions: ``grad_f`` (f and
        its gradient), ``jac_g`` (g and its Jacobian) and ``hess_lag``. ``fused``: ``grad_f``
        and ``jac_g`` each evaluate one map of the fused node functions; else each evaluates the
        value map and the derivative map (which computes the forward pass again)."""
        graph, layout = self.graph, self.layout
        z, sigma, lam, p = graph.z, graph.sigma, graph.lam, graph.prm
        if fused:
            f, g, grad, jac_nz = graph.first
        else:
            f, g, grad, jac_nz = graph.f, graph.g, graph.grad, graph.jac_nz
        grad_f = ca.Function("nlp_grad_f", [z, p], [f, grad], ["x", "p"], ["f", "grad_f_x"])
        jac_g = ca.Function(
            "nlp_jac_g",
            [z, p],
            [g, ca.MX(layout.jac_sparsity, jac_nz)],
            ["x", "p"],
            ["g", "jac_g_x"],
        )
        hess_lag = ca.Function(
            "nlp_hess_l",
            [z, p, sigma, lam],
            [ca.MX(layout.hess_sparsity, graph.hess_nz)],
            ["x", "p", "lam_f", "lam_g"],
            ["triu_hess_gamma_x_x"],
        )
        return {"grad_f": grad_f, "jac_g": jac_g, "hess_lag": hess_lag}

    def jacobian_structure(self) -> tuple[np.ndarray, np.ndarray]:
        rows, cols = self.layout.jac_sparsity.get_triplet()
        return np.asarray(rows), np.asarray(cols)

    def hessian_structure(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols) of the upper triangle in CasADi order (cyipopt wants the lower one:
        swap them)."""
        rows, cols = self.layout.hess_sparsity.get_triplet()
        return np.asarray(rows), np.asarray(cols)

    def node_values(self, z: np.ndarray) -> dict[str, np.ndarray]:
        """Per-collocation-node dynamics residual parts (n_x, N), path values (n_g, N) and
        Lagrange terms (1, N) at z."""
        layout = self.layout
        z = np.asarray(z, dtype=float).ravel()
        Xc = z[: layout.P0].reshape(layout.nn, layout.nx)[layout.coll_node].T
        p = z[layout.P0 :]
        U = self.u_coll.T if self.dop.n_inputs else np.zeros((0, layout.N))
        values = self.node.values.map(layout.N) if layout.N > 1 else self.node.values
        out = values(Xc, p, U, self.t_coll[None, :], self.h_coll[None, :], self.w_coll[None, :])
        res, g, obj = (np.asarray(o) for o in out)
        return {"res": res, "g": g, "obj": obj}

    def node_derivatives(self, z: np.ndarray) -> dict[str, np.ndarray]:
        """Per-collocation-node first derivatives at z: the nonzeros of the Jacobian of the
        dynamics residual parts and node constraints, (nnz, N), at the local (row, column)
        ``self.node.jac``; the Lagrange term's gradient with respect to the node unknowns,
        (node_width, N), and to the parameters, (n_p, N)."""
        layout = self.layout
        z = np.asarray(z, dtype=float).ravel()
        Xc = z[: layout.P0].reshape(layout.nn, layout.nx)[layout.coll_node].T
        p = z[layout.P0 :]
        U = self.u_coll.T if self.dop.n_inputs else np.zeros((0, layout.N))
        first = self.node.first.map(layout.N) if layout.N > 1 else self.node.first
        out = first(Xc, p, U, self.t_coll[None, :], self.h_coll[None, :], self.w_coll[None, :])
        jac, gx, gp = (np.asarray(o) for o in out)
        return {"jac": jac, "gx": gx, "gp": gp}
