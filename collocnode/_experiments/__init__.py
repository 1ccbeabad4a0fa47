"""Named experiments behind ``scripts/train_collocation.py``: an options dataclass and
``run(options, record)`` per problem, over the recipes of `collocnode.recipes`.

The paper's two experiments have modules of their own; every other registered system
(`collocnode.problems.SYSTEMS`) is the generic one, the suitable neural ODE trained by
collocation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..problems import SYSTEMS
from ..tools._registry import Entry

#: the experiments with a module of their own: name -> (options class, metadata)
OWN: dict[str, tuple[str, dict[str, str]]] = {
    "vdp": (
        "collocnode._experiments.vdp:VdPOptions",
        {"summary": "Van der Pol neural ODE (paper §4.2)"},
    ),
    "qvm": (
        "collocnode._experiments.qvm:QVMOptions",
        {"summary": "quarter-vehicle PeN-ODE (paper §4.1)"},
    ),
}
GENERIC = "collocnode._experiments.generic:SystemOptions"
#: the experiment names: the registered systems (iterable, ``in``)
EXPERIMENTS = SYSTEMS


@dataclass(frozen=True)
class Experiment:
    """One named experiment: its options class and ``run`` function (loaded on first use)."""

    entry: Entry

    @property
    def summary(self) -> str:
        return self.entry.meta["summary"]

    def load(self) -> tuple[type, Any]:
        """(options class, ``run(options, record)``) of the experiment."""
        options = self.entry.load()
        run = Entry(self.entry.name, self.entry.module + ":run").load()
        return options, run


def names() -> list[str]:
    """Every experiment: one per registered system."""
    return SYSTEMS.names()


def get(name: str) -> Experiment:
    """The experiment ``name`` (a registered system); one ValueError listing them otherwise."""
    name = SYSTEMS.entry(name).name
    ref, meta = OWN.get(name, (GENERIC, {"summary": f"{name}: neural ODE trained by collocation"}))
    return Experiment(Entry(name, ref, meta))
