"""Functions and methods: the ``call_function`` and ``call_method`` targets of the forward
graph, each with its argument specification, in the tables `FUNCTIONS` and
`METHODS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import casadi as ca

from ._activations import ACTIVATION_ARGS, ELEMENTWISE
from ._args import INPUT, Arg, passed
from ._ops import binary, cat, flatten, log_softmax, reshape, softmax
from ._tensor import Tensor


@dataclass(frozen=True)
class Function:
    """A node target: its arguments and its evaluation on bound arguments (tensors resolved).
    ``pack_from``: positional arguments from this index on are packed into one list (the
    ``x.view(2, 3)`` form) unless there is exactly one and it is a list already."""

    args: tuple[Arg, ...]
    apply: Callable[..., Tensor]
    pack_from: int | None = None


def _elementwise(name: str) -> Function:
    fn = ELEMENTWISE[name]
    spec = ACTIVATION_ARGS[name]

    def apply(input: Tensor, **kwargs: Any) -> Tensor:
        return Tensor(input.shape, fn(input.flat, **passed(spec, kwargs)))

    return Function((INPUT, *spec), apply)


def _binary_spec(op: Callable[[Any, Any], Any], alpha: bool) -> Function:
    args = (Arg("input", "operand"), Arg("other", "operand"))
    if alpha:
        args = (*args, Arg("alpha", "number", 1))
    return Function(args, binary(op))


_SOFTMAX_ARGS = (
    INPUT,
    Arg("dim", "dim", None),
    Arg("_stacklevel", "any", 3, ignored=True),
    Arg("dtype", "none", None, ignored=True),
)
_ADD = _binary_spec(lambda a, b: a + b, alpha=True)
_SUB = _binary_spec(lambda a, b: a - b, alpha=True)
_MUL = _binary_spec(lambda a, b: a * b, alpha=False)
_DIV = _binary_spec(lambda a, b: a / b, alpha=False)
_FLATTEN = Function((INPUT, Arg("start_dim", "int", 0), Arg("end_dim", "int", -1)), flatten)
_SOFTMAX = Function(_SOFTMAX_ARGS, softmax)
_LOG_SOFTMAX = Function(_SOFTMAX_ARGS, log_softmax)
_CAT = Function((Arg("tensors", "tensors"), Arg("dim", "int", 0)), cat)

#: ``call_function`` targets (the function's name as torch.fx records it).
FUNCTIONS: dict[str, Function] = {
    **{name: _elementwise(name) for name in ACTIVATION_ARGS},
    "logsigmoid": _elementwise("log_sigmoid"),
    "softmax": _SOFTMAX,
    "log_softmax": _LOG_SOFTMAX,
    "cat": _CAT,
    "concat": _CAT,
    "concatenate": _CAT,
    "flatten": _FLATTEN,
    "reshape": Function((INPUT, Arg("shape", "reshape")), reshape),
    "add": _ADD,
    "sub": _SUB,
    "mul": _MUL,
    "truediv": _DIV,
}

#: ``call_method`` targets (a tensor method; its first argument is the tensor).
METHODS: dict[str, Function] = {
    "tanh": _elementwise("tanh"),
    "sigmoid": _elementwise("sigmoid"),
    "relu": Function((INPUT,), lambda input: Tensor(input.shape, ca.fmax(input.flat, 0))),
    "softmax": _SOFTMAX,
    "log_softmax": _LOG_SOFTMAX,
    "flatten": _FLATTEN,
    "reshape": Function((INPUT, Arg("shape", "reshape")), reshape, pack_from=1),
    "view": Function((INPUT, Arg("shape", "reshape")), reshape, pack_from=1),
    "add": _ADD,
    "sub": _SUB,
    "mul": _MUL,
}
