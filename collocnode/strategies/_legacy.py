"""The former keyword of a wrapper's inner algorithm, kept for one release."""

from __future__ import annotations

import warnings
from typing import Any


def adopt_alg(wrapper: Any, alg: Any) -> None:
    """Take ``alg`` (the wrapper's former ``alg=`` keyword) as its ``inner``, with a
    DeprecationWarning; nothing when it was not given."""
    if alg is None:
        return
    name = type(wrapper).__name__
    warnings.warn(
        f"{name}(alg=...) is now {name}(inner=...); the alg keyword goes in the next release",
        DeprecationWarning,
        stacklevel=4,
    )
    object.__setattr__(wrapper, "inner", alg)
