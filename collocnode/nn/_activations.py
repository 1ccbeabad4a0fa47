"""Activation functions, written once per backend (CasADi symbolic, numpy; their torch forms are
in `collocnode.nn._torch`, the only module of this package that imports torch).

IPOPT needs twice continuously differentiable models, so each activation records whether it is C².
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v


@dataclass(frozen=True)
class Activation:
    name: str
    casadi: Callable[[Any], Any]
    numpy: Callable[[np.ndarray], np.ndarray]
    c2: bool  # twice continuously differentiable everywhere


def _ca():
    import casadi

    return casadi


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    # exp(-|x|) never overflows; both branches are the same function.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation(
            "sigmoid",
            casadi=lambda x: 0.5 + 0.5 * _ca().tanh(0.5 * x),
            numpy=_np_sigmoid,
            c2=True,
        ),
        Activation(
            "tanh",
            casadi=lambda x: _ca().tanh(x),
            numpy=np.tanh,
            c2=True,
        ),
        Activation(
            "softplus",
            casadi=lambda x: _ca().log1p(_ca().exp(x)),
            numpy=lambda x: np.logaddexp(0.0, x),
            c2=True,
        ),
        # Langenkamp et al. eq. (18): a smooth ReLU, (x + sqrt(1 + x^2)) / 2.
        Activation(
            "squareplus",
            casadi=lambda x: 0.5 * (x + _ca().sqrt(1.0 + x * x)),
            numpy=lambda x: 0.5 * (x + np.sqrt(1.0 + x * x)),
            c2=True,
        ),
        Activation(
            "silu",
            casadi=lambda x: x * (0.5 + 0.5 * _ca().tanh(0.5 * x)),
            numpy=lambda x: x * _np_sigmoid(x),
            c2=True,
        ),
        Activation(
            "identity",
            casadi=lambda x: x,
            numpy=lambda x: x,
            c2=True,
        ),
        Activation(
            "relu",
            casadi=lambda x: _ca().fmax(x, 0.0),
            numpy=lambda x: np.maximum(x, 0.0),
            c2=False,
        ),
    )
}


def get_activation(name: str) -> Activation:
    """The activation called ``name``; a ValueError lists the valid names."""
    return ACTIVATIONS[v.choice("activation", name, ACTIVATIONS)]


def require_c2(name: str, where: str = "IPOPT") -> None:
    """Raise if activation ``name`` is not twice continuously differentiable."""
    act = get_activation(name)
    if not act.c2:
        smooth = ", ".join(n for n, a in ACTIVATIONS.items() if a.c2)
        raise ValueError(
            f"activation {name!r} is not twice continuously differentiable, which {where} "
            f"requires; use one of: {smooth}"
        )
