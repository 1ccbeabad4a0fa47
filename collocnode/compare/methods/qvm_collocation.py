"""Collocation on the quarter vehicle, behind the trainers' interface: the hybrid PeN-ODE.

The generic :class:`~collocnode.compare.methods.collocation.Collocation` trainer fits a black-box
neural ODE; the quarter vehicle is instead trained by its recipe
(:class:`collocnode.recipes.qvm.QVMRecipe`: two 1-5-5-1 force networks inside the known linear
physics, fitted to the accelerations; strategy II by default). This module adds what the quarter
vehicle's scenario scores besides the rollout: the learned characteristics and the model's
accelerations along a rollout. ``make_trainer("collocation", "qvm")`` returns this trainer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ... import _validation as v
from ...models.simulate import SimulationError, simulate
from ...recipes.qvm import QVMRecipe, characteristic_errors
from ...tools.fixed_step import DivergenceError
from .collocation import Collocation, CollocationOptions
from .options import TrainerOptions


@dataclass(frozen=True)
class QVMCollocationOptions(CollocationOptions):
    """The quarter-vehicle recipe as trainer options; the defaults are its paper settings
    (Langenkamp et al. §4.1.2: strategy II, 2,500 × 5 Radau IIA over 42 s, 1-5-5-1 squareplus
    networks, at most 150 IPOPT iterations per phase)."""

    epochs: int = 150
    hidden: tuple[int, ...] = (5, 5)
    activation: str = "squareplus"
    normalize: bool = False

    def default_recipe(self) -> Any:
        return QVMRecipe()


class QVMCollocation(Collocation):
    """The quarter-vehicle PeN-ODE trained by collocation; see the module docstring."""

    options_class: ClassVar[type[TrainerOptions]] = QVMCollocationOptions
    derivative_source: ClassVar[str] = "output"  # x'[2:4] are the model's outputs a_b, a_w

    @classmethod
    def not_applicable(cls, system: Any) -> str | None:
        if system.name != "qvm":
            return "the hybrid quarter-vehicle model applies to the quarter vehicle only"
        return None

    def characteristic_errors(self) -> dict[str, Any]:
        """Learned vs true friction and spring over ±2σ of the training inputs
        (:func:`collocnode.recipes.qvm.characteristic_errors`)."""
        return characteristic_errors(self.solution, self.system, self.data[0])

    def predict_with_derivatives(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rollout ``(n, 5)`` and the model's x' along it ``(n, 5)`` (x'[:, 2:4] are its
        outputs a_b, a_w). Integrated as the experiment does (RK4, two steps per sample). A
        four-state model (``road_as_input``) gets the road height as an input: x0's z_r plus the
        integral of the road velocity; it is the rollout's fifth column."""
        import casadi as ca

        t, x0 = self._check_predict_args(t, x0)
        inputs = _road_velocity(self.system, t, u)
        model, p = self.solution.model, self.solution.p
        if model.n_states == 4:
            inputs = _with_road_height(inputs, t, float(x0[4]))
        try:
            x = simulate(model, p, t, x0[: model.n_states], inputs=inputs, method="rk4").x
        except SimulationError as exc:
            step = int(np.searchsorted(t, exc.t_fail))
            raise DivergenceError(step, float(t[min(step, t.size - 1)]), why=str(exc)) from None
        us = np.asarray(inputs(t), dtype=float).reshape(t.size, model.n_inputs)
        xdot = np.asarray(model.function.map(t.size)(x.T, ca.DM(p), us.T, t[None, :])[0]).T
        if model.n_states == 4:  # the road height and its rate, as the five-state model has them
            x, xdot = np.column_stack([x, us[:, 0]]), np.column_stack([xdot, us[:, 1]])
        return x, xdot

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        return self.predict_with_derivatives(t, x0, u, params=params)[0]


def _with_road_height(
    velocity: Callable[[np.ndarray], np.ndarray], t: np.ndarray, z0: float
) -> Callable[[np.ndarray], np.ndarray]:
    """``u(t) -> (n, 2)``: the road height z0 + ∫ ż_r (the exact integral of the velocity's
    linear interpolant on ``t``) and the velocity itself."""
    from scipy.interpolate import make_interp_spline

    height = make_interp_spline(t, velocity(t)[:, 0], k=1).antiderivative()
    t0 = float(t[0])

    def u(tt: np.ndarray) -> np.ndarray:
        tt = np.atleast_1d(np.asarray(tt, dtype=float))
        return np.column_stack([z0 + height(tt) - height(t0), velocity(tt)[:, 0]])

    return u


def _road_velocity(system: Any, t: np.ndarray, u: Any) -> Callable[[np.ndarray], np.ndarray]:
    """Road velocity as ``u(t: (n,)) -> (n, 1)``: the training road (None), a callable, or
    samples at ``t`` interpolated linearly (as the torch methods receive them)."""
    if u is None:
        return lambda tt: system.inputs(np.asarray(tt, dtype=float)).reshape(-1, 1)
    if callable(u):
        return lambda tt: np.asarray(u(np.asarray(tt, dtype=float)), dtype=float).reshape(-1, 1)
    us = v.finite_array("u", u).reshape(t.size, -1)[:, 0]
    return lambda tt: np.interp(np.asarray(tt, dtype=float), t, us).reshape(-1, 1)
