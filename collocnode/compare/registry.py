"""The one registry of the comparison's methods: name -> trainer class, option overrides and
per-problem specialisations.

Classes load on first use (importing this package imports no torch).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import import_module
from types import MappingProxyType
from typing import Any

from .. import _validation as v
from .base import Trainer


@dataclass(frozen=True)
class Method:
    """One registered method.

    Attributes:
        module, cls: the trainer class (``module`` of this package).
        defaults: option overrides of this entry (``node_adjoint`` is ``node`` with
            ``adjoint=True``); the caller's options override them.
        problems: problem name -> (module, class) of a trainer that stands in for ``cls`` on
            that problem.
    """

    module: str
    cls: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    problems: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def trainer_class(self, problem: str | None = None) -> type[Trainer]:
        module, cls = self.problems.get(problem or "", (self.module, self.cls))
        return getattr(import_module(f"{__package__}.{module}"), cls)


METHODS: Mapping[str, Method] = MappingProxyType(
    {
        # The quarter vehicle is the paper's hybrid model, not a black-box ODE: its collocation
        # row is the quarter-vehicle experiment behind the trainer interface.
        "collocation": Method(
            "collocation", "Collocation", problems={"qvm": ("qvm_collocation", "QVMCollocation")}
        ),
        "fnode": Method("fnode", "FNODE"),
        "mbdnode": Method("mbdnode", "MBDNODE"),
        "snde": Method("snde", "SNDE"),
        "mnn": Method("mnn", "MNN"),
        "sindy": Method("sindy", "SINDy"),
        "node": Method("node", "NODE"),
        "node_adjoint": Method("node", "NODE", defaults={"adjoint": True}),
        "lstm": Method("baselines", "LSTM"),
        "fcnn": Method("baselines", "FCNN"),
        # the energy-based baselines of the MBD-NODE paper (second-order systems only)
        "hnn": Method("hnn", "HNN"),
        "lnn": Method("lnn", "LNN"),
    }
)


def available() -> list[str]:
    """Names of the registered methods."""
    return list(METHODS)


def _entry(name: str) -> Method:
    return METHODS[v.choice("method", name, METHODS)]


def method_class(name: str, problem: str | None = None) -> type[Trainer]:
    """The trainer class of method ``name`` (for ``problem``, when it has a specialized one);
    a ValueError lists the valid names."""
    return _entry(name).trainer_class(problem)


def method_defaults(name: str) -> dict[str, Any]:
    """Option overrides that the registry entry ``name`` adds (e.g. ``node_adjoint``)."""
    return dict(_entry(name).defaults)


def make_trainer(
    name: str, problem: str | None = None, quick: bool = False, **options: Any
) -> Trainer:
    """A trainer for method ``name`` with the paper options for ``problem``, shrunk if
    ``quick``, then the entry's defaults, then ``options``."""
    entry = _entry(name)
    if problem is not None:
        from .. import problems

        v.choice("problem", problem, problems.available())
    if not isinstance(quick, bool):
        raise TypeError(f"quick must be a bool, got {quick!r}")
    cls = entry.trainer_class(problem)
    trainer = cls(cls.options_for(problem, quick=quick, **{**entry.defaults, **options}))
    trainer.name = name
    return trainer
