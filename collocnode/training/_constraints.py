"""Constraints of a training problem: bounds on a block's output at a fixed input, and path
constraints on the states along every trajectory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

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


@dataclass(frozen=True)
class PathConstraint:
    """``lb <= g(x, u, t, blocks, params) <= ub`` at every collocation node of every trajectory
    (a hard NLP constraint, paper eq. 3c), by default ``g >= 0``.

    Args:
        fn: ``g(x, u, t, blocks, params) -> (n,)``, written like the model's physics (CasADi
            operations; ``blocks`` and ``params`` as the physics sees them, per-trajectory
            parameters included).
        n: the number of values g returns.
        lb, ub: bounds, a scalar or one per value (±inf for none).
    """

    fn: Any
    n: int = 1
    lb: Any = 0.0
    ub: Any = np.inf

    def __post_init__(self) -> None:
        # what needs no model is checked here; g's size by TrainingProblem
        v.function("PathConstraint.fn", self.fn)
        n = v.positive_int("PathConstraint.n", self.n)
        bounds = {}
        for name in ("lb", "ub"):
            bound = v.real_array(f"PathConstraint.{name}", getattr(self, name))
            if bound.shape not in ((), (1,), (n,)):
                raise ValueError(
                    f"PathConstraint.{name} must be a scalar or have {n} entries, got shape "
                    f"{bound.shape}"
                )
            bounds[name] = np.broadcast_to(bound.ravel() if bound.size == 1 else bound, (n,))
            object.__setattr__(self, name, bounds[name].copy())
        if np.any(bounds["lb"] > bounds["ub"]):
            raise ValueError(
                f"PathConstraint needs lb <= ub, got lb = {bounds['lb']}, ub = {bounds['ub']}"
            )
