"""A trained model: the collocation solution with its model, parameters and consistency."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validation as v
from .._data import Trajectory
from .._status import SolverStatus
from ..models._hybrid import HybridModel
from ..models._simulate import SimulationError, simulate
from ..transcription._mesh import Mesh
from ..transcription._nlp.assembly import NLPSize
from ..transcription._solution import NestRecords, Solution
from . import _guess as guesses
from ._consistency import ConsistencyCheck, ConsistencyReport, check_consistency
from ._problem import TrainingProblem
from ._ranges import warn_outside

if TYPE_CHECKING:
    from ._uncertainty import Profile, Uncertainty


@dataclass
class TrainingSolution(NestRecords):
    """A trained model: the collocation [`Solution`][collocnode.Solution] plus the model and its
    parameters.

    What ``solve`` returns for a training problem, whatever the algorithm. Calling it at ``t``
    gives the collocation states (dense output); [`simulate`][collocnode.TrainingSolution.simulate]
    integrates the trained model from any initial state; `record` and `describe` tell what the
    algorithm's wrappers did.

    Attributes:
        solution: the collocation [`Solution`][collocnode.Solution] of the final solve (everything
            IPOPT returned: multipliers, controls, the NLP).
        problem: the training problem.
        consistency: the consistency check of the trained model (``solve`` runs it unless
            ``check=False``; [`check_consistency`][collocnode.TrainingSolution.check_consistency]
            runs it again), or None if it did not run.
        records: the records of the wrappers of the nest ``solve`` ran, outermost first.

    Examples:
        Train, then use the trained model: its summary, the collocation states at any time, the
        model integrated on its own, the weights by name:

        ```python
        import numpy as np

        from collocnode import IpoptOptions, NeuralODE, RadauIIA, TrainingProblem, problems, solve
        from collocnode.nn import MLP

        system = problems.get("vdp")
        split = system.generate(noise=0.1, seed=0)
        model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
        problem = TrainingProblem(model, split.train, regularization=1e-4, initial_state=system.x0)
        sol = solve(problem, RadauIIA(intervals=40, ipopt=IpoptOptions(print_level=0)), seed=0)
        print(sol.summary())
        print(sol(3.5))  # the collocation states at t = 3.5 s (dense output)
        t = np.linspace(0.0, 7.0, 141)
        learned = sol.simulate(t, system.x0)  # the trained ODE integrated on its own
        rmse = np.sqrt(np.mean((learned.x - system.simulate(t).x) ** 2))
        print(f"RMSE against the noise-free truth on [0, 7] s: {rmse:.3f}")
        print(list(sol.params))  # the trained weights by block name
        ```
    """

    solution: Solution
    problem: TrainingProblem
    consistency: ConsistencyReport | None = None
    records: tuple[Any, ...] = field(default=(), repr=False, compare=False)

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

    # ---- the final solve, as the collocation solution has it -----------------------------------
    @property
    def status(self) -> SolverStatus:
        """How the final solve ended (only ``SUCCESS`` means IPOPT converged)."""
        return self.solution.status

    @property
    def success(self) -> bool:
        return self.solution.success

    @property
    def ipopt_status(self) -> str:
        return self.solution.ipopt_status

    @property
    def message(self) -> str:
        return self.solution.message

    @property
    def objective(self) -> float:
        return self.solution.objective

    @property
    def iterations(self) -> int:
        """IPOPT iterations of the final solve (a record's ``iterations`` counts its level)."""
        return self.solution.iterations

    @property
    def history(self) -> list[tuple[float, int, float, float, float]]:
        return self.solution.history

    @property
    def timings(self) -> dict[str, float]:
        return self.solution.timings

    @property
    def size(self) -> NLPSize:
        return self.solution.size

    @property
    def non_finite_evaluations(self) -> int:
        return self.solution.non_finite_evaluations

    @property
    def mesh(self) -> Mesh:
        return self.solution.mesh

    @property
    def meshes(self) -> list[Mesh]:
        return self.solution.meshes

    @property
    def x_nodes(self) -> np.ndarray:
        return self.solution.x_nodes

    @property
    def segment_states(self) -> list[np.ndarray]:
        return self.solution.segment_states

    @property
    def t_nodes(self) -> np.ndarray:
        return self.solution.t_nodes

    @property
    def n_segments(self) -> int:
        """The trajectories (segments) collocated."""
        return self.solution.n_segments

    @property
    def tf(self) -> float | None:
        return self.solution.tf

    def derivative(self, t: np.ndarray) -> np.ndarray:
        """Time derivative of the collocation polynomials of the first trajectory at ``t``."""
        return self.solution.derivative(t)

    def states(self, t: np.ndarray | float, segment: int = 0) -> np.ndarray:
        """The collocation states of trajectory ``segment`` at ``t`` (dense output)."""
        return self.solution.states(t, segment)

    def __call__(self, t: np.ndarray | float) -> np.ndarray:
        return self.solution(t)

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray | None = None,
        inputs: Callable[[np.ndarray], np.ndarray] | None = None,
        segment: int = 0,
        check_range: bool = True,
        **kwargs: Any,
    ) -> Trajectory:
        """Integrate the trained model on ``t`` (n,) from ``x0`` (n_states,) (default: the
        collocation state of trajectory ``segment`` at t[0]) with that trajectory's inputs unless
        ``inputs`` is given and its per-trajectory parameters unless ``trajectory_params`` is;
        ``kwargs`` go to [`collocnode.simulate`][collocnode.simulate].

        With ``check_range`` (default) an `ExtrapolationWarning` says where the prediction
        first feeds a block an input outside the range it was trained on
        (`collocnode.training._ranges`)."""
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
        out = simulate(self.model, self.p, t, x0, inputs=inputs, **kwargs)
        if check_range and self.model.blocks:
            u = np.zeros((out.t.size, 0)) if inputs is None else inputs(out.t)
            warn_outside(self, out.t, out.x, np.asarray(u, dtype=float).reshape(out.t.size, -1))
        return out

    def state_spread(self) -> np.ndarray:
        """The spread of every state, shape (n_states,) (units of the state): for a measured
        state the standard deviation of its measured values over all trajectories (1 where
        they are constant; the ``x_nominal="auto"`` of
        [`TrainingProblem`][collocnode.TrainingProblem]), for a hidden state the standard deviation
        of its collocated trajectory over every node of every trajectory (its largest magnitude, or
        1, where that is constant)."""
        spread = self.problem.measured_spread()
        hidden = self.problem.hidden_states()
        if hidden.any():
            nodes = np.vstack(self.solution.segment_states)
            for i in np.flatnonzero(hidden):
                spread[i] = guesses.spread(nodes[:, i])
        return spread

    def scale_sources(self) -> tuple[str, ...]:
        """Where [`state_spread`][collocnode.TrainingSolution.state_spread] took each state's scale
        from: "data" or "collocation"."""
        return tuple("collocation" if h else "data" for h in self.problem.hidden_states())

    def check_consistency(self, settings: ConsistencyCheck | None = None) -> ConsistencyReport:
        """Re-simulate the trained model from each trajectory's collocated initial state and
        compare with the collocation trajectory (`collocnode.training._consistency`); the result
        is returned, not stored (``solve`` stores its own run in `consistency`)."""
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

    def explained(self) -> np.ndarray:
        """The share of each fitted column's variance that the trained model explains, shape
        (n_fit,): 1 − Σ residual² / Σ (value − mean)² over the observed samples inside the
        horizons of every trajectory, the residuals those of the model re-simulated (CVODES)
        from each trajectory's collocated initial state. 1 is a perfect fit, 0 no better than
        the column's mean held constant; below 0 worse than that; −inf where a re-simulation
        fails; NaN for a column whose observed values are constant."""
        problem = self.problem
        squares = np.zeros(len(problem.columns))
        values: list[np.ndarray] = []
        seen_all: list[np.ndarray] = []
        for k in range(problem.n_trajectories):
            data, inside = problem.trajectories[k], problem._inside(k)
            target, seen = problem.targets(k)[inside], problem.observed(k)[inside]
            try:
                sim = self.simulate(data.t[inside], segment=k, check_range=False, method="cvodes")
            except (SimulationError, ValueError):
                return np.full(len(problem.columns), -np.inf)
            cols = [sim.x[:, i] if kind == "x" else sim.y[:, i] for kind, i in problem.columns]
            residual = np.where(seen, np.column_stack(cols) - target, 0.0)
            if not np.all(np.isfinite(residual)):
                return np.full(len(problem.columns), -np.inf)
            squares += np.sum(residual**2, axis=0)
            values.append(target)
            seen_all.append(seen)
        target, seen = np.vstack(values), np.vstack(seen_all)
        out = np.full(len(problem.columns), np.nan)
        for c in range(target.shape[1]):
            column = target[seen[:, c], c]
            total = float(np.sum((column - column.mean()) ** 2)) if column.size else 0.0
            if total > 0:
                out[c] = 1.0 - squares[c] / total
        return out

    def uncertainty(
        self, noise: Any = None, hessian: str = "gauss-newton", **options: Any
    ) -> Uncertainty:
        """Error bars of the trained model: the Laplace approximation of its fitted quantities
        (weights, physical parameters, free initial states) at this solution, with prediction
        bands and an identifiability report (`collocnode.training._uncertainty.uncertainty`;
        ``noise``: the measurement noise's standard deviation, one number or one per fitted
        column, None to estimate it; ``hessian``: "gauss-newton" or "exact")."""
        from ._uncertainty import uncertainty

        return uncertainty(self, noise=noise, hessian=hessian, **options)

    def profile(self, name: str, **options: Any) -> Profile:
        """The profile likelihood of the fitted physical parameter ``name`` by warm-started
        re-solves with it fixed on a grid
        (`collocnode.training._uncertainty.profile_likelihood`)."""
        from ._uncertainty import profile_likelihood

        return profile_likelihood(self, name, **options)

    def to_dict(self) -> dict[str, Any]:
        """The collocation solution's summary ([`Solution.to_dict`][collocnode.Solution.to_dict])
        with the consistency check under ``"consistency"`` (None if it did not run)."""
        out = self.solution.to_dict()
        out["consistency"] = None if self.consistency is None else self.consistency.to_dict()
        return out

    def summary(self) -> str:
        """The collocation solution's summary table with a consistency row and a row per
        level of the nest."""
        text = self.solution.summary()
        rows = [] if self.consistency is None else [("consistency", self.consistency.summary())]
        rows += self._nest_rows()
        if not rows:
            return text
        # the table's label column: as wide as its longest label, labels holding single spaces
        width = max(len(line.split("  ")[0]) for line in text.splitlines())
        return text + "".join(f"\n{k:<{width}}  {val}" for k, val in rows)
