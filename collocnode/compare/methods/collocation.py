"""Collocation as one method of the comparison: the system's recipe behind the trainers' interface.

The recipe (`collocnode.recipes.for_problem`) decides the model and the training: the
paper's setup for Van der Pol, the suitable neural ODE for every other system, and the hybrid
PeN-ODE for the quarter vehicle. This module only adapts it, the same way for every recipe: its
options are the recipe and a seed (`CollocationOptions`; the collocation settings are the
recipe's own ``CollocationSettings``), and what the comparison reads off the trained model (the
rollout, and for the quarter vehicle its accelerations and characteristics) is the recipe's
`Readout`. No torch anywhere.

The comparison passes one set of settings to all of its methods; collocation reads them as
(`CollocationOptions.overridden`): ``epochs`` is IPOPT's iteration limit (``max_iter``),
``seed`` the seed of the initial weights, ``recipe`` another recipe to train with, and every other
name a field of the recipe or of its collocation settings (``hidden``, ``activation``,
``strategy``, ``stages``, ``intervals``, ``tol``, ``jit``, ``hessian``, ...). Gradient settings
(``lr``, ``batch_size``, ``device``, ...) are checked and ignored: IPOPT runs on the CPU.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from ... import _validation as v
from ... import problems, recipes
from ..._data import Trajectory
from ...models._simulate import SimulationError
from ...recipes.base import TrainedModel
from ...recipes.generic import SystemRecipe
from ...recipes.settings import CollocationSettings
from ...tools._fixed_step import DivergenceError
from ...tools._options import replace_flat
from .base import FitResult, Trainer
from .options import GradientOptions, gradient_settings
from .readouts import Readout, readout_for
from .status import MethodStatus


@dataclass(frozen=True)
class CollocationOptions:
    """Collocation's options in the comparison.

    Attributes:
        recipe: the recipe that trains the model (a recipe of `collocnode.recipes`, one
            `readout_for` can read); its collocation
            settings are ``recipe.collocation`` (also `settings`). Default: the generic
            `SystemRecipe`; ``make_trainer`` gives the
            problem's own.
        seed: seed of the initial weights.
    """

    recipe: Any = field(default_factory=SystemRecipe)
    seed: int = 0

    def __post_init__(self) -> None:
        readout_for(self.recipe)  # a TypeError naming the recipe types that can be read
        if not isinstance(getattr(self.recipe, "collocation", None), CollocationSettings):
            raise TypeError(f"recipe must have CollocationSettings, got {self.recipe!r:.80}")
        v.nonnegative_int("seed", self.seed)

    @property
    def settings(self) -> CollocationSettings:
        """The recipe's collocation settings (mesh, IPOPT, regularization)."""
        return self.recipe.collocation

    def overridden(self, **overrides: Any) -> CollocationOptions:
        """These options with the comparison's settings ``overrides`` (see the module
        docstring): ``recipe`` first, then ``seed``, ``epochs`` (IPOPT's ``max_iter``) and the
        recipe's fields by name. An unknown name is one ValueError listing the valid ones."""
        ignored = {k: overrides.pop(k) for k in list(overrides) if k in gradient_settings()}
        if ignored:
            GradientOptions(**ignored)  # one clear error for a bad value of an unused setting
        recipe = overrides.pop("recipe", self.recipe)
        seed = overrides.pop("seed", self.seed)
        if overrides.pop("param_inputs", ()):
            raise ValueError("param_inputs: collocation takes no parameter inputs")
        if "epochs" in overrides:  # the comparison's word wins over max_iter, as it did in 0.2
            overrides["max_iter"] = v.positive_int("epochs", overrides.pop("epochs"))
        if overrides:
            readout_for(recipe)  # a wrong recipe is named before its fields are looked up
            recipe = replace_flat(recipe, **overrides)
        return replace(self, recipe=recipe, seed=seed)


def own_recipe(system: Any) -> Any:
    """The recipe that trains ``system``: its registered one (`collocnode.recipes.for_problem`), the
    generic neural ODE for a system that is not registered."""
    if system.name in problems.available():
        return recipes.for_problem(system.name)
    return SystemRecipe()


