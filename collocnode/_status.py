"""Solver outcomes, mapped from IPOPT's return codes to a small honest enum."""

from __future__ import annotations

from enum import Enum


class SolverStatus(str, Enum):
    """The outcome of a training or optimization run.

    Only ``SUCCESS`` means the solver converged to its tolerance. ``ACCEPTABLE`` means IPOPT stopped
    at its (looser) acceptable tolerance. ``STOPPED`` means a callback ended the solve by its own
    rule (early stopping, objective stagnation, ...; the message says which): the iterate is the
    one the rule asked for, not a failure of the solver, but it is not converged either, so
    ``ok`` is False for it. ``SETTLED`` means a rule on what the user measures ended the solve
    because that measure stopped changing ([`StopWhenSettled`][collocnode.StopWhenSettled]; the
    message says by how much): converged in the quantity the user cares about, if not to IPOPT's
    tolerance, so ``ok`` is True for it. ``CALLBACK_ERROR`` means the callback raised (the
    message names the exception); the last iterate is kept. Everything else is a failure of the
    solver.
    """

    SUCCESS = "success"
    ACCEPTABLE = "acceptable"
    ITERATION_LIMIT = "iteration_limit"
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    RESTORATION_FAILED = "restoration_failed"
    EVALUATION_ERROR = "evaluation_error"
    INTERRUPTED = "interrupted"
    STOPPED = "stopped_by_callback"
    SETTLED = "settled"
    CALLBACK_ERROR = "callback_error"
    FAILED = "failed"

    @property
    def ok(self) -> bool:
        """True for a converged solve (success, IPOPT's acceptable level, or settled in what
        the user measures); False for every other status, ``STOPPED`` included (a stop by a
        callback's rule on the objective is not convergence)."""
        return self in (SolverStatus.SUCCESS, SolverStatus.ACCEPTABLE, SolverStatus.SETTLED)

    def __str__(self) -> str:
        return self.value


class SolveInterrupted(KeyboardInterrupt):
    """Ctrl-C before IPOPT started: while the NLP was built ("build": the problem's symbolic
    functions, their derivatives, the sparsity) or compiled ("compile": the JIT of the node
    functions). There is no iterate to keep. A ``KeyboardInterrupt``, so code that stops on
    Ctrl-C still does; ``phase`` says where it landed. (Ctrl-C inside IPOPT is not an exception:
    the solve returns with status ``interrupted`` and the last iterate.)"""

    PHASES = ("build", "compile")

    def __init__(self, phase: str) -> None:
        if phase not in self.PHASES:
            raise ValueError(f"phase must be one of {self.PHASES}, got {phase!r}")
        super().__init__(f"interrupted during the {phase} phase, before IPOPT started")
        self.phase = phase


# IPOPT ApplicationReturnStatus names (as CasADi reports them) and integer codes (as cyipopt does).
_BY_NAME = {
    "Solve_Succeeded": SolverStatus.SUCCESS,
    "Solved_To_Acceptable_Level": SolverStatus.ACCEPTABLE,
    "Feasible_Point_Found": SolverStatus.ACCEPTABLE,
    "Maximum_Iterations_Exceeded": SolverStatus.ITERATION_LIMIT,
    "Maximum_CpuTime_Exceeded": SolverStatus.TIME_LIMIT,
    "Maximum_WallTime_Exceeded": SolverStatus.TIME_LIMIT,
    "Infeasible_Problem_Detected": SolverStatus.INFEASIBLE,
    "Restoration_Failed": SolverStatus.RESTORATION_FAILED,
    "Invalid_Number_Detected": SolverStatus.EVALUATION_ERROR,
    "User_Requested_Stop": SolverStatus.INTERRUPTED,
}
_CODE_NAMES = {
    0: "Solve_Succeeded",
    1: "Solved_To_Acceptable_Level",
    2: "Infeasible_Problem_Detected",
    3: "Search_Direction_Becomes_Too_Small",
    4: "Diverging_Iterates",
    5: "User_Requested_Stop",
    6: "Feasible_Point_Found",
    -1: "Maximum_Iterations_Exceeded",
    -2: "Restoration_Failed",
    -3: "Error_In_Step_Computation",
    -4: "Maximum_CpuTime_Exceeded",
    -5: "Maximum_WallTime_Exceeded",
    -10: "Not_Enough_Degrees_Of_Freedom",
    -11: "Invalid_Problem_Definition",
    -12: "Invalid_Option",
    -13: "Invalid_Number_Detected",
    -100: "Unrecoverable_Exception",
    -101: "NonIpopt_Exception_Thrown",
    -102: "Insufficient_Memory",
    -199: "Internal_Error",
}


def from_ipopt(status: str | int) -> tuple[SolverStatus, str]:
    """(enum, IPOPT's own name) for an IPOPT return status name or integer code."""
    name = (
        _CODE_NAMES.get(status, f"Unknown_Status_{status}") if isinstance(status, int) else status
    )
    return _BY_NAME.get(name, SolverStatus.FAILED), name
