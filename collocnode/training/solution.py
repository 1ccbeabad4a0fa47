"""A trained model: the collocation solution with its model, parameters and consistency."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validation as v
from ..data import Trajectory
from ..models.hybrid import HybridModel
from ..models.simulate import simulate
from ..transcription.solution import Solution
from . import guess as guesses
from .consistency import ConsistencyCheck, ConsistencyReport, check_consistency
from .problem import TrainingProblem

if TYPE_CHECKING:
    from .uncertainty import Profile, Uncertainty


@dataclass
class TrainingSolution:
    """A trained model: the collocation :class:`Solution` plus the model and its parameters.

    Calling it at ``t`` gives the collocation states (dense output); :meth:`simulate` integrates
    the trained model from any initial state.

    Attributes:
        solution: the collocation :class:`Solution`.
        problem: the training problem.
        consistency: the consistency check of the trained model (``solve`` runs it unless
            ``check=False``; :meth:`check_consistency` runs it again), or None if it did not run.
    """

    solution: Solution
    problem: TrainingProblem
    consistency: ConsistencyReport | None = None

    @property
    def model(self) -> HybridModel:
        return self.problem.model

    @property
    def p(self) -> np.ndarray:
        """The model's parameter vector, shape (n_params,) (the collocation solution's
        parameters also hold the fitted per-trajectory parameters after it)."""
        return self.solution.p[: self.model.n_params]

    @property
    def params(self) -> dict[str, np.ndarray | float]:
        """Block weights and fitted physical parameters by name."""
        return self.model.split_params(self.p)

    @property
    def trajectory_params(self) -> list[dict[str, float]]:
        """Per trajectory, the values of the model's per-trajectory parameters by name (the
        fitted ones as trained, the others as the data gave them); empty dicts for a model
        without any."""
        return self.problem.layout.values(self.solution.p, self.problem.trajectories)

    @property
    def status(self):
        return self.solution.status

    def __call__(self, t: np.ndarray | float) -> np.ndarray:
        return self.solution(t)

    def __getattr__(self, name: str) -> Any:
        # status, iterations, timings, history, ... come from the collocation solution. Only
        # called for names not found on the TrainingSolution itself; private names and the two
        # fields (absent while copy/pickle rebuild the object) are never forwarded.
        if name.startswith("_") or name in ("solution", "problem"):
            raise AttributeError(f"'TrainingSolution' object has no attribute {name!r}")
        try:
            return getattr(self.solution, name)
        except AttributeError:
            raise AttributeError(
                f"'TrainingSolution' object has no attribute {name!r} (nor has its collocation "
                f"Solution)"
            ) from None

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray | None = None,
        inputs: Callable[[np.ndarray], np.ndarray] | None = None,
        segment: int = 0,
        **kwargs: Any,
    ) -> Trajectory:
        """Integrate the trained model on ``t`` (n,) from ``x0`` (n_states,) (default: the
        collocation state of trajectory ``segment`` at t[0]) with that trajectory's inputs unless
        ``inputs`` is given and its per-trajectory parameters unless ``trajectory_params`` is;
        ``kwargs`` go to :func:`collocnode.models.simulate`."""
        t = v.increasing("t", t)
        if t.size == 0:
            raise ValueError("t must hold at least one output time, got an empty array")
        segment = v.nonnegative_int("segment", segment)
        if segment >= self.problem.n_trajectories:
            raise ValueError(
                f"segment must be < {self.problem.n_trajectories} (the number of trajectories), "
                f"got {segment}"
            )
        x0 = self.solution.states(t[0], segment) if x0 is None else x0
        if inputs is None and self.model.n_inputs:
            inputs = self.problem.input_function(segment)
        kwargs.setdefault("trajectory_params", self.trajectory_params[segment])
        return simulate(self.model, self.p, t, x0, inputs=inputs, **kwargs)

    def state_spread(self) -> np.ndarray:
        """The spread of every state, shape (n_states,) (units of the state): for a measured
        state the standard deviation of its measured values over all trajectories (1 where
        they are constant; the ``x_nominal="auto"`` of :class:`TrainingProblem`), for a hidden
        state the standard deviation of its collocated trajectory over every node of every
        trajectory (its largest magnitude, or 1, where that is constant)."""
        spread = self.problem.measured_spread()
        hidden = self.problem.hidden_states()
        if hidden.any():
            nodes = np.vstack(self.solution.segment_states)
            for i in np.flatnonzero(hidden):
                spread[i] = guesses.spread(nodes[:, i])
        return spread

    def scale_sources(self) -> tuple[str, ...]:
        """Where :meth:`state_spread` took each state's scale from: "data" or "collocation"."""
        return tuple("collocation" if h else "data" for h in self.problem.hidden_states())

    def check_consistency(self, settings: ConsistencyCheck | None = None) -> ConsistencyReport:
        """Re-simulate the trained model from each trajectory's collocated initial state and
        compare with the collocation trajectory (:mod:`collocnode.training.consistency`); the result
        is returned, not stored (``solve`` stores its own run in :attr:`consistency`)."""
        inputs = [
            self.problem.input_function(k) if self.model.n_inputs else None
            for k in range(self.problem.n_trajectories)
        ]
        return check_consistency(
            self.model,
            self.solution,
            self.state_spread(),
            inputs,
            settings,
            trajectory_params=self.trajectory_params,
            scale_sources=self.scale_sources(),
        )

    def uncertainty(
        self, noise: Any = None, hessian: str = "gauss-newton", **options: Any
    ) -> Uncertainty:
        """Error bars of the trained model: the Laplace approximation of its fitted quantities
        (weights, physical parameters, free initial states) at this solution, with prediction
        bands and an identifiability report (:func:`collocnode.training.uncertainty.uncertainty`;
        ``noise``: the measurement noise's standard deviation, one number or one per fitted
        column, None to estimate it; ``hessian``: "gauss-newton" or "exact")."""
        from .uncertainty import uncertainty

        return uncertainty(self, noise=noise, hessian=hessian, **options)

    def profile(self, name: str, **options: Any) -> Profile:
        """The profile likelihood of the fitted physical parameter ``name`` by warm-started
        re-solves with it fixed on a grid
        (:func:`collocnode.training.uncertainty.profile_likelihood`)."""
        from .uncertainty import profile_likelihood

        return profile_likelihood(self, name, **options)

    def to_dict(self) -> dict[str, Any]:
        """The collocation solution's summary (:meth:`Solution.to_dict`) with the consistency
        check under ``"consistency"`` (None if it did not run)."""
        out = self.solution.to_dict()
        out["consistency"] = None if self.consistency is None else self.consistency.to_dict()
        return out

    def summary(self) -> str:
        """The collocation solution's summary table with a consistency row."""
        text = self.solution.summary()
        if self.consistency is None:
            return text
        # the table's label column: as wide as its longest label, labels holding single spaces
        width = max(len(line.split("  ")[0]) for line in text.splitlines())
        return text + f"\n{'consistency':<{width}}  {self.consistency.summary()}"
