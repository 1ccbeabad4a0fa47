"""The bounds of the structured NLP's unknowns and constraints (scaled units)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._mesh import Mesh
from .._problem import DynamicOptimizationProblem
from .assembly import NLPLayout


class NLPBounds(NamedTuple):
    """``lbz``, ``ubz`` (n_z,): bounds of the scaled unknowns; ``lbg``, ``ubg`` (n_c,): bounds
    of the constraints (the node equations, path constraints, boundary constraints)."""

    lbz: np.ndarray
    ubz: np.ndarray
    lbg: np.ndarray
    ubg: np.ndarray


def nlp_bounds(dop: DynamicOptimizationProblem, layout: NLPLayout, meshes: list[Mesh]) -> NLPBounds:
    """The problem's bounds on the layout: node unknowns divided by their nominal values, the
    parameters (and a free final time) as they are; a segment's given initial state and the
    other unknowns of its initial point fixed; the dynamics and algebraic equations equal to
    zero, the path and boundary constraints between their bounds."""
    lbz, ubz = _unknown_bounds(dop, layout, meshes)
    lbg, ubg = _constraint_bounds(dop, layout)
    return NLPBounds(lbz, ubz, lbg, ubg)


def _unknown_bounds(
    dop: DynamicOptimizationProblem, layout: NLPLayout, meshes: list[Mesh]
) -> tuple[np.ndarray, np.ndarray]:
    nx, nd, nn = layout.nx, layout.nd, layout.nn
    nom = dop.node_vector("nominal")
    p_lb, p_ub = dop.p_lb, dop.p_ub
    if dop.free_final_time:
        p_lb, p_ub = np.append(p_lb, dop.tf_bounds[0]), np.append(p_ub, dop.tf_bounds[1])
    lbz = np.concatenate([np.tile(dop.node_vector("lb") / nom, nn), p_lb])
    ubz = np.concatenate([np.tile(dop.node_vector("ub") / nom, nn), p_ub])
    for seg, n0, mesh in zip(dop.all_segments(), layout.node_start, meshes, strict=False):
        i0 = int(n0) * nx
        if seg.x0 is not None:  # NaN entries of x0 stay free
            fixed = np.flatnonzero(np.isfinite(seg.x0))
            lbz[i0 + fixed] = ubz[i0 + fixed] = seg.x0[fixed] / nom[fixed]
        if nx > nd:
            # a trajectory's initial point is no collocation node: its algebraic states and
            # controls appear in no function, so they are fixed (IPOPT drops fixed unknowns)
            extra = dop.node_guess(mesh.node_times[:1])[0] / nom[nd:]
            lbz[i0 + nd : i0 + nx] = ubz[i0 + nd : i0 + nx] = extra
    return lbz, ubz


def _constraint_bounds(
    dop: DynamicOptimizationProblem, layout: NLPLayout
) -> tuple[np.ndarray, np.ndarray]:
    nd, N, ng, nr = layout.nd, layout.N, layout.ng, layout.nr
    g_lb = np.zeros((N, nd + ng))
    g_ub = np.zeros((N, nd + ng))
    if dop.path:
        g_lb[:, nd + dop.n_algebraic :] = dop.path.lb
        g_ub[:, nd + dop.n_algebraic :] = dop.path.ub
    lbg = np.concatenate([g_lb.ravel(), dop.boundary.lb if nr else []])
    ubg = np.concatenate([g_ub.ravel(), dop.boundary.ub if nr else []])
    return lbg, ubg
