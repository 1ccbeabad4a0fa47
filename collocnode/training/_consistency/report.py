"""What the consistency check found: the deviation on each trajectory's horizon, what the
re-simulation did in the margin past the data, a verdict, and advice that fits the failure."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: leaving the collocation trajectory's range by more than this many times its width within the
#: margin past the data counts as diverging there
DIVERGED_EXCURSION = 1.0
#: a deviation above the tolerance from before this fraction of the horizon is a local
#: (discretisation) error of the collocation; one that starts later is a deviation the learned
#: field amplifies along the trajectory
EARLY = 0.2


class InconsistentModelWarning(UserWarning):
    """The learned ODE, re-simulated from the collocated initial state, leaves the collocation
    trajectory by more than the check's tolerance, or diverges just past the data (the status
    stays what IPOPT said)."""


@dataclass(frozen=True)
class Beyond:
    """The re-simulation of one trajectory continued past its last data time.

    Attributes:
        until: the end of the margin [s], or None where it was not simulated (no margin, or
            inputs unknown beyond the data).
        failed_at: where the re-simulation failed in the margin [s] (None if it did not).
        excursion: how far the state left the collocation trajectory's range in the margin,
            in units of that range's width (per state's largest; 0 inside it, inf on failure).
        state: the state of the largest excursion.
        note: why the margin was not simulated ("" otherwise).
    """

    until: float | None
    failed_at: float | None = None
    excursion: float = 0.0
    state: int = 0
    note: str = ""

    @property
    def diverged(self) -> bool:
        return self.failed_at is not None or self.excursion > DIVERGED_EXCURSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "until": self.until,
            "failed_at": self.failed_at,
            "excursion": None if not np.isfinite(self.excursion) else self.excursion,
            "state": self.state,
            "diverged": self.diverged,
            "note": self.note,
        }


@dataclass(frozen=True)
class ConsistencyReport:
    """The outcome of the consistency check of a trained model.

    Attributes:
        consistent: True if no scaled deviation exceeds ``tol`` on any trajectory's horizon,
            every re-simulation ran over its whole horizon, and none diverged in the margin
            past the data.
        tol: the tolerance used (dimensionless).
        max_deviation: largest scaled deviation, shape (n_trajectories, n_states); +inf where
            the re-simulation failed.
        rms_deviation: time-RMS of the scaled deviation over the horizon, same shape; +inf where
            the re-simulation failed.
        exceeds_from: first time [s] the scaled deviation exceeds ``tol``, same shape; NaN
            where it never does (a failed re-simulation exceeds it at the latest where it
            failed).
        failed_at: time [s] where the re-simulation of each trajectory failed (the last time
            of the check's grid it reached), shape (n_trajectories,); NaN where it did not.
        failures: the integrator's message per trajectory ("" where it did not fail).
        scales: the spread s_i of each state, shape (n_states,) (units of the state).
        state_names: labels of the states.
        horizons: (t0, tf) of each trajectory [s].
        wall_time_s: wall time of the check [s].
        beyond: per trajectory, the re-simulation continued past its data (`Beyond`).
        method: the integrator that ran the check.
        scale_sources: where each state's scale comes from: "data" (its measured values) or
            "collocation" (a hidden state: its collocated trajectory); empty: all from data.
    """

    consistent: bool
    tol: float
    max_deviation: np.ndarray
    rms_deviation: np.ndarray
    exceeds_from: np.ndarray
    failed_at: np.ndarray
    failures: tuple[str, ...]
    scales: np.ndarray
    state_names: tuple[str, ...]
    horizons: tuple[tuple[float, float], ...]
    wall_time_s: float
    beyond: tuple[Beyond, ...] = field(default=())
    method: str = ""
    scale_sources: tuple[str, ...] = ()

    @property
    def n_trajectories(self) -> int:
        return int(self.max_deviation.shape[0])

    @property
    def within_horizon(self) -> bool:
        """The verdict on the horizons of the data alone (the margin past them left out)."""
        return bool(np.all(self.max_deviation <= self.tol) and np.all(np.isnan(self.failed_at)))

    @property
    def diverges_beyond(self) -> int | None:
        """The first trajectory whose re-simulation diverges in the margin past its data, or
        None."""
        return next((k for k, b in enumerate(self.beyond) if b.diverged), None)

    @property
    def worst(self) -> tuple[int, int]:
        """(trajectory, state) of the largest deviation; among equal ones (e.g. +inf of a
        blow-up) the one that exceeds the tolerance first."""
        starts = np.where(np.isnan(self.exceeds_from), np.inf, self.exceeds_from)
        order = np.lexsort((starts.ravel(), -self.max_deviation.ravel()))
        k, i = np.unravel_index(int(order[0]), self.max_deviation.shape)
        return int(k), int(i)

    @property
    def largest(self) -> float:
        """The largest scaled deviation over every trajectory and state."""
        return float(self.max_deviation.max())

    def _name(self, i: int) -> str:
        return self.state_names[i] if self.state_names else f"x{i}"

    @property
    def worst_state(self) -> str:
        """Name of the state with the largest deviation (``x<i>`` where states are unnamed)."""
        return self._name(self.worst[1])

    @property
    def worst_trajectory(self) -> int:
        return self.worst[0]

    @property
    def starts_at(self) -> float | None:
        """Time [s] from which the largest deviation exceeds the tolerance (None if it does
        not)."""
        t = float(self.exceeds_from[self.worst])
        return None if np.isnan(t) else t

    def _of(self, k: int) -> str:
        return f" of trajectory {k}" if self.n_trajectories > 1 else ""

    def describe(self) -> str:
        """One sentence on the largest deviation: its size, state, trajectory and start; or on
        the divergence past the data where the horizons are fine."""
        k, _ = self.worst
        where = self._of(k)
        if np.isfinite(self.failed_at[k]) and not np.isfinite(self.largest):
            start = self.starts_at
            text = (
                f"the re-simulated model fails at t = {self.failed_at[k]:.4g}{where} "
                f"({self.failures[k]})"
            )
            if start is not None and start < self.failed_at[k]:
                text += (
                    f"; state {self.worst_state!r} leaves the collocation trajectory by more "
                    f"than {self.tol:g} from t = {start:.4g}"
                )
            return text
        text = f"largest scaled deviation {self.largest:.3g} in state {self.worst_state!r}{where}"
        if self.starts_at is not None:
            text += f", above {self.tol:g} from t = {self.starts_at:.4g}"
        j = self.diverges_beyond
        if self.within_horizon and j is not None:
            text += "; " + self._beyond_text(j)
        return text

    def _beyond_text(self, k: int) -> str:
        b, (_, tf) = self.beyond[k], self.horizons[k]
        if b.failed_at is not None:
            return (
                f"past the data (t > {tf:.4g}) the re-simulation{self._of(k)} diverges at "
                f"t = {b.failed_at:.4g}"
            )
        return (
            f"past the data (t > {tf:.4g}) state {self._name(b.state)!r}{self._of(k)} leaves "
            f"the range of its trajectory by {b.excursion:.3g} times its width by t = "
            f"{b.until:.4g}"
        )

    def beyond_summary(self) -> str:
        """What the check says of the time past the data: bounded up to where, diverging, or
        unverified (and why)."""
        if not self.beyond:
            return "unverified beyond the data"
        j = self.diverges_beyond
        if j is not None:
            return self._beyond_text(j)
        notes = [b.note for b in self.beyond if b.until is None and b.note]
        if notes:
            return f"unverified beyond the data ({notes[0]})"
        ends = [b.until for b in self.beyond if b.until is not None]
        return f"bounded past the data up to t = {max(ends):.4g}" if ends else "unverified"

    @property
    def units(self) -> str:
        """What the deviations are measured in, for the messages."""
        hidden = [
            self._name(i) for i, source in enumerate(self.scale_sources) if source == "collocation"
        ]
        if not hidden:
            return "in units of each state's spread in the data"
        listed = ", ".join(repr(n) for n in hidden)
        return (
            f"in units of each state's spread in the data; for the hidden state"
            f"{'s' if len(hidden) > 1 else ''} {listed}, in the collocated trajectory"
        )

    def summary(self) -> str:
        """One line for a run's summary."""
        if self.consistent:
            return (
                f"consistent: re-simulation within {self.tol:g} of the collocation trajectory "
                f"({self.describe()}; {self.beyond_summary()}; check {self.wall_time_s:.2f} s)"
            )
        return (
            f"INCONSISTENT: {self.describe()} (tolerance {self.tol:g}, {self.units}; check "
            f"{self.wall_time_s:.2f} s)"
        )

    def advice(self) -> str:
        """What is likely to help, from how the check failed ("" when it did not)."""
        if self.consistent:
            return ""
        if self.within_horizon:
            return (
                "The model follows its collocation trajectory on the data but not past it: "
                "raise the regularization (collocnode.RegularizationPath chooses it on "
                "held-out data) or train on a longer horizon."
            )
        k, _ = self.worst
        message = self.failures[k].lower()
        if np.isfinite(self.failed_at[k]) and ("step" in message or "budget" in message):
            return (
                "The re-simulation ran out of steps: if the model is stiff, check it with an "
                "implicit integrator (ConsistencyCheck(method='Radau')); otherwise its learned "
                "field is unstable: raise the regularization or simplify the model."
            )
        if np.isfinite(self.failed_at[k]):
            return (
                "The learned field is unstable along the trajectory: raise the regularization "
                "or simplify the model; a finer mesh helps only where the deviation starts "
                "small."
            )
        t0, tf = self.horizons[k]
        start = self.starts_at
        if start is not None and start - t0 <= EARLY * (tf - t0):
            return (
                "The deviation starts early, a local error of the collocation: refine the "
                "mesh (collocnode.UntilConsistent does it where the error is largest)."
            )
        return (
            "The deviation grows late along the trajectory, which the learned field amplifies: "
            "raise the regularization, or refine the mesh (collocnode.UntilConsistent)."
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict for ``result.json``: deviations per trajectory as lists over the
        states (+inf where the re-simulation failed: strict JSON writers turn it into null, and
        ``failed_at`` says where)."""
        names = list(self.state_names) or [f"x{i}" for i in range(self.scales.size)]
        return {
            "consistent": self.consistent,
            "tol": self.tol,
            "method": self.method,
            "largest_deviation": self.largest,
            "worst_state": self.worst_state,
            "worst_trajectory": self.worst_trajectory,
            "starts_at": self.starts_at,
            "state_names": names,
            "max_deviation": self.max_deviation.tolist(),
            "rms_deviation": self.rms_deviation.tolist(),
            "exceeds_from": [
                [None if np.isnan(t) else float(t) for t in row] for row in self.exceeds_from
            ],
            "failed_at": [None if np.isnan(t) else float(t) for t in self.failed_at],
            "failures": list(self.failures),
            "scales": self.scales.tolist(),
            "scale_sources": list(self.scale_sources) or ["data"] * self.scales.size,
            "beyond": [b.to_dict() for b in self.beyond],
            "beyond_summary": self.beyond_summary(),
            "advice": self.advice(),
            "wall_time_s": self.wall_time_s,
        }

    def warn(self, stacklevel: int = 2) -> None:
        """Issue an [`InconsistentModelWarning`][collocnode.InconsistentModelWarning] if the check
        failed, with its advice."""
        if not self.consistent:
            warnings.warn(
                f"the trained model is inconsistent with its collocation trajectory: "
                f"{self.describe()} (tolerance {self.tol:g}, {self.units}). The solver status "
                f"is unchanged. {self.advice()}",
                InconsistentModelWarning,
                stacklevel=stacklevel + 1,
            )
