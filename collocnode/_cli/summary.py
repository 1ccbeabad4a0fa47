"""The summary a training run prints when it ends: a two-column table of its result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def table(rows: Sequence[tuple[str, Any]]) -> str:
    """Rows ``(name, value)`` as indented, aligned lines (floats to 4 significant digits)."""
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{width}}  {_fmt(val)}" for k, val in rows)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_fmt(v)}" for k, v in value.items())
    return str(value)


def result_rows(result: dict[str, Any]) -> list[tuple[str, Any]]:
    """The rows of a result: the solve's status and sizes, the errors and rates it holds, and
    the consistency check's verdict."""
    keys = ("status", "iterations", "objective", "wall_time_s", "nnz_jacobian", "nnz_hessian")
    rows = [(k, result[k]) for k in (*keys, "n_params") if k in result]
    rows += [
        (k, val)
        for k, val in result.items()
        if k.endswith(("rmse", "mse", "rate", "residual")) and val is not None
    ]
    path = result.get("regularization_path")
    if path:
        rows.append(
            (
                "regularization",
                f"λ = {path['chosen']:g} chosen on {path['holdout']} "
                f"({len(path['path'])} points, {path['times']['path']:.1f} s)",
            )
        )
    check = result.get("consistency")
    if check:
        verdict = "consistent" if check["consistent"] else "INCONSISTENT"
        where = f", in state {check['worst_state']}" if check.get("worst_state") else ""
        largest = check.get("largest_deviation")
        size = "inf" if largest is None else f"{largest:.3g}"
        rows.append(
            ("consistency", f"{verdict}: largest deviation {size}{where} (tol {check['tol']:g})")
        )
    return rows


def profile_rows(
    startup: float, phase_seconds: dict[str, float], training: dict[str, float] | None
) -> list[tuple[str, Any]]:
    """Where a run's seconds went, as rows for `table`: the command's start-up (imports and
    argument parsing) ``startup`` [s], each phase of the run in order (``phase_seconds``, the
    run record's), the training's own clock beside it (``training``: the result's
    ``wall_time_s``), and the total."""
    rows: list[tuple[str, Any]] = [("start-up (imports, options)", f"{startup:.2f} s")]
    for phase, seconds in phase_seconds.items():
        if seconds < 0.005 and phase != "training":  # a phase only passed through
            continue
        text = f"{seconds:.2f} s"
        if phase == "training" and training:
            parts = {k: v for k, v in training.items() if k != "total" and v is not None}
            text += " (" + ", ".join(f"{k} {v:.2f}" for k, v in parts.items()) + ")"
        rows.append((phase, text))
    rows.append(("total, to the summary", f"{startup + sum(phase_seconds.values()):.2f} s"))
    return rows


def succeeded(result: dict[str, Any]) -> bool:
    """Whether a training run succeeded: its solver converged and its model is consistent
    (when checked)."""
    from .._status import SolverStatus

    consistent = result.get("consistency", {}).get("consistent", True)
    try:
        converged = SolverStatus(result.get("status")).ok
    except ValueError:
        converged = False
    return bool(converged and consistent)
