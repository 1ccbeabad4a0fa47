"""PEtab SciML convolution, pooling and instance-norm layers (``collocnode.petab.sciml``).

Each layer is built with torch (float64, random weights) from the same constructor arguments
that the network file holds, written in the PEtab SciML test suite's layout (the helpers of
``test_sciml_nets``), read back, evaluated by CasADi on batched and unbatched inputs and
compared with torch's forward to 1e-10.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("h5py")
pytest.importorskip("yaml")

from test_sciml_nets import node, placeholder, write_parameters, write_yaml  # noqa: E402

from collocnode.petab import PetabError  # noqa: E402
from collocnode.petab.sciml import UnsupportedError, read_network  # noqa: E402

nn = torch.nn
pytestmark = [
    pytest.mark.torch,
    pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel:UserWarning"),
]
ATOL = 1e-10


def one_layer(folder: Path, layer_type: str, args: dict[str, Any]) -> tuple[Any, Any, Any]:
    """A network of one layer (``layer_type`` with ``args``): the torch module, the network
    read back from its file and its parameters read back from the suite's HDF5 layout."""
    torch.manual_seed(len(str(args)))
    module = getattr(nn, layer_type)(**args).double()
    with torch.no_grad():  # affine norms start at weight 1, bias 0: make them count
        for name, p in module.named_parameters():
            if layer_type.startswith("InstanceNorm"):
                p.uniform_(0.5, 1.5) if name == "weight" else p.uniform_(-0.5, 0.5)
    layers = [{"layer_id": "layer1", "layer_type": layer_type, "args": args}]
    forward = [
        placeholder(),
        node("layer1", "call_module", "layer1", ["net_input"]),
        node("output", "output", "output", ["layer1"]),
    ]
    network = read_network(write_yaml(folder / "net.yaml", layers, forward))
    if not network.parameter_shapes():  # pooling, instance norm without affine
        return module, network, {}
    write_parameters(folder / "net_ps.hdf5", {"layer1": module})
    return module, network, network.parameters_from_hdf5(folder / "net_ps.hdf5")


def assert_matches_torch(folder: Path, layer_type: str, args: dict, inputs: list) -> None:
    module, network, params = one_layer(folder, layer_type, args)
    for x in inputs:
        expected = module(torch.as_tensor(x)).detach().numpy()
        got = network.numpy(x, params)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=ATOL)
        assert network.output_shape([x.shape]) == expected.shape


def inputs(rng: np.random.Generator, channels: int, spatial: tuple[int, ...]) -> list:
    """A batch of two and one unbatched sample."""
    return [
        rng.standard_normal((2, channels, *spatial)),
        rng.standard_normal((channels, *spatial)),
    ]


CONV = [
    ("Conv1d", {"in_channels": 2, "out_channels": 3, "kernel_size": 3}, (9,)),
    (
        "Conv1d",
        {
            "in_channels": 4,
            "out_channels": 6,
            "kernel_size": [3],
            "stride": [2],
            "padding": [1],
            "dilation": [2],
            "groups": 2,
            "bias": False,
        },
        (11,),
    ),
    (
        "Conv1d",
        {"in_channels": 3, "out_channels": 2, "kernel_size": 4, "padding": "same"},
        (7,),
    ),
    (
        "Conv1d",
        {
            "in_channels": 2,
            "out_channels": 2,
            "kernel_size": 4,
            "padding": "same",
            "dilation": 2,
            "padding_mode": "reflect",
        },
        (8,),
    ),
    (
        "Conv1d",
        {"in_channels": 1, "out_channels": 2, "kernel_size": 2, "padding": "valid"},
        (5,),
    ),
    (
        "Conv2d",
        {
            "in_channels": 2,
            "out_channels": 3,
            "kernel_size": [3, 2],
            "stride": [2, 1],
            "padding": [1, 0],
            "dilation": [1, 2],
            "padding_mode": "zeros",
        },
        (7, 6),
    ),
    (
        "Conv2d",
        {
            "in_channels": 4,
            "out_channels": 4,
            "kernel_size": 3,
            "padding": "same",
            "dilation": 2,
            "groups": 4,
            "padding_mode": "replicate",
        },
        (6, 5),
    ),
    (
        "Conv2d",
        {
            "in_channels": 3,
            "out_channels": 2,
            "kernel_size": [3, 2],
            "stride": 2,
            "padding": 2,
            "padding_mode": "circular",
        },
        (5, 6),
    ),
    (
        "Conv3d",
        {
            "in_channels": 2,
            "out_channels": 4,
            "kernel_size": [2, 3, 2],
            "stride": [1, 2, 1],
            "padding": [1, 0, 1],
            "groups": 2,
        },
        (3, 5, 4),
    ),
    (
        "Conv3d",
        {"in_channels": 1, "out_channels": 2, "kernel_size": 2, "dilation": [2, 1, 1]},
        (4, 3, 3),
    ),
]

