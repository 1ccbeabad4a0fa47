"""The objective's terms that are quadratic in the NLP's unknowns: the controls' rate penalty (a
constant ½ zᵀQz) and the unknowns of a proximal term ½ Σ_i rho_i (z_{S_i} − c_i)² (consensus
ADMM, `collocnode.transcription._proximal`). Their Hessians are constant (σQ, σ rho) and always
exact.
"""

from __future__ import annotations

import numpy as np

from .._mesh import Mesh
from .._problem import DynamicOptimizationProblem


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
