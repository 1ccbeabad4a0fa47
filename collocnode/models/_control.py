"""Optimal control with a trained model as the dynamics.

A trained [`HybridModel`][collocnode.HybridModel] with fixed parameters is an ordinary CasADi
right-hand side, so a control problem with it is a
[`DynamicOptimizationProblem`][collocnode.DynamicOptimizationProblem] with no parameters of its own:
the weights are constants inside the node functions, and the NLP has no node-by-parameter border
(each node's block stands alone)::

    trained = solve(TrainingProblem(model, data), RadauIIA(100, 3))   # or load_model("m.json")
    dop = control_problem(
        trained, (0.0, 5.0), Controls(1, lb=-1, ub=1), x0=[1.0, 0.0],
        lagrange=lambda x, p, u, t: x[0] ** 2 + 0.1 * u[0] ** 2,
    )
    sol = solve(dop, RadauIIA(200, 3)); sol.controls(t)

When the controls act through terms the model does not contain (an actuator force added to a
learned plant), write the dynamics around [`LearnedDynamics`][collocnode.LearnedDynamics] instead::

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
from ._hybrid import HybridModel


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
        """From a [`TrainingSolution`][collocnode.TrainingSolution], a loaded model file
        ([`collocnode.serialize.load_model`][collocnode.serialize.load_model]) or a
        [`HybridModel`][collocnode.HybridModel] with ``p``."""
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
        trained: a [`TrainingSolution`][collocnode.TrainingSolution], a loaded model file, a
            [`LearnedDynamics`][collocnode.LearnedDynamics], or a
            [`HybridModel`][collocnode.HybridModel] with ``p``.
        tspan: ``(t0, tf)`` [s] (tf is the guess when ``tf_bounds`` is given).
        controls: the free controls ([`Controls`][collocnode.Controls]).
        control_inputs: which of the model's inputs are the controls, in the order of
            ``controls`` (default: all of them); the others are known inputs.
        inputs: the known inputs ([`Inputs`][collocnode.Inputs]): the model's remaining inputs, in
            the model's order; needed when some model inputs are not controls.
        p: the trained parameters when ``trained`` is a bare model.
        **fields: the rest of the
            [`DynamicOptimizationProblem`][collocnode.DynamicOptimizationProblem] (``lagrange``,
            ``mayer``, ``path``, ``boundary``, ``x0``, bounds, guesses, ``tf_bounds``, ...). Its
            functions see ``u = [known inputs, controls]`` and an empty p. Without ``x_guess`` (and
            ``segments``) the states' guess is `default_state_guess`: ``x0`` held constant, inside
            the state bounds and off points where the model's derivatives are infinite (a learned
            outflow under a square root at an empty tank).

    Raises:
        ValueError: ``controls.n`` does not match ``control_inputs`` (or the model's inputs),
            the known inputs do not match the model's other inputs, or the trained parameters
            are missing or of the wrong length.

    Examples:
        Drive a mass with a learned friction law from rest at 0 to rest at 1 in 2 s with the least
        effort; the weights here stand in for a trained model's (a
        [`TrainingSolution`][collocnode.TrainingSolution] goes in the same way, without ``p``):

        ```python
        import numpy as np

        from collocnode import (
            Constraint,
            Controls,
            HybridModel,
            IpoptOptions,
            RadauIIA,
            control_problem,
            solve,
        )
        from collocnode.nn import MLP


        def physics(x, u, t, blocks, params):  # a mass driven by the force u[0], learned friction
            return [x[1], u[0] - blocks["friction"](x[1])]


        model = HybridModel(
            n_states=2, n_inputs=1, blocks={"friction": MLP((1, 4, 1), "tanh")}, rhs=physics
        )
        p = model.init_params(0) * 0.1  # small weights, standing in for trained ones
        dop = control_problem(
            model,
            (0.0, 2.0),
            Controls(1, lb=-5.0, ub=5.0),
            p=p,
            x0=[0.0, 0.0],
            lagrange=lambda x, p, u, t: u[0] ** 2,
            boundary=Constraint(lambda x0, xf, p: xf, 2, [1.0, 0.0], [1.0, 0.0]),  # rest at q = 1
        )
        plan = solve(dop, RadauIIA(intervals=20, ipopt=IpoptOptions(print_level=0)))
        assert plan.status.ok
        print(plan(2.0), plan.controls(np.array([0.0, 1.0, 2.0])).ravel())
        ```
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
    dop = DynamicOptimizationProblem(
        dynamics=dynamics,
        n_states=plant.n_states,
        n_params=0,
        tspan=tspan,
        inputs=inputs,
        controls=controls,
        **fields,
    )
    if dop.x_guess is None and not dop.segments:
        dop = dop.remake(x_guess=default_state_guess(dop))
    return dop


#: how far inside a finite state bound the default guess starts: this share of max(1, |bound|),
#: at most a quarter of the box's width (IPOPT's own push of the start, ``bound_push``, is 1e-2)
BOUND_MARGIN = 1e-2
#: the steps by which a state of the guess is moved off a singular point: these multiples of
#: max(1, |state|, its nominal value), tried in turn
SINGULAR_STEPS = (1e-2, 1e-1, 1.0)


def default_state_guess(dop: DynamicOptimizationProblem) -> np.ndarray:
    """The constant state guess of a control problem whose ``x_guess`` is not given, (n_states,).

    The fixed initial state ``x0`` held over the horizon (its free (NaN) entries, and every
    entry without ``x0``: the middle of finite bounds, else the finite bound, else 0), moved
    strictly inside the state bounds (by `BOUND_MARGIN`), then moved off singular points:
    wherever the dynamics, the path constraints or the Lagrange term, or their derivatives with
    respect to the states, are not finite at the guess (``sqrt(h)`` at ``h = 0``: an infinite
    derivative, for which IPOPT stops with ``Invalid_Number_Detected``), each state whose
    derivative column is not finite steps by `SINGULAR_STEPS`, up then down (the domain
    of sqrt and log lies above their singular point), within the bounds, to the first value
    where it is finite. Checked at five times over the horizon with the controls' and
    algebraic states' own guesses. Where no step helps, the state keeps its value and the
    solve's message names the cause.
    """
    nx, lb, ub = dop.n_states, dop.x_lb, dop.x_ub
    lo, hi = np.isfinite(lb), np.isfinite(ub)
    finite_lb, finite_ub = np.where(lo, lb, 0.0), np.where(hi, ub, 0.0)
    middle = np.where(lo & hi, 0.5 * (finite_lb + finite_ub), finite_lb + finite_ub)
    x0 = np.full(nx, np.nan) if dop.x0 is None else np.asarray(dop.x0, dtype=float)
    guess = np.where(np.isfinite(x0), x0, middle)
    width = np.where(lo & hi, ub - lb, np.inf)
    low = lb + np.where(lo, np.minimum(BOUND_MARGIN * np.maximum(1.0, np.abs(lb)), width / 4), 0)
    high = ub - np.where(hi, np.minimum(BOUND_MARGIN * np.maximum(1.0, np.abs(ub)), width / 4), 0)
    guess = np.clip(guess, low, high)
    probe = _SingularityProbe(dop)
    scale = np.maximum.reduce([np.ones(nx), np.abs(guess), dop.x_nominal])
    for i in probe.singular_states(guess):
        guess[i] = _moved_off(probe, guess, int(i), (low[i], high[i]), scale[i])
    return guess


def _moved_off(
    probe: _SingularityProbe,
    guess: np.ndarray,
    i: int,
    bounds: tuple[float, float],
    scale: float,
) -> float:
    """State ``i`` of ``guess`` (n_states,) stepped by `SINGULAR_STEPS` x ``scale``, up
    then down, within ``bounds``, to the first value where it is no longer singular; its own
    value where none is."""
    for step in SINGULAR_STEPS:
        for candidate in (guess[i] + step * scale, guess[i] - step * scale):
            if not bounds[0] <= candidate <= bounds[1]:
                continue
            trial = guess.copy()
            trial[i] = candidate
            if i not in probe.singular_states(trial):
                return float(candidate)
    return float(guess[i])


class _SingularityProbe:
    """The node functions of a problem (dynamics, algebraic equations, path constraints,
    Lagrange term) and their Jacobian with respect to the states, evaluated at a constant state
    guess at five times of the horizon."""

    def __init__(self, dop: DynamicOptimizationProblem) -> None:
        nx, nz = dop.n_states, dop.n_algebraic
        x, u, t = ca.SX.sym("x", nx), ca.SX.sym("u", dop.n_inputs + dop.n_controls), ca.SX.sym("t")
        z, p = ca.SX.sym("z", nz), ca.SX(0, 1)

        def column(fn: Any) -> Any:
            value = dop.call_node(fn, x, p, u, t, z)
            return ca.vertcat(*value) if isinstance(value, (list, tuple)) else ca.vertcat(value)

        parts = [column(dop.dynamics)]
        parts += [column(fn) for fn in (dop.lagrange,) if fn is not None]
        if dop.algebraic is not None:
            parts.append(column(dop.algebraic.fn))
        if dop.path is not None:
            parts.append(column(dop.path.fn))
        values = ca.vertcat(*parts)
        jac = ca.jacobian(values, x)
        self._fn = ca.Function("probe", [x, u, t, z], [values, jac])
        # which states each value depends on: a non-finite value is blamed on those
        self._depends = np.asarray(ca.DM(jac.sparsity(), 1.0)) != 0
        self._times = np.linspace(dop.tspan[0], dop.tspan[1], 5)
        node = dop.node_guess(self._times)  # algebraic states, then controls
        known = dop.inputs(self._times)
        self._u = np.hstack([known, node[:, nz:]])
        self._z = node[:, :nz]

    def singular_states(self, guess: np.ndarray) -> np.ndarray:
        """The states (indices) whose Jacobian column is not finite at ``guess`` (n_states,) at
        some probed time; every state a non-finite value depends on, too."""
        bad = np.zeros(guess.size, dtype=bool)
        for t, u, z in zip(self._times, self._u, self._z, strict=True):
            with np.errstate(all="ignore"):
                value, jac = (np.asarray(a, dtype=float) for a in self._fn(guess, u, t, z))
            bad |= ~np.all(np.isfinite(jac), axis=0)
            bad |= np.any(self._depends[~np.isfinite(value.ravel())], axis=0)
        return np.flatnonzero(bad)
