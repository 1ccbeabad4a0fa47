"""Block constraints of a training problem: bounds on a block's output at a fixed input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import _validation as v


@dataclass(frozen=True)
class BlockConstraint:
    """``lb <= block(at) <= ub`` for one block at one input point (an NLP constraint, not a
    penalty; paper eq. 17 is ``BlockConstraint("friction", at=0.0)``)."""

    block: str
    at: Any
    lb: Any = 0.0
    ub: Any = 0.0

    def __post_init__(self) -> None:
        # what needs no model is checked here; the block's size and domain by TrainingProblem
        if not isinstance(self.block, str):
            raise TypeError(f"BlockConstraint.block must be a block name, got {self.block!r:.60}")
        v.finite_array(f"block constraint '{self.block}'.at", self.at)
        for name in ("lb", "ub"):
            v.real_array(f"block constraint '{self.block}'.{name}", getattr(self, name))
