"""Collocation as one method of the comparison, behind the trainers' interface.

The model that suits the system is trained by Radau IIA collocation + IPOPT (no ODE solver, no
torch): a neural ODE on the full state for first-order systems, a second-order model
q'' = NN(q, q', u) for mechanical ones, and for mechanisms with holonomic constraints the same on
the independent coordinates only (coordinate partitioning, as FNODE and MBD-NODE do: the dependent
coordinates are recovered by Newton on Φ(q) = 0 in every rollout, so rollouts satisfy the position
constraints to Newton's tolerance).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from ..data import Trajectory
from ..problems.layout import StateLayout
from ..status import SolverStatus
from .base import FitResult, Trainer, TrainerOptions, as_trajectories
from .integrators import DivergenceError

_STATUS = {
    SolverStatus.SUCCESS: "success",
    SolverStatus.ACCEPTABLE: "success",
    SolverStatus.TIME_LIMIT: "budget",
    SolverStatus.INTERRUPTED: "interrupted",
    SolverStatus.ITERATION_LIMIT: "iteration_limit",
}


@dataclass(frozen=True)
class CollocationOptions(TrainerOptions):
    """Collocation settings on top of the shared options (``epochs`` = IPOPT's iteration limit;
    ``lr``/``batch_size``/``optimizer`` are unused).

    Attributes:
        intervals: mesh intervals over the training window (None: one per sample interval).
        stages: Radau IIA stages per interval.
        regularization: λ of the weight penalty λ‖w‖².
        per_state_nets: one network per derivative (the VdP paper setup) instead of one network
            with several outputs.
        tol: IPOPT tolerance.
        jit: compile the node functions with gcc (cached on disk).
        mumps_ordering: MUMPS ordering for IPOPT.
        hessian: "exact", "limited-memory" (IPOPT's L-BFGS; faster for wide networks, see
            docs/collocation_extensions.md) or a partial quasi-Newton update ("sr1", "bfgs",
            "sr1-xp", "bfgs-xp").
        normalize: shift/scale the network inputs by the training data's mean/std and its
            outputs by the std of finite-difference derivatives (constants, not weights).
    """

    epochs: int = 200
    normalize: bool = True
    hidden: tuple[int, ...] = (16, 16)
    activation: str = "tanh"
    intervals: int | None = None
    stages: int = 3
    regularization: float = 1e-4
    per_state_nets: bool = False
    tol: float = 1e-7
    jit: bool = False
    mumps_ordering: str = "auto"
    hessian: str = "exact"

    def __post_init__(self) -> None:
        super().__post_init__()
        from ..transcription.quasi_newton import HESSIAN_NAMES

        v.choice("hessian", self.hessian, HESSIAN_NAMES)
        if self.intervals is not None:
            v.positive_int("intervals", self.intervals)
        v.positive_int("stages", self.stages)
        v.nonnegative_float("regularization", self.regularization)
        v.positive_float("tol", self.tol)


def _scales(trajs: list[Trajectory], n_out: int, second_order: bool) -> dict[str, Any]:
    """Input shift/scale (mean/std of the network inputs) and output scale (std of the
    finite-difference derivatives the network must produce) of the training data."""
    inputs = np.vstack([np.column_stack([tr.x, tr.u]) for tr in trajs])
    derivs = np.vstack([np.gradient(tr.x, tr.t, axis=0) for tr in trajs])
    if second_order:
        derivs = derivs[:, n_out:]
    std = inputs.std(axis=0)
    out = derivs.std(axis=0)
    return {
        "input_shift": tuple(inputs.mean(axis=0)),
        "input_scale": tuple(np.where(std > 0, std, 1.0)),
        "output_scale": tuple(np.where(out > 0, out, 1.0)),
    }


def _pick(scales: dict[str, Any], k: int) -> dict[str, Any]:
    """The scales of a one-output network for output k."""
    if not scales:
        return {}
    return {**scales, "output_scale": (scales["output_scale"][k],)}


class Collocation(Trainer):
    """Radau IIA collocation + IPOPT with exact Hessians (the core of this library)."""

    name: ClassVar[str] = "collocation"
    options_class: ClassVar[type[TrainerOptions]] = CollocationOptions
    PAPER: ClassVar[dict[str, dict[str, Any]]] = {
        # Langenkamp et al. §4.2: two 2-5-5-1 sigmoid nets, 500 x 5, λ = 1e-4, tol 1e-7
        "vdp": {
            "hidden": (5, 5),
            "activation": "sigmoid",
            "per_state_nets": True,
            "intervals": 500,
            "stages": 5,
            "regularization": 1e-4,
            "jit": True,
            "normalize": False,
        },
    }
    QUICK: ClassVar[dict[str, Any]] = {"epochs": 100, "stages": 3, "jit": False}

    @classmethod
    def not_applicable(cls, system: Any) -> str | None:
        if system.name == "qvm":
            return (
                "the quarter vehicle is trained as a hybrid model: scripts/train_collocation.py qvm"
            )
        return None

    def fit(
        self,
        system: Any,
        train: Trajectory | Sequence[Trajectory],
        *,
        budget_s: float | None = None,
        callback: Callable[[Any], Any] | None = None,
    ) -> FitResult:
        from ..models import NeuralODE
        from ..nn import MLP
        from ..solve import solve
        from ..training import TrainingProblem
        from ..transcription import IpoptOptions, RadauIIA
        from ..transcription.quasi_newton import hessian_from_name

        self._require_applicable(system)
        o: CollocationOptions = self.options  # type: ignore[assignment]
        start = time.perf_counter()
        self.system = system
        self.layout = StateLayout.for_system(system)
        lay = self.layout
        trajs = [
            Trajectory(tr.t, lay.reduce(tr.x), tr.u if system.n_inputs else None)
            for tr in as_trajectories(train)
        ]
        n_in = lay.n_model + lay.n_inputs
        # Data-derived constant scalings keep the network's inputs and outputs O(1) whatever
        # the system's units; they are fixed before training, not weights.
        scales = _scales(trajs, lay.n_out, lay.second_order) if o.normalize else {}
        if o.per_state_nets:
            nets: Any = [
                MLP((n_in, *o.hidden, 1), o.activation, init=o.init, **_pick(scales, k))
                for k in range(lay.n_out)
            ]
        else:
            nets = MLP((n_in, *o.hidden, lay.n_out), o.activation, init=o.init, **scales)
        model = NeuralODE(nets, n_inputs=lay.n_inputs, second_order=lay.second_order)
        problem = TrainingProblem(
            model,
            trajs if len(trajs) > 1 else trajs[0],
            regularization=o.regularization,
            initial_state="data",
            state_guess="data",
        )
        ipopt = IpoptOptions(
            tol=o.tol,
            max_iter=o.epochs,
            print_level=0,
            max_wall_time=budget_s,
            mumps_ordering=o.mumps_ordering,
        )
        intervals = o.intervals or max(1, trajs[0].n_samples - 1)
        alg = RadauIIA(
            intervals, o.stages, jit=o.jit, ipopt=ipopt, hessian=hessian_from_name(o.hessian)
        )
        sol = solve(problem, alg, seed=o.seed)
        self.solution = sol
        self._fitted = True
        status = _STATUS.get(sol.status, "failed")
        return FitResult(
            method=self.name,
            status=status,
            train_time_s=time.perf_counter() - start,
            epochs=sol.iterations,
            n_params=model.n_params,
            best_loss=sol.objective,
            history=[(h[0], h[1], h[2]) for h in sol.history],
            message=f"IPOPT: {sol.ipopt_status}" + (f"; {sol.message}" if sol.message else ""),
        )

    def _setup(self, system: Any, trajs: list[Trajectory]) -> int:  # pragma: no cover
        raise NotImplementedError("collocation does not use the gradient-descent loop")

    def _loss(self, idx: Any) -> Any:  # pragma: no cover
        raise NotImplementedError("collocation does not use the gradient-descent loop")

    def modules(self) -> list[Any]:
        return []

    @property
    def n_params(self) -> int:
        self._require_fitted()
        return self.solution.model.n_params

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        from ..simulate import SimulationError, simulate

        t, x0 = self._check_predict_args(t, x0)
        lay, system = self.layout, self.system
        inputs = None
        if lay.n_inputs:
            if u is None:
                inputs = system.inputs
            elif callable(u):
                inputs = u
            else:
                from ..transcription import Inputs

                inputs = Inputs.from_samples(t, np.asarray(u, dtype=float), "linear")
        try:
            z = simulate(
                self.solution.model,
                self.solution.p,
                t,
                lay.reduce(x0),
                inputs=inputs,
                rtol=1e-9,
                atol=1e-9,
            ).x
        except SimulationError as exc:
            step = int(np.searchsorted(t, exc.t_fail))
            raise DivergenceError(step, float(t[min(step, t.size - 1)]), why=str(exc)) from None
        return lay.expand(z, system, x0)
