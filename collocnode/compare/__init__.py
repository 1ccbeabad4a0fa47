"""The comparison: FNODE, MBD-NODE, SNDE, MNN, the baselines and collocation, head to head.

Two packages, the second over the first: `collocnode.compare.methods` (every method behind
one trainer interface, and its registry; the PyTorch side) and `collocnode.compare._run` (one
comparison: data, scoring, rows, ``compare.json`` and ``compare.md``). This package re-exports
what a user of the methods imports.

>>> from collocnode import problems
>>> from collocnode.compare import make_trainer
>>> system = problems.get("smsd")
>>> split = system.generate()
>>> trainer = make_trainer("fnode", problem="smsd", quick=True)   # doctest: +SKIP
>>> result = trainer.fit(system, split.train)                      # doctest: +SKIP
>>> x = trainer.predict(split.full.t, split.full.x[0])             # doctest: +SKIP

Importing this package loads no torch; the method modules load on first use.
"""

from ..tools._fixed_step import DivergenceError
from .methods.base import FitResult, NotApplicableError, Progress, Trainer, TrainerOptions
from .methods.gradient import GradientOptions, GradientTrainer
from .methods.registry import available, make_trainer, method_class
from .methods.status import MethodStatus

__all__ = [
    "DivergenceError",
    "FitResult",
    "GradientOptions",
    "GradientTrainer",
    "MethodStatus",
    "NotApplicableError",
    "Progress",
    "Trainer",
    "TrainerOptions",
    "available",
    "make_trainer",
    "method_class",
]
