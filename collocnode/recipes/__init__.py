"""How each system is trained by collocation: one recipe per system, shared by the experiments
(`collocnode._experiments`) and the comparison (`collocnode.compare`), neither of which
imports the other.

A recipe is a frozen dataclass whose fields are its model and training choices, with an embedded
`CollocationSettings`; ``recipe.train(system, data, seed=..., max_wall_time=...)`` returns a
`TrainedModel`. `for_problem` gives the paper's recipe of a registered system.
"""

from __future__ import annotations

from typing import Any

from .. import _validation as v
from .. import problems
from ..tools._registry import Registry
from .base import TrainedModel, widths
from .generic import SystemRecipe
from .settings import CollocationSettings

#: the systems with a recipe of their own (any other: ``SystemRecipe()``)
RECIPES: Registry[Any] = Registry(
    "recipe",
    {
        "qvm": "collocnode.recipes.qvm:QVMRecipe",  # a class: its defaults are the paper's
        "vdp": "collocnode.recipes.vdp:VDP",  # an instance: the paper's settings
    },
)


def for_problem(name: str) -> Any:
    """The recipe with which the seed papers train system ``name``: the quarter vehicle's hybrid
    model, the paper's Van der Pol setup, and the suitable neural ODE for every other system.
    ``name`` must be registered
    ([`collocnode.problems.available`][collocnode.problems.available])."""
    v.choice("problem name", name, problems.available())
    if name not in RECIPES:
        return SystemRecipe()
    recipe = RECIPES.load(name)
    return recipe() if isinstance(recipe, type) else recipe


__all__ = [
    "RECIPES",
    "CollocationSettings",
    "SystemRecipe",
    "TrainedModel",
    "for_problem",
    "widths",
]
