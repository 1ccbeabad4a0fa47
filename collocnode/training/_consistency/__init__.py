"""Is the trained model's ODE the collocation trajectory? The consistency check
(`collocnode.training._consistency.check`) and what it found
(`collocnode.training._consistency.report`)."""

from .check import (
    CHECK_MAX_STEPS,
    DEFAULT_TOLERANCE,
    ConsistencyCheck,
    check_consistency,
    check_grid,
    check_setting,
)
from .report import Beyond, ConsistencyReport, InconsistentModelWarning

__all__ = [
    "CHECK_MAX_STEPS",
    "DEFAULT_TOLERANCE",
    "Beyond",
    "ConsistencyCheck",
    "ConsistencyReport",
    "InconsistentModelWarning",
    "check_consistency",
    "check_grid",
    "check_setting",
]
