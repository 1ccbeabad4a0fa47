"""Where and how the blocks of consensus ADMM are solved.

A block solver has one interface, whatever solves it: ``build_s`` (wall time of building it),
``shared_values`` (its shared unknowns at its current iterate, NLP units), ``move(shared)`` (set
them for the next solve's start), ``solve(rho, center) -> dict`` (re-solve with the pull
½ ρ |z_S − c|², returning plain data) and ``states() -> dict`` (the last solve's node states,
meshes, NLP size). Two kinds:

- `ProximalBlock` where the inner algorithm's NLP can
  be built once (`Algorithm.reusable_nlp`, a plain
  [`RadauIIA`][collocnode.RadauIIA]): ρ and c are NLP parameters, each solve starts from the last
  iterate.
- `NestedBlock` for any other algorithm: each solve hands the block's training problem,
  with the pull as a [`Proximal`][collocnode.Proximal] term, to the inner algorithm,
  started from the block's last result on its last meshes.

The blocks run in this process one after another (`Local`) or each as a Dask actor
pinned to a worker (`Actors`), where it stays built between rounds. A block whose worker
is lost is rebuilt elsewhere as often as Dask's own setting for lost workers allows
(``distributed.scheduler.allowed-failures``, 3 by default); one lost more often raises
`BlockLost`, and the rounds end there with what they have.
"""

from __future__ import annotations

import time
from dataclasses import replace
from importlib.util import find_spec
from typing import Any

import numpy as np

from ...algorithm import Algorithm, SolveContext, final
from ...tools.tasks import dask_executor
from ...transcription._problem import Proximal
from ...transcription._proximal import ProximalBlock
from ...transcription._refine import as_solution
from .split import Block


class BlockLost(RuntimeError):
    """The worker of ADMM block ``block`` was lost more often than Dask allows a task's worker
    to be lost (``distributed.scheduler.allowed-failures``): the block has no solver left."""

    def __init__(self, block: int, message: str) -> None:
        super().__init__(message)
        self.block = block


def allowed_failures() -> int:
    """Dask's ``distributed.scheduler.allowed-failures`` (how often a task may lose its worker
    before Dask gives up on it), read from this process's Dask configuration."""
    import dask

    try:
        return max(0, int(dask.config.get("distributed.scheduler.allowed-failures")))
    except (KeyError, TypeError, ValueError):
        return 3  # Dask's default


