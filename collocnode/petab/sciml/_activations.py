"""Elementwise activations on CasADi columns, as PyTorch defines them, and their arguments
(shared by the functional forms and the activation modules)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import casadi as ca

from ._args import Arg

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _log1p_exp(z: Any) -> Any:
    """log(1 + exp(z)) without overflow."""
    return ca.fmax(z, 0) + ca.log1p(ca.exp(-ca.fabs(z)))


def _softplus(x: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """PyTorch's softplus: log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    z = beta * x
    return ca.if_else(z > threshold, x, _log1p_exp(z) / beta)


def _sigmoid(x: Any) -> Any:
    return 1 / (1 + ca.exp(-x))


def _relu6(x: Any) -> Any:
    return ca.fmin(ca.fmax(x, 0), 6)


def _gelu(x: Any, approximate: str = "none") -> Any:
    if approximate == "tanh":
        return 0.5 * x * (1 + ca.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + ca.erf(x / math.sqrt(2)))


#: The activations by their functional name (``identity`` for the ``Identity`` module).
ELEMENTWISE: dict[str, Callable[..., Any]] = {
    "tanh": ca.tanh,
    "sigmoid": _sigmoid,
    "relu": lambda x: ca.fmax(x, 0),
    "relu6": _relu6,
    "leaky_relu": lambda x, negative_slope=0.01: ca.fmax(x, 0) + negative_slope * ca.fmin(x, 0),
    "elu": lambda x, alpha=1.0: ca.fmax(x, 0) + alpha * ca.expm1(ca.fmin(x, 0)),
    "celu": lambda x, alpha=1.0: ca.fmax(x, 0) + alpha * ca.expm1(ca.fmin(x, 0) / alpha),
    "selu": lambda x: _SELU_SCALE * (ca.fmax(x, 0) + _SELU_ALPHA * ca.expm1(ca.fmin(x, 0))),
    "gelu": _gelu,
    "silu": lambda x: x * _sigmoid(x),
    "mish": lambda x: x * ca.tanh(_log1p_exp(x)),
    "softplus": _softplus,
    "log_sigmoid": lambda x: ca.fmin(x, 0) - ca.log1p(ca.exp(-ca.fabs(x))),
    "softsign": lambda x: x / (1 + ca.fabs(x)),
    "tanhshrink": lambda x: x - ca.tanh(x),
    "hardtanh": lambda x, min_val=-1.0, max_val=1.0: ca.fmin(ca.fmax(x, min_val), max_val),
    "hardsigmoid": lambda x: _relu6(x + 3) / 6,
    "hardswish": lambda x: x * _relu6(x + 3) / 6,
    "identity": lambda x: x,
}

_INPLACE = Arg("inplace", "bool", False, ignored=True)

#: Each activation's arguments besides its input (``identity`` has none and is not listed).
ACTIVATION_ARGS: dict[str, tuple[Arg, ...]] = {
    "tanh": (),
    "sigmoid": (),
    "relu": (_INPLACE,),
    "relu6": (_INPLACE,),
    "leaky_relu": (Arg("negative_slope", "number", 0.01), _INPLACE),
    "elu": (Arg("alpha", "number", 1.0), _INPLACE),
    "celu": (Arg("alpha", "nonzero", 1.0), _INPLACE),
    "selu": (_INPLACE,),
    # torch's functional gelu has no ``inplace``, but the PEtab SciML benchmark collection's
    # files write one (false); like every ``inplace`` it cannot change the output
    "gelu": (Arg("approximate", "approximate", "none"), _INPLACE),
    "silu": (_INPLACE,),
    "mish": (_INPLACE,),
    "softplus": (Arg("beta", "positive", 1.0), Arg("threshold", "threshold", 20.0)),
    "log_sigmoid": (),
    "softsign": (),
    "tanhshrink": (),
    "hardtanh": (Arg("min_val", "number", -1.0), Arg("max_val", "number", 1.0), _INPLACE),
    "hardsigmoid": (_INPLACE,),
    "hardswish": (_INPLACE,),
}
