"""What a solve hands its callback after every IPOPT iteration, and how the callback is run.

``solve(problem, alg, callback=fn)`` calls ``fn(state)`` after every IPOPT iteration (iteration 0
is the starting point) on either backend with an `IterationState`. The protocol a callback
may implement:

- ``fn(state) -> bool | None``: returning ``True`` stops the solve after this iteration with
  status ``SolverStatus.STOPPED`` and keeps this iterate; any other value continues.
- ``fn.on_start(info: RunInfo)`` (optional): called once before each IPOPT solve starts (before
  the NLP is built); an exception raised here is a bad setting and propagates from ``solve``.
- ``fn.on_end()`` (optional): called when that solve has ended, however it ended.
- ``fn.reason`` (optional, a string): read after ``fn`` returned True; it becomes the solution's
  message (default "stopped by the callback at iteration k").
- ``fn.outcome`` (optional): read after ``fn`` returned True; "settled" gives the solve status
  ``SolverStatus.SETTLED`` instead of ``STOPPED`` (a rule that the user's measure of quality
  stopped changing).

An exception raised by ``fn(state)`` (an ``Exception``, not a Ctrl-C) stops the solve with status
``SolverStatus.CALLBACK_ERROR``; the message names the exception's type and text and the solution
keeps the iterate of that iteration. The time spent in ``fn`` is measured apart
(``timings["user_callback"]``) and not counted as IPOPT's time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["CallbackRunner", "IterationState", "RunInfo", "stop_requested"]


@dataclass(frozen=True)
class RunInfo:
    """What a callback's ``on_start`` learns before a solve (or a training run) starts.

    Attributes:
        max_iterations: the most iterations the run may take (IPOPT's ``max_iter``, or a
            trainer's epochs), or None when unlimited.
        n_states: states of the model or problem.
        n_params: parameters (NLP parameters, or trained weights on the torch side).
        unit: "iteration" (IPOPT) or "epoch" (a gradient-descent trainer).
        can_predict: True when the states handed out have ``predict`` (a training solve or a
            trainer); False for a bare dynamic optimization problem.
    """

    max_iterations: int | None
    n_states: int
    n_params: int
    unit: str = "iteration"
    can_predict: bool = False


def stop_requested(returned: object) -> bool:
    """True when a callback's return value asks to stop: ``True`` (a Python or numpy bool)."""
    return isinstance(returned, (bool, np.bool_)) and bool(returned)


class IterationState:
    """One IPOPT iteration as a callback sees it.

    Attributes:
        iteration: IPOPT's iteration count (0 is the starting point).
        objective: the objective at this iterate.
        elapsed_s: wall time since IPOPT started [s], without the time spent in the callback.

    The iterate itself is read on request only: `params` and `states` (and the
    infeasibilities on the CasADi backend) are valid while the callback runs; a state kept and
    read after its callback returned raises a RuntimeError (copy what you need).
    """

    __slots__ = ("_inf", "_live", "_nlp", "_read", "_z", "elapsed_s", "iteration", "objective")

    def __init__(
        self,
        iteration: int,
        objective: float,
        elapsed_s: float,
        read_iterate: Callable[[], np.ndarray],
        read_infeasibility: Callable[[], tuple[float, float]],
        nlp: Any,
    ) -> None:
        self.iteration = int(iteration)
        self.objective = float(objective)
        self.elapsed_s = float(elapsed_s)
        self._read, self._inf, self._nlp = read_iterate, read_infeasibility, nlp
        self._z: np.ndarray | None = None
        self._live = True

    def _check_live(self) -> None:
        if not self._live:
            raise RuntimeError(
                f"the state of iteration {self.iteration} was read after its callback returned; "
                f"the iterate is readable during the callback only (keep state.params().copy())"
            )

    def _iterate(self) -> np.ndarray:
        self._check_live()
        if self._z is None:
            self._z = np.asarray(self._read(), dtype=float).ravel()
        return self._z

    @property
    def inf_pr(self) -> float:
        """IPOPT's primal infeasibility at this iterate."""
        self._check_live()
        return float(self._inf()[0])

    @property
    def inf_du(self) -> float:
        """IPOPT's dual infeasibility at this iterate."""
        self._check_live()
        return float(self._inf()[1])

    @property
    def n_states(self) -> int:
        return int(self._nlp.layout.nd)

    @property
    def n_segments(self) -> int:
        """Trajectories (segments) of the problem."""
        return len(self._nlp.meshes)

    def params(self) -> np.ndarray:
        """The parameters at this iterate, shape (n_params,) (a new array)."""
        return self._nlp.split(self._iterate())[1].copy()

    def states(self, segment: int = 0) -> np.ndarray:
        """The node states of trajectory ``segment`` at this iterate, shape (n_nodes, n_states)
        in physical units (a new array), at the times `node_times`."""
        if not 0 <= segment < self.n_segments:
            raise ValueError(f"segment must be in [0, {self.n_segments}), got {segment!r}")
        return self._nlp.segment_states(self._iterate())[segment].copy()

    def node_times(self, segment: int = 0) -> np.ndarray:
        """The times of the node states of trajectory ``segment``, shape (n_nodes,) [s]."""
        if not 0 <= segment < self.n_segments:
            raise ValueError(f"segment must be in [0, {self.n_segments}), got {segment!r}")
        return np.asarray(self._nlp.meshes[segment].node_times, dtype=float).copy()

    def predict(self, t: np.ndarray, x0: np.ndarray, u: Any = None) -> np.ndarray:
        """Not available for a bare dynamic optimization problem (there is no model to
        simulate): a training solve hands out a state whose ``predict`` integrates the model."""
        raise TypeError(
            "this solve has no model to simulate: predict needs a TrainingProblem "
            "(solve(TrainingProblem(...), callback=...))"
        )

    def __repr__(self) -> str:
        return (
            f"IterationState(iteration={self.iteration}, objective={self.objective:.6g}, "
            f"elapsed_s={self.elapsed_s:.3g})"
        )


class CallbackRunner:
    """Runs a user callback inside IPOPT's intermediate callback: times it, turns its return
    value into IPOPT's keep-going flag, and records why it stopped the solve.

    Attributes:
        stopped: None, "callback" (it returned True), "settled" (it returned True with
            ``outcome == "settled"``) or "error" (it raised).
        message: the reason of a stop, in words.
        time_s: wall time spent in the callback [s].
    """

    def __init__(self, callback: Callable[[Any], Any]) -> None:
        if not callable(callback):
            raise TypeError(f"callback must be callable, got {callback!r:.80}")
        self.callback = callback
        self.stopped: str | None = None
        self.message = ""
        self.time_s = 0.0

    def start(self, info: RunInfo) -> None:
        """Call the callback's ``on_start(info)`` if it has one (its errors propagate)."""
        on_start = getattr(self.callback, "on_start", None)
        if callable(on_start):
            on_start(info)

    def end(self) -> None:
        """Call the callback's ``on_end()`` if it has one."""
        on_end = getattr(self.callback, "on_end", None)
        if callable(on_end):
            on_end()

    def __call__(self, state: IterationState) -> bool:
        """Run the callback on ``state``; False asks IPOPT to stop."""
        t0 = time.perf_counter()
        try:
            returned = self.callback(state)
        except Exception as exc:  # a Ctrl-C (KeyboardInterrupt) is not caught
            self.stopped = "error"
            self.message = (
                f"the callback raised {type(exc).__name__} at iteration {state.iteration}: {exc}"
            )
            return False
        finally:
            state._live = False
            self.time_s += time.perf_counter() - t0
        if stop_requested(returned):
            settled = getattr(self.callback, "outcome", None) == "settled"
            self.stopped = "settled" if settled else "callback"
            reason = getattr(self.callback, "reason", None)
            self.message = (
                reason
                if isinstance(reason, str) and reason
                else f"stopped by the callback at iteration {state.iteration}"
            )
            return False
        return True
