"""What the comparison reads off a model trained by a recipe, chosen by the recipe.

The collocation method (`collocnode.compare.methods.collocation`) is one trainer for every
recipe of `collocnode.recipes`; what differs between the recipes' models is data here, one
`Readout` per recipe type in `READOUTS`:

* a neural ODE of the generic `SystemRecipe` (Van der Pol's
  paper setup included) is rolled out in system coordinates, as the recipe does (adaptive
  integration to 1e-9, the dependent coordinates of a mechanism recovered on Φ(q) = 0);
* the quarter vehicle's hybrid PeN-ODE (`QVMRecipe`: two 1-5-5-1
  force networks inside the known linear physics) is integrated as its experiment does it (RK4,
  two steps per sample interval) and also gives its accelerations a_b, a_w (its outputs, which are
  x'[2:4]) along the rollout and its learned friction and spring characteristics.

Known inputs ``u`` reach a rollout as the torch methods receive them: samples at the rollout
times, interpolated linearly, a callable of t, or None for the system's own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import _validation as v
from ..._data import Trajectory
from ...models._simulate import simulate
from ...recipes.base import TrainedModel
from ...recipes.generic import SystemRecipe
from ...recipes.qvm import QVMRecipe, characteristic_errors
from ...transcription import Inputs

#: ``(trained, t (n,) [s], x0 (n_states,), u) -> (x (n, n_states), x' (n, n_states) or None)``;
#: raises `SimulationError` when the rollout blows up
Rollout = Callable[[TrainedModel, np.ndarray, np.ndarray, Any], tuple[np.ndarray, Any]]


@dataclass(frozen=True)
class Readout:
    """How the comparison reads a model trained by one type of recipe.

    Attributes:
        model: the model the recipe builds, in words (an inapplicable system's reason names it).
        rollout: the trained model rolled out from a system state (see `Rollout`); the
            derivative is None where the model gives states only.
        derivative_source: where the rollout's x' comes from, as the quarter vehicle's scenario
            records it (``"output"``: the model's own outputs); None: the model gives states only.
        characteristics: ``(trained, training data) -> {block: errors}``, the learned
            characteristics against the true ones; None where the model has none to score.
    """

    model: str
    rollout: Rollout
    derivative_source: str | None = None
    characteristics: Callable[[TrainedModel, Sequence[Trajectory]], dict[str, Any]] | None = None


def _state_rollout(
    trained: TrainedModel, t: np.ndarray, x0: np.ndarray, u: Any
) -> tuple[np.ndarray, None]:
    """The recipe's own rollout in system coordinates, ``(n, n_states)``; no derivative."""
    inputs = None
    if trained.solution.model.n_inputs and u is not None:
        if callable(u):
            inputs = u
        else:
            samples = np.asarray(u, dtype=float).reshape(t.size, -1)
            inputs = Inputs.from_samples(t, samples, "linear")
    return trained.predict(t, x0, inputs, rtol=1e-9, atol=1e-9), None


def _hybrid_rollout(
    trained: TrainedModel, t: np.ndarray, x0: np.ndarray, u: Any
) -> tuple[np.ndarray, np.ndarray]:
    """The quarter vehicle's rollout ``(n, 5)`` and the model's x' along it ``(n, 5)`` (x'[:, 2:4]
    are its outputs a_b, a_w), integrated by RK4 as the experiment does. A four-state model
    (``road_as_input``) gets the road height as an input: x0's z_r plus the integral of the road
    velocity; it is the rollout's fifth column, the road velocity its derivative."""
    import casadi as ca

    model, p = trained.solution.model, trained.solution.p
    inputs = _road_velocity(trained.system, t, u)
    if model.n_states == 4:
        inputs = _with_road_height(inputs, t, float(x0[4]))
    x = simulate(model, p, t, x0[: model.n_states], inputs=inputs, method="rk4").x
    us = np.asarray(inputs(t), dtype=float).reshape(t.size, model.n_inputs)
    xdot = np.asarray(model.function.map(t.size)(x.T, ca.DM(p), us.T, t[None, :])[0]).T
    if model.n_states == 4:  # the road height and its rate, as the five-state model has them
        x, xdot = np.column_stack([x, us[:, 0]]), np.column_stack([xdot, us[:, 1]])
    return x, xdot


def _road_velocity(system: Any, t: np.ndarray, u: Any) -> Callable[[np.ndarray], np.ndarray]:
    """Road velocity as ``u(t: (n,)) -> (n, 1)`` [m/s]: the training road (None), a callable,
    or samples at ``t`` interpolated linearly."""
    if u is None:
        return lambda tt: system.inputs(np.asarray(tt, dtype=float)).reshape(-1, 1)
    if callable(u):
        return lambda tt: np.asarray(u(np.asarray(tt, dtype=float)), dtype=float).reshape(-1, 1)
    us = v.finite_array("u", u).reshape(t.size, -1)[:, 0]
    return lambda tt: np.interp(np.asarray(tt, dtype=float), t, us).reshape(-1, 1)


def _with_road_height(
    velocity: Callable[[np.ndarray], np.ndarray], t: np.ndarray, z0: float
) -> Callable[[np.ndarray], np.ndarray]:
    """``u(t) -> (n, 2)``: the road height z0 + ∫ ż_r [m] (the exact integral of the velocity's
    linear interpolant on ``t``) and the velocity itself [m/s]."""
    from scipy.interpolate import make_interp_spline

    height = make_interp_spline(t, velocity(t)[:, 0], k=1).antiderivative()
    t0 = float(t[0])

    def u(tt: np.ndarray) -> np.ndarray:
        tt = np.atleast_1d(np.asarray(tt, dtype=float))
        return np.column_stack([z0 + height(tt) - height(t0), velocity(tt)[:, 0]])

    return u


def _hybrid_characteristics(trained: TrainedModel, data: Sequence[Trajectory]) -> dict[str, Any]:
    """Learned vs true friction and spring [N] over ±2σ of the training inputs
    (`collocnode.recipes.qvm.characteristic_errors`)."""
    return characteristic_errors(trained.solution, trained.system, data[0])


STATES = Readout("a neural ODE of the states (SystemRecipe)", _state_rollout)
HYBRID_QVM = Readout(
    "the hybrid quarter-vehicle PeN-ODE (QVMRecipe; scripts/train_collocation.py qvm)",
    _hybrid_rollout,
    derivative_source="output",
    characteristics=_hybrid_characteristics,
)
#: recipe type -> how its models are read
READOUTS: dict[type, Readout] = {SystemRecipe: STATES, QVMRecipe: HYBRID_QVM}


def readout_for(recipe: Any) -> Readout:
    """The readout of ``recipe``'s models (that of its nearest base class in `READOUTS`);
    any other recipe is a TypeError listing the types that have one."""
    for cls in type(recipe).__mro__:  # a recipe derived from a known one reads as that one
        if cls in READOUTS:
            return READOUTS[cls]
    known = ", ".join(t.__name__ for t in READOUTS)
    raise TypeError(
        f"recipe must be one of the recipes the comparison can read ({known}), got {recipe!r:.80}"
    )
