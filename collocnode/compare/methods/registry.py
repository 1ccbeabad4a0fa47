"""The one registry of the comparison's methods: name -> trainer class and its option overrides.

A `Registry`: each name refers to a trainer class by
``"package.module:Class"``, imported on first use (importing this package imports no torch), and
may carry ``defaults``, option overrides of that entry (``node_adjoint`` is ``node`` with
``adjoint=True``). A method is one class for every problem: what differs per problem is its
``PAPER`` options, or for collocation the problem's recipe.
"""

from __future__ import annotations

from typing import Any

from ... import _validation as v
from ...tools._registry import Registry
from .base import Trainer

_HERE = "collocnode.compare.methods"

# name -> reference (and metadata), in the order the comparison lists the methods
_TABLE: dict[str, Any] = {
    # the problem's recipe decides the model (the quarter vehicle's is its hybrid one)
    "collocation": f"{_HERE}.collocation:Collocation",
    "fnode": f"{_HERE}.fnode:FNODE",
    "mbdnode": f"{_HERE}.mbdnode:MBDNODE",
    # MBD-NODE's variant for conservative systems: a (∂H/∂q, ∂H/∂p) field, Störmer–Verlet
    "mbdnode_symplectic": f"{_HERE}.mbdnode_symplectic:SymplecticMBDNODE",
    "snde": f"{_HERE}.snde:SNDE",
    # the SNDE paper's other baselines: the stabilized augmented NODE and the tangent projection
    "sanode": f"{_HERE}.snde:SANODE",
    "tpo": (f"{_HERE}.snde:SNDE", {"defaults": {"projection": "tangent", "gamma": 0.0}}),
    "mnn": f"{_HERE}.mnn:MNN",
    "node": f"{_HERE}.node:NODE",
    "node_adjoint": (f"{_HERE}.node:NODE", {"defaults": {"adjoint": True}}),
    # the augmented NODE (Dupont et al. 2019), a baseline of the SNDE paper
    "anode": f"{_HERE}.snde:ANODE",
    "lstm": f"{_HERE}.baselines:LSTM",
    "fcnn": f"{_HERE}.baselines:FCNN",
    # the energy-based baselines of the MBD-NODE paper (second-order systems only)
    "hnn": f"{_HERE}.hnn:HNN",
    "lnn": f"{_HERE}.lnn:LNN",
    # no learning: the true equations stepped by a fixed-step scheme (MBD-NODE Table 5)
    "numerical": f"{_HERE}.numerical:Numerical",
    # sparse regression on smoothed derivatives (pysindy), no network
    "sindy": f"{_HERE}.sindy:SINDy",
}

METHODS: Registry[type[Trainer]] = Registry("method", _TABLE)


def available() -> list[str]:
    """Names of the registered methods, in the order the comparison lists them (the registry's
    own listing is sorted; error messages and help texts keep this order)."""
    return list(_TABLE)


def _checked(name: str) -> str:
    """``name`` if registered; otherwise one ValueError listing the methods in their order."""
    return v.choice("method", name, available())


def method_class(name: str, problem: str | None = None) -> type[Trainer]:
    """The trainer class of method ``name``; a ValueError lists the valid names. ``problem`` is
    accepted for the callers of 0.2, when a method could have a class per problem: every
    method has one class now."""
    return METHODS.load(_checked(name))


def method_defaults(name: str) -> dict[str, Any]:
    """Option overrides that the registry entry ``name`` adds (e.g. ``node_adjoint``)."""
    return dict(METHODS.entry(_checked(name)).meta.get("defaults", {}))


def make_trainer(
    name: str, problem: str | None = None, quick: bool = False, **options: Any
) -> Trainer:
    """A trainer for method ``name`` with the paper options for ``problem``, shrunk if
    ``quick``, then the entry's defaults, then ``options``."""
    _checked(name)
    if problem is not None:
        from ... import problems

        v.choice("problem", problem, problems.available())
    if not isinstance(quick, bool):
        raise TypeError(f"quick must be a bool, got {quick!r}")
    cls = method_class(name)  # imported only now, once the arguments are known to be good
    trainer = cls(cls.options_for(problem, quick=quick, **{**method_defaults(name), **options}))
    trainer.name = name
    return trainer
