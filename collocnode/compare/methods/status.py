"""The outcome of one method of the comparison: one vocabulary, from the fit to ``compare.json``.

A trainer's `FitResult` carries one of these, a rollout
that leaves the finite range turns it into ``DIVERGED``, and a comparison run adds
``NOT_APPLICABLE``, ``FAILED`` (the method raised) and ``INTERRUPTED`` (Ctrl-C). The values are
the words ``compare.json`` and ``compare.md`` have always held, so stored runs read the same;
being a ``str`` enum, a status equals its word (``MethodStatus.SUCCESS == "success"``).

A collocation solve reports the core's [`SolverStatus`][collocnode.SolverStatus];
`MethodStatus.from_solver` is the one place that maps it to this vocabulary.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from ..._status import SolverStatus


class MethodStatus(str, Enum):
    """How a method's training (and scoring) ended.

    ``SUCCESS``: trained to its epoch limit, or converged (collocation). ``BUDGET``: the
    wall-time budget ran out (the best weights are kept). ``ITERATION_LIMIT``: IPOPT's iteration
    limit without convergence. ``STOPPED``: a training callback stopped it by its own rule (the
    message says why). ``INTERRUPTED``: Ctrl-C (the best weights so far are kept; in a run also
    a method skipped after it). ``DIVERGED``: the loss or the rollout left the finite range.
    ``FAILED``: the method raised (or its callback did, or IPOPT failed). ``NOT_APPLICABLE``: the
    method does not apply to the system (the message says why).
    """

    SUCCESS = "success"
    BUDGET = "budget"
    ITERATION_LIMIT = "iteration_limit"
    STOPPED = "stopped"
    INTERRUPTED = "interrupted"
    DIVERGED = "diverged"
    FAILED = "failed"
    NOT_APPLICABLE = "not applicable"

    @property
    def unfinished(self) -> bool:
        """True for ``FAILED`` and ``INTERRUPTED``: the method did not run to an end of its own
        (the command line then exits non-zero)."""
        return self in (MethodStatus.FAILED, MethodStatus.INTERRUPTED)

    @classmethod
    def of(cls, value: Any, name: str = "status") -> MethodStatus:
        """``value`` (a status or its word, e.g. read back from ``compare.json``) as a status;
        any other value is one ValueError naming ``name`` and the valid words."""
        try:
            return cls(value)
        except ValueError:
            valid = ", ".join(repr(s.value) for s in cls)
            raise ValueError(f"{name} must be one of {valid}, got {value!r:.80}") from None

    @classmethod
    def from_solver(cls, status: SolverStatus) -> MethodStatus:
        """The comparison's word for a collocation solve that ended with ``status``: converged
        (success, IPOPT's acceptable level, or settled in the measure a rule watched) is
        ``SUCCESS``; a wall-time limit is ``BUDGET``
        like a trainer's; every solver failure is ``FAILED``."""
        if status.ok:
            return cls.SUCCESS
        return _FROM_SOLVER.get(SolverStatus(status), cls.FAILED)

    def __str__(self) -> str:
        return self.value


# the solver outcomes that have a word of their own here; the rest are failures of the solver
_FROM_SOLVER = {
    SolverStatus.TIME_LIMIT: MethodStatus.BUDGET,
    SolverStatus.INTERRUPTED: MethodStatus.INTERRUPTED,
    SolverStatus.ITERATION_LIMIT: MethodStatus.ITERATION_LIMIT,
    SolverStatus.STOPPED: MethodStatus.STOPPED,
}
