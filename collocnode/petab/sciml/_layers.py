"""Layer types: the ``torch.nn`` modules a ``call_module`` node may call (by its layer's
``layer_type``), in the table `LAYER_TYPES`; and why a known module is refused. The
convolutions and pooling layers are in `_conv` and `_pool`; the dense layers, the
normalizations (``LayerNorm``, ``InstanceNorm1d/2d/3d``), ``Flatten``, ``Identity``, softmax
and the activation modules here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import casadi as ca

from ._activations import ACTIVATION_ARGS, ELEMENTWISE
from ._args import INPUT, Arg, is_int, passed
from ._conv import CONV_LAYERS
from ._errors import EvalError
from ._layer_type import DEVICE, Args, LayerType, no_arrays
from ._ops import flatten, log_softmax, softmax
from ._pool import POOL_LAYERS
from ._tensor import Tensor, column, matrix, numel
from ._windows import layout


def _linear_arrays(a: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    shapes = {"weight": (a["out_features"], a["in_features"])}
    if a["bias"]:
        shapes["bias"] = (a["out_features"],)
    return shapes


def _linear(a: Mapping[str, Any], arrays: Mapping[str, Any], input: Tensor) -> Tensor:
    n_in, n_out = a["in_features"], a["out_features"]
    if not input.shape or input.shape[-1] != n_in:
        raise EvalError(f"input of shape {input.shape}; Linear needs last dimension {n_in}")
    rows = numel(input.shape[:-1])
    y = ca.mtimes(matrix(input.flat, rows, n_in), matrix(arrays["weight"], n_out, n_in).T)
    if "bias" in arrays:
        y = y + ca.repmat(arrays["bias"].T, rows, 1)
    return Tensor((*input.shape[:-1], n_out), column(y))


def _bilinear_arrays(a: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    shapes = {"weight": (a["out_features"], a["in1_features"], a["in2_features"])}
    if a["bias"]:
        shapes["bias"] = (a["out_features"],)
    return shapes


def _bilinear(
    a: Mapping[str, Any], arrays: Mapping[str, Any], input1: Tensor, input2: Tensor
) -> Tensor:
    n1, n2, n_out = a["in1_features"], a["in2_features"], a["out_features"]
    if not input1.shape or input1.shape[-1] != n1:
        raise EvalError(f"first input of shape {input1.shape}; Bilinear needs last dim {n1}")
    if not input2.shape or input2.shape[-1] != n2:
        raise EvalError(f"second input of shape {input2.shape}; Bilinear needs last dim {n2}")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise EvalError(f"inputs of shapes {input1.shape} and {input2.shape}: batches differ")
    rows = numel(input1.shape[:-1])
    x1, x2 = matrix(input1.flat, rows, n1), matrix(input2.flat, rows, n2)
    w = arrays["weight"]
    columns = [
        ca.sum2(ca.mtimes(x1, matrix(w[k * n1 * n2 : (k + 1) * n1 * n2], n1, n2)) * x2)
        for k in range(n_out)
    ]
    y = ca.horzcat(*columns)
    if "bias" in arrays:
        y = y + ca.repmat(arrays["bias"].T, rows, 1)
    return Tensor((*input1.shape[:-1], n_out), column(y))


def _normalized_shape(a: Mapping[str, Any]) -> tuple[int, ...]:
    shape = a["normalized_shape"]
    return (shape,) if is_int(shape) else tuple(shape)


def _normalized_rows(x: Any, eps: float) -> Any:
    """Each row of the CasADi matrix ``x`` less its mean, over its standard deviation (biased,
    as PyTorch's) with ``eps`` added to the variance."""
    n = x.shape[1]
    centred = x - ca.repmat(ca.sum2(x) / n, 1, n)
    variance = ca.sum2(centred * centred) / n
    return centred / ca.repmat(ca.sqrt(variance + eps), 1, n)


def _layer_norm_arrays(a: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {}
    if a["elementwise_affine"]:
        shapes["weight"] = _normalized_shape(a)
        if a["bias"]:
            shapes["bias"] = _normalized_shape(a)
    return shapes


def _layer_norm(a: Mapping[str, Any], arrays: Mapping[str, Any], input: Tensor) -> Tensor:
    shape = _normalized_shape(a)
    if input.shape[len(input.shape) - len(shape) :] != shape:
        raise EvalError(f"input of shape {input.shape}; LayerNorm normalizes over {shape}")
    n = numel(shape)
    groups = numel(input.shape) // n
    y = _normalized_rows(matrix(input.flat, groups, n), a["eps"])
    if "weight" in arrays:
        y = y * ca.repmat(arrays["weight"].T, groups, 1)
    if "bias" in arrays:
        y = y + ca.repmat(arrays["bias"].T, groups, 1)
    return Tensor(input.shape, column(y))


_INSTANCE_NORM_ARGS = (
    Arg("num_features", "count"),
    Arg("eps", "positive", 1e-5),
    Arg("momentum", "momentum", 0.1),
    Arg("affine", "bool", False),
    Arg("track_running_stats", "bool", False),
    *DEVICE,
)


def _instance_norm_arrays(a: Args) -> dict[str, tuple[int, ...]]:
    if not a["affine"]:
        return {}
    return {"weight": (a["num_features"],), "bias": (a["num_features"],)}


def _refuse_running_stats(a: Args) -> str | None:
    if a["track_running_stats"]:
        return "track_running_stats=True (running statistics, buffers) is not supported"
    return None


def _instance_norm(d: int) -> LayerType:
    """``InstanceNorm{d}d``: each channel of each sample normalized over its spatial axes
    (the input's own statistics, biased variance), then scaled and shifted per channel."""
    what = f"InstanceNorm{d}d"

    def apply(a: Args, arrays: Mapping[str, Any], input: Tensor) -> Tensor:
        lay = layout(input, d, what)
        if a["affine"] and lay.channels != a["num_features"]:
            raise EvalError(
                f"input of shape {input.shape}; {what} has {a['num_features']} features"
            )
        n = numel(lay.spatial)
        if n < 2:
            raise EvalError(
                f"input of shape {input.shape}; {what} needs more than one spatial entry"
            )
        y = _normalized_rows(matrix(input.flat, lay.planes, n), a["eps"])
        samples = lay.batch or 1
        if "weight" in arrays:
            y = y * ca.repmat(arrays["weight"], samples, n)
        if "bias" in arrays:
            y = y + ca.repmat(arrays["bias"], samples, n)
        return Tensor(input.shape, column(y))

    return LayerType(
        _INSTANCE_NORM_ARGS, (INPUT,), _instance_norm_arrays, apply, refuse=_refuse_running_stats
    )


def _activation_layer(name: str, args: tuple[Arg, ...] = ()) -> LayerType:
    fn = ELEMENTWISE[name]

    def apply(a: Mapping[str, Any], arrays: Mapping[str, Any], input: Tensor) -> Tensor:
        return Tensor(input.shape, fn(input.flat, **passed(args, a)))

    return LayerType(args, (INPUT,), no_arrays, apply)


def _function_layer(fn: Callable[..., Tensor], args: tuple[Arg, ...]) -> LayerType:
    def apply(a: Mapping[str, Any], arrays: Mapping[str, Any], input: Tensor) -> Tensor:
        return fn(input, **passed(args, a))

    return LayerType(args, (INPUT,), no_arrays, apply)


#: ``layer_type`` values: a ``torch.nn`` module's class name.
LAYER_TYPES: dict[str, LayerType] = {
    "Linear": LayerType(
        (
            Arg("in_features", "count"),
            Arg("out_features", "count"),
            Arg("bias", "bool", True),
            *DEVICE,
        ),
        (INPUT,),
        _linear_arrays,
        _linear,
    ),
    "Bilinear": LayerType(
        (
            Arg("in1_features", "count"),
            Arg("in2_features", "count"),
            Arg("out_features", "count"),
            Arg("bias", "bool", True),
            *DEVICE,
        ),
        (Arg("input1", "tensor"), Arg("input2", "tensor")),
        _bilinear_arrays,
        _bilinear,
    ),
    "LayerNorm": LayerType(
        (
            Arg("normalized_shape", "shape"),
            Arg("eps", "positive", 1e-5),
            Arg("elementwise_affine", "bool", True),
            Arg("bias", "bool", True),
            *DEVICE,
        ),
        (INPUT,),
        _layer_norm_arrays,
        _layer_norm,
    ),
    **{f"InstanceNorm{d}d": _instance_norm(d) for d in (1, 2, 3)},
    **CONV_LAYERS,
    **POOL_LAYERS,
    "Flatten": _function_layer(flatten, (Arg("start_dim", "int", 1), Arg("end_dim", "int", -1))),
    "Identity": _activation_layer("identity"),
    "Softmax": _function_layer(softmax, (Arg("dim", "dim", None),)),
    "LogSoftmax": _function_layer(log_softmax, (Arg("dim", "dim", None),)),
    **{
        module: _activation_layer(name, ACTIVATION_ARGS[name])
        for module, name in (
            ("Tanh", "tanh"),
            ("Sigmoid", "sigmoid"),
            ("ReLU", "relu"),
            ("ReLU6", "relu6"),
            ("LeakyReLU", "leaky_relu"),
            ("ELU", "elu"),
            ("CELU", "celu"),
            ("SELU", "selu"),
            ("GELU", "gelu"),
            ("SiLU", "silu"),
            ("Mish", "mish"),
            ("Softplus", "softplus"),
            ("LogSigmoid", "log_sigmoid"),
            ("Softsign", "softsign"),
            ("Tanhshrink", "tanhshrink"),
            ("Hardtanh", "hardtanh"),
            ("Hardsigmoid", "hardsigmoid"),
            ("Hardswish", "hardswish"),
        )
    },
}

# Why a known PyTorch layer is refused (matched by prefix; anything else: "not supported").
_WHY_NOT = (
    ("Dropout", "dropout is random (PEtab SciML evaluates it as in training)"),
    ("AlphaDropout", "dropout is random (PEtab SciML evaluates it as in training)"),
    ("FeatureAlphaDropout", "dropout is random (PEtab SciML evaluates it as in training)"),
    ("FractionalMaxPool", "fractional max pooling is random"),
    ("MaxUnpool", "unpooling is not implemented"),
    ("BatchNorm", "batch norm in training mode uses the batch's statistics"),
    ("Lazy", "lazy modules infer their sizes at the first call; give them explicitly"),
)


def why_not(layer_type: str) -> str:
    for prefix, reason in _WHY_NOT:
        if layer_type.startswith(prefix):
            return reason
    return "not supported"
