"""The ADMM rounds (scaled form, Boyd et al. 2011 §7.2; module docstring of
`collocnode.strategies._admm.consensus`), Nesterov momentum with restart (Goldstein et al. 2014,
Alg. 8), and the whole problem's solution assembled from the blocks at the end.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._status import SolverStatus
from ...training import TrainingSolution
from ...transcription._mesh import Mesh
from ...transcription._nlp.assembly import NLPSize
from ...transcription._solution import Solution
from .blocks import BlockLost
from .results import ConsensusADMMRecord, ConsensusRound
from .split import Block

# block statuses after which the rounds go on (an inexact block solve is still a step)
_CONTINUE = (SolverStatus.SUCCESS, SolverStatus.ACCEPTABLE, SolverStatus.ITERATION_LIMIT)


def run_rounds(
    problem: Any, alg: Any, blocks: list[Block], runners: Any, deadline: float | None = None
) -> ConsensusADMMRecord:
    """The ADMM rounds of `collocnode.strategies._admm.consensus` over ``blocks`` solved by
    ``runners``; the [`ConsensusADMMRecord`][collocnode.strategies.ConsensusADMMRecord].

    A block lost for good (`BlockLost`: its worker died more often than Dask
    allows) ends the rounds with status ``FAILED`` and a partial result, as SciML returns the
    last iterate with a failure retcode: the consensus of the last complete round (or the
    start), the blocks' last node states (the lost block's: its data's state guess), every
    round so far. Past ``deadline`` (a ``time.perf_counter()`` value) no round begins; the
    rounds end with status ``TIME_LIMIT``."""
    state = _Consensus(alg, blocks, runners)
    try:
        ended = state.warm_start(problem.model.n_params) if alg.warm_start else None
        state.begin()
        for r in range(0 if ended else alg.max_rounds):
            if deadline is not None and time.perf_counter() >= deadline:
                ended = _Ending(
                    SolverStatus.TIME_LIMIT,
                    f"ADMM stopped at the time limit after {r} rounds",
                )
                break
            ended = state.round(r)
            if ended:
                break
    except BlockLost as lost:
        if not hasattr(state, "z"):  # lost before the first consensus: the blocks' start
            state.begin(known=True)
        ended = _Ending(
            SolverStatus.FAILED,
            f"{lost}; the result is the consensus of the last complete round "
            f"({len(state.rounds)} rounds recorded), block {lost.block}'s states its data's guess",
        )
    if ended is None:
        last = state.rounds[-1]
        ended = _Ending(
            SolverStatus.ITERATION_LIMIT,
            f"ADMM stopped after max_rounds = {alg.max_rounds}: primal residual "
            f"{last.primal_residual:.3g} (tolerance {last.eps_primal:.3g}), dual "
            f"{last.dual_residual:.3g} (tolerance {last.eps_dual:.3g})",
        )
    states = [
        s if s is not None else _guessed_states(b, state.z)
        for s, b in zip(runners.states(), blocks, strict=True)
    ]
    solution = _assemble(problem, alg, states, state.z, state.rounds, ended.status, ended.message)
    return ConsensusADMMRecord(
        solution, state.rounds, ended.converged, list(runners.build_s), runners.events
    )


@dataclass(frozen=True)
class _Ending:
    """How the rounds ended: the status, its message, and whether ADMM converged."""

    status: SolverStatus
    message: str
    converged: bool = False


class _Consensus:
    """The iterates of scaled ADMM: the consensus value z, the blocks' scaled multipliers u,
    the point (ẑ, û) the next round pulls toward (Nesterov's extrapolation with acceleration,
    the last (z, u) without), and the penalty ρ."""

    def __init__(self, alg: Any, blocks: list[Block], runners: Any) -> None:
        self.alg, self.blocks, self.runners = alg, blocks, runners
        self.counts = np.zeros(1 + max(int(b.index.max()) for b in blocks))
        for b in blocks:
            np.add.at(self.counts, b.index, 1.0)
        self.n_copies = sum(b.index.size for b in blocks)
        self.rho = float(alg.rho)
        self.momentum = _Momentum(alg.restart) if alg.acceleration else None
        self.rounds: list[ConsensusRound] = []

    def warm_start(self, n_params: int) -> _Ending | None:
        """Round -1: block 0 alone, no pull; every block then starts from its parameters, so
        that all blocks begin in one basin of the (non-convex) training objective. The ending
        where block 0 failed, else None."""
        t = time.perf_counter()
        start = self.runners.shared(0)
        res = self.runners.solve_one(0, np.zeros(start.size), start)
        for k in range(len(self.blocks)):
            shared = self.runners.shared(k)
            shared[:n_params] = np.asarray(res["shared"])[:n_params]
            self.runners.move(k, shared)
        self.rounds.append(_record(-1, 0.0, [res], t, 0.0, 0.0, 0.0, 0.0))
        status = SolverStatus(res["status"])
        if status not in _CONTINUE:
            return _Ending(
                status, f"ADMM warm start: block 0 ended {status.value}: {res['message']}"
            )
        return None

    def begin(self, known: bool = False) -> None:
        """z⁰: the mean of the blocks' starting values (at the joins their state guesses),
        u⁰ = 0; with ``known``, of the values last known here (no remote call)."""
        blocks, runners = self.blocks, self.runners
        shared = runners.last_shared if known else runners.shared
        self.u = [np.zeros(b.index.size) for b in blocks]
        self.z = _mean(blocks, [shared(k) for k in range(len(blocks))], self.u, self.counts)
        self.z_hat, self.u_hat = self.z, self.u

    def round(self, r: int) -> _Ending | None:
        """One round: the blocks' solves, the consensus and multiplier updates, the residuals,
        the penalty's rebalancing; the ending where the round ends ADMM, else None."""
        blocks, alg = self.blocks, self.alg
        t = time.perf_counter()
        results = self.runners.solve(
            [np.full(b.index.size, self.rho) for b in blocks],
            [self.z_hat[b.index] - self.u_hat[k] for k, b in enumerate(blocks)],
        )
        x = [np.asarray(res["shared"]) for res in results]
        z_prev, u_prev = self.z, self.u
        # over-relaxation (Boyd et al. §3.4.3): x̂ = α x + (1 − α) z
        a = alg.relaxation
        x_hat = [a * x[k] + (1 - a) * self.z_hat[b.index] for k, b in enumerate(blocks)]
        self.z = _mean(blocks, x_hat, self.u_hat, self.counts)
        self.u = [self.u_hat[k] + x_hat[k] - self.z[b.index] for k, b in enumerate(blocks)]
        primal, dual, eps_pri, eps_dual = self._residuals(x, z_prev)
        if self.momentum is None:
            self.z_hat, self.u_hat = self.z, self.u
        else:
            self.z_hat, self.u_hat = self.momentum.step(
                self.rho, blocks, self.z, z_prev, self.z_hat, self.u, u_prev, self.u_hat
            )
        self.rounds.append(_record(r, self.rho, results, t, primal, dual, eps_pri, eps_dual))
        bad = [
            (k, res)
            for k, res in enumerate(results)
            if SolverStatus(res["status"]) not in _CONTINUE
        ]
        if bad:
            k, res = bad[0]
            status = SolverStatus(res["status"])
            detail = f": {res['message']}" if res["message"] else ""
            return _Ending(status, f"ADMM round {r}: block {k} ended {status.value}{detail}")
        if primal <= eps_pri and dual <= eps_dual:
            if all(SolverStatus(res["status"]).ok for res in results):
                return _Ending(SolverStatus.SUCCESS, "", converged=True)
            return _Ending(
                SolverStatus.ITERATION_LIMIT,
                "ADMM residuals met, but a block's last solve hit its iteration limit",
            )
        self._rebalance(primal, dual)
        return None

    def _residuals(
        self, x: list[np.ndarray], z_prev: np.ndarray
    ) -> tuple[float, float, float, float]:
        """Primal and dual residuals and their tolerances (Boyd et al. §3.3.1)."""
        blocks, z, alg = self.blocks, self.z, self.alg
        primal = np.sqrt(sum(np.sum((x[k] - z[b.index]) ** 2) for k, b in enumerate(blocks)))
        dual = self.rho * np.sqrt(sum(np.sum((z[b.index] - z_prev[b.index]) ** 2) for b in blocks))
        x_norm = np.sqrt(sum(np.sum(xi**2) for xi in x))
        z_norm = np.sqrt(sum(np.sum(z[b.index] ** 2) for b in blocks))
        root = np.sqrt(self.n_copies) * alg.eps_abs
        eps_pri = root + alg.eps_rel * max(x_norm, z_norm)
        eps_dual = root + alg.eps_rel * self.rho * np.sqrt(sum(np.sum(ui**2) for ui in self.u))
        return float(primal), float(dual), float(eps_pri), float(eps_dual)

    def _rebalance(self, primal: float, dual: float) -> None:
        """ρ scaled by ``factor`` when one residual exceeds the other ``balance`` times (Boyd et
        al. §3.4.1), the scaled multipliers with it; the momentum starts again."""
        alg = self.alg
        if not alg.balance:
            return
        scale = 1.0
        if primal > alg.balance * dual:
            scale = alg.factor
        elif dual > alg.balance * primal:
            scale = 1.0 / alg.factor
        if scale != 1.0:
            self.rho *= scale
            self.u = [ui / scale for ui in self.u]
            self.z_hat, self.u_hat = self.z, self.u
            if self.momentum is not None:
                self.momentum.reset()


