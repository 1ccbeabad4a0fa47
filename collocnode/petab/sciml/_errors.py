"""The errors of the network reader: `UnsupportedError` (public) and `EvalError`
(raised while evaluating one node and re-raised naming it)."""

from __future__ import annotations

from .._tables import PetabError


class UnsupportedError(PetabError):
    """A network file that uses a layer type or node target this reader does not support.

    ``feature`` is what is missing, e.g. ``"layer type 'Conv2d'"``; ``reason`` says why it is
    not supported."""

    def __init__(self, message: str, feature: str, reason: str) -> None:
        super().__init__(message)
        self.feature = feature
        self.reason = reason


class EvalError(ValueError):
    """A shape or parameter mismatch found while evaluating one node (re-raised naming it)."""
