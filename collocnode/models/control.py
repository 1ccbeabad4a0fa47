"""Optimal control with a trained model as the dynamics.

A trained :class:`~collocnode.models.HybridModel` with fixed parameters is an ordinary CasADi
right-hand side, so a control problem with it is a :class:`DynamicOptimizationProblem` with no
parameters of its own: the weights are constants inside the node functions, and the NLP has no
node-by-parameter border (each node's block stands alone)::

    trained = solve(TrainingProblem(model, data), RadauIIA(100, 3))   # or load_model("m.json")
    dop = control_problem(
        trained, (0.0, 5.0), Controls(1, lb=-1, ub=1), x0=[1.0, 0.0],
        lagrange=lambda x, p, u, t: x[0] ** 2 + 0.1 * u[0] ** 2,
    )
    sol = solve(dop, RadauIIA(200, 3)); sol.controls(t)

When the controls act through terms the model does not contain (an actuator force added to a
learned plant), write the dynamics around :class:`LearnedDynamics` instead::

    plant = LearnedDynamics.of(trained)
    dynamics = lambda x, p, u, t: plant(x, u[:1], t) + ca.vertcat(0, u[1] / m)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from .. import _validation as v
from ..transcription import Controls, DynamicOptimizationProblem, Inputs
from .hybrid import HybridModel


@dataclass(frozen=True)
class LearnedDynamics:
    """A trained model with its parameters fixed, callable on CasADi expressions.

    Attributes:
        model: the model.
        p: its trained parameter vector, shape (model.n_params,) (read-only).
    """

    model: HybridModel
    p: np.ndarray

    def __post_init__(self) -> None:
        if not isinstance(self.model, HybridModel):
            raise TypeError(f"model must be a HybridModel, got {self.model!r:.80}")
        if self.p is None:
            raise ValueError(
                "the trained model's parameters are missing (p is None): pass the trained "
                "parameter vector, a TrainingSolution or a loaded model file"
            )
        p = v.finite_array("p", self.p)
        if p.shape != (self.model.n_params,):
            raise ValueError(
                f"p must have shape ({self.model.n_params},), the model's parameter count, got "
                f"shape {p.shape}"
            )
        p.setflags(write=False)
        object.__setattr__(self, "p", p)

    @classmethod
    def of(cls, trained: Any, p: Any = None) -> LearnedDynamics:
        """From a :class:`~collocnode.TrainingSolution`, a loaded model file
        (:func:`collocnode.serialize.load_model`) or a :class:`HybridModel` with ``p``."""
        if isinstance(trained, LearnedDynamics):
            return trained
        if isinstance(trained, HybridModel):
            return cls(trained, p)
        model, params = getattr(trained, "model", None), getattr(trained, "p", None)
        if not isinstance(model, HybridModel):
            raise TypeError(
                "trained must be a TrainingSolution, a loaded model file or a HybridModel with "
                f"p=..., got {trained!r:.80}"
            )
        return cls(model, params if p is None else p)

    @property
    def n_states(self) -> int:
        return self.model.n_states

    @property
    def n_inputs(self) -> int:
        return self.model.n_inputs

    def _evaluate(self, x: Any, u: Any, t: Any) -> tuple[Any, Any]:
        x, u, t = ca.vertcat(x), ca.vertcat(u), ca.vertcat(t)
        if u.shape[0] == 0:
            u = type(x)(0, 1)
        return self.model.symbolic(x, ca.DM(self.p), u, t)

    def __call__(self, x: Any, u: Any, t: Any) -> Any:
        """x' (n_states, 1) at states x (n_states,), model inputs u (n_inputs,), time t."""
        return self._evaluate(x, u, t)[0]

    def outputs(self, x: Any, u: Any, t: Any) -> Any:
        """The model's outputs y (n_outputs, 1), e.g. a measured acceleration to penalise."""
        return self._evaluate(x, u, t)[1]


def _control_slots(n_inputs: int, control_inputs: Sequence[int] | None) -> list[int]:
    if control_inputs is None:
        return list(range(n_inputs))
    slots = [v.nonnegative_int("control_inputs[]", k) for k in control_inputs]
    bad = [k for k in slots if k >= n_inputs]
    if bad:
        raise ValueError(
            f"control_inputs = {list(control_inputs)} names input {bad[0]}, but the model has "
            f"{n_inputs} inputs"
        )
    if len(set(slots)) != len(slots):
        raise ValueError(f"control_inputs = {list(control_inputs)} repeats an input")
    return slots


def control_problem(
    trained: Any,
    tspan: tuple[float, float],
    controls: Controls,
    *,
    control_inputs: Sequence[int] | None = None,
    inputs: Inputs | None = None,
    p: Any = None,
    **fields: Any,
) -> DynamicOptimizationProblem:
    """A control problem whose dynamics are a trained model with fixed parameters.

    Args:
        trained: a :class:`~collocnode.TrainingSolution`, a loaded model file, a
            :class:`LearnedDynamics`, or a :class:`HybridModel` with ``p``.
        tspan: ``(t0, tf)`` [s] (tf is the guess when ``tf_bounds`` is given).
        controls: the free controls (:class:`Controls`).
        control_inputs: which of the model's inputs are the controls, in the order of
            ``controls`` (default: all of them); the others are known inputs.
        inputs: the known inputs (:class:`Inputs`): the model's remaining inputs, in the model's
            order; needed when some model inputs are not controls.
        p: the trained parameters when ``trained`` is a bare model.
        **fields: the rest of the :class:`DynamicOptimizationProblem` (``lagrange``, ``mayer``,
            ``path``, ``boundary``, ``x0``, bounds, guesses, ``tf_bounds``, ...). Its functions
            see ``u = [known inputs, controls]`` and an empty p.

    Raises:
        ValueError: ``controls.n`` does not match ``control_inputs`` (or the model's inputs),
            the known inputs do not match the model's other inputs, or the trained parameters
            are missing or of the wrong length.
    """
    plant = LearnedDynamics.of(trained, p)
    if not isinstance(controls, Controls):
        raise TypeError(f"controls must be a Controls object, got {controls!r:.80}")
    n_model = plant.n_inputs
    slots = _control_slots(n_model, control_inputs)
    if controls.n != len(slots):
        which = "" if control_inputs is None else f" named in control_inputs = {slots}"
        raise ValueError(
            f"controls.n = {controls.n} does not match the {len(slots)} model inputs{which} "
            f"(the model has {n_model} inputs)"
        )
    inputs = Inputs.none() if inputs is None else inputs
    known = [k for k in range(n_model) if k not in slots]
    if inputs.n != len(known):
        raise ValueError(
            f"inputs.n = {inputs.n}, but the model has {n_model} inputs of which {len(slots)} "
            f"are controls, so {len(known)} known inputs are needed"
        )
    order = np.argsort(np.array(known + slots, dtype=int))  # model input k = u[order[k]]

    def dynamics(x, _p, u, t):
        return plant(x, ca.vertcat(*[u[int(i)] for i in order]) if n_model else u, t)

    fields.setdefault("state_names", plant.model.state_names)
    return DynamicOptimizationProblem(
        dynamics=dynamics,
        n_states=plant.n_states,
        n_params=0,
        tspan=tspan,
        inputs=inputs,
        controls=controls,
        **fields,
    )
