"""What every recipe returns: the trained model, its phases, and a rollout in system coordinates."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as v
from .._data import Trajectory
from ..algorithm import final
from ..models._simulate import simulate
from ..problems._layout import StateLayout
from ..strategies._phases import PhasedRecord
from ..training import TrainingSolution


def widths(name: str, hidden: int | Sequence[int], depth: int = 2) -> tuple[int, ...]:
    """Hidden-layer widths: an int ``h`` means ``depth`` layers of ``h`` (the papers' nets), a
    sequence gives each layer's width (empty: no hidden layer)."""
    if isinstance(hidden, (int, np.integer)) and not isinstance(hidden, bool):
        return (v.positive_int(name, int(hidden)),) * depth
    if isinstance(hidden, (str, bytes)) or not isinstance(hidden, Sequence):
        raise TypeError(f"{name} must be an int or a sequence of ints, got {hidden!r}")
    return tuple(v.positive_int(f"{name}[{i}]", h) for i, h in enumerate(hidden))


@dataclass
class TrainedModel:
    """A recipe's outcome.

    Attributes:
        system: the benchmark system the data came from.
        solution: the collocation solution of the final training phase.
        layout: how the model's state maps to the system's (coordinate partitioning for
            mechanisms); the identity layout when the model learns the whole state.
        phases: earlier training phases by name (e.g. ``"pretrain"``), in the order they ran.
        times: wall times [s] of the work between the phases (``"warm_start"``,
            ``"simulate"``), included in `total_s`.
        notes: facts of the run a report states (e.g. whether the pre-trained model could be
            simulated over the full horizon).
        path: the regularization path that chose λ
            ([`RegularizationPathRecord`][collocnode.strategies.RegularizationPathRecord]; its time
            is in `times` as ``"regularization_path"``), None where λ was given.
    """

    system: Any
    solution: TrainingSolution
    layout: StateLayout
    phases: dict[str, TrainingSolution] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    path: Any = None

    @classmethod
    def of(cls, system: Any, solution: TrainingSolution, layout: StateLayout) -> TrainedModel:
        """The recipe's outcome from what ``solve`` returned: the trained model, and (where a
        phased strategy left a [`PhasedRecord`][collocnode.strategies.PhasedRecord] in its records)
        its earlier phases, the times between them and its notes."""
        phased = next((r for r in solution.records if isinstance(r, PhasedRecord)), None)
        return cls(
            system=system,
            solution=solution,
            layout=layout,
            phases={} if phased is None else {n: final(r) for n, r in phased.phases.items()},
            times={} if phased is None else dict(phased.times),
            notes={} if phased is None else dict(phased.notes),
        )

    @property
    def iterations(self) -> int:
        """IPOPT iterations over every phase."""
        return self.solution.iterations + sum(s.iterations for s in self.phases.values())

    @property
    def total_s(self) -> float:
        """Wall time of the whole recipe [s]: every phase and the work between them."""
        return (
            self.solution.timings["total"]
            + sum(s.timings["total"] for s in self.phases.values())
            + sum(self.times.values())
        )

    def wall_times(self) -> dict[str, float]:
        """Per-phase wall times summed over the phases, plus the work between them [s]."""
        sols = [*self.phases.values(), self.solution]
        keys = ("build", "ipopt", "callbacks", "ordering_trial")
        out = {k: sum(s.timings.get(k, 0.0) for s in sols) for k in keys}
        return out | dict(self.times) | {"total": self.total_s}

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        inputs: Callable[[np.ndarray], np.ndarray] | None = None,
        **kwargs: Any,
    ) -> Trajectory:
        """The learned model integrated on ``t`` (n,) [s] from the *system* state ``x0``
        (n_states,), in the model's coordinates (see `layout`); ``inputs`` default to
        the system's own. Raises [`SimulationError`][collocnode.SimulationError] on blow-up."""
        model = self.solution.model
        if inputs is None and model.n_inputs:
            inputs = self.system.inputs
        return simulate(model, self.solution.p, t, self.layout.reduce(x0), inputs=inputs, **kwargs)

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        inputs: Callable[[np.ndarray], np.ndarray] | None = None,
        **kwargs: Any,
    ) -> np.ndarray:
        """The rollout in system coordinates, shape (n, n_states): `simulate`, with the
        dependent coordinates of a partitioned mechanism recovered on Φ(q) = 0."""
        z = self.simulate(t, x0, inputs, **kwargs).x
        return self.layout.expand(z, self.system, np.asarray(x0, dtype=float))
