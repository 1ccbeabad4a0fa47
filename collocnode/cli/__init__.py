"""The command lines of ``scripts/``: options, the output directory, exit codes."""

from .main import compare, reproduction_report, train_collocation

__all__ = ["compare", "reproduction_report", "train_collocation"]
