"""The ADMM rounds (scaled form, Boyd et al. 2011 §7.2; module docstring of :mod:`.consensus`),
Nesterov momentum with restart (Goldstein et al. 2014, Alg. 8), and the whole problem's
solution assembled from the blocks at the end.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ...status import SolverStatus
from ...training import TrainingSolution
from ...transcription.mesh import Mesh
from ...transcription.nlp.assembly import NLPSize
from ...transcription.solution import Solution
from .results import ConsensusRound, ConsensusSolution
from .split import Block

# block statuses after which the rounds go on (an inexact block solve is still a step)
_CONTINUE = (SolverStatus.SUCCESS, SolverStatus.ACCEPTABLE, SolverStatus.ITERATION_LIMIT)


def run_rounds(problem: Any, alg: Any, blocks: list[Block], runners: Any) -> ConsensusSolution:
    """The ADMM rounds of :mod:`.consensus` over ``blocks`` solved by ``runners``; the
    :class:`~.consensus.ConsensusSolution`."""

    counts = np.zeros(1 + max(int(b.index.max()) for b in blocks))
    for b in blocks:
        np.add.at(counts, b.index, 1.0)
    rounds: list[ConsensusRound] = []
    status, message, converged, stopped = SolverStatus.ITERATION_LIMIT, "", False, False
    n_params = problem.model.n_params
    if alg.warm_start:
        # round -1: block 0 alone, no pull; every block then starts from its parameters, so
        # that all blocks begin in one basin of the (non-convex) training objective
        t = time.perf_counter()
        start = runners.shared(0)
        res = runners.solve_one(0, np.zeros(start.size), start)
        for k in range(len(blocks)):
            shared = runners.shared(k)
            shared[:n_params] = np.asarray(res["shared"])[:n_params]
            runners.move(k, shared)
        rounds.append(_record(-1, 0.0, [res], t, 0.0, 0.0, 0.0, 0.0))
        if SolverStatus(res["status"]) not in _CONTINUE:
            status = SolverStatus(res["status"])
            message = f"ADMM warm start: block 0 ended {status.value}: {res['message']}"
            stopped = True
    # z⁰: the mean of the blocks' starting values (at the joins their state guesses), u⁰ = 0
    u = [np.zeros(b.index.size) for b in blocks]
    z = _mean(blocks, [runners.shared(k) for k in range(len(blocks))], u, counts)
    rho = float(alg.rho)
    n_copies = sum(b.index.size for b in blocks)
    # Nesterov's extrapolated point (ẑ, û) that the blocks are pulled toward; without
    # acceleration it is the last round's (z, u)
    momentum = _Momentum(alg.restart) if alg.acceleration else None
    z_hat, u_hat = z, u
    for r in range(0 if stopped else alg.max_rounds):
        t = time.perf_counter()
        results = runners.solve(
            [np.full(b.index.size, rho) for b in blocks],
            [z_hat[b.index] - u_hat[k] for k, b in enumerate(blocks)],
        )
        bad = [
            (k, res)
            for k, res in enumerate(results)
            if SolverStatus(res["status"]) not in _CONTINUE
        ]
        x = [np.asarray(res["shared"]) for res in results]
        z_prev = z
        # over-relaxation (Boyd et al. §3.4.3): x̂ = α x + (1 − α) z
        alpha = alg.relaxation
        x_hat = [alpha * x[k] + (1 - alpha) * z_hat[b.index] for k, b in enumerate(blocks)]
        z_new = _mean(blocks, x_hat, u_hat, counts)
        u_prev = u
        u = [u_hat[k] + x_hat[k] - z_new[b.index] for k, b in enumerate(blocks)]
        primal = np.sqrt(sum(np.sum((x[k] - z_new[b.index]) ** 2) for k, b in enumerate(blocks)))
        dual = rho * np.sqrt(sum(np.sum((z_new[b.index] - z_prev[b.index]) ** 2) for b in blocks))
        x_norm = np.sqrt(sum(np.sum(xi**2) for xi in x))
        z_norm = np.sqrt(sum(np.sum(z_new[b.index] ** 2) for b in blocks))
        eps_pri = np.sqrt(n_copies) * alg.eps_abs + alg.eps_rel * max(x_norm, z_norm)
        eps_dual = np.sqrt(n_copies) * alg.eps_abs + alg.eps_rel * rho * np.sqrt(
            sum(np.sum(ui**2) for ui in u)
        )
        z = z_new
        if momentum is None:
            z_hat, u_hat = z, u
        else:
            z_hat, u_hat = momentum.step(rho, blocks, z, z_prev, z_hat, u, u_prev, u_hat)
        rounds.append(_record(r, rho, results, t, primal, dual, eps_pri, eps_dual))
        if bad:
            k, res = bad[0]
            status = SolverStatus(res["status"])
            detail = f": {res['message']}" if res["message"] else ""
            message = f"ADMM round {r}: block {k} ended {status.value}{detail}"
            stopped = True
            break
        if primal <= eps_pri and dual <= eps_dual:
            last_ok = all(SolverStatus(res["status"]).ok for res in results)
            converged = last_ok
            status = SolverStatus.SUCCESS if last_ok else SolverStatus.ITERATION_LIMIT
            if not last_ok:
                message = "ADMM residuals met, but a block's last solve hit its iteration limit"
            stopped = True
            break
        if alg.balance:
            scale = 1.0
            if primal > alg.balance * dual:
                scale = alg.factor
            elif dual > alg.balance * primal:
                scale = 1.0 / alg.factor
            if scale != 1.0:
                rho *= scale
                u = [ui / scale for ui in u]
                z_hat, u_hat = z, u  # a new penalty: the momentum starts again from here
                if momentum is not None:
                    momentum.reset()
    if not stopped and status in _CONTINUE:
        last = rounds[-1]
        message = (
            f"ADMM stopped after max_rounds = {alg.max_rounds}: primal residual "
            f"{last.primal_residual:.3g} (tolerance {last.eps_primal:.3g}), dual "
            f"{last.dual_residual:.3g} (tolerance {last.eps_dual:.3g})"
        )
    solution = _assemble(problem, alg, runners.states(), z, rounds, status, message)
    return ConsensusSolution(solution, rounds, converged, list(runners.build_s), runners.events)


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
    """The whole problem's :class:`TrainingSolution`: the consensus parameters and the blocks'
    node states (windows: joined on the whole mesh, each join taken from the earlier window)."""
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
    last = rounds[-1]
    solution = Solution(
        status=status,
        ipopt_status="ADMM",
        message=message,
        objective=last.objective,
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


def _joined(windows: list[Mesh]) -> Mesh:
    """One mesh of the consecutive ``windows`` (each starts where the last ended)."""
    grid = np.concatenate([windows[0].grid, *(m.grid[1:] for m in windows[1:])])
    return Mesh.from_grid(grid, np.concatenate([m.stages for m in windows]))