class NestedBlock:
    """A block solved by any algorithm: the block's training problem with the pull as a
    [`Proximal`][collocnode.Proximal] term, re-solved from its last result.

    Args:
        block: the block (its problem, meshes and which of its unknowns are shared).
        inner: the algorithm that solves it.
        check: the consistency check's settings handed to the inner algorithm (None: off).
    """

    def __init__(self, block: Block, inner: Algorithm, check: Any) -> None:
        self.problem, self.inner, self.check = block.problem, inner, check
        self.shares_start, self.shares_end = block.shares_start, block.shares_end
        self.n_params = block.problem.model.n_params
        nominal = block.problem.nominal()
        self.nominal = np.ones(block.problem.model.n_states) if nominal is None else nominal
        self.meshes = list(block.meshes)
        self.last: Any = None  # the inner algorithm's last result
        self.build_s = 0.0
        dop = block.problem.to_dop(block.problem.params_guess)
        t0, tf = block.problem.horizon_of(0)
        guess = dop.state_guess(np.array([t0, tf]), 0)
        self._shared = self._pack(np.asarray(block.problem.params_guess), guess[0], guess[-1])

    def _pack(self, p: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
        parts = [np.asarray(p, dtype=float)]
        if self.shares_start:
            parts.append(np.asarray(first) / self.nominal)
        if self.shares_end:
            parts.append(np.asarray(last) / self.nominal)
        return np.concatenate(parts)

    def _unpack(self, shared: np.ndarray) -> tuple[np.ndarray, Any, Any]:
        nx = self.nominal.size
        p, rest = shared[: self.n_params], shared[self.n_params :]
        first = rest[:nx] if self.shares_start else None
        last = rest[-nx:] if self.shares_end else None
        return p, first, last

    @property
    def shared_values(self) -> np.ndarray:
        return self._shared.copy()

    def move(self, shared: np.ndarray) -> None:
        self._shared = np.asarray(shared, dtype=float).copy()

    def _warm(self) -> Any:
        """The last solution with the shared values moved to `_shared`, or None before
        the first solve (the problem's own guess then, with the moved parameters)."""
        if self.last is None:
            return None
        sol = as_solution(self.last)
        p, first, last = self._unpack(self._shared)
        states = [np.array(x, dtype=float) for x in sol.segment_states]
        if first is not None:
            states[0][0] = first * self.nominal
        if last is not None:
            states[0][-1] = last * self.nominal
        return replace(sol, p=p.copy(), segment_states=states, x_nodes=states[0])

    def solve(self, rho: np.ndarray, center: np.ndarray) -> dict[str, Any]:
        t = time.perf_counter()
        rho_value = float(np.max(rho)) if np.size(rho) else 0.0
        p, first, last = self._unpack(np.asarray(center, dtype=float))
        pull = None if rho_value <= 0 else Proximal(rho_value, p, first, last)
        problem = replace(self.problem, proximal=pull)
        if self.last is None:
            problem = replace(problem, params_guess=self._unpack(self._shared)[0])
        context = SolveContext(check=self.check, warm=self._warm(), meshes=self.meshes)
        result = self.inner.solve_problem(problem, context)
        seconds = time.perf_counter() - t
        sol = as_solution(result)
        self.last, self.meshes = result, list(sol.meshes)
        self.build_s = float(sol.timings.get("build", 0.0))
        shared = self._pack(sol.p, sol.segment_states[0][0], sol.segment_states[0][-1])
        if np.all(np.isfinite(shared)):
            self._shared = shared
        gap = shared - center
        trained = final(result)
        return {
            "shared": shared.copy(),
            "objective": float(sol.objective - 0.5 * rho_value * np.sum(gap**2)),
            "status": trained.status.value,
            "message": sol.message,
            "iterations": int(result.iterations),
            "seconds": seconds,
        }

    def states(self) -> dict[str, Any]:
        if self.last is None:
            raise RuntimeError("the block has not been solved yet")
        sol = as_solution(self.last)
        size = sol.size
        return {
            "segment_states": [np.asarray(x) for x in sol.segment_states],
            "meshes": list(sol.meshes),
            "size": (size.n_variables, size.n_constraints, size.nnz_jacobian, size.nnz_hessian),
            "build_s": self.build_s,
        }


def block_spec(block: Block, inner: Algorithm, context: SolveContext) -> tuple[type, tuple]:
    """The class and arguments that build ``block``'s solver (here or in a Dask actor)."""
    if inner.reusable_nlp:
        dop = block.problem.to_dop(block.problem.params_guess)
        return ProximalBlock, (dop, inner, block.meshes, block.local)
    return NestedBlock, (block, inner, context.check)


def runners_for(blocks: list[Block], alg: Any, context: SolveContext) -> Local | Actors:
    """The blocks' solvers: in this process, or as actors on ``alg.client``'s workers."""
    if alg.client is None:
        return Local([block_spec(b, alg.inner, context) for b in blocks])
    return Actors(blocks, alg, context)


class Local:
    """The blocks in this process, solved one after another."""

    def __init__(self, specs: list[tuple[type, tuple]]) -> None:
        self.solvers = [cls(*args) for cls, args in specs]
        self.build_s = [s.build_s for s in self.solvers]
        self.events: list[str] = []

    def solve(self, rho: list[np.ndarray], center: list[np.ndarray]) -> list[dict[str, Any]]:
        return [s.solve(r, c) for s, r, c in zip(self.solvers, rho, center, strict=True)]

    def states(self) -> list[dict[str, Any] | None]:
        return [s.states() for s in self.solvers]

    def shared(self, k: int) -> np.ndarray:
        return self.solvers[k].shared_values

    def last_shared(self, k: int) -> np.ndarray:
        """Block k's shared values as last known here (no remote call)."""
        return self.solvers[k].shared_values

    def move(self, k: int, shared: np.ndarray) -> None:
        self.solvers[k].move(shared)

    def solve_one(self, k: int, rho: np.ndarray, center: np.ndarray) -> dict[str, Any]:
        return self.solvers[k].solve(rho, center)

    def close(self) -> None:
        self.solvers = []


class Actors:
    """Each block a Dask actor pinned to one worker (round robin), its solver built there once.

    A block whose worker is lost is built again on any live worker, moved to its last shared
    values, and its call repeated, as often as `allowed_failures` allows (Dask's own
    setting for tasks whose worker dies); one lost more often raises `BlockLost`, and
    its states are then None in `states`."""

    def __init__(self, blocks: list[Block], alg: Any, context: SolveContext) -> None:
        self._owned = None
        self._futures: list[Any] = []
        client = alg.client
        if isinstance(client, str):
            # an address: reachable, with workers that import collocnode, or one ValueError
            self._owned = dask_executor(client)
            client = self._owned.client
        self.client = client
        try:
            self._build(blocks, alg, context)
        except BaseException:
            self.close()
            raise

    def _build(self, blocks: list[Block], alg: Any, context: SolveContext) -> None:
        client = self.client
        workers = sorted(_check_workers(client))
        # a block's node maps use its worker's threads, not every core of the host
        info = client.scheduler_info()["workers"]
        home = [workers[k % len(workers)] for k in range(len(blocks))]

        def on(worker: str) -> Algorithm:
            def threads(leaf: Any) -> Any:
                return leaf.with_threads(leaf.threads or max(1, int(info[worker]["nthreads"])))

            return alg.inner.map_leaves(threads)

        self._specs = [block_spec(b, on(w), context) for b, w in zip(blocks, home, strict=True)]
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
        self._allowed = allowed_failures()
        self._lost = [0] * len(blocks)
        self._gone = [False] * len(blocks)
        self._last: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(blocks)
        self._shared = [self.shared(k) for k in range(len(blocks))]

    def _spawn(self, k: int, workers: list[str] | None) -> Any:
        pinned = {} if workers is None else {"workers": workers, "allow_other_workers": False}
        cls, args = self._specs[k]
        return self.client.submit(cls, *args, actor=True, pure=False, **pinned)

    def _result(self, k: int, call: Any, again: Any, needs_solve: bool = False) -> Any:
        """``call``'s result; if block k's worker was lost, rebuild the block once (moved to its
        last shared values, solved again first when ``needs_solve``) and return the result of
        ``again(actor)``."""
        try:
            return call.result()
        except Exception as exc:
            if not _worker_lost(exc):
                raise
            if self._lost[k] >= self._allowed:
                self._gone[k] = True
                self.events.append(f"block {k}: worker lost ({exc}); not rebuilt again")
                raise BlockLost(
                    k,
                    f"ADMM block {k}: its worker was lost {self._lost[k] + 1} times, more than "
                    f"Dask's distributed.scheduler.allowed-failures = {self._allowed} allows "
                    f"({type(exc).__name__})",
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
        `_result` to handle."""
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

    def states(self) -> list[dict[str, Any] | None]:
        """Every block's last node states; None for a block whose worker is gone for good."""
        live = [k for k in range(len(self.actors)) if not self._gone[k]]
        calls = {k: self._issue(k, lambda a: a.states()) for k in live}
        out: list[dict[str, Any] | None] = [None] * len(self.actors)
        for k, call in calls.items():
            try:
                out[k] = self._result(k, call, lambda a: a.states(), needs_solve=True)
            except BlockLost:
                out[k] = None
        return out

    def shared(self, k: int) -> np.ndarray:
        return np.asarray(self.actors[k].shared_values)

    def last_shared(self, k: int) -> np.ndarray:
        """Block k's shared values as last known here (no remote call: its worker may be
        gone)."""
        return np.asarray(self._shared[k])

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