TRANSPOSED = [
    (
        "ConvTranspose1d",
        {
            "in_channels": 2,
            "out_channels": 4,
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "output_padding": 1,
            "groups": 2,
        },
        (5,),
    ),
    (
        "ConvTranspose1d",
        {
            "in_channels": 3,
            "out_channels": 2,
            "kernel_size": [2],
            "stride": [2],
            "dilation": [3],
            "output_padding": [2],
        },
        (4,),
    ),
    (
        "ConvTranspose2d",
        {
            "in_channels": 2,
            "out_channels": 3,
            "kernel_size": [3, 2],
            "stride": [2, 3],
            "padding": [1, 0],
            "output_padding": [1, 2],
            "bias": False,
        },
        (3, 4),
    ),
    (
        "ConvTranspose3d",
        {"in_channels": 2, "out_channels": 2, "kernel_size": 2, "stride": 2, "groups": 2},
        (2, 3, 2),
    ),
]

POOL = [
    (
        "MaxPool1d",
        {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2, "ceil_mode": True},
        (10,),
    ),
    ("MaxPool2d", {"kernel_size": [3, 2], "padding": [1, 1], "ceil_mode": True}, (7, 6)),
    ("MaxPool2d", {"kernel_size": 2}, (5, 4)),
    ("MaxPool3d", {"kernel_size": 2, "stride": 1, "dilation": [1, 2, 1]}, (3, 5, 4)),
    (
        "AvgPool1d",
        {
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "ceil_mode": True,
            "count_include_pad": False,
        },
        (8,),
    ),
    ("AvgPool1d", {"kernel_size": 4, "stride": 3, "padding": 2, "ceil_mode": True}, (8,)),
    (
        "AvgPool2d",
        {"kernel_size": [3, 2], "stride": [2, 1], "padding": [1, 1], "divisor_override": 5},
        (6, 5),
    ),
    ("AvgPool2d", {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}, (6, 6)),
    (
        "AvgPool3d",
        {"kernel_size": 2, "stride": [1, 2, 2], "padding": [1, 0, 1], "count_include_pad": False},
        (3, 5, 4),
    ),
    ("LPPool1d", {"norm_type": 2, "kernel_size": 3, "stride": 2, "ceil_mode": True}, (8,)),
    ("LPPool2d", {"norm_type": 1.5, "kernel_size": [2, 3]}, (5, 6)),
    ("LPPool3d", {"norm_type": 3, "kernel_size": [2, 1, 2], "stride": [1, 1, 2]}, (3, 2, 5)),
    ("AdaptiveMaxPool1d", {"output_size": 3}, (7,)),
    ("AdaptiveMaxPool2d", {"output_size": [4, None]}, (5, 7)),
    ("AdaptiveMaxPool3d", {"output_size": [2, 3, 1]}, (3, 5, 4)),
    ("AdaptiveAvgPool1d", {"output_size": 5}, (3,)),
    ("AdaptiveAvgPool2d", {"output_size": [3, 2]}, (7, 5)),
    ("AdaptiveAvgPool3d", {"output_size": 2}, (3, 5, 4)),
]

INSTANCE_NORM = [
    ("InstanceNorm1d", {"num_features": 3, "affine": True}, (7,)),
    ("InstanceNorm2d", {"num_features": 2, "eps": 1e-3}, (4, 5)),
    (
        "InstanceNorm3d",
        {"num_features": 2, "affine": True, "track_running_stats": False, "momentum": 0.1},
        (2, 3, 4),
    ),
]


def _id(case: tuple) -> str:
    return case[0]


