"""A comparison run: several methods on one problem with one data set, one row per method.

* ``config.py``: the settings of a run (`CompareConfig`) and its method list;
* ``scenarios.py``: where a problem's data come from and how a trained model is scored (the
  generic state rollout, scored by ``metrics.py``); ``qvm.py`` the quarter vehicle's scenario;
* ``harness.py``: `run`, the methods one after another or as tasks (``tasks.py``), each
  trained, scored and recorded by ``one_method.py``;
* ``results.py``: the rows and the report; ``report.py`` the files written from them.

The methods themselves are `collocnode.compare.methods`, which imports nothing from here.
"""

from .config import CompareConfig, default_methods, parse_methods
from .harness import run
from .one_method import run_method
from .report import markdown, write_report
from .results import CompareReport, MethodRow, add_time_to_target

__all__ = [
    "CompareConfig",
    "CompareReport",
    "MethodRow",
    "add_time_to_target",
    "default_methods",
    "markdown",
    "parse_methods",
    "run",
    "run_method",
    "write_report",
]
