"""Many independent runs (seeds, sweeps, methods) on any ``concurrent.futures.Executor``.

`run_tasks` submits one call per `Task` to an executor — a local process pool by
default, a Dask ``distributed`` cluster through `dask_executor` (Ray's and mpi4py's
executors follow the same interface) — and stores each result in a `TaskStore` as soon
as it completes. A task that raises is recorded as failed and the others go on; a task whose
worker died (a killed process, a lost Dask worker) is submitted once more and then recorded as
failed (the policy is `TaskPool`'s); a rerun with the same store skips the tasks it
already holds. Each task runs with its share of its worker's cores
(`collocnode.tools._threads.limit_threads`). A failure of the store itself (a full disk)
or of the executor (a lost Dask scheduler) is not a task's outcome: it stops the run
(`StorageError`, `ExecutorLost`), and what finished before
stays stored.

A local pool's workers ignore SIGINT while idle (a Ctrl-C at the terminal reaches every process
of its group) and take it while they run a task; on Ctrl-C or SIGTERM in the calling process the
pool sends SIGINT to its workers, so running collocation solves stop at their next IPOPT
iteration instead of running to their end.

A task's function takes the task's argument and returns a dict: numpy arrays in it are stored in
``<key>.npz`` (no pickles: a store is data and loads as data), everything else in
``<key>.json``, which is written last and marks the task finished.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .. import _validation as v
from ._cluster import dask_executor
from ._io import StorageError, jsonable, storage_error, write_json, write_npz
from ._threads import cores, limit_threads

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.=-]{0,127}")
FINISHED, FAILED = "finished", "failed"


@dataclass(frozen=True)
class Task:
    """One independent call ``fn(arg)``.

    Attributes:
        key: the task's name in the store: letters, digits and ``_ . = -``, at most 128.
        arg: the argument (picklable: it travels to a worker process).
        settings: JSON data that identify what the task computes; a stored result made with
            other settings is refused rather than reused.
    """

    key: str
    arg: Any
    settings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not _KEY.fullmatch(self.key):
            raise ValueError(
                f"task key must be 1-128 letters, digits or '_.=-' (not starting with one of "
                f"'_.=-'), got {self.key!r:.80}"
            )


@dataclass
class TaskOutcome:
    """How one task ended.

    Attributes:
        key: the task's key.
        status: "finished" (its function returned) or "failed" (it raised, or its worker was
            lost twice).
        result: the function's dict (arrays included), or None when it failed.
        error: why it failed ("ExceptionType: message"), or None.
        attempts: submissions it took (0: taken from the store).
    """

    key: str
    status: str
    result: dict[str, Any] | None = None
    error: str | None = None
    attempts: int = 1

    @property
    def reused(self) -> bool:
        return self.attempts == 0


class StoredTaskMismatch(ValueError):
    """A stored task was made with other settings than the task of this run (a rerun into the
    same directory with other options): it is refused, not reused."""


class ExecutorLost(RuntimeError):
    """The executor stopped running the tasks (a lost Dask scheduler cancels every task it
    holds): the run cannot go on. The tasks that finished before are stored."""


def _differences(stored: Any, current: Any, where: str = "") -> list[str]:
    """The settings that differ, ``"name = stored there, current here"``, nested by dots."""
    if isinstance(stored, dict) and isinstance(current, dict):
        out = []
        for key in sorted(set(stored) | set(current), key=str):
            name = f"{where}.{key}" if where else str(key)
            if key not in stored:
                out.append(f"{name} (not in the stored task)")
            elif key not in current:
                out.append(f"{name} (not in this run)")
            else:
                out += _differences(stored[key], current[key], name)
        return out
    if stored == current:
        return []
    return [f"{where or 'settings'} = {_short(stored)} there, {_short(current)} here"]


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


class TaskStore:
    """A directory of finished tasks: ``<key>.json`` (the result's JSON values, the task's
    settings and status) and ``<key>.npz`` (its arrays).

    Only finished tasks are stored; a failed task is run again by the next run."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def _json(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def load(self, task: Task) -> dict[str, Any] | None:
        """The stored result of ``task``, or None if there is none. Raises ValueError when the
        stored result was made with other settings, or its files are damaged."""
        path = self._json(task.key)
        if not path.is_file():
            return None
        try:
            record = json.loads(path.read_text())
            stored_settings, result = record["settings"], dict(record["result"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"stored task {str(path)!r} cannot be read: {exc}") from None
        if stored_settings != jsonable(task.settings):
            diff = _differences(stored_settings, jsonable(task.settings)) or ["settings"]
            more = f" (and {len(diff) - 2} more)" if len(diff) > 2 else ""
            raise StoredTaskMismatch(
                f"stored task {str(path)!r} was made with other settings: "
                f"{'; '.join(diff[:2])}{more}; continue it with its own settings or use "
                "another output directory"
            )
        npz = path.with_suffix(".npz")
        if record.get("arrays"):
            try:
                with np.load(npz, allow_pickle=False) as arrays:
                    result.update({name: arrays[name] for name in record["arrays"]})
            except (OSError, ValueError, KeyError) as exc:
                raise ValueError(f"stored task arrays {str(npz)!r} cannot be read: {exc}") from None
        return result

    def save(self, task: Task, result: Mapping[str, Any]) -> None:
        """Store a finished task: arrays first, the JSON (the completion mark) last."""
        arrays = {k: val for k, val in result.items() if isinstance(val, np.ndarray)}
        values = {k: val for k, val in result.items() if k not in arrays}
        if arrays:
            write_npz(self._json(task.key).with_suffix(".npz"), arrays)
        write_json(
            self._json(task.key),
            {
                "key": task.key,
                "status": FINISHED,
                "settings": task.settings,
                "arrays": sorted(arrays),
                "result": values,
            },
        )


def _tasks_at_once(default: int, per_host: Mapping[str, int] | None) -> int:
    """Tasks running at once on this process's machine: on a Dask worker, the ``nthreads`` of
    every worker of its host (``per_host``, counted by `dask_host_slots`) or its own;
    else ``default`` (a local pool: ``workers`` processes of one task each)."""
    try:
        from distributed import get_worker
        from distributed.comm import get_address_host

        worker = get_worker()
    except (ImportError, ValueError):  # not inside a Dask worker
        return default
    host = get_address_host(worker.address)
    if per_host and host in per_host:
        return max(1, per_host[host])
    return max(1, int(worker.state.nthreads))


def _call(
    fn: Callable[[Any], Mapping[str, Any]],
    arg: Any,
    threads: int | None,
    per_machine: int,
    per_host: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Run one task in its worker with its share of the cores (see `run_tasks`)."""
    if threads is None:
        threads = max(1, cores() // _tasks_at_once(per_machine, per_host))
    with _interruptible(), limit_threads(threads):
        out = fn(arg)
    if not isinstance(out, Mapping):
        raise TypeError(f"a task must return a dict, got {type(out).__name__}")
    return dict(out)


def dask_host_slots(client: Any) -> dict[str, int]:
    """Tasks a Dask cluster runs at once per host: the sum of its workers' ``nthreads``
    (several workers on one machine share its cores)."""
    try:
        info = client.scheduler_info(n_workers=-1)["workers"]
    except TypeError:  # distributed before the n_workers argument lists every worker
        info = client.scheduler_info()["workers"]
    slots: dict[str, int] = {}
    for worker in info.values():
        slots[worker["host"]] = slots.get(worker["host"], 0) + int(worker.get("nthreads", 1))
    return slots


# set in a local pool's worker process by `_worker_init`
_POOL_WORKER = False
_STOP: Any = None  # the pool's stop event: set by the parent on Ctrl-C or SIGTERM


def _worker_init(stop: Any) -> None:
    """A local pool's worker ignores SIGINT while it waits for tasks: a Ctrl-C at the terminal
    reaches every process of the group, and an idle worker has nothing to stop (it would print
    a traceback and die)."""
    global _POOL_WORKER, _STOP
    _POOL_WORKER, _STOP = True, stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """While a local pool's worker runs a task, SIGINT stops the task (a collocation solve at
    its next IPOPT iteration); a task that starts after its pool was told to stop raises
    KeyboardInterrupt at once. Elsewhere (this process, a Dask worker's thread) a no-op."""
    if not _POOL_WORKER:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if _STOP is not None and _STOP.is_set():
            raise KeyboardInterrupt
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _lost_worker(exc: BaseException) -> bool:
    """Whether ``exc`` says the task's worker died rather than the task failing."""
    if isinstance(exc, BrokenProcessPool):
        return True
    return type(exc).__name__ in ("KilledWorker", "CommClosedError")


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def local_executor(workers: int, stop: Any = None) -> ProcessPoolExecutor:
    """A pool of ``workers`` fresh processes (spawned: no state inherited from the caller) that
    ignore SIGINT while idle and take it while they run a task; ``stop``, a spawn-context
    ``Event``, when set keeps tasks that start after it from running."""
    return ProcessPoolExecutor(
        v.positive_int("workers", workers),
        mp_context=get_context("spawn"),
        initializer=_worker_init,
        initargs=(stop,),
    )


class _OutcomeLog:
    """The outcomes of one `run_tasks`, by key: each finished task is stored as it is
    recorded (unless it came from the store) and reported to ``on_outcome``."""

    def __init__(
        self, store: TaskStore | None, on_outcome: Callable[[TaskOutcome], None] | None
    ) -> None:
        self.store = store
        self.on_outcome = on_outcome
        self.outcomes: dict[str, TaskOutcome] = {}

    def record(self, outcome: TaskOutcome, task: Task) -> None:
        """Store a finished task (a failure to store it is a `StorageError`: the task
        is then not recorded) and report the outcome."""
        if outcome.status == FINISHED and self.store is not None and not outcome.reused:
            try:
                self.store.save(task, outcome.result or {})
            except StorageError:
                raise
            except OSError as exc:  # any failure of the store ends the run, not the task
                raise StorageError(exc.errno, exc.strerror or str(exc)) from exc
        self.outcomes[outcome.key] = outcome
        if self.on_outcome is not None:
            self.on_outcome(outcome)

    def reuse_stored(self, tasks: Sequence[Task]) -> list[Task]:
        """Record the tasks the store already holds; returns the others, in order."""
        todo = []
        for task in tasks:
            stored = self.store.load(task) if self.store is not None else None
            if stored is not None:
                self.record(TaskOutcome(task.key, FINISHED, stored, attempts=0), task)
            else:
                todo.append(task)
        return todo

    def in_order(self, tasks: Sequence[Task]) -> list[TaskOutcome]:
        return [self.outcomes[t.key] for t in tasks if t.key in self.outcomes]


def _run_in_this_process(
    fn: Callable[[Any], Mapping[str, Any]],
    tasks: Sequence[Task],
    threads: int | None,
    log: _OutcomeLog,
) -> None:
    """One task after another in this process (``workers=1`` and no executor)."""
    for task in tasks:
        try:
            outcome = TaskOutcome(task.key, FINISHED, _call(fn, task.arg, threads, 1))
        except Exception as exc:  # one failing task does not stop the others
            _raise_if_storage(task, exc)
            outcome = TaskOutcome(task.key, FAILED, error=_describe(exc))
        log.record(outcome, task)


def _raise_if_storage(task: Task, exc: BaseException) -> None:
    """A task that failed for lack of storage (its own writes: a JIT cache, a temporary file)
    failed for no reason of its own: that ends the run as a `StorageError`."""
    cause = storage_error(exc)
    if cause is not None:
        if isinstance(cause, OSError) and cause.strerror:
            name = f": {str(cause.filename)!r}" if cause.filename else ""
            words = f"{cause.strerror}{name}"
        else:
            words = _describe(cause)
        raise StorageError(getattr(cause, "errno", None), f"task {task.key!r}: {words}") from exc


class _InFlight(NamedTuple):
    """A submitted task, and the one-process pool it runs in when it runs isolated."""

    task: Task
    own_pool: Executor | None


class TaskPool:
    """Tasks on an executor, each outcome recorded in an `_OutcomeLog` as it completes.

    The retry and isolation policy:

    - a task that raises is recorded as failed; the others go on;
    - a task whose worker is lost (`_lost_worker`: a killed local process, a Dask
      ``KilledWorker`` or closed connection) is submitted again, ``retries`` times, then
      recorded as failed ("worker lost n times");
    - on its own local pool (``executor=None``), at most ``workers`` tasks run at once, so that
      a broken pool loses only the running tasks; a task lost with the pool is re-run
      *isolated*, in a pool of its own, because a dead process breaks its whole pool and the
      pool cannot tell which task killed it: a task that kills its worker again is the one
      reported; and a broken pool is replaced by a fresh one at the next submission;
    - another executor gets every task at once and schedules them itself (Dask retries lost
      workers itself; what it gives up on is submitted again here);
    - a task that failed for lack of storage, a finished task that cannot be stored, and a task
      the executor cancelled (a lost Dask scheduler) stop the run
      (`StorageError`, `ExecutorLost`): the running local
      tasks are interrupted, nothing more is submitted, what was stored stays stored;
    - on Ctrl-C (or SIGTERM turned into it) the local workers get SIGINT, so their solves stop
      at the next iteration; queued tasks are cancelled and finished ones recorded.

    Args:
        fn, threads, workers, per_host: the task function and how its threads are shared out
            (see `run_tasks` and `_call`).
        executor: where the tasks run; None: a local pool of ``workers`` spawned processes,
            owned by this pool and shut down by `run`.
        retries: submissions after a lost worker.
        log: where the outcomes go.
    """

    def __init__(
        self,
        fn: Callable[[Any], Mapping[str, Any]],
        *,
        executor: Executor | None,
        workers: int,
        threads: int | None,
        per_host: Mapping[str, int] | None,
        retries: int,
        log: _OutcomeLog,
    ) -> None:
        self.call_args = (threads, workers, per_host)
        self.fn = fn
        self.owned = executor is None
        self.workers = workers
        self.retries = retries
        self.log = log
        # set on Ctrl-C: a local task that has not started yet does not start
        self.stop = get_context("spawn").Event() if executor is None else None
        self.pool: Executor = local_executor(workers, self.stop) if executor is None else executor
        self.attempts: dict[str, int] = {}
        self.in_flight: dict[Future, _InFlight] = {}
        self.queue: list[Task] = []

    def run(self, tasks: Sequence[Task]) -> None:
        """Run ``tasks`` to their outcomes; shuts down what this pool started.

        On Ctrl-C the queued tasks are cancelled, the running ones awaited and the finished
        ones recorded before KeyboardInterrupt propagates."""
        self.queue = list(reversed(tasks))
        try:
            self._fill()
            while self.in_flight:
                done, _ = wait(list(self.in_flight), return_when=FIRST_COMPLETED)
                # what finished is recorded before a cancelled task stops the run, and the
                # first cancelled task in submission order is the one named (`done` is a set)
                order = {future: i for i, future in enumerate(self.in_flight)}
                for future in sorted(done, key=lambda f: (f.cancelled(), order[f])):
                    self._settle(future)
                self._fill()
        except KeyboardInterrupt:
            self._interrupt_workers()
            self._keep_what_finishes()
            raise
        except BaseException:  # a storage failure, a lost executor: stop, await nothing more
            self._interrupt_workers()
            for future in self.in_flight:
                future.cancel()
            raise
        finally:
            self._shut_down()

    def _fill(self) -> None:
        # the local pool gets one task per worker at a time; another executor gets everything
        while self.queue and (not self.owned or len(self.in_flight) < self.workers):
            self._submit(self.queue.pop())

    def _submit(self, task: Task, *, isolated: bool = False) -> None:
        self.attempts[task.key] = self.attempts.get(task.key, 0) + 1
        own_pool = local_executor(1, self.stop) if isolated else None
        if own_pool is not None:
            future = own_pool.submit(_call, self.fn, task.arg, *self.call_args)
        else:
            future = self._submit_to_shared_pool(task)
        self.in_flight[future] = _InFlight(task, own_pool)

    def _submit_to_shared_pool(self, task: Task) -> Future:
        try:
            return self.pool.submit(_call, self.fn, task.arg, *self.call_args)
        except BrokenProcessPool:
            if not self.owned:
                raise
            self.pool.shutdown(wait=False, cancel_futures=True)  # a dead local pool is replaced
            self.pool = local_executor(self.workers, self.stop)
            return self.pool.submit(_call, self.fn, task.arg, *self.call_args)
        except (RuntimeError, OSError) as exc:  # a closed client, a lost scheduler
            if self.owned:
                raise
            raise ExecutorLost(f"the executor refused task {task.key!r}: {_describe(exc)}") from exc

    def _settle(self, future: Future) -> None:
        """Record a completed task, or submit it again when its worker was lost."""
        task, own_pool = self.in_flight.pop(future)
        if own_pool is not None:
            own_pool.shutdown(wait=False)
        if future.cancelled():  # only the executor cancels while the pool runs
            raise ExecutorLost(
                f"the executor cancelled task {task.key!r} (a lost Dask scheduler cancels "
                "every task it holds)"
            )
        exc = future.exception()
        n = self.attempts[task.key]
        if exc is not None and not isinstance(exc, KeyboardInterrupt):
            _raise_if_storage(task, exc)
        if exc is None:
            outcome = TaskOutcome(task.key, FINISHED, future.result(), attempts=n)
        elif _lost_worker(exc) and n <= self.retries:
            self._submit(task, isolated=self.owned)
            return
        else:
            error = _describe(exc)
            if _lost_worker(exc):
                error = f"worker lost {n} times ({error})"
            outcome = TaskOutcome(task.key, FAILED, error=error, attempts=n)
        self.log.record(outcome, task)

    def _interrupt_workers(self) -> None:
        """Tell this pool's local workers to stop: tasks not yet started do not start, running
        ones get SIGINT (idle workers ignore it)."""
        if self.stop is None:
            return
        self.stop.set()
        pools = [self.pool, *(own for _, own in self.in_flight.values() if own is not None)]
        for pool in pools:
            # ProcessPoolExecutor keeps its processes by pid; no public accessor exists
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                if process.is_alive():
                    with contextlib.suppress(OSError):
                        os.kill(process.pid, signal.SIGINT)

    def _keep_what_finishes(self) -> None:
        """After Ctrl-C: cancel what has not started, record what the running tasks return."""
        for future in self.in_flight:
            future.cancel()
        for future, (task, _) in self.in_flight.items():
            if future.cancelled():
                continue
            try:
                result = future.result()
            except BaseException:  # a task interrupted or failing now is not kept
                continue
            self.log.record(
                TaskOutcome(task.key, FINISHED, result, attempts=self.attempts[task.key]), task
            )

    def _shut_down(self) -> None:
        for _, own_pool in self.in_flight.values():
            if own_pool is not None:
                own_pool.shutdown(wait=True, cancel_futures=True)
        if self.owned:
            self.pool.shutdown(wait=True, cancel_futures=True)


def run_tasks(
    fn: Callable[[Any], Mapping[str, Any]],
    tasks: Iterable[Task],
    *,
    store: TaskStore | str | Path | None = None,
    executor: Executor | None = None,
    workers: int | None = None,
    threads: int | None = None,
    retries: int = 1,
    on_outcome: Callable[[TaskOutcome], None] | None = None,
) -> list[TaskOutcome]:
    """Run ``fn(task.arg)`` for every task; returns the outcomes in the tasks' order.

    Args:
        fn: a module-level function (it is pickled by reference to reach the workers) returning
            a dict of JSON values and numpy arrays.
        tasks: the tasks, with unique keys.
        store: where finished tasks are written as they complete and read back on a rerun
            (None: nothing is stored or reused).
        executor: where the tasks run (e.g. `dask_executor`); None: a local pool of
            ``workers`` spawned processes, shut down at the end. With ``workers=1`` and no
            executor the tasks run one after another in this process.
        workers: local processes (default: one per core); with another executor, the tasks it
            runs at once on one machine, used only to size the tasks' threads.
        threads: threads each task may use (default: the cores of the machine it runs on
            divided by the tasks running there at once — ``workers`` for the local pool, the
            summed ``nthreads`` of the Dask workers on that host — at least 1).
        retries: submissions after a lost worker (a killed process, a lost Dask worker); see
            `TaskPool` for the retry and isolation policy.
        on_outcome: called with each outcome as it is recorded (progress, logging).

    On Ctrl-C the queued tasks are cancelled, the running ones are awaited (local workers get
    the same SIGINT: collocation solves stop at their next iteration), what finished is stored,
    and KeyboardInterrupt propagates.
    """
    tasks = list(tasks)
    keys = [t.key for t in tasks]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise ValueError(f"task keys must be unique, got {duplicates[0]!r} more than once")
    if executor is not None and not isinstance(executor, Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor, got {executor!r:.80}")
    v.nonnegative_int("retries", retries)
    n_workers = cores() if workers is None else v.positive_int("workers", workers)
    if threads is not None:
        threads = v.positive_int("threads", threads)
    if store is not None and not isinstance(store, TaskStore):
        store = TaskStore(store)
    client = getattr(executor, "client", None)  # a dask_executor's: count its hosts' slots
    per_host = dask_host_slots(client) if client is not None and threads is None else None

    log = _OutcomeLog(store, on_outcome)
    todo = log.reuse_stored(tasks)
    if executor is None and n_workers == 1:
        _run_in_this_process(fn, todo, threads, log)
    else:
        pool = TaskPool(
            fn,
            executor=executor,
            workers=n_workers,
            threads=threads,
            per_host=per_host,
            retries=retries,
            log=log,
        )
        pool.run(todo)
    return log.in_order(tasks)


__all__ = [
    "ExecutorLost",
    "StoredTaskMismatch",
    "Task",
    "TaskOutcome",
    "TaskPool",
    "TaskStore",
    "dask_executor",
    "dask_host_slots",
    "local_executor",
    "run_tasks",
]
