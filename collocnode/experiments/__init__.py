"""Named experiments behind ``scripts/train_collocation.py``: an options dataclass and
``run(options, record)`` per problem, over the recipes of :mod:`collocnode.recipes`."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

from .. import _validation as v


@dataclass(frozen=True)
class Experiment:
    module: str
    options: str
    run: str = "run"
    summary: str = ""

    def load(self) -> tuple[type, Any]:
        mod = import_module(f"{__name__}.{self.module}")
        return getattr(mod, self.options), getattr(mod, self.run)


EXPERIMENTS: dict[str, Experiment] = {
    "vdp": Experiment("vdp", "VdPOptions", summary="Van der Pol neural ODE (paper §4.2)"),
    "qvm": Experiment("qvm", "QVMOptions", summary="quarter-vehicle PeN-ODE (paper §4.1)"),
}
# every other benchmark system: the suitable neural ODE trained by collocation
for _name in (
    "sms",
    "smsd",
    "tmsd",
    "pendulum",
    "double_pendulum",
    "cart_pole",
    "slider_crank",
    "vehicle4dof",
    "two_body",
    "rigid_body",
    "dcdc",
    "robot_arm",
    "lorenz",
):
    EXPERIMENTS[_name] = Experiment(
        "generic", "SystemOptions", summary=f"{_name}: neural ODE trained by collocation"
    )


def get(name: str) -> Experiment:
    return EXPERIMENTS[v.choice("problem", name, EXPERIMENTS)]
