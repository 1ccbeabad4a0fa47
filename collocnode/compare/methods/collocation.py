"""Collocation as one method of the comparison: the system's recipe behind the trainers' interface.

The recipe (:func:`collocnode.recipes.for_problem`) decides the model and the training: the paper's
setup for Van der Pol, the suitable neural ODE for every other system, and the hybrid PeN-ODE for
the quarter vehicle (:mod:`collocnode.compare.methods.qvm_collocation`). This module only adapts it:
the comparison's shared options (``epochs`` = IPOPT's iteration limit, ``hidden``, ``activation``,
``init``, ``normalize``, ``seed``) go into the recipe, any other option names a field of the recipe
or of its collocation settings (``stages``, ``intervals``, ``tol``, ``jit``, ``hessian``,
``regularization``, ``per_state_nets``, ...), and the trained model is rolled out as the recipe does
(no torch anywhere).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from ... import recipes
from ...data import Trajectory
from ...models.simulate import SimulationError
from ...recipes.base import TrainedModel
from ...recipes.generic import SystemRecipe
from ...tools.fixed_step import DivergenceError
from ...tools.options import flat_fields, get_flat, replace_flat
from ...transcription import Inputs
from .base import FitResult, Trainer
from .options import GradientOptions, TrainerOptions, gradient_settings
from .status import MethodStatus

# The comparison's shared options and the recipe fields they set.
_SHARED = {
    "epochs": "max_iter",
    "hidden": "hidden",
    "activation": "activation",
    "init": "init",
    "normalize": "normalize",
}


@dataclass(frozen=True)
class CollocationOptions(TrainerOptions):
    """The comparison's options of collocation: a recipe and the shared options.

    Attributes:
        recipe: the recipe to train with (None: the generic
            :class:`~collocnode.recipes.generic.SystemRecipe`); the shared options ``epochs``
            (IPOPT's iteration limit), ``hidden``, ``activation``, ``init`` and ``normalize``
            are written into it. Any recipe field is readable as an attribute of these options
            (``options.stages``, ``options.strategy``).
    """

    epochs: int = 200
    hidden: tuple[int, ...] = (16, 16)
    normalize: bool = True
    recipe: Any = None

    def default_recipe(self) -> Any:
        return SystemRecipe()

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.param_inputs:
            raise ValueError(
                f"param_inputs {self.param_inputs!r}: collocation takes no parameter inputs"
            )
        recipe = self.default_recipe() if self.recipe is None else self.recipe
        names = _names(recipe)
        shared = {r: getattr(self, o) for o, r in _SHARED.items() if r in names}
        object.__setattr__(self, "recipe", replace_flat(recipe, **shared))

    def __getattr__(self, name: str) -> Any:
        # options.stages, options.strategy, ...: the recipe's fields by their own names
        if name.startswith("_") or name == "recipe":
            raise AttributeError(name)
        return get_flat(self.recipe, name)


def _names(recipe: Any) -> set[str]:
    """The recipe's field names, nested ones included."""
    return {path[-1] for path, _, _ in flat_fields(recipe)}


class Collocation(Trainer):
    """Radau IIA collocation + IPOPT with exact Hessians (the core of this library), trained by
    the system's recipe."""

    name: ClassVar[str] = "collocation"
    options_class: ClassVar[type[TrainerOptions]] = CollocationOptions
    # the trained model exists once IPOPT returns: no test-error curve during the solve
    predicts_while_fitting: ClassVar[bool] = False

    @classmethod
    def not_applicable(cls, system: Any) -> str | None:
        if system.name == "qvm":
            return (
                "the quarter vehicle is trained as a hybrid model: scripts/train_collocation.py qvm"
            )
        return None

    @classmethod
    def options_for(
        cls, problem: str | None = None, quick: bool = False, **overrides: Any
    ) -> TrainerOptions:
        """The recipe of ``problem`` (:func:`collocnode.recipes.for_problem`), shrunk by the
        recipe's ``QUICK`` settings if ``quick``, then ``overrides``: shared options, recipe
        fields and collocation settings by name. Gradient settings (lr, batch_size, device, ...)
        are checked and ignored."""
        recipe = cls.options_class().default_recipe() if problem is None else None
        if recipe is None:
            recipe = recipes.for_problem(problem)
        if quick:
            recipe = replace_flat(recipe, **recipe.QUICK)
        ignored = {k: overrides.pop(k) for k in list(overrides) if k in gradient_settings()}
        if ignored:
            GradientOptions(**ignored)  # one clear error for a bad value of an unused setting
        own = {f.name for f in fields(cls.options_class)} - set(_SHARED) - {"recipe"}
        kept = {k: overrides.pop(k) for k in list(overrides) if k in own}
        shared = {k: overrides.pop(k) for k in list(overrides) if k in _SHARED}
        recipe = replace_flat(recipe, **overrides)  # names the unknown ones
        mirror = {o: get_flat(recipe, r) for o, r in _SHARED.items() if r in _names(recipe)}
        return cls.options_class(recipe=recipe, **{**mirror, **shared, **kept})

    def fit(
        self,
        system: Any,
        train: Trajectory | Sequence[Trajectory],
        *,
        budget_s: float | None = None,
        callback: Callable[[Any], Any] | None = None,
    ) -> FitResult:
        trajs, budget_s = self._check_fit_args(system, train, budget_s)
        start = time.perf_counter()
        o: CollocationOptions = self.options  # type: ignore[assignment]
        trained = o.recipe.train(
            system, trajs, seed=o.seed, max_wall_time=budget_s, callback=callback
        )
        self.system, self.trained, self.data = system, trained, trajs
        self._fitted = True
        sol = trained.solution
        detail = f"IPOPT: {sol.ipopt_status}"
        for name, phase in trained.phases.items():
            detail = f"{name} {phase.iterations} it. ({phase.ipopt_status}), final " + detail
        if sol.consistency is not None:  # the comparison's row says it, not only a warning
            detail += f"; {sol.consistency.summary()}"
        return FitResult(
            method=self.name,
            status=MethodStatus.from_solver(sol.status),
            train_time_s=time.perf_counter() - start,
            epochs=trained.iterations,
            n_params=sol.model.n_params,
            best_loss=sol.objective,
            history=[(h[0], h[1], h[2]) for h in sol.history],
            message=detail + (f"; {sol.message}" if sol.message else ""),
        )

    @property
    def solution(self) -> Any:
        """The collocation solution of the final training phase."""
        self._require_fitted()
        return self.trained.solution

    @property
    def n_params(self) -> int:
        self._require_fitted()
        return self.trained.solution.model.n_params

    def _inputs(self, t: np.ndarray, u: Any) -> Callable[[np.ndarray], np.ndarray] | None:
        """Known inputs as ``u(t: (n,)) -> (n, n_inputs)``: the system's own (None), a callable,
        or samples at ``t`` interpolated linearly (as the torch methods receive them)."""
        if not self.trained.solution.model.n_inputs or u is None:
            return None
        if callable(u):
            return u
        return Inputs.from_samples(t, np.asarray(u, dtype=float).reshape(t.size, -1), "linear")

    def _rollout(self, t: np.ndarray, x0: np.ndarray, u: Any, **kwargs: Any) -> np.ndarray:
        try:
            return self.trained.predict(t, x0, self._inputs(t, u), **kwargs)
        except SimulationError as exc:
            step = int(np.searchsorted(t, exc.t_fail))
            raise DivergenceError(step, float(t[min(step, t.size - 1)]), why=str(exc)) from None

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        t, x0 = self._check_predict_args(t, x0)
        return self._rollout(t, x0, u, rtol=1e-9, atol=1e-9)


__all__ = ["Collocation", "CollocationOptions", "TrainedModel"]
