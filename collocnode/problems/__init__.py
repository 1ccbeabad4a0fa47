"""Benchmark systems of the seed papers, behind one registry.

>>> from collocnode import problems
>>> problems.available()            # doctest: +SKIP
>>> sys = problems.get("vdp")
>>> split = sys.generate(noise=0.1, seed=0)
"""

from __future__ import annotations

from .. import _validation as v
from ..tools._registry import Registry
from ._base import Split, System
from ._layout import StateLayout

#: name -> the system's class, imported on first use (importing the package does no work)
SYSTEMS: Registry[type[System]] = Registry(
    "problem",
    {
        "vdp": "collocnode.problems._vdp:VanDerPol",
        "qvm": "collocnode.problems._qvm:QuarterVehicle",
        "sms": "collocnode.problems._mass_spring:SingleMassSpring",
        "smsd": "collocnode.problems._mass_spring:SingleMassSpringDamper",
        "tmsd": "collocnode.problems._mass_spring:TripleMassSpringDamper",
        "pendulum": "collocnode.problems._pendulum:Pendulum",
        "double_pendulum": "collocnode.problems._pendulum:DoublePendulum",
        "cart_pole": "collocnode.problems._cart_pole:CartPole",
        "slider_crank": "collocnode.problems._slider_crank:SliderCrank",
        "vehicle4dof": "collocnode.problems._vehicle:Vehicle4DOF",
        "two_body": "collocnode.problems._two_body:TwoBody",
        "rigid_body": "collocnode.problems._rigid_body:RigidBody",
        "dcdc": "collocnode.problems._dcdc:DCDCConverter",
        "robot_arm": "collocnode.problems._robot_arm:RobotArm",
        "lorenz": "collocnode.problems._lorenz:Lorenz",
    },
)


def available() -> list[str]:
    """Names of all registered systems."""
    return SYSTEMS.names()


def _system_class(name: str) -> type[System]:
    return SYSTEMS.load(name)


def presets(name: str) -> list[str]:
    """Preset names of system ``name`` (the first is the default)."""
    return list(_system_class(name).PRESETS)


def parameters(name: str, preset: str | None = None) -> list[str]:
    """Names of the physical parameters of system ``name`` in ``preset`` (default: its first),
    the overrides [`get`][collocnode.problems.get] accepts besides sampling settings."""
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


__all__ = [
    "SYSTEMS",
    "Split",
    "StateLayout",
    "System",
    "available",
    "get",
    "parameters",
    "presets",
]
