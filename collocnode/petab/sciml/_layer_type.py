"""The description of a layer type (`LayerType`): its constructor and forward arguments, its
parameter arrays, its evaluation, and the checks of its bound constructor arguments."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._args import Arg
from ._tensor import Tensor

Args = Mapping[str, Any]


def no_arrays(a: Args) -> dict[str, tuple[int, ...]]:
    return {}


def no_problem(a: Args) -> str | None:
    return None


@dataclass(frozen=True)
class LayerType:
    """A ``torch.nn`` module: constructor ``args``, forward ``call`` arguments, its parameter
    arrays' shapes (from the bound constructor args) and its evaluation
    ``apply(args, arrays, **tensors)`` with ``arrays`` as row-major CasADi columns.

    ``check(args)``: why the bound constructor arguments are inconsistent (PyTorch would
    refuse them too, e.g. a ``kernel_size`` of the wrong length), or None. ``refuse(args)``:
    why arguments PyTorch accepts are not supported here (e.g. ``return_indices=True``), or
    None."""

    args: tuple[Arg, ...]
    call: tuple[Arg, ...]
    arrays: Callable[[Args], dict[str, tuple[int, ...]]]
    apply: Callable[..., Tensor]
    check: Callable[[Args], str | None] = no_problem
    refuse: Callable[[Args], str | None] = no_problem


#: ``device`` and ``dtype``: accepted (null) and ignored (CasADi evaluates in float64).
DEVICE = (Arg("device", "none", None, ignored=True), Arg("dtype", "none", None, ignored=True))
