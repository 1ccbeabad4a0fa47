"""The blocks of a training problem for consensus ADMM: groups of whole trajectories, or time
windows of one trajectory cut at mesh-interval boundaries (module docstring of
`collocnode.strategies._admm.consensus`).

Each block is a part of the problem (``TrainingProblem.subset`` / ``window``: the whole
problem's scaling, so that the blocks' NLP units agree) with the weight penalty divided by K, so
that the blocks' objectives add up to the whole problem's at consensus. ``local`` says where a
block's shared unknowns sit among its NLP's unknowns, ``index`` which global unknowns (the
parameters, then one state per join) they are copies of.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...algorithm import leaf_of
from ...transcription._mesh import Mesh


@dataclass(frozen=True)
class Block:
    """One block: its training problem (parameters guessed at the common start), its meshes,
    where its shared unknowns sit in its NLP (``local``) and which global unknowns they copy
    (``index``); for a window, whether its first and last node states are shared."""

    problem: Any
    meshes: list[Mesh]
    local: np.ndarray
    index: np.ndarray
    shares_start: bool = False
    shares_end: bool = False


def check_split(problem: Any, alg: Any) -> None:
    """One ValueError, before any work, when ``alg``'s split does not fit ``problem``."""
    k = alg.blocks
    fitted = problem.layout.fitted
    if fitted:
        # the blocks' NLPs would hold them beside the shared parameters, and the rounds
        # combine the shared ones only
        raise ValueError(
            f"ConsensusADMM does not fit per-trajectory parameters ({', '.join(fitted)}); "
            "solve the problem whole (RadauIIA) or give their values in the data"
        )
    if alg.split == "trajectories":
        n = problem.n_trajectories
        if k > n:
            raise ValueError(
                f"blocks = {k} is more than the problem's {n} trajectories (split='trajectories')"
            )
        return
    if problem.n_trajectories != 1:
        raise ValueError(
            f"split='windows' cuts one trajectory, the problem has {problem.n_trajectories}; "
            "use split='trajectories'"
        )
    mesh = leaf_of(alg.inner).meshes_for(problem)[0]
    if k > mesh.n_intervals:
        raise ValueError(
            f"blocks = {k} windows need at least one collocation interval each, the mesh has "
            f"{mesh.n_intervals}"
        )


def split(problem: Any, alg: Any, p0: np.ndarray) -> list[Block]:
    """The blocks of ``problem`` by ``alg.split``, every block's parameters guessed at ``p0``."""
    if alg.split == "trajectories":
        return _trajectories(problem, alg, p0)
    return _windows(problem, alg, p0)


def _part(problem: Any, part: Any, k_blocks: int, p0: np.ndarray) -> Any:
    return replace(part, regularization=problem.lam / k_blocks, params_guess=p0)


def _trajectories(problem: Any, alg: Any, p0: np.ndarray) -> list[Block]:
    n_params, nx = problem.model.n_params, problem.model.n_states
    leaf = leaf_of(alg.inner)
    out = []
    for rows in np.array_split(np.arange(problem.n_trajectories), alg.blocks):
        block = _part(problem, problem.subset(rows.tolist()), alg.blocks, p0)
        meshes = leaf.meshes_for(block)
        n_nodes = sum(m.n_nodes for m in meshes)
        local = n_nodes * nx + np.arange(n_params)
        out.append(Block(block, meshes, local, np.arange(n_params)))
    return out


def _windows(problem: Any, alg: Any, p0: np.ndarray) -> list[Block]:
    k, nx = alg.blocks, problem.model.n_states
    n_params = problem.model.n_params
    mesh = leaf_of(alg.inner).meshes_for(problem)[0]
    cuts = [int(c[0]) for c in np.array_split(np.arange(mesh.n_intervals), k)] + [mesh.n_intervals]
    out = []
    for j in range(k):
        a, b = cuts[j], cuts[j + 1]
        window = Mesh.from_grid(mesh.grid[a : b + 1], mesh.stages[a:b])
        block = _part(problem, problem.window(window.t0, window.tf), k, p0)
        n_nodes = window.n_nodes
        local = [n_nodes * nx + np.arange(n_params)]
        index = [np.arange(n_params)]
        if j > 0:  # the start of this window is join j - 1
            local.append(np.arange(nx))
            index.append(n_params + (j - 1) * nx + np.arange(nx))
        if j < k - 1:  # its end is join j
            local.append((n_nodes - 1) * nx + np.arange(nx))
            index.append(n_params + j * nx + np.arange(nx))
        out.append(
            Block(
                block,
                [window],
                np.concatenate(local),
                np.concatenate(index),
                shares_start=j > 0,
                shares_end=j < k - 1,
            )
        )
    return out