@pytest.mark.parametrize("case", CONV + TRANSPOSED + INSTANCE_NORM, ids=_id)
def test_layer_with_channels_matches_torch(tmp_path, rng, case):
    layer_type, args, spatial = case
    channels = args.get("in_channels", args.get("num_features"))
    assert_matches_torch(tmp_path, layer_type, args, inputs(rng, channels, spatial))


@pytest.mark.parametrize("case", POOL, ids=_id)
def test_pooling_matches_torch(tmp_path, rng, case):
    layer_type, args, spatial = case
    xs = inputs(rng, 3, spatial)
    if layer_type.startswith("LPPool"):  # x ** p of a negative x is NaN for a fractional p
        xs = [np.abs(x) + 0.1 for x in xs]
    assert_matches_torch(tmp_path, layer_type, args, xs)


def test_lenet_like_graph_with_symbolic_parameters_and_jacobian(tmp_path, rng):
    """Conv2d, MaxPool2d, ReLU, AdaptiveAvgPool2d, Flatten and Linear on one image, with a
    symbolic input and parameter vector as in an ODE right-hand side, and d(out)/d(in)."""
    torch.manual_seed(7)
    conv = nn.Conv2d(2, 3, 3, padding=1).double()
    lin = nn.Linear(12, 2).double()
    layers = [
        {
            "layer_id": "conv",
            "layer_type": "Conv2d",
            "args": {"in_channels": 2, "out_channels": 3, "kernel_size": [3, 3], "padding": 1},
        },
        {"layer_id": "pool", "layer_type": "MaxPool2d", "args": {"kernel_size": 2}},
        {"layer_id": "avg", "layer_type": "AdaptiveAvgPool2d", "args": {"output_size": 2}},
        {"layer_id": "flat", "layer_type": "Flatten", "args": {"start_dim": 0}},
        {"layer_id": "lin", "layer_type": "Linear", "args": {"in_features": 12, "out_features": 2}},
    ]
    forward = [
        placeholder(),
        node("conv", "call_module", "conv", ["net_input"]),
        node("relu", "call_function", "relu", ["conv"], {"inplace": False}),
        node("pool", "call_module", "pool", ["relu"]),
        node("avg", "call_module", "avg", ["pool"]),
        node("flat", "call_module", "flat", ["avg"]),
        node("lin", "call_module", "lin", ["flat"]),
        node("output", "output", "output", ["lin"]),
    ]
    network = read_network(write_yaml(tmp_path / "net.yaml", layers, forward))
    write_parameters(tmp_path / "ps.hdf5", {"conv": conv, "lin": lin})
    theta = network.parameters_to_vector(network.parameters_from_hdf5(tmp_path / "ps.hdf5"))

    def reference(x):
        h = nn.functional.adaptive_avg_pool2d(nn.functional.max_pool2d(conv(x).relu(), 2), 2)
        return lin(h.flatten())

    x, p = ca.SX.sym("x", 2 * 8 * 8), ca.SX.sym("p", network.n_parameters)
    y = network.casadi(x, network.parameters_from_vector(p), shapes=(2, 8, 8))
    f = ca.Function("f", [x, p], [y, ca.jacobian(y, x), ca.jacobian(y, p)])
    x0 = rng.standard_normal((2, 8, 8))
    value, jac_x, jac_p = (np.asarray(v) for v in f(x0.ravel(), theta))
    xt = torch.as_tensor(x0)
    np.testing.assert_allclose(value.ravel(), reference(xt).detach().numpy(), atol=ATOL, rtol=0)
    expected = torch.autograd.functional.jacobian(reference, xt).numpy().reshape(2, -1)
    np.testing.assert_allclose(jac_x, expected, rtol=0, atol=ATOL)
    assert jac_p.shape == (2, network.n_parameters)


@pytest.mark.parametrize(
    ("layer_type", "args", "message"),
    [
        ("MaxPool2d", {"kernel_size": 2, "return_indices": True}, "return_indices=True"),
        ("AdaptiveMaxPool1d", {"output_size": 2, "return_indices": True}, "return_indices"),
        ("InstanceNorm1d", {"num_features": 2, "track_running_stats": True}, "running stat"),
        ("BatchNorm2d", {"num_features": 2}, "batch norm"),
    ],
    ids=["max-indices", "adaptive-indices", "running-stats", "batch-norm"],
)
def test_unsupported_arguments_are_refused_naming_the_layer(tmp_path, layer_type, args, message):
    layers = [{"layer_id": "layer1", "layer_type": layer_type, "args": args}]
    forward = [
        placeholder(),
        node("layer1", "call_module", "layer1", ["net_input"]),
        node("output", "output", "output", ["layer1"]),
    ]
    path = write_yaml(tmp_path / "net.yaml", layers, forward)
    with pytest.raises(UnsupportedError, match=message) as info:
        read_network(path)
    assert str(path) in str(info.value) and "'layer1'" in str(info.value)
    assert info.value.feature == f"layer type {layer_type!r}"


