"""The methods of the comparison: each trains a model from trajectory data behind one interface.

* ``base.py``: the interface (`Trainer`, `FitResult`, `Progress`);
  ``options.py`` the options every method shares and those of the gradient-trained ones;
  ``status.py`` how a method ended (`MethodStatus`, mapped from the core's
  [`SolverStatus`][collocnode.SolverStatus] in one place).
* ``gradient.py``: the Adam loop of the PyTorch methods; ``field.py``, ``energy.py``, ``labels.py``,
  ``inputs.py`` and ``device.py`` what several of them share.
* one module per method: ``fnode.py``, ``mbdnode.py``, ``node.py``, ``snde.py``, ``mnn.py`` (its
  solver in ``mnn_solver.py``), ``baselines.py`` (LSTM, FCNN), ``hnn.py``, ``lnn.py``, and
  ``collocation.py`` (the recipes of `collocnode.recipes` behind the interface, no torch;
  ``readouts.py`` what it reads off each recipe's models).
* ``registry.py``: the one registry of the methods, `make_trainer`.

Nothing here knows of a comparison run (`collocnode.compare._run`; ``lint-imports`` checks
it), and importing this package loads no torch: the method modules load on first use.
"""

from .base import FitResult, NotApplicableError, Progress, Trainer
from .gradient import GradientTrainer
from .options import GradientOptions, TrainerOptions
from .registry import available, make_trainer, method_class
from .status import MethodStatus

__all__ = [
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
