"""Callbacks that watch a training run and may stop it, on both sides of the library.

``solve(problem, alg, callback=fn)`` calls ``fn(state)`` after every IPOPT iteration, and a
PyTorch trainer's ``fit(..., callback=fn)`` after every epoch. Both hand out a state with the same
small protocol (`State`), so one callback object serves both sides of a comparison::

    stop = EarlyStopping(validation, every=5, patience=4)
    sol = solve(problem, RadauIIA(200, 3), seed=0, callback=stop)   # collocation
    stop.best_iteration, stop.best_params                           # kept by the callback
    trainer.fit(system, train, callback=stop)                       # the same object, torch side

A callback is any callable ``fn(state) -> bool | None``; returning ``True`` stops the run after
this iteration (collocation: status ``SolverStatus.STOPPED``, this iterate kept; torch: status
"stopped"). Optional members: ``on_start(info: RunInfo)`` before the run (an error raised there
is a bad setting and propagates from ``solve``/``fit``), ``on_end()`` after it, and ``reason`` (a
string read after a stop; it becomes the run's message). An exception raised by ``fn(state)``
stops a collocation solve with status ``SolverStatus.CALLBACK_ERROR`` (torch: "failed"), the
message naming the exception, the iterate kept. The state is valid while the callback runs;
copy what you keep (``state.params()`` returns a new array).

Ready-made: [`EarlyStopping`][collocnode.EarlyStopping] (on a validation trajectory),
[`StopOnStagnation`][collocnode.StopOnStagnation] (the seed paper's "terminated early if no further
significant improvement in objective"), [`ProgressBar`][collocnode.ProgressBar] (tqdm, in notebooks
too) and [`CallbackList`][collocnode.CallbackList] (several at once).
[`PhaseProgress`][collocnode.PhaseProgress] shows the phases of a run (build, compile, solve, check)
and the solve's iterations: ``solve(problem, alg, progress=True)`` turns it on, in a notebook or a
terminal.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .. import _validation as v
from .._data import Trajectory
from ..models._simulate import SimulationError, simulate
from ..transcription._ipopt.iteration import IterationState, RunInfo, stop_requested
from ..transcription._problem import Inputs

__all__ = [
    "CallbackList",
    "EarlyStopping",
    "IterationState",
    "PhaseProgress",
    "ProgressBar",
    "RunInfo",
    "State",
    "StopOnStagnation",
    "StopWhenSettledRule",
    "TrainingIterationState",
    "block_outputs",
    "for_training",
    "stop_requested",
]


@runtime_checkable
class State(Protocol):
    """What every side's state offers a callback.

    Attributes:
        iteration: IPOPT's iteration (0 is the starting point) or the trainer's epoch (from 1).
        objective: IPOPT's objective, or the epoch's mean training loss.
        elapsed_s: training wall time so far [s], without the time spent in callbacks.
    """

    iteration: int
    objective: float
    elapsed_s: float

    def params(self) -> np.ndarray:
        """The current parameters, a new flat array (n_params,)."""
        ...

    def predict(self, t: np.ndarray, x0: np.ndarray, u: Any = None) -> np.ndarray:
        """The model at the current parameters rolled out from ``x0`` (n_states,) on ``t`` (n,)
        [s], with known inputs ``u`` ((n, n_inputs) at ``t``, or a callable of t); returns
        (n, n_states)."""
        ...


# ---- the training solve's state -------------------------------------------------------------
class TrainingIterationState:
    """The state a training solve hands its callback: the transcription's
    `IterationState` plus the model, to simulate it at the current parameters.

    Attributes:
        iteration, objective, elapsed_s, inf_pr, inf_du: as `IterationState`.
        model: the trained model.
    """

    __slots__ = ("_problem", "_state")

    def __init__(self, state: IterationState, problem: Any) -> None:
        self._state, self._problem = state, problem

    @property
    def iteration(self) -> int:
        return self._state.iteration

    @property
    def objective(self) -> float:
        return self._state.objective

    @property
    def elapsed_s(self) -> float:
        return self._state.elapsed_s

    @property
    def inf_pr(self) -> float:
        return self._state.inf_pr

    @property
    def inf_du(self) -> float:
        return self._state.inf_du

    @property
    def n_states(self) -> int:
        return self._state.n_states

    @property
    def model(self) -> Any:
        return self._problem.model

    def params(self) -> np.ndarray:
        """The model's parameter vector at this iterate, shape (n_params,) (without the fitted
        per-trajectory parameters that the NLP holds after it)."""
        return self._state.params()[: self.model.n_params]

    def params_by_block(self) -> dict[str, np.ndarray | float]:
        """Block weights and fitted physical parameters by name at this iterate."""
        return self.model.split_params(self.params())

    def states(self, segment: int = 0) -> np.ndarray:
        """Node states of trajectory ``segment``, shape (n_nodes, n_states)."""
        return self._state.states(segment)

    def node_times(self, segment: int = 0) -> np.ndarray:
        """Times of `states`, shape (n_nodes,) [s]."""
        return self._state.node_times(segment)

    def predict(
        self, t: np.ndarray, x0: np.ndarray, u: Any = None, **simulate_kwargs: Any
    ) -> np.ndarray:
        """Integrate the model at this iterate's parameters from ``x0`` (n_states,) on ``t``
        (n,) [s]; returns (n, n_states).

        ``u``: known inputs at ``t`` ((n, n_inputs), interpolated linearly as the PyTorch side
        does) or a callable ``t -> (n, n_inputs)``; default: the first training trajectory's.
        ``simulate_kwargs`` go to [`collocnode.simulate`][collocnode.simulate] (default rtol = atol
        = 1e-8). Raises [`SimulationError`][collocnode.SimulationError] if the rollout fails."""
        t = v.increasing("t", t)
        inputs = None
        if self.model.n_inputs:
            if u is None:
                inputs = self._problem.input_function(0)
            elif callable(u):
                inputs = u
            else:
                values = np.asarray(u, dtype=float).reshape(t.size, -1)
                inputs = Inputs.from_samples(t, values, "linear")
        settings = {
            "rtol": 1e-6,
            "atol": 1e-6,
            "trajectory_params": self._problem.layout.values(
                self._state.params(), self._problem.trajectories
            )[0],
            **simulate_kwargs,
        }
        return simulate(self.model, self.params(), t, x0, inputs=inputs, **settings).x

    def __repr__(self) -> str:
        return f"Training{self._state!r}"


class _ForTraining:
    """A user callback seen through `TrainingIterationState`s."""

    def __init__(self, problem: Any, callback: Callable[[Any], Any]) -> None:
        self.problem, self.callback = problem, callback

    def __call__(self, state: IterationState) -> Any:
        return self.callback(TrainingIterationState(state, self.problem))

    def on_start(self, info: RunInfo) -> None:
        on_start = getattr(self.callback, "on_start", None)
        if callable(on_start):
            on_start(replace(info, can_predict=True))

    def on_end(self) -> None:
        on_end = getattr(self.callback, "on_end", None)
        if callable(on_end):
            on_end()

    @property
    def reason(self) -> Any:
        return getattr(self.callback, "reason", None)

    @property
    def outcome(self) -> Any:
        return getattr(self.callback, "outcome", None)


def for_training(problem: Any, callback: Callable[[Any], Any] | None) -> Any:
    """``callback`` as the transcription runs it for a training problem: it receives
    `TrainingIterationState`s (None stays None)."""
    if callback is None:
        return None
    v.function("callback", callback)
    return _ForTraining(problem, callback)


# ---- ready-made callbacks -------------------------------------------------------------------
class EarlyStopping:
    """Stop when the error on a validation trajectory stops improving; keep the best parameters.

    Every ``every`` iterations (IPOPT iterations, or epochs on the torch side) the model at the
    current parameters is rolled out from the validation trajectory's first state over its times
    (with its inputs, if any) and its mean squared error against the validation states computed.
    The run stops after ``patience`` evaluations in a row without an improvement of more than
    ``min_delta``. A rollout that fails counts as an infinite error.

    Args:
        validation: the validation trajectory (at least 2 samples; as many states as the model).
        every: evaluate every this many iterations or epochs (a positive integer).
        patience: evaluations without improvement before the stop (a positive integer).
        min_delta: the least decrease of the error [state units²] that counts as improvement.

    Attributes (of the last run; ``on_start`` resets them):
        best_error: the lowest validation MSE (inf before any finite one).
        best_params: the parameters it came from, a flat array in the side's own layout
            (collocation: the model's parameter vector, usable with ``collocnode.models._simulate``;
            torch: the trainer's trainable parameters in ``modules()`` order), or None.
        best_iteration: the iteration (epoch) of ``best_params``, or None.
        history: ``(iteration, validation MSE)`` of every evaluation.
        reason: why it stopped ("" if it did not).
    """

    def __init__(
        self, validation: Trajectory, every: int = 5, patience: int = 5, min_delta: float = 0.0
    ) -> None:
        if not isinstance(validation, Trajectory):
            raise TypeError(f"validation must be a Trajectory, got {type(validation).__name__}")
        if validation.n_samples < 2:
            raise ValueError(
                f"validation must hold at least 2 samples to roll out, got {validation.n_samples}"
            )
        self.validation = validation
        self.every = v.positive_int("every", every)
        self.patience = v.positive_int("patience", patience)
        self.min_delta = v.nonnegative_float("min_delta", min_delta)
        self._unit = "iteration"
        self._reset()

    def _reset(self) -> None:
        self.best_error = math.inf
        self.best_params: np.ndarray | None = None
        self.best_iteration: int | None = None
        self.history: list[tuple[int, float]] = []
        self.reason = ""
        self._waiting = 0

    def on_start(self, info: RunInfo) -> None:
        """Check the validation trajectory against the model; reset the record."""
        n = self.validation.n_states
        if n != info.n_states:
            raise ValueError(
                f"validation has {n} states (validation.x has shape "
                f"{self.validation.x.shape}), the model has {info.n_states}"
            )
        if not info.can_predict:
            raise TypeError(
                "EarlyStopping needs a model to simulate: use it with solve(TrainingProblem(...)) "
                "or a trainer's fit, not with a bare DynamicOptimizationProblem"
            )
        self._unit = info.unit
        self._reset()

    def error(self, state: State) -> float:
        """The validation MSE of the model at ``state``'s parameters (inf if the rollout
        fails or leaves the finite range)."""
        val = self.validation
        u = val.u if val.u.shape[1] else None
        k = getattr(state, "start_samples", 1)  # a trainer's rollout may start from k states
        try:
            pred = np.asarray(state.predict(val.t, val.x[0] if k == 1 else val.x[:k], u), float)
        except (SimulationError, FloatingPointError):  # FloatingPointError: torch rollouts
            return math.inf
        err = float(np.mean((pred - val.x) ** 2))
        return err if math.isfinite(err) else math.inf

    def __call__(self, state: State) -> bool:
        if state.iteration % self.every:
            return False
        err = self.error(state)
        self.history.append((state.iteration, err))
        if err < self.best_error - self.min_delta:
            self.best_error, self.best_iteration = err, state.iteration
            self.best_params = np.array(state.params(), dtype=float)
            self._waiting = 0
            return False
        self._waiting += 1
        if self._waiting < self.patience:
            return False
        self.reason = (
            f"early stopping: validation MSE {self.best_error:.3g} at {self._unit} "
            f"{self.best_iteration} did not improve in {self.patience} evaluations "
            f"(every {self.every} {self._unit}s)"
        )
        return True


class StopOnStagnation:
    """Stop when the objective stagnates: over the last ``window`` iterations (epochs) it moved
    by less than ``rtol`` relative to its current value, i.e. the ``window + 1`` latest values
    f_{k-w} .. f_k satisfy ``max - min <= rtol * |f_k|``.

    This is the seed paper's rule ("terminated early if no further significant improvement in
    objective"); the run's status is then ``stopped_by_callback`` (never IPOPT's "success") and
    its message "objective stagnated: relative change < 1e-04 over 10 iterations". It is off
    unless passed as a callback.

    Args:
        rtol: relative change below which the objective counts as stagnant (positive).
        window: iterations (epochs) the change is measured over (a positive integer). A window
            longer than the run's iteration limit (IPOPT's ``max_iter``, a trainer's epochs)
            could never stop it and is refused by ``on_start``, i.e. when ``solve``/``fit``
            starts, before anything is built.
        max_infeasibility: on IPOPT, stop only at iterates whose primal infeasibility is at
            most this (default 1e-4, IPOPT's own ``constr_viol_tol``), so that a stalled but
            infeasible iterate does not end the solve; None: do not check. States without an
            infeasibility (the torch side) skip the check.
    """

    def __init__(
        self, rtol: float = 1e-4, window: int = 10, max_infeasibility: float | None = 1e-4
    ) -> None:
        self.rtol = v.positive_float("rtol", rtol)
        self.window = v.positive_int("window", window)
        if max_infeasibility is not None:
            max_infeasibility = v.positive_float("max_infeasibility", max_infeasibility)
        self.max_infeasibility = max_infeasibility
        self._unit = "iteration"
        self._values: deque[float] = deque(maxlen=self.window + 1)
        self.reason = ""

    def on_start(self, info: RunInfo) -> None:
        """Refuse a window longer than the iteration limit; reset."""
        limit = info.max_iterations
        if limit is not None and self.window > limit:
            what = "max_iter" if info.unit == "iteration" else "epochs"
            raise ValueError(
                f"window = {self.window} is longer than the iteration limit ({what} = {limit}): "
                f"the objective could never be seen to stagnate"
            )
        self._unit = info.unit
        self._values.clear()
        self.reason = ""

    def __call__(self, state: State) -> bool:
        f = float(state.objective)
        if not math.isfinite(f):
            self._values.clear()
            return False
        self._values.append(f)
        if len(self._values) <= self.window:
            return False
        if max(self._values) - min(self._values) > self.rtol * abs(f):
            return False
        if self.max_infeasibility is not None:
            inf_pr = getattr(state, "inf_pr", None)
            if inf_pr is not None and not inf_pr <= self.max_infeasibility:
                return False
        self.reason = (
            f"objective stagnated: relative change < {self.rtol:.0e} over {self.window} "
            f"{self._unit}s"
        )
        return True


def bar_count(limit: int | None, unit: str) -> tuple[int | None, str]:
    """(total, unit) of a tqdm bar over a run of at most ``limit`` units ``unit``. A trainer's
    epochs run to their count, so its bar counts to it. IPOPT stops when it converges, mostly
    long before its iteration limit, so its iterations (``unit == "iteration"``) are counted
    without a total: a bar at "8/200 4 %" on convergence reads as a run cut short. A count
    without a total reads "8 iterations [00:01, 5.3 iterations/s]"."""
    total = None if unit == "iteration" else limit
    return total, unit if total else f" {unit}s"


class ProgressBar:
    """A tqdm progress bar (``tqdm.auto``: a widget in notebooks, text in a terminal) over the
    iterations (epochs), with the objective and, on IPOPT, the infeasibilities; tqdm shows the
    elapsed time and the rate. A trainer's epochs are counted against their number; IPOPT's
    iterations are counted without a total, as IPOPT stops when it converges
    (`bar_count`).

    Args:
        desc: the bar's label.
        infeasibility: also show IPOPT's primal and dual infeasibility (on the CasADi backend
            each read costs a look at the solver's statistics).
        file: the stream a text bar is written to (default: tqdm's, standard error).
        lazy: open the bar at the first iteration instead of in ``on_start`` (for a bar that
            should not show while the NLP is built).
    """

    def __init__(
        self,
        desc: str | None = None,
        infeasibility: bool = True,
        file: Any = None,
        lazy: bool = False,
    ) -> None:
        if desc is not None and not isinstance(desc, str):
            raise TypeError(f"desc must be a string, got {desc!r}")
        self.desc = desc
        self.infeasibility = bool(infeasibility)
        self.file = file
        self.lazy = bool(lazy)
        self.bar: Any = None
        self._unit = "iteration"
        self._total: int | None = None

    def on_start(self, info: RunInfo) -> None:
        self.on_end()
        self._total, self._unit = bar_count(info.max_iterations, info.unit)
        if not self.lazy:
            self._open()

    def _open(self) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(
            total=self._total,
            desc=self.desc,
            unit=self._unit,
            dynamic_ncols=True,
            file=self.file,
        )

    def __call__(self, state: State) -> None:
        if self.bar is None:
            self._open()
        step = int(state.iteration) - self.bar.n
        if step > 0:
            self.bar.update(step)
        postfix = {"objective": f"{state.objective:.4g}"}
        if self.infeasibility and getattr(state, "inf_pr", None) is not None:
            postfix.update(inf_pr=f"{state.inf_pr:.1e}", inf_du=f"{state.inf_du:.1e}")
        self.bar.set_postfix(postfix, refresh=False)

    def on_end(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class PhaseProgress:
    """Progress a person can watch: each phase of a run (the NLP's "build", its JIT "compile",
    the IPOPT "solve", the consistency "check", and an experiment's "data", "evaluation",
    "plots") with its elapsed time, and the solve's iterations with the objective and the
    infeasibilities.

    A watcher of `collocnode.tools._progress`: install it with
    ``collocnode.tools._progress.watching(PhaseProgress())``, or let ``solve(...,
    progress=True)`` and the command lines do it. With bars (``tqdm.auto``: widgets in a
    notebook, text in a terminal) each phase shows a line whose elapsed time runs, and the solve
    a [`ProgressBar`][collocnode.ProgressBar]; without (a log file, a pipe) it writes plain lines:
    one when a phase starts and one every ``every`` iterations, each with the time since the run
    started.

    Args:
        bars: tqdm bars (True) or lines (False); None: bars when ``file`` is a terminal or the
            code runs in a notebook.
        file: where the output goes (default: standard error).
        every: iterations between two lines (lines only).
    """

    #: how often a running phase's elapsed time is redrawn [s]
    refresh_s = 0.5

    def __init__(self, bars: bool | None = None, file: Any = None, every: int = 10) -> None:
        self.file = sys.stderr if file is None else file
        self.bars = _shows_bars(self.file) if bars is None else bool(bars)
        self.every = v.positive_int("every", every)
        self._start = time.perf_counter()
        self._name: str | None = None
        self._bar: Any = None
        self._stop_ticking: threading.Event | None = None

    def phase(self, name: str) -> None:
        """End the current phase and start ``name`` ("done" only ends it)."""
        self._end_phase()
        if name == "done":
            return
        self._name = name
        if not self.bars:
            self._line(name)
        elif not name.endswith("solve"):  # the solve's bar is the iterations' (iterations())
            self._spin(name)

    def iterations(self) -> Any:
        """The callback of the solve's iterations: a bar that opens at the first iteration, or
        a line every ``every`` iterations."""
        if self.bars:
            return _IterationBar(self)
        return _IterationLines(self)

    def close(self) -> None:
        """End the current phase (the last one of a run)."""
        self._end_phase()

    def _spin(self, name: str) -> None:
        from tqdm.auto import tqdm

        self._bar = tqdm(
            total=None, desc=name, bar_format="{desc}: {elapsed_s:.1f} s", file=self.file
        )
        stop = self._stop_ticking = threading.Event()
        bar = self._bar

        def tick() -> None:
            while not stop.wait(self.refresh_s):
                bar.refresh()

        threading.Thread(target=tick, name="collocnode-progress", daemon=True).start()

    def _end_phase(self) -> None:
        if self._stop_ticking is not None:
            self._stop_ticking.set()
            self._stop_ticking = None
        if self._bar is not None:
            self._bar.refresh()
            self._bar.close()
            self._bar = None
        self._name = None

    def _line(self, text: str) -> None:
        elapsed = time.perf_counter() - self._start
        print(f"[{elapsed:8.1f} s] {text}", file=self.file, flush=True)


class _IterationBar(ProgressBar):
    """The iterations of a solve as a bar named after the phase it opens in (the solve's)."""

    def __init__(self, owner: PhaseProgress) -> None:
        super().__init__(file=owner.file, lazy=True)
        self.owner = owner

    def _open(self) -> None:
        self.desc = self.owner._name or "solve"
        super()._open()


class _IterationLines:
    """The iterations of a solve as lines ([`PhaseProgress`][collocnode.PhaseProgress] without
    bars)."""

    def __init__(self, owner: PhaseProgress) -> None:
        self.owner = owner
        self._total: int | None = None
        self._last: Any = None

    def on_start(self, info: RunInfo) -> None:
        self._total, self._last = info.max_iterations, None

    def __call__(self, state: State) -> None:
        # the infeasibilities only where a line is written: reading them costs a look at the
        # solver's statistics
        due = state.iteration % self.owner.every == 0
        self._last = (state.iteration, state.objective, _infeasibility(state) if due else "")
        if due:
            self._write()

    def on_end(self) -> None:
        if self._last is not None and self._last[0] % self.owner.every:
            self._write()  # the last iteration too (its objective)

    def _write(self) -> None:
        k, objective, infeasibility = self._last
        # the limit apart from the count: IPOPT mostly converges long before it
        of = f" (limit {self._total})" if self._total else ""
        where = self.owner._name or "solve"
        self.owner._line(f"{where}: iteration {k}{of}, objective {objective:.4g}{infeasibility}")


def _infeasibility(state: Any) -> str:
    if getattr(state, "inf_pr", None) is None:
        return ""
    return f", inf_pr {state.inf_pr:.1e}, inf_du {state.inf_du:.1e}"


def _shows_bars(file: Any) -> bool:
    """Whether progress on ``file`` should be bars: a terminal, or a notebook's kernel."""
    isatty = getattr(file, "isatty", None)
    if callable(isatty) and isatty():
        return True
    return _in_notebook_kernel() and file in (sys.stderr, sys.stdout)


def _in_notebook_kernel() -> bool:
    """Whether this process is a notebook's kernel (a running IPython shell over ZMQ); an
    imported ipykernel alone, as in a process that executes notebooks, is not one."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return type(shell).__name__ == "ZMQInteractiveShell"


class StopWhenSettledRule:
    """Stop when what the user measures has stopped changing: every ``every`` iterations the
    ``measure`` of the current model (``measure(state) -> array``: a block's output over an
    input range, the prediction of a validation trajectory, ...) is compared with its last
    value, and the run stops once its relative change ``|m − m_prev| / max(|m_prev|, floor)``
    (largest over the entries) has stayed below ``rtol`` ``patience`` times in a row.

    The run's status is then ``settled`` (``SolverStatus.SETTLED``): not IPOPT's convergence,
    but convergence in the quantity that matters, where the objective keeps creeping along flat
    directions of an over-parametrized network. Its message says by how much the measure moved.

    Args:
        measure: ``state -> array`` of the quantity watched (finite numbers).
        rtol: relative change below which it counts as settled (> 0).
        every: iterations between two evaluations (a positive integer).
        patience: evaluations in a row below ``rtol`` before the stop (a positive integer).
        floor: the least magnitude the change is relative to (> 0), so that entries near zero
            do not decide alone.
    """

    outcome = "settled"

    def __init__(
        self,
        measure: Callable[[Any], Any],
        rtol: float = 1e-3,
        every: int = 1,
        patience: int = 2,
        floor: float = 1e-8,
    ) -> None:
        self.measure = v.function("measure", measure)
        self.rtol = v.positive_float("rtol", rtol)
        self.every = v.positive_int("every", every)
        self.patience = v.positive_int("patience", patience)
        self.floor = v.positive_float("floor", floor)
        self.on_start(None)

    def on_start(self, info: Any) -> None:
        self._last: np.ndarray | None = None
        self._quiet = 0
        self.changes: list[tuple[int, float]] = []
        self.reason = ""

    def __call__(self, state: Any) -> bool:
        if state.iteration % self.every:
            return False
        value = np.asarray(self.measure(state), dtype=float).ravel()
        if not np.all(np.isfinite(value)):
            self._last, self._quiet = None, 0
            return False
        if self._last is not None and self._last.shape == value.shape:
            scale = np.maximum(np.abs(self._last), self.floor)
            change = float(np.max(np.abs(value - self._last) / scale))
            self.changes.append((state.iteration, change))
            self._quiet = self._quiet + 1 if change < self.rtol else 0
        self._last = value
        if self._quiet >= self.patience:
            last = self.changes[-1][1]
            self.reason = (
                f"settled: the measure changed by less than {self.rtol:g} (relative; last "
                f"{last:.2g}) in {self.patience} checks every {self.every} iterations"
            )
            return True
        return False


class BlockOutputs:
    """A measure for `StopWhenSettledRule`: the output of the model's block ``block`` at
    ``inputs`` (n, n_in), or (n,) for a block of one input, at the current parameters, (n,
    n_out) flattened -- e.g. a learned characteristic over the range of its input. A class
    rather than a closure, so that an algorithm holding it can be sent to another process."""

    def __init__(self, block: str, inputs: Any) -> None:
        grid = np.asarray(inputs, dtype=float)
        self.block, self.grid = block, grid[:, None] if grid.ndim == 1 else grid

    def __call__(self, state: Any) -> np.ndarray:
        weights = state.params_by_block()[self.block]
        outputs = state.model.blocks[self.block].numpy(self.grid, weights)
        return np.asarray(outputs, dtype=float).ravel()


def block_outputs(block: str, inputs: Any) -> Callable[[Any], np.ndarray]:
    """`BlockOutputs` of ``block`` at ``inputs``."""
    return BlockOutputs(block, inputs)


class CallbackList:
    """Several callbacks as one: each runs every iteration (in order); the run stops when any
    asks to, with the reason of the first that did."""

    def __init__(self, callbacks: Sequence[Callable[[Any], Any]]) -> None:
        if isinstance(callbacks, (str, bytes)) or not isinstance(callbacks, Sequence):
            raise TypeError(f"callbacks must be a sequence of callables, got {callbacks!r:.80}")
        for i, cb in enumerate(callbacks):
            v.function(f"callbacks[{i}]", cb)
        self.callbacks = list(callbacks)
        self.reason = ""
        self.outcome: str | None = None

    def on_start(self, info: RunInfo) -> None:
        self.reason, self.outcome = "", None
        for cb in self.callbacks:
            hook = getattr(cb, "on_start", None)
            if callable(hook):
                hook(info)

    def on_end(self) -> None:
        for cb in self.callbacks:
            hook = getattr(cb, "on_end", None)
            if callable(hook):
                hook()

    def __call__(self, state: State) -> bool:
        stop = False
        for cb in self.callbacks:
            if stop_requested(cb(state)) and not stop:
                stop = True
                reason = getattr(cb, "reason", None)
                self.reason = reason if isinstance(reason, str) and reason else ""
                self.outcome = getattr(cb, "outcome", None)
        return stop