CONV2 = {"in_channels": 2, "out_channels": 4, "kernel_size": 3}


@pytest.mark.parametrize(
    ("layer_type", "args", "message"),
    [
        ("Conv2d", {**CONV2, "kernel_size": [3, 3, 3]}, r"'kernel_size' must have 2 entries"),
        ("Conv1d", {**CONV2, "groups": 3}, r"must be divisible by groups \(3\)"),
        ("Conv2d", {**CONV2, "padding": "same", "stride": 2}, r"strided convolutions"),
        ("Conv2d", {**CONV2, "padding": "full"}, r"argument 'padding' must be 'same', 'valid'"),
        ("Conv3d", {**CONV2, "padding_mode": "mirror"}, r"'padding_mode' must be 'zeros'"),
        ("ConvTranspose2d", {**CONV2, "padding_mode": "reflect"}, r"must be 'zeros'"),
        ("ConvTranspose1d", {**CONV2, "output_padding": 1}, r"output_padding 1 must be smaller"),
        ("MaxPool1d", {"kernel_size": 3, "padding": 2}, r"at most half of the kernel size"),
        ("AvgPool3d", {"kernel_size": [2, 2]}, r"'kernel_size' must have 3 entries"),
        ("AvgPool1d", {"kernel_size": 2, "divisor_override": 2}, r"unknown argument"),
        ("AdaptiveAvgPool2d", {"output_size": [2, 2, 2]}, r"'output_size' must have 2"),
    ],
    ids=[
        "kernel-length",
        "groups",
        "strided-same",
        "padding-string",
        "padding-mode",
        "transposed-padding-mode",
        "output-padding",
        "pool-padding",
        "pool-kernel-length",
        "avg1d-divisor",
        "output-size-length",
    ],
)
def test_inconsistent_arguments_are_malformed(tmp_path, layer_type, args, message):
    layers = [{"layer_id": "layer1", "layer_type": layer_type, "args": args}]
    forward = [
        placeholder(),
        node("layer1", "call_module", "layer1", ["net_input"]),
        node("output", "output", "output", ["layer1"]),
    ]
    path = write_yaml(tmp_path / "net.yaml", layers, forward)
    with pytest.raises(PetabError, match=message) as info:
        read_network(path)
    assert not isinstance(info.value, UnsupportedError)
    assert f"layer 'layer1' ({layer_type})" in str(info.value)


@pytest.mark.parametrize(
    ("layer_type", "args", "shape", "message"),
    [
        ("Conv2d", CONV2, (1, 3, 5, 5), r"Conv2d needs 2 channels"),
        ("Conv2d", CONV2, (2, 5), r"Conv2d needs a 3-D \(C, \.\.\.\) or 4-D"),
        (
            "Conv1d",
            CONV2,
            (2, 2),
            r"too small: a spatial axis of size 2 would give an output of size 0",
        ),
        (
            "Conv1d",
            {**CONV2, "padding": 3, "padding_mode": "reflect"},
            (2, 3),
            r"reflect padding 3 must be smaller than the size 3",
        ),
        (
            "MaxPool1d",
            {"kernel_size": 4},
            (2, 3),
            r"too small: a spatial axis of size 3 would give an output of size 0",
        ),
        ("InstanceNorm2d", {"num_features": 2}, (2, 1, 1), r"more than one spatial entry"),
    ],
    ids=["channels", "rank", "too-small", "reflect", "pool-too-small", "norm-one-entry"],
)
def test_bad_inputs_name_the_node(tmp_path, rng, layer_type, args, shape, message):
    _, network, params = one_layer(tmp_path, layer_type, args)
    with pytest.raises(PetabError, match=r"node 'layer1' \(layer1\): .*" + message):
        network.numpy(rng.standard_normal(shape), params)