class _Momentum:
    """Nesterov momentum with restart for ADMM (Goldstein et al. 2014, Alg. 8), in the
    scaled form: after a round with consensus value z and multipliers u, the combined residual
    c = ρ(|u − û|² + |z − ẑ|²) against the point (ẑ, û) the round was pulled toward decides
    between extrapolating from the last two rounds and restarting from the last one."""

    def __init__(self, eta: float) -> None:
        self.eta = eta
        self.reset()

    def reset(self) -> None:
        self.alpha, self.c_last = 1.0, math.inf

    def step(
        self,
        rho: float,
        blocks: list[Block],
        z: np.ndarray,
        z_prev: np.ndarray,
        z_hat: np.ndarray,
        u: list[np.ndarray],
        u_prev: list[np.ndarray],
        u_hat: list[np.ndarray],
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """The next round's (ẑ, û)."""
        c = rho * sum(
            float(np.sum((u[k] - u_hat[k]) ** 2) + np.sum((z[b.index] - z_hat[b.index]) ** 2))
            for k, b in enumerate(blocks)
        )
        if c < self.eta * self.c_last:
            alpha_next = (1.0 + math.sqrt(1.0 + 4.0 * self.alpha**2)) / 2.0
            w = (self.alpha - 1.0) / alpha_next
            self.alpha, self.c_last = alpha_next, c
            u_next = [ui + w * (ui - up) for ui, up in zip(u, u_prev, strict=True)]
            return z + w * (z - z_prev), u_next
        # restart: no extrapolation this round (Alg. 8 goes back to the round before; this
        # keeps the last round, whose block solves are already paid for)
        self.alpha, self.c_last = 1.0, self.c_last / self.eta
        return z, u


def _record(
    r: int,
    rho: float,
    results: list[dict[str, Any]],
    t_start: float,
    primal: float,
    dual: float,
    eps_pri: float,
    eps_dual: float,
) -> ConsensusRound:
    return ConsensusRound(
        round=r,
        rho=rho,
        primal_residual=float(primal),
        dual_residual=float(dual),
        eps_primal=float(eps_pri),
        eps_dual=float(eps_dual),
        objective=float(sum(res["objective"] for res in results)),
        iterations=[int(res["iterations"]) for res in results],
        block_s=[float(res["seconds"]) for res in results],
        wall_s=time.perf_counter() - t_start,
    )


def _mean(blocks: list[Block], x: list[np.ndarray], u: list[np.ndarray], counts: np.ndarray):
    total = np.zeros(counts.size)
    for k, b in enumerate(blocks):
        np.add.at(total, b.index, x[k] + u[k])
    return total / counts


def _assemble(
    problem: Any,
    alg: Any,
    states: list[dict[str, Any]],
    z: np.ndarray,
    rounds: list[ConsensusRound],
    status: SolverStatus,
    message: str,
) -> TrainingSolution:
    """The whole problem's [`TrainingSolution`][collocnode.TrainingSolution]: the consensus
    parameters and the blocks' node states (windows: joined on the whole mesh, each join taken from
    the earlier window)."""
    n_params = problem.model.n_params
    p = z[:n_params].copy()
    dop = problem.to_dop(p)
    if alg.split == "trajectories":
        meshes = [m for s in states for m in s["meshes"]]
        segment_states = [x for s in states for x in s["segment_states"]]
    else:
        meshes = [_joined([s["meshes"][0] for s in states])]
        parts = [s["segment_states"][0][(1 if k else 0) :] for k, s in enumerate(states)]
        segment_states = [np.vstack(parts)]
    size = NLPSize(*(int(sum(s["size"][i] for s in states)) for i in range(4)))
    solution = Solution(
        status=status,
        ipopt_status="ADMM",
        message=message,
        objective=rounds[-1].objective if rounds else float("nan"),
        iterations=int(sum(sum(r.iterations) for r in rounds)),
        mesh=meshes[0],
        x_nodes=segment_states[0],
        p=p,
        lam_g=np.zeros(0),
        history=[],
        timings={
            "build": float(max(s["build_s"] for s in states)),
            "ipopt": float(sum(max(r.block_s) for r in rounds)),
            "callbacks": 0.0,
            "total": float(max(s["build_s"] for s in states) + sum(r.wall_s for r in rounds)),
        },
        size=size,
        problem=dop,
        meshes=meshes,
        segment_states=segment_states,
    )
    return TrainingSolution(solution, problem)


def _guessed_states(block: Block, z: np.ndarray) -> dict[str, Any]:
    """A lost block's part of the assembled solution: its meshes and, at their nodes, the state
    guess of its problem (its data), in the shape of a block's ``states()``."""
    p = z[: block.problem.model.n_params]
    dop = block.problem.to_dop(p)
    return {
        "segment_states": [dop.state_guess(m.node_times, k) for k, m in enumerate(block.meshes)],
        "meshes": list(block.meshes),
        "size": (0, 0, 0, 0),
        "build_s": 0.0,
    }


def _joined(windows: list[Mesh]) -> Mesh:
    """One mesh of the consecutive ``windows`` (each starts where the last ended)."""
    grid = np.concatenate([windows[0].grid, *(m.grid[1:] for m in windows[1:])])
    return Mesh.from_grid(grid, np.concatenate([m.stages for m in windows]))
