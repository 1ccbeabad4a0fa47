"""Benchmark systems of the seed papers, behind one registry.

>>> from collocnode import problems
>>> problems.available()            # doctest: +SKIP
>>> sys = problems.get("vdp")
>>> split = sys.generate(noise=0.1, seed=0)
"""

from __future__ import annotations

from importlib import import_module

from .. import _validation as v
from .base import Split, System

# name -> (module, class). Modules are imported on first use so that importing the package
# does no work.
_REGISTRY: dict[str, tuple[str, str]] = {
    "vdp": ("vdp", "VanDerPol"),
    "qvm": ("qvm", "QuarterVehicle"),
    "sms": ("mass_spring", "SingleMassSpring"),
    "smsd": ("mass_spring", "SingleMassSpringDamper"),
    "tmsd": ("mass_spring", "TripleMassSpringDamper"),
    "pendulum": ("pendulum", "Pendulum"),
    "double_pendulum": ("pendulum", "DoublePendulum"),
    "cart_pole": ("cart_pole", "CartPole"),
    "slider_crank": ("slider_crank", "SliderCrank"),
    "vehicle4dof": ("vehicle", "Vehicle4DOF"),
    "two_body": ("two_body", "TwoBody"),
    "rigid_body": ("rigid_body", "RigidBody"),
    "dcdc": ("dcdc", "DCDCConverter"),
    "robot_arm": ("robot_arm", "RobotArm"),
    "lorenz": ("lorenz", "Lorenz"),
}


def available() -> list[str]:
    """Names of all registered systems."""
    return sorted(_REGISTRY)


def _system_class(name: str) -> type[System]:
    v.choice("problem", name, available())
    module, cls = _REGISTRY[name]
    return getattr(import_module(f"{__name__}.{module}"), cls)


def presets(name: str) -> list[str]:
    """Preset names of system ``name`` (the first is the default)."""
    return list(_system_class(name).PRESETS)


def parameters(name: str, preset: str | None = None) -> list[str]:
    """Names of the physical parameters of system ``name`` in ``preset`` (default: its first),
    the overrides :func:`get` accepts besides sampling settings."""
    cls = _system_class(name)
    preset = next(iter(cls.PRESETS)) if preset is None else preset
    return list(cls.PRESETS[v.choice(f"preset of {name}", preset, cls.PRESETS)])


def get(name: str, preset: str | None = None, **params: float) -> System:
    """Build system ``name`` with a named ``preset`` and optional parameter overrides.

    Unknown names and presets raise ValueError listing the valid ones.
    """
    cls = _system_class(name)
    preset = next(iter(cls.PRESETS)) if preset is None else preset
    v.choice(f"preset of {name}", preset, cls.PRESETS)
    return cls(preset=preset, **params)


__all__ = ["Split", "System", "available", "get", "parameters", "presets"]