class Collocation(Trainer):
    """Radau IIA collocation + IPOPT with exact Hessians (the core of this library), trained by a
    recipe; see the module docstring."""

    name: ClassVar[str] = "collocation"
    options_class: ClassVar[type] = CollocationOptions
    # the trained model exists once IPOPT returns: no test-error curve during the solve
    predicts_while_fitting: ClassVar[bool] = False
    unit: ClassVar[str] = "iteration"  # IPOPT's iterations, not epochs

    options: CollocationOptions

    def __init__(self, options: CollocationOptions | None = None, **overrides: Any) -> None:
        opts = CollocationOptions() if options is None else options
        if not isinstance(opts, CollocationOptions):
            raise TypeError(f"options of collocation must be CollocationOptions, got {opts!r:.80}")
        super().__init__(opts.overridden(**overrides))

    @classmethod
    def options_for(
        cls, problem: str | None = None, quick: bool = False, **overrides: Any
    ) -> CollocationOptions:
        """The recipe of ``problem`` (`collocnode.recipes.for_problem`; the generic one
        for None), shrunk by the recipe's ``QUICK`` settings if ``quick``, then ``overrides``
        (`CollocationOptions.overridden`)."""
        recipe = SystemRecipe() if problem is None else recipes.for_problem(problem)
        if quick:
            recipe = replace_flat(recipe, **recipe.QUICK)
        return CollocationOptions(recipe).overridden(**overrides)

    @property
    def readout(self) -> Readout:
        """How the comparison reads this recipe's models (chosen by the recipe)."""
        return readout_for(self.options.recipe)

    @property
    def epoch_limit(self) -> int:
        return self.options.settings.max_iter

    # asked of the trainer, not its class (as the other methods allow): the recipe decides
    def not_applicable(self, system: Any) -> str | None:  # type: ignore[override]
        """Why this recipe does not train ``system``: the system is trained by a recipe of
        another type (the quarter vehicle's hybrid model is not a black-box neural ODE, and the
        reverse)."""
        own = own_recipe(system)
        if readout_for(own) is self.readout:
            return None
        return f"{system.name} is trained as {readout_for(own).model}, not as {self.readout.model}"

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
        o = self.options
        trained = o.recipe.train(
            system, trajs, seed=o.seed, max_wall_time=budget_s, callback=callback
        )
        self.system, self.trained, self.data = system, trained, trajs
        self._fitted = True
        sol = trained.solution
        return FitResult(
            method=self.name,
            status=MethodStatus.from_solver(sol.status),
            train_time_s=time.perf_counter() - start,
            epochs=trained.iterations,
            n_params=sol.model.n_params,
            best_loss=sol.objective,
            history=[(h[0], h[1], h[2]) for h in sol.history],
            message=_fit_message(trained),
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

    @property
    def derivative_source(self) -> str | None:
        """Where `predict_with_derivatives` takes x' from (None: this recipe's models give
        states only)."""
        return self.readout.derivative_source

    def _rollout(self, t: Any, x0: Any, u: Any) -> tuple[np.ndarray, Any]:
        """The readout's rollout of the checked ``t``, ``x0``; a blow-up is a DivergenceError
        with its step, as for every method."""
        t, x0 = self._check_predict_args(t, x0)
        try:
            return self.readout.rollout(self.trained, t, x0, u)
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
        return self._rollout(t, x0, u)[0]

    def predict_with_derivatives(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rollout ``(n, n_states)`` and the model's x' along it ``(n, n_states)``, for a
        recipe whose models give it (`derivative_source`; the quarter vehicle's hybrid
        model: its outputs a_b, a_w are x'[:, 2:4])."""
        if self.derivative_source is None:
            raise NotImplementedError(
                f"{type(self.options.recipe).__name__}'s models give states only"
            )
        return self._rollout(t, x0, u)

    def characteristic_errors(self) -> dict[str, Any] | None:
        """The learned characteristics against the true ones (the quarter vehicle's friction
        and spring, in N), or None where this recipe's models have none."""
        self._require_fitted()
        score = self.readout.characteristics
        return None if score is None else score(self.trained, self.data)


def _fit_message(trained: TrainedModel) -> str:
    """The row's account of a recipe's training: each phase's iterations and IPOPT status,
    the consistency check's verdict (in the row, not only a warning) and the solver's message."""
    sol = trained.solution
    detail = f"IPOPT: {sol.ipopt_status}"
    for name, phase in trained.phases.items():
        detail = f"{name} {phase.iterations} it. ({phase.ipopt_status}), final " + detail
    if sol.consistency is not None:
        detail += f"; {sol.consistency.summary()}"
    return detail + (f"; {sol.message}" if sol.message else "")


__all__ = ["Collocation", "CollocationOptions", "TrainedModel", "own_recipe"]
