"""Rollout metrics shared by every method of the comparison.

A trained model is re-simulated from the first sample over the whole data horizon (training
window and extrapolation window together, as the FNODE/MBD-NODE code does) and compared with the
data sample by sample. MSE is the mean over samples *and* state components of the squared error
(the reference code's ``torch.mean``); the papers' tables use this form.

Three windows are scored: ``train`` (the training samples), ``test`` (the samples after them,
extrapolation) and ``full`` (all samples). MBD-NODE Table 4 and FNODE's baseline tables report
the full-window MSE (recomputed from the authors' committed arrays, it matches Table 4 exactly),
so a comparison with them needs ``full_mse``; ``test_mse`` is the extrapolation error alone.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..._data import Trajectory
from ...tools._fixed_step import DivergenceError
from ..methods.status import MethodStatus


@dataclass
class RolloutMetrics:
    """Errors of one rollout.

    Attributes:
        status: ``SUCCESS``, or ``DIVERGED`` when the rollout left the finite range (then the error
            fields are None and ``diverged_step`` / ``diverged_t`` say where).
        train_mse, train_rmse: over the samples of the training window.
        test_mse, test_rmse: over the samples after the training window (extrapolation).
        full_mse: over all samples, both windows (the papers' tables).
        constraint_violation: largest ``|g(x) − g(x_0)|`` along the rollout, for systems with
            constraints (None otherwise).
        invariant_drift: largest relative change of each conserved quantity along the rollout
            (``System.invariant_drift``), for systems that have them (None otherwise).
        predict_time_s: wall time of the rollout [s].
        extra: ``<name>_train_mse`` / ``<name>_test_mse`` / ``<name>_full_mse`` for the column
            subsets asked for.
        prediction: the rollout ``(n, n_states)`` of a successful evaluation.
    """

    status: MethodStatus
    train_mse: float | None = None
    test_mse: float | None = None
    train_rmse: float | None = None
    test_rmse: float | None = None
    full_mse: float | None = None
    constraint_violation: float | None = None
    invariant_drift: dict[str, float] | None = None
    diverged_step: int | None = None
    diverged_t: float | None = None
    predict_time_s: float = 0.0
    message: str = ""
    extra: dict[str, float | None] = field(default_factory=dict)
    prediction: np.ndarray | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The scalar fields (without the prediction array)."""
        out = asdict(self)
        out.pop("prediction")
        return out


def mse(pred: np.ndarray, ref: np.ndarray) -> float:
    """Mean over all entries of the squared difference (NaN for empty arrays)."""
    pred, ref = np.asarray(pred, dtype=float), np.asarray(ref, dtype=float)
    if pred.shape != ref.shape:
        raise ValueError(f"prediction shape {pred.shape} differs from reference {ref.shape}")
    return float(np.mean((pred - ref) ** 2)) if pred.size else math.nan


def window_errors(
    pred: np.ndarray, ref: np.ndarray, n_train: int, columns: Any = None
) -> dict[str, float | None]:
    """MSE/RMSE of ``pred`` against ``ref`` (both ``(n, n_states)``) on samples ``[0, n_train)``
    (train) and ``[n_train, n)`` (extrapolation), and the MSE over all of them (full);
    ``columns`` restricts the state components."""
    cols = slice(None) if columns is None else columns
    out: dict[str, float | None] = {}
    for key, sl in (("train", slice(0, n_train)), ("test", slice(n_train, None))):
        val = mse(pred[sl][:, cols], ref[sl][:, cols])
        out[f"{key}_mse"] = None if math.isnan(val) else val
        out[f"{key}_rmse"] = None if math.isnan(val) else math.sqrt(val)
    val = mse(pred[:, cols], ref[:, cols])
    out["full_mse"] = None if math.isnan(val) else val
    return out


def constraint_violation(system: Any, x: np.ndarray, x0: np.ndarray, t: np.ndarray) -> float | None:
    """``max_k |g(x_k) − g(x_0)|`` along the samples ``x`` (``(n, n_states)``), or None when the
    system has no constraints."""
    if not getattr(system, "n_constraints", 0):
        return None
    g0 = np.atleast_1d(system.constraints(np.asarray(x0), float(t[0])))
    worst = 0.0
    for xk, tk in zip(x, t, strict=True):
        gk = np.atleast_1d(system.constraints(xk, float(tk)))
        worst = max(worst, float(np.max(np.abs(gk - g0))))
    return worst


def _drift(system: Any, x: np.ndarray) -> dict[str, float] | None:
    if not hasattr(system, "invariant_drift") or not system.invariants(x[:1]):
        return None
    return system.invariant_drift(x)


def evaluate(
    trainer: Any,
    system: Any,
    full: Trajectory,
    n_train: int,
    columns: Any = None,
    subsets: dict[str, list[int]] | None = None,
) -> RolloutMetrics:
    """Roll ``trainer`` out from ``full.x[0]`` (its first ``trainer.start_samples`` states)
    over ``full.t`` (with the data's inputs) and score it against ``full`` on the training
    window (first ``n_train`` samples) and after it, over ``columns`` (default: all states)
    and, in ``extra``, over each named column subset."""
    start = time.perf_counter()
    u = full.u if full.u.shape[1] else None
    try:
        k = getattr(trainer, "start_samples", 1)  # Trainer's; a duck-typed model starts from x0
        pred = trainer.predict(full.t, full.x[0] if k == 1 else full.x[:k], u)
    except DivergenceError as exc:
        return RolloutMetrics(
            status=MethodStatus.DIVERGED,
            diverged_step=exc.step,
            diverged_t=exc.t,
            predict_time_s=time.perf_counter() - start,
            message=str(exc),
        )
    elapsed = time.perf_counter() - start
    if not np.all(np.isfinite(pred)):  # a method that does not raise must not pass NaNs as success
        k = int(np.argmax(~np.all(np.isfinite(pred), axis=1)))
        return RolloutMetrics(
            status=MethodStatus.DIVERGED,
            diverged_step=k,
            diverged_t=float(full.t[k]),
            predict_time_s=elapsed,
            message=f"rollout diverged at step {k} (t = {full.t[k]:.6g} s) (non-finite state)",
        )
    errs = window_errors(pred, full.x, n_train, columns)
    extra: dict[str, float | None] = {}
    for name, cols in (subsets or {}).items():
        sub = window_errors(pred, full.x, n_train, cols)
        for window in ("train", "test", "full"):
            extra[f"{name}_{window}_mse"] = sub[f"{window}_mse"]
    return RolloutMetrics(
        status=MethodStatus.SUCCESS,
        constraint_violation=constraint_violation(system, pred, full.x[0], full.t),
        invariant_drift=_drift(system, pred),
        predict_time_s=elapsed,
        extra=extra,
        prediction=pred,
        **errs,
    )
