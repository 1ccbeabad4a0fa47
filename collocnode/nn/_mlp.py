"""Multilayer perceptrons with one flat weight layout shared by CasADi, numpy and torch."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as v
from ._activations import ACTIVATIONS, get_activation, require_c2
from ._base import Block

INITS = ("xavier_normal", "xavier_normal_torch_bias", "xavier_uniform", "torch_default", "zeros")


@dataclass(frozen=True)
class MLP(Block):
    """A fully connected network ``sizes[0] -> sizes[1] -> ... -> sizes[-1]``.

    The hidden layers use ``activation``; the output layer is affine. Inputs and outputs may be
    rescaled by constants, ``y = output_scale * net((x - input_shift) / input_scale)``, so that
    physical signals of any magnitude reach the network at order one.

    A network with a hidden layer whose ``input_shift`` and ``input_scale`` are both left None
    takes them from the data: the first [`TrainingProblem`][collocnode.TrainingProblem] it is
    trained in sets them from each input over the data (`set_input_normalization`; its mean
    and standard deviation, or 0 and 1 for an input already of order one, see
    `collocnode.training._normalization`), and they stay (``inputs_from_data`` says whether that
    is still to come). Give either to choose them yourself; ``input_shift=0, input_scale=1`` is
    none.

    Flat weight layout (the same on every backend): for each layer, the weight matrix
    ``W`` of shape ``(n_out, n_in)`` in row-major order, then the bias ``b`` of shape ``(n_out,)``.
    This is ``torch.nn.utils.parameters_to_vector`` of a stack of ``torch.nn.Linear`` layers.

    Examples:
        A 2-8-1 network: its numpy and CasADi forms compute the same function of one flat weight
        vector:

        ```python
        import casadi as ca
        import numpy as np

        from collocnode.nn import MLP

        net = MLP((2, 8, 1), "tanh", input_shift=(0.0, 0.0), input_scale=(1.0, 1.0))
        w = net.init_weights(0)  # flat: W1 (8x2, row-major), b1, W2 (1x8), b2
        print(net.n_params, net.layer_shapes)  # 33 [(8, 2), (1, 8)]
        x = np.array([[0.1, -0.2], [0.3, 0.4]])
        y = net.numpy(x, w)  # a batch, shape (2, 1)
        xs = ca.SX.sym("x", 2)
        f = ca.Function("f", [xs], [net.casadi(xs, w)])  # the same network in CasADi
        assert np.allclose(float(f(x[0])), y[0, 0])
        print(y.ravel())
        ```
    """

    sizes: tuple[int, ...]
    activation: str = "tanh"
    init: str = "xavier_normal"
    input_shift: tuple[float, ...] | None = None
    input_scale: tuple[float, ...] | None = None
    output_scale: tuple[float, ...] | None = None
    inputs_from_data: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.sizes, int):
            sizes: tuple[Any, ...] = (self.sizes,)
        elif isinstance(self.sizes, Iterable) and not isinstance(self.sizes, str):
            sizes = tuple(self.sizes)
        else:
            raise TypeError(f"sizes must be a sequence of layer widths, got {self.sizes!r:.60}")
        if len(sizes) < 2:
            raise ValueError(f"sizes must list at least input and output sizes, got {self.sizes!r}")
        sizes = tuple(v.positive_int(f"sizes[{i}]", s) for i, s in enumerate(sizes))
        object.__setattr__(self, "sizes", sizes)
        # refuse before any weight is drawn: init_weights allocates every layer at once
        v.fits_in_memory(f"MLP sizes {sizes}", self.n_params, "weights")
        v.choice("activation", self.activation, ACTIVATIONS)
        v.choice("init", self.init, INITS)
        unset = self.input_shift is None and self.input_scale is None and len(sizes) > 2
        object.__setattr__(self, "inputs_from_data", unset)
        for name, length, default in (
            ("input_shift", sizes[0], 0.0),
            ("input_scale", sizes[0], 1.0),
            ("output_scale", sizes[-1], 1.0),
        ):
            value = getattr(self, name)
            arr = (
                np.full(length, default)
                if value is None
                else np.atleast_1d(v.finite_array(name, value))
            )
            if arr.size == 1 and length > 1:
                arr = np.full(length, float(arr[0]))
            if arr.shape != (length,):
                raise ValueError(f"{name} must have {length} entries, got {arr.size}")
            if name != "input_shift" and np.any(arr == 0):
                raise ValueError(f"{name} must be non-zero, got {tuple(arr)}")
            object.__setattr__(self, name, tuple(float(a) for a in arr))

    def set_input_normalization(self, shift: Any, scale: Any) -> None:
        """Set ``input_shift`` (n_in,) and ``input_scale`` (n_in,, non-zero) of a network that
        left them to the data (``inputs_from_data``), in place, once: the block object is the
        one the user's model holds, so the model they simulate with is the one trained. A
        network whose normalisation is set (given or set before) refuses with a ValueError."""
        if not self.inputs_from_data:
            raise ValueError(
                f"the input normalisation of this MLP is set (input_shift={self.input_shift}, "
                f"input_scale={self.input_scale}); it is taken from the data only once, where "
                "both were left None"
            )
        shift = np.atleast_1d(v.finite_array("input_shift", shift))
        scale = np.atleast_1d(v.finite_array("input_scale", scale))
        for name, arr in (("input_shift", shift), ("input_scale", scale)):
            if arr.shape != (self.n_in,):
                raise ValueError(f"{name} must have {self.n_in} entries, got {arr.size}")
        if np.any(scale == 0):
            raise ValueError(f"input_scale must be non-zero, got {tuple(scale)}")
        # a frozen dataclass set in place, once: see the docstring
        object.__setattr__(self, "input_shift", tuple(float(a) for a in shift))
        object.__setattr__(self, "input_scale", tuple(float(a) for a in scale))
        object.__setattr__(self, "inputs_from_data", False)

    @property
    def n_in(self) -> int:  # type: ignore[override]
        return self.sizes[0]

    @property
    def n_out(self) -> int:  # type: ignore[override]
        return self.sizes[-1]

    @property
    def layer_shapes(self) -> list[tuple[int, int]]:
        """``(n_out, n_in)`` of each affine layer."""
        return [(b, a) for a, b in zip(self.sizes[:-1], self.sizes[1:], strict=True)]

    @property
    def n_params(self) -> int:
        return sum(o * i + o for o, i in self.layer_shapes)

    def unflatten(self, w: Any) -> list[tuple[Any, Any]]:
        """Split a flat vector (numpy or CasADi) into ``[(W, b), ...]`` (see the class doc)."""
        out, k = [], 0
        for o, i in self.layer_shapes:
            W = w[k : k + o * i]
            k += o * i
            b = w[k : k + o]
            k += o
            if isinstance(W, np.ndarray):
                W = W.reshape(o, i)
            else:  # CasADi reshapes column-major; build the row-major matrix via its transpose
                W = W.reshape((i, o)).T
            out.append((W, b))
        return out

    def casadi(self, x: Any, w: Any) -> Any:
        act = get_activation(self.activation).casadi
        z = (x - np.array(self.input_shift)) / np.array(self.input_scale)
        layers = self.unflatten(w)
        for li, (W, b) in enumerate(layers):
            z = W @ z + b
            if li < len(layers) - 1:
                z = act(z)
        return z * np.array(self.output_scale)

    def numpy(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        act = get_activation(self.activation).numpy
        w = np.asarray(w, dtype=float)
        if w.shape != (self.n_params,):
            raise ValueError(f"w must have shape ({self.n_params},), got {w.shape}")
        x = np.asarray(x, dtype=float)
        if x.ndim == 0 or x.shape[-1] != self.n_in:
            raise ValueError(f"x must have shape (..., {self.n_in}), got {x.shape}")
        z = (x - np.array(self.input_shift)) / np.array(self.input_scale)
        layers = self.unflatten(w)
        for li, (W, b) in enumerate(layers):
            z = z @ W.T + b
            if li < len(layers) - 1:
                z = act(z)
        return z * np.array(self.output_scale)

    def init_weights(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        parts = []
        for o, i in self.layer_shapes:
            if self.init == "xavier_normal":
                W = rng.normal(0.0, np.sqrt(2.0 / (i + o)), size=(o, i))
                b = np.zeros(o)
            elif self.init == "xavier_normal_torch_bias":
                # what the FNODE/MBD-NODE authors' code does: torch.nn.Linear's own biases
                # kept, xavier_normal_ applied to the weights only
                W = rng.normal(0.0, np.sqrt(2.0 / (i + o)), size=(o, i))
                a = 1.0 / np.sqrt(i)
                b = rng.uniform(-a, a, size=o)
            elif self.init == "xavier_uniform":
                a = np.sqrt(6.0 / (i + o))
                W = rng.uniform(-a, a, size=(o, i))
                b = np.zeros(o)
            elif self.init == "torch_default":  # torch.nn.Linear's own initialisation
                a = 1.0 / np.sqrt(i)
                W = rng.uniform(-a, a, size=(o, i))
                b = rng.uniform(-a, a, size=o)
            else:
                W, b = np.zeros((o, i)), np.zeros(o)
            parts += [W.ravel(), b]
        return np.concatenate(parts)

    def check_smooth(self) -> None:
        require_c2(self.activation)

    def torch_module(
        self, weights: np.ndarray | None = None, dtype: Any = None, device: Any = None
    ) -> Any:
        from ._torch import TorchMLP

        return TorchMLP(self, weights=weights, dtype=dtype, device=device)
