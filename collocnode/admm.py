"""Consensus ADMM training: one training problem split into blocks, each an NLP of its own.

A training problem's data is split into K blocks (Langenkamp et al. §2.5.3; Boyd et al. 2011
§7.2, general form consensus):

- ``split="trajectories"``: groups of whole trajectories; the blocks share the parameters.
- ``split="windows"``: one trajectory cut at mesh-interval boundaries into K time windows; the
  blocks share the parameters and, at each join, the states there (the end of window k and the
  start of window k + 1 are copies of one global state).

Each round (scaled form, one penalty rho for every shared unknown):

    x_k ← argmin f_k(x_k) + rho/2 |x_k − z_k + u_k|²     (the block NLPs, warm-started)
    z   ← the mean over copies of x_k + u_k               (consensus, central and cheap)
    u_k ← u_k + x_k − z_k                                 (scaled multipliers)

f_k is the block's training objective with the weight penalty λ/K (so Σ_k f_k is the whole
problem's objective at consensus). The block NLPs are built once, rho and z_k − u_k enter as NLP
parameters (:mod:`.transcription.proximal`). Stopping: primal residual r = |x − z| and dual
residual s = rho |z − z_prev| (over all copies) below eps_pri = sqrt(n) eps_abs + eps_rel
max(|x|, |z|) and eps_dual = sqrt(n) eps_abs + eps_rel |rho u|; rho is rebalanced when one
residual exceeds the other by ``balance`` (Boyd et al. §3.4.1, the scaled u rescaled with it).
The training problem is not convex, so ADMM is a heuristic here: its result is measured against
the single NLP in ``benchmarks/admm_consensus.py``.

The blocks run in this process one after another, or with ``client`` (a Dask
``distributed.Client``) each as a Dask actor pinned to a worker, where its NLP stays built
between rounds; a round then solves the blocks in parallel.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from importlib.util import find_spec
from typing import Any

import numpy as np

from . import _validation as v
from .status import SolverStatus
from .tasks import dask_executor
from .training import TrainingProblem, TrainingSolution
from .transcription.algorithm import RadauIIA
from .transcription.assembly import NLPSize
from .transcription.mesh import Mesh
from .transcription.problem import DynamicOptimizationProblem
from .transcription.proximal import ProximalBlock
from .transcription.solution import Solution

SPLITS = ("trajectories", "windows")
# block statuses after which the rounds go on (an inexact block solve is still a step)
_CONTINUE = (SolverStatus.SUCCESS, SolverStatus.ACCEPTABLE, SolverStatus.ITERATION_LIMIT)


@dataclass(frozen=True)
class ConsensusADMM:
    """Train by consensus ADMM over K blocks of the data (see the module docstring).

    Args:
        inner: the collocation scheme and IPOPT settings of every block solve. With
            ``split="windows"`` its mesh is the whole horizon's, cut into the windows.
        blocks: K, the number of blocks (at most the number of trajectories, or of mesh
            intervals for windows).
        split: "trajectories" or "windows".
        rho: the initial penalty (> 0), in units of the objective per squared unknown (states
            in the NLP's scaled units).
        max_rounds: the most rounds.
        eps_abs, eps_rel: the stopping tolerances of the residuals.
        balance, factor: rebalance rho by ``factor`` when one residual exceeds the other
            ``balance`` times; ``balance=0`` keeps rho fixed.
        relaxation: α of over-relaxation (Boyd et al. §3.4.3), in (0, 2); 1 is plain ADMM.
        acceleration: Nesterov momentum on the consensus value and the multipliers with
            restart (Goldstein et al. 2014, "Fast alternating direction optimization
            methods", Alg. 8): the blocks' next centre is extrapolated from the last two
            rounds while the combined residual ρ(|u − û|² + |z − ẑ|²) falls below ``restart``
            times its last value; otherwise the momentum restarts from the last round (the
            paper's Alg. 8 goes back one round further). A change of ρ by the balancing also
            restarts it. Needs ``relaxation=1``.
        restart: η of that restart test, in (0, 1).
        warm_start: first solve block 0 alone (no proximal term, recorded as round -1) and
            start every block from its parameters: the blocks then begin in one basin of the
            non-convex objective, instead of each falling into its own from the random
            initial weights.
        client: a ``distributed.Client``, or a scheduler address such as
            ``"tcp://host:8786"`` (connected to and checked first, closed at the end): each
            block is an actor on one of its workers (round robin); None: the blocks run in this
            process.
    """

    inner: RadauIIA = field(default_factory=RadauIIA)
    blocks: int = 2
    split: str = "trajectories"
    rho: float = 0.1
    max_rounds: int = 50
    eps_abs: float = 1e-4
    eps_rel: float = 1e-3
    balance: float = 10.0
    factor: float = 2.0
    relaxation: float = 1.0
    acceleration: bool = False
    restart: float = 0.999
    warm_start: bool = True
    client: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        client = self.client
        if not (client is None or isinstance(client, str) or hasattr(client, "submit")):
            raise TypeError(
                f"client must be a distributed.Client, a scheduler address or None, got "
                f"{client!r:.80}"
            )
        if not isinstance(self.inner, RadauIIA):
            raise TypeError(f"inner must be a RadauIIA algorithm, got {self.inner!r:.80}")
        v.positive_int("blocks", self.blocks)
        v.choice("split", self.split, SPLITS)
        v.positive_float("rho", self.rho)
        v.positive_int("max_rounds", self.max_rounds)
        v.positive_float("eps_abs", self.eps_abs)
        v.nonnegative_float("eps_rel", self.eps_rel)
        balance = v.nonnegative_float("balance", self.balance)
        if 0 < balance <= 1:
            raise ValueError(f"balance must be 0 (fixed rho) or > 1, got {self.balance!r}")
        if v.positive_float("factor", self.factor) <= 1:
            raise ValueError(f"factor must be > 1, got {self.factor!r}")
        if not isinstance(self.warm_start, bool):
            raise TypeError(f"warm_start must be True or False, got {self.warm_start!r}")
        if not 0 < v.positive_float("relaxation", self.relaxation) < 2:
            raise ValueError(f"relaxation must lie in (0, 2), got {self.relaxation!r}")
        if not isinstance(self.acceleration, bool):
            raise TypeError(f"acceleration must be True or False, got {self.acceleration!r}")
        if not 0 < v.positive_float("restart", self.restart) < 1:
            raise ValueError(f"restart must lie in (0, 1), got {self.restart!r}")
        if self.acceleration and self.relaxation != 1:
            raise ValueError(
                f"acceleration needs relaxation = 1 (Goldstein et al.'s scheme has no "
                f"over-relaxation), got relaxation = {self.relaxation!r}"
            )


@dataclass
class ConsensusRound:
    """One ADMM round: ``rho`` used, residuals and their tolerances after it, the blocks'
    objectives (proximal terms excluded) summed, per block its IPOPT iterations and solve wall
    time [s], and the round's wall time [s]."""

    round: int
    rho: float
    primal_residual: float
    dual_residual: float
    eps_primal: float
    eps_dual: float
    objective: float
    iterations: list[int]
    block_s: list[float]
    wall_s: float


@dataclass
class ConsensusSolution:
    """The result of consensus ADMM training.

    Attributes:
        solution: the trained model as an ordinary :class:`TrainingSolution` of the whole
            problem (parameters: the consensus value; states: the blocks' node states).
        rounds: one :class:`ConsensusRound` per round.
        converged: both residuals met their tolerances and every block's last solve converged.
        build_s: per block the wall time of building its NLP [s].
        events: what happened on the way (a lost worker and the rebuilt block).
    """

    solution: TrainingSolution
    rounds: list[ConsensusRound]
    converged: bool
    build_s: list[float]
    events: list[str] = field(default_factory=list)

    @property
    def status(self) -> SolverStatus:
        return self.solution.status

    @property
    def p(self) -> np.ndarray:
        return self.solution.p

    def __call__(self, t: np.ndarray | float) -> np.ndarray:
        return self.solution(t)

    def simulate(self, *args: Any, **kwargs: Any) -> Any:
        return self.solution.simulate(*args, **kwargs)

    @property
    def wall_time(self) -> float:
        """Wall time of the build (the slowest block) and all rounds [s]."""
        return self.solution.timings["total"]

    @property
    def critical_path_s(self) -> float:
        """The wall time with one worker per block, projected from the blocks' own times [s]:
        the slowest build and, per round, the slowest block solve (the central updates and the
        traffic left out). A projection only where the blocks did not share cores."""
        return max(self.build_s) + sum(max(r.block_s) for r in self.rounds)

    def table(self) -> str:
        """The rounds as a text table."""
        head = f"{'round':>5} {'rho':>9} {'r':>9} {'eps_pri':>9} {'s':>9} {'eps_dual':>9} "
        head += f"{'objective':>11} {'iters':>9} {'wall s':>7}"
        rows = [head]
        for r in self.rounds:
            rows.append(
                f"{r.round:>5} {r.rho:>9.3g} {r.primal_residual:>9.2e} {r.eps_primal:>9.2e} "
                f"{r.dual_residual:>9.2e} {r.eps_dual:>9.2e} {r.objective:>11.5g} "
                f"{max(r.iterations):>9} {r.wall_s:>7.2f}"
            )
        return "\n".join(rows)


@dataclass(frozen=True)
class _Block:
    """What a block is built from, and where its shared unknowns go: ``local`` (indices into
    its NLP's unknowns) are copies of the global unknowns ``index``."""

    dop: DynamicOptimizationProblem
    meshes: list[Mesh]
    local: np.ndarray
    index: np.ndarray


def solve_admm(problem: TrainingProblem, alg: ConsensusADMM, p0: np.ndarray) -> ConsensusSolution:
    """Train ``problem`` by consensus ADMM from the parameters ``p0`` (every block starts there).

    Raises ValueError before any work when the split does not fit the problem or the client's
    workers cannot run the blocks."""
    blocks = _split(problem, alg, p0)
    runners = _Local(blocks, alg) if alg.client is None else _Actors(blocks, alg)
    try:
        return _rounds(problem, alg, blocks, runners)
    finally:
        runners.close()


# ---- the split ------------------------------------------------------------------------------
def _common(problem: TrainingProblem, k_blocks: int) -> dict[str, Any]:
    """Fields every block shares with the whole problem: the scales and state scaling of all
    the data (so that the blocks' NLP units agree), and the weight penalty divided by K."""
    return {
        "scale": problem.scales(),
        "x_nominal": problem.nominal(),
        "regularization": problem.regularization / k_blocks,
    }


def _split(problem: TrainingProblem, alg: ConsensusADMM, p0: np.ndarray) -> list[_Block]:
    k = alg.blocks
    if alg.split == "trajectories":
        n = problem.n_trajectories
        if k > n:
            raise ValueError(
                f"blocks = {k} is more than the problem's {n} trajectories (split='trajectories')"
            )
        return _split_trajectories(problem, alg, p0)
    if problem.n_trajectories != 1:
        raise ValueError(
            f"split='windows' cuts one trajectory, the problem has {problem.n_trajectories}; "
            "use split='trajectories'"
        )
    return _split_windows(problem, alg, p0)


def _pick(value: Any, rows: list[int]) -> Any:
    """The entries ``rows`` of a per-trajectory field (a list or an array with one row each);
    anything else (shared by all trajectories) as it is."""
    if isinstance(value, (list, tuple)):
        return [value[i] for i in rows]
    if isinstance(value, np.ndarray) and value.ndim == 2:
        return value[rows]
    return value


def _split_trajectories(
    problem: TrainingProblem, alg: ConsensusADMM, p0: np.ndarray
) -> list[_Block]:
    common = _common(problem, alg.blocks)
    n_params = problem.model.n_params
    out = []
    for rows in np.array_split(np.arange(problem.n_trajectories), alg.blocks):
        rows = rows.tolist()
        data = [problem.trajectories[i] for i in rows]
        block = replace(
            problem,
            data=data if len(data) > 1 else data[0],
            initial_state=_pick(problem.initial_state, rows),
            inputs=_pick(problem.inputs, rows),
            state_guess=_pick(problem.state_guess, rows),
            mask=None if problem.mask is None else [problem.mask[i] for i in rows],
            tspan=problem.tspan if rows[0] == 0 else None,
            params_guess=p0,
            **common,
        )
        meshes = [alg.inner.mesh_for(block._horizon(j)) for j in range(len(rows))]
        n_nodes = sum(m.n_nodes for m in meshes)
        local = n_nodes * problem.model.n_states + np.arange(n_params)
        out.append(_Block(block.to_dop(p0), meshes, local, np.arange(n_params)))
    return out


def _split_windows(problem: TrainingProblem, alg: ConsensusADMM, p0: np.ndarray) -> list[_Block]:
    k, nx = alg.blocks, problem.model.n_states
    n_params = problem.model.n_params
    mesh = alg.inner.mesh_for(problem.horizon)
    if k > mesh.n_intervals:
        raise ValueError(
            f"blocks = {k} windows need at least one collocation interval each, the mesh has "
            f"{mesh.n_intervals}"
        )
    cuts = [int(c[0]) for c in np.array_split(np.arange(mesh.n_intervals), k)] + [mesh.n_intervals]
    common = _common(problem, k)
    data = problem.trajectories[0]
    out = []
    for j in range(k):
        a, b = cuts[j], cuts[j + 1]
        window = Mesh.from_grid(mesh.grid[a : b + 1], mesh.stages[a:b])
        guess = problem.state_guess
        if j > 0 and isinstance(guess, str) and guess == "constant":
            # the data at the window's start, not at the trajectory's
            start = np.array([np.interp(window.t0, data.t, data.x[:, i]) for i in range(nx)])
            guess = lambda t, s=start: np.tile(s, (np.size(t), 1))  # noqa: E731
        block = replace(
            problem,
            tspan=(window.t0, window.tf),
            initial_state=problem.initial_state if j == 0 else None,
            state_guess=guess,
            params_guess=p0,
            **common,
        )
        n_nodes = window.n_nodes
        local = [n_nodes * nx + np.arange(n_params)]
        index = [np.arange(n_params)]
        if j > 0:  # the start of this window is join j - 1
            local.append(np.arange(nx))
            index.append(n_params + (j - 1) * nx + np.arange(nx))
        if j < k - 1:  # its end is join j
            local.append((n_nodes - 1) * nx + np.arange(nx))
            index.append(n_params + j * nx + np.arange(nx))
        out.append(_Block(block.to_dop(p0), [window], np.concatenate(local), np.concatenate(index)))
    return out


# ---- where the blocks run ---------------------------------------------------------------------
class _Local:
    """The blocks in this process, solved one after another."""

    def __init__(self, blocks: list[_Block], alg: ConsensusADMM) -> None:
        self.solvers = [ProximalBlock(b.dop, alg.inner, b.meshes, b.local) for b in blocks]
        self.build_s = [s.build_s for s in self.solvers]
        self.events: list[str] = []

    def solve(self, rho: list[np.ndarray], center: list[np.ndarray]) -> list[dict[str, Any]]:
        return [s.solve(r, c) for s, r, c in zip(self.solvers, rho, center, strict=True)]

    def states(self) -> list[dict[str, Any]]:
        return [s.states() for s in self.solvers]

    def shared(self, k: int) -> np.ndarray:
        return self.solvers[k].shared_values

    def move(self, k: int, shared: np.ndarray) -> None:
        self.solvers[k].move(shared)

    def solve_one(self, k: int, rho: np.ndarray, center: np.ndarray) -> dict[str, Any]:
        return self.solvers[k].solve(rho, center)

    def close(self) -> None:
        self.solvers = []


class _Actors:
    """Each block a Dask actor pinned to one worker (round robin), its NLP built there once.

    A block whose worker is lost is built again once on any live worker, moved to its last
    shared values, and its call repeated; a second loss raises (no partial result)."""

    def __init__(self, blocks: list[_Block], alg: ConsensusADMM) -> None:
        self._owned = None
        self._futures: list[Any] = []
        client = alg.client
        if isinstance(client, str):
            # an address: reachable, with workers that import collocnode, or one ValueError
            self._owned = dask_executor(client)
            client = self._owned.client
        self.client = client
        try:
            self._build(blocks, alg)
        except BaseException:
            self.close()
            raise

    def _build(self, blocks: list[_Block], alg: ConsensusADMM) -> None:
        client = self.client
        workers = sorted(_check_workers(client))
        # a block's node maps use its worker's threads, not every core of the host
        info = client.scheduler_info()["workers"]
        threads = {w: alg.inner.threads or max(1, int(info[w]["nthreads"])) for w in workers}
        home = [workers[k % len(workers)] for k in range(len(blocks))]
        self._specs = [
            (b.dop, replace(alg.inner, threads=threads[w]), b.meshes, b.local)
            for b, w in zip(blocks, home, strict=True)
        ]
        try:
            self._futures = [self._spawn(k, [w]) for k, w in enumerate(home)]
        except TypeError as exc:  # distributed: "Could not serialize object of type ..."
            cause = exc.__cause__ or exc
            raise ValueError(
                "the problem cannot be sent to the workers: its model, data and inputs must "
                f"pickle ({type(cause).__name__}: {cause})"
            ) from exc
        self.actors = [f.result() for f in self._futures]
        self.build_s = [float(a.build_s) for a in self.actors]
        self.events: list[str] = []
        self._lost = [0] * len(blocks)
        self._last: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(blocks)
        self._shared = [self.shared(k) for k in range(len(blocks))]

    def _spawn(self, k: int, workers: list[str] | None) -> Any:
        pinned = {} if workers is None else {"workers": workers, "allow_other_workers": False}
        return self.client.submit(ProximalBlock, *self._specs[k], actor=True, pure=False, **pinned)

    def _result(self, k: int, call: Any, again: Any, needs_solve: bool = False) -> Any:
        """``call``'s result; if block k's worker was lost, rebuild the block once (moved to its
        last shared values, solved again first when ``needs_solve``) and return the result of
        ``again(actor)``."""
        try:
            return call.result()
        except Exception as exc:
            if not _worker_lost(exc):
                raise
            if self._lost[k]:
                raise RuntimeError(
                    f"ADMM block {k}: its worker was lost twice ({type(exc).__name__}: {exc}); "
                    "no result"
                ) from None
            self._lost[k] += 1
            self.events.append(f"block {k}: worker lost ({exc}); rebuilt on another worker")
            self._futures[k] = self._spawn(k, None)
            self.actors[k] = self._futures[k].result()
            self.actors[k].move(self._shared[k]).result()
            if needs_solve and self._last[k] is not None:
                self.actors[k].solve(*self._last[k]).result()
            return again(self.actors[k]).result()

    def _issue(self, k: int, method: Any) -> Any:
        """``method(actor k)``, the call's future; a lost worker's error is kept for
        :meth:`_result` to handle."""
        try:
            return method(self.actors[k])
        except Exception as exc:
            if not _worker_lost(exc):
                raise
            return _Raises(exc)

    def solve(self, rho: list[np.ndarray], center: list[np.ndarray]) -> list[dict[str, Any]]:
        calls = [
            self._issue(k, lambda a, r=r, c=c: a.solve(r, c))
            for k, (r, c) in enumerate(zip(rho, center, strict=True))
        ]
        return [self._solved(k, call, rho[k], center[k]) for k, call in enumerate(calls)]

    def _solved(self, k: int, call: Any, rho: np.ndarray, center: np.ndarray) -> dict[str, Any]:
        res = self._result(k, call, lambda a: a.solve(rho, center))
        self._last[k], self._shared[k] = (rho, center), np.asarray(res["shared"])
        return res

    def states(self) -> list[dict[str, Any]]:
        calls = [self._issue(k, lambda a: a.states()) for k in range(len(self.actors))]
        return [
            self._result(k, call, lambda a: a.states(), needs_solve=True)
            for k, call in enumerate(calls)
        ]

    def shared(self, k: int) -> np.ndarray:
        return np.asarray(self.actors[k].shared_values)

    def move(self, k: int, shared: np.ndarray) -> None:
        self._shared[k] = np.asarray(shared, dtype=float)
        self.actors[k].move(shared).result()

    def solve_one(self, k: int, rho: np.ndarray, center: np.ndarray) -> dict[str, Any]:
        return self._solved(k, self._issue(k, lambda a: a.solve(rho, center)), rho, center)

    def close(self) -> None:
        self.actors = []
        for f in self._futures:
            f.release()
        if self._owned is not None:
            self._owned.shutdown()
            self._owned = None


class _Raises:
    """A failed call in the shape of a future: ``result()`` raises its error."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def result(self) -> Any:
        raise self.exc


def _worker_lost(exc: BaseException) -> bool:
    """Whether ``exc`` says an actor's worker died (rather than the block's solve failing)."""
    if type(exc).__name__ in ("CommClosedError", "KilledWorker"):
        return True
    text = str(exc).lower()
    return (isinstance(exc, RuntimeError) and "worker holding actor was lost" in text) or (
        isinstance(exc, OSError) and "actor's worker" in text
    )


def _check_workers(client: Any) -> list[str]:
    """The client's worker addresses, after checking that each can import collocnode."""
    try:
        found = client.run(find_spec, "collocnode")
    except Exception as exc:
        raise ValueError(f"client: its workers cannot run tasks: {exc}") from None
    if not found:
        raise ValueError("client: the Dask cluster has no workers")
    missing = [w for w, spec in found.items() if spec is None]
    if missing:
        raise ValueError(
            f"client: {len(missing)} of {len(found)} workers cannot import collocnode "
            f"(e.g. {missing[0]}); install it where the workers run"
        )
    return list(found)


# ---- the rounds -------------------------------------------------------------------------------
def _rounds(
    problem: TrainingProblem,
    alg: ConsensusADMM,
    blocks: list[_Block],
    runners: _Local | _Actors,
) -> ConsensusSolution:
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
        blocks: list[_Block],
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


def _mean(blocks: list[_Block], x: list[np.ndarray], u: list[np.ndarray], counts: np.ndarray):
    total = np.zeros(counts.size)
    for k, b in enumerate(blocks):
        np.add.at(total, b.index, x[k] + u[k])
    return total / counts


def _assemble(
    problem: TrainingProblem,
    alg: ConsensusADMM,
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
        meshes = [alg.inner.mesh_for(problem.horizon)]
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
