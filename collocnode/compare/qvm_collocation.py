"""Collocation on the quarter vehicle, behind the trainers' interface: the hybrid PeN-ODE.

The generic :class:`~collocnode.compare.collocation.Collocation` trainer fits a black-box neural
ODE; the quarter vehicle is instead trained as the paper's hybrid model (two 1-5-5-1 force
networks inside the known linear physics, fitted to the accelerations) by
:func:`collocnode.experiments.qvm.train`. This module only adapts that experiment to the
comparison: the harness's training data goes in, the experiment's strategy (II by default) runs
unchanged, and the trained model is rolled out and its characteristics scored as the experiment
does. ``make_trainer("collocation", "qvm")`` returns this trainer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from ..data import Trajectory
from .base import FitResult, Trainer, TrainerOptions, as_trajectories
from .collocation import _STATUS
from .integrators import DivergenceError


@dataclass(frozen=True)
class QVMCollocationOptions(TrainerOptions):
    """The quarter-vehicle experiment's settings as trainer options; the defaults are its
    paper settings (Langenkamp et al. §4.1.2: strategy II, 2,500 × 5 Radau IIA over 42 s,
    1-5-5-1 squareplus networks, at most 150 IPOPT iterations per phase).

    ``epochs`` is IPOPT's iteration limit of each phase, ``hidden``/``activation`` the force
    networks' hidden layers; ``lr``/``batch_size``/``optimizer``/``normalize`` are unused (the
    blocks are scaled by the experiment: inputs by their training σ, outputs by the linear
    element's force at one σ).

    Attributes:
        strategy: "I", "II" or "III" (see :mod:`collocnode.experiments.qvm`).
        intervals: mesh intervals per 42 s; scaled to the data's horizon.
        stages: Radau IIA stages per interval.
        pretrain_fraction: share of the data of strategy II's first phase.
        rational_degree: degree of strategy III's rational Chebyshev blocks.
        regularization: λ of the weight penalty.
        tol: IPOPT tolerance.
        jit: compile the node functions with gcc (cached on disk).
    """

    epochs: int = 150
    hidden: tuple[int, ...] = (5, 5)
    activation: str = "squareplus"
    strategy: str = "II"
    intervals: int = 2500
    stages: int = 5
    pretrain_fraction: float = 0.125
    rational_degree: int = 7
    regularization: float = 0.0
    tol: float = 1e-7
    jit: bool = True

    def experiment(self, max_wall_time: float | None) -> Any:
        """The :class:`~collocnode.experiments.qvm.QVMOptions` of these settings (validates
        them; the experiment's ``noise``/``duration`` are unused, the data is given)."""
        from ..experiments.qvm import QVMOptions

        return QVMOptions(
            strategy=self.strategy,
            seed=self.seed,
            intervals=self.intervals,
            stages=self.stages,
            pretrain_fraction=self.pretrain_fraction,
            hidden=self.hidden,
            activation=self.activation,
            rational_degree=self.rational_degree,
            regularization=self.regularization,
            tol=self.tol,
            max_iter=self.epochs,
            jit=self.jit,
            print_level=0,
            max_wall_time=max_wall_time,
        )

    def __post_init__(self) -> None:
        super().__post_init__()
        self.experiment(None)


class QVMCollocation(Trainer):
    """The quarter-vehicle PeN-ODE trained by collocation; see the module docstring."""

    name: ClassVar[str] = "collocation"
    options_class: ClassVar[type[TrainerOptions]] = QVMCollocationOptions
    derivative_source: ClassVar[str] = "output"  # x'[2:4] are the model's outputs a_b, a_w
    # CI-sized: 3 stages (the mesh is scaled to the short quick horizon), few iterations, no gcc
    QUICK: ClassVar[dict[str, Any]] = {"epochs": 30, "stages": 3, "jit": False}

    @classmethod
    def not_applicable(cls, system: Any) -> str | None:
        if system.name != "qvm":
            return "the hybrid quarter-vehicle model applies to the quarter vehicle only"
        return None

    def fit(
        self,
        system: Any,
        train: Trajectory | Sequence[Trajectory],
        *,
        budget_s: float | None = None,
        callback: Callable[[Any], Any] | None = None,
    ) -> FitResult:
        from ..experiments import qvm as experiment

        self._require_applicable(system)
        trajs = as_trajectories(train)
        if len(trajs) != 1:
            raise ValueError(f"the quarter vehicle trains on one trajectory, got {len(trajs)}")
        if budget_s is not None:
            budget_s = v.positive_float("budget_s", budget_s)
        o: QVMCollocationOptions = self.options  # type: ignore[assignment]
        start = time.perf_counter()
        sol, phases = experiment.train(o.experiment(budget_s), system, trajs[0])
        elapsed = time.perf_counter() - start
        self.system, self.solution, self.data = system, sol, trajs[0]
        self._fitted = True
        iterations = sol.iterations + (phases["pretrain"].iterations if "pretrain" in phases else 0)
        detail = f"IPOPT: {sol.ipopt_status}"
        if "pretrain" in phases:
            pre = phases["pretrain"]
            detail = f"pre-training {pre.iterations} it. ({pre.ipopt_status}), final " + detail
        return FitResult(
            method=self.name,
            status=_STATUS.get(sol.status, "failed"),
            train_time_s=elapsed,
            epochs=iterations,
            n_params=sol.model.n_params,
            best_loss=sol.objective,
            history=[(h[0], h[1], h[2]) for h in sol.history],
            message=detail + (f"; {sol.message}" if sol.message else ""),
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

    def characteristic_errors(self) -> dict[str, Any]:
        """Learned vs true friction and spring over ±2σ of the training inputs (the
        experiment's :func:`~collocnode.experiments.qvm.characteristic_errors`)."""
        from ..experiments.qvm import characteristic_errors

        self._require_fitted()
        return characteristic_errors(self.solution, self.system, self.data)

    def predict_with_derivatives(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rollout ``(n, 5)`` and the model's x' along it ``(n, 5)`` (x'[:, 2:4] are its
        outputs a_b, a_w). Integrated as the experiment does (RK4, two steps per sample)."""
        import casadi as ca

        from ..simulate import SimulationError, simulate

        t, x0 = self._check_predict_args(t, x0)
        inputs = _input_function(self.system, t, u)
        model, p = self.solution.model, self.solution.p
        try:
            x = simulate(model, p, t, x0, inputs=inputs, method="rk4").x
        except SimulationError as exc:
            step = int(np.searchsorted(t, exc.t_fail))
            raise DivergenceError(step, float(t[min(step, t.size - 1)]), why=str(exc)) from None
        us = np.asarray(inputs(t), dtype=float).reshape(t.size, model.n_inputs)
        xdot = model.function.map(t.size)(x.T, ca.DM(p), us.T, t[None, :])[0]
        return x, np.asarray(xdot).T

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        return self.predict_with_derivatives(t, x0, u, params=params)[0]


def _input_function(system: Any, t: np.ndarray, u: Any) -> Callable[[np.ndarray], np.ndarray]:
    """Road velocity as ``u(t: (n,)) -> (n, 1)``: the training road (None), a callable, or
    samples at ``t`` interpolated linearly (as the torch methods receive them)."""
    if u is None:
        return lambda tt: system.inputs(np.asarray(tt, dtype=float)).reshape(-1, 1)
    if callable(u):
        return lambda tt: np.asarray(u(np.asarray(tt, dtype=float)), dtype=float).reshape(-1, 1)
    us = v.finite_array("u", u).reshape(t.size, -1)[:, 0]
    return lambda tt: np.interp(np.asarray(tt, dtype=float), t, us).reshape(-1, 1)
