"""PEtab SciML network files (``collocnode.petab.sciml``).

The networks are built here with torch (float64, random weights) and written in the PEtab SciML
test suite's layout: ``net.yaml`` (layers and a torch.fx-like forward graph) and the parameters
as ``/parameters/net0/<layer_id>/{weight,bias}`` beside ``/metadata/pytorch_format``. They are
read back and evaluated by CasADi, and compared with torch's forward to 1e-12.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
yaml = pytest.importorskip("yaml")
torch = pytest.importorskip("torch")

from collocnode.petab import PetabError  # noqa: E402
from collocnode.petab.sciml import (  # noqa: E402
    UnsupportedError,
    read_arrays_hdf5,
    read_network,
)

nn = torch.nn
F = torch.nn.functional
pytestmark = pytest.mark.torch

# torch activation module -> (fx op, target, kwargs of the functional form)
FUNCTIONAL: dict[type, Any] = {
    nn.Tanh: lambda m: ("call_method", "tanh", {}),
    nn.Sigmoid: lambda m: ("call_method", "sigmoid", {}),
    nn.ReLU: lambda m: ("call_function", "relu", {"inplace": False}),
    nn.ReLU6: lambda m: ("call_function", "relu6", {"inplace": False}),
    nn.Hardtanh: lambda m: (
        "call_function",
        "hardtanh",
        {"min_val": m.min_val, "max_val": m.max_val, "inplace": False},
    ),
    nn.LeakyReLU: lambda m: (
        "call_function",
        "leaky_relu",
        {"negative_slope": m.negative_slope, "inplace": False},
    ),
    nn.ELU: lambda m: ("call_function", "elu", {"alpha": m.alpha, "inplace": False}),
    nn.CELU: lambda m: ("call_function", "celu", {"alpha": m.alpha, "inplace": False}),
    nn.SELU: lambda m: ("call_function", "selu", {"inplace": False}),
    nn.GELU: lambda m: ("call_function", "gelu", {"approximate": m.approximate}),
    nn.SiLU: lambda m: ("call_function", "silu", {"inplace": False}),
    nn.Mish: lambda m: ("call_function", "mish", {"inplace": False}),
    nn.Softplus: lambda m: (
        "call_function",
        "softplus",
        {"beta": m.beta, "threshold": m.threshold},
    ),
    nn.LogSigmoid: lambda m: ("call_function", "log_sigmoid", {}),
    nn.Softsign: lambda m: ("call_function", "softsign", {}),
    nn.Tanhshrink: lambda m: ("call_function", "tanhshrink", {}),
    nn.Hardsigmoid: lambda m: ("call_function", "hardsigmoid", {"inplace": False}),
    nn.Hardswish: lambda m: ("call_function", "hardswish", {"inplace": False}),
}

# Every activation the reader supports, spread over three networks.
ACTIVATION_SETS = {
    "smooth": [
        nn.Tanh(),
        nn.Sigmoid(),
        nn.GELU(),
        nn.GELU(approximate="tanh"),
        nn.SiLU(),
        nn.Mish(),
        nn.Softsign(),
    ],
    "exponential": [
        nn.ELU(alpha=0.7),
        nn.CELU(alpha=1.8),
        nn.SELU(),
        nn.Softplus(),
        nn.Softplus(beta=2.0, threshold=1.5),  # the threshold branch is taken too
        nn.LogSigmoid(),
        nn.Tanhshrink(),
    ],
    "piecewise": [
        nn.ReLU(),
        nn.ReLU6(),
        nn.LeakyReLU(0.2),
        nn.Hardtanh(-0.5, 2.0),
        nn.Hardsigmoid(),
        nn.Hardswish(),
    ],
}


def sequential(activations: list[Any], n_in: int = 3, width: int = 6, n_out: int = 2) -> Any:
    """Linear, activation, Linear, activation, ..., Linear: float64, random weights."""
    torch.manual_seed(len(activations) + n_in)
    modules: list[Any] = [nn.Linear(n_in, width)]
    for k, act in enumerate(activations):
        modules.append(act)
        modules.append(nn.Linear(width, width if k < len(activations) - 1 else n_out))
    net = nn.Sequential(*modules).double()
    with torch.no_grad():  # spread the pre-activations over the activations' kinks
        for m in net:
            if isinstance(m, nn.Linear):
                m.weight.mul_(3.0)
    return net


def write_yaml(path: Path, layers: list[dict], forward: list[dict], inputs=("input0",)) -> Path:
    data = {
        "nn_model_id": "net0",
        "inputs": [{"input_id": i} for i in inputs],
        "layers": layers,
        "forward": forward,
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def node(name: str, op: str, target: str, args: list, kwargs: dict | None = None) -> dict:
    return {"name": name, "op": op, "target": target, "args": args, "kwargs": kwargs or {}}


def placeholder(name: str = "net_input") -> dict:
    return node(name, "placeholder", name, [])


def write_parameters(path: Path, layers: dict[str, Any], dtype: Any = np.float64) -> None:
    """The suite's parameter layout, from torch modules ``{layer_id: module}``."""
    with h5py.File(path, "w") as f:
        f.create_dataset("metadata/pytorch_format", data=np.uint8(1))
        for layer_id, m in layers.items():
            for name, p in m.named_parameters():
                f.create_dataset(
                    f"parameters/net0/{layer_id}/{name}", data=p.detach().numpy().astype(dtype)
                )


def write_sequential(
    net: Any, folder: Path, style: str, dtype: Any = np.float64
) -> tuple[Path, Path]:
    """``net.yaml`` and ``net_ps.hdf5`` for a Sequential: Linear layers as call_module nodes,
    activations as call_function/call_method nodes (``style="functional"``, as the suite
    writes them) or as layers of their own (``style="module"``)."""
    layers, forward, previous, params = [], [placeholder()], "net_input", {}
    for i, m in enumerate(net):
        layer_id = f"layer{i}"
        if isinstance(m, nn.Linear):
            args = {"in_features": m.in_features, "out_features": m.out_features, "bias": True}
            layers.append({"layer_id": layer_id, "layer_type": "Linear", "args": args})
            forward.append(node(layer_id, "call_module", layer_id, [previous]))
            params[layer_id] = m
        else:
            op, target, kwargs = FUNCTIONAL[type(m)](m)
            if style == "module":
                layers.append(
                    {"layer_id": layer_id, "layer_type": type(m).__name__, "args": kwargs}
                )
                forward.append(node(layer_id, "call_module", layer_id, [previous]))
            else:
                layer_id = f"{target}_{i}"
                forward.append(node(layer_id, op, target, [previous], kwargs))
        previous = layer_id
    forward.append(node("output", "output", "output", [previous]))
    yaml_path = write_yaml(folder / "net.yaml", layers, forward)
    write_parameters(folder / "net_ps.hdf5", params, dtype)
    return yaml_path, folder / "net_ps.hdf5"


@pytest.mark.parametrize("style", ["functional", "module"])
@pytest.mark.parametrize("activations", list(ACTIVATION_SETS))
def test_sequential_matches_torch(tmp_path, rng, activations, style):
    net = sequential(ACTIVATION_SETS[activations])
    network = read_network(write_sequential(net, tmp_path, style)[0])
    params = network.parameters_from_hdf5(tmp_path / "net_ps.hdf5")
    for x in (rng.standard_normal(3), rng.standard_normal((40, 3))):  # one sample, a batch
        expected = net(torch.as_tensor(x)).detach().numpy()
        got = network.numpy(x, params)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_symbolic_parameters_and_jacobian_match_torch(tmp_path, rng):
    """The CasADi path an ODE uses: symbolic input and parameter vector, and d(out)/d(in)."""
    net = sequential([nn.Tanh(), nn.Softplus(), nn.GELU()])
    network = read_network(write_sequential(net, tmp_path, "functional")[0])
    params = network.parameters_from_hdf5(tmp_path / "net_ps.hdf5")
    theta = network.parameters_to_vector(params)
    assert theta.shape == (network.n_parameters,)
    assert network.n_parameters == sum(p.numel() for p in net.parameters())
    for layer_id, named in network.parameters_from_vector(theta).items():
        for name, value in named.items():
            np.testing.assert_array_equal(value, params[layer_id][name])

    x, p = ca.SX.sym("x", 3), ca.SX.sym("p", network.n_parameters)
    y = network.casadi(x, network.parameters_from_vector(p))
    f = ca.Function("f", [x, p], [y, ca.jacobian(y, x)])
    x0 = rng.standard_normal(3)
    value, jac = (np.asarray(v) for v in f(x0, theta))
    xt = torch.as_tensor(x0)
    np.testing.assert_allclose(value.ravel(), net(xt).detach().numpy(), rtol=0, atol=1e-12)
    expected_jac = torch.autograd.functional.jacobian(net, xt).numpy()
    np.testing.assert_allclose(jac, expected_jac, rtol=0, atol=1e-10)
    assert network.output_shape([(3,)]) == (2,)
    assert network.output_shape([(7, 3)]) == (7, 2)


def test_graph_with_two_inputs_matches_torch(tmp_path, rng):
    """cat, Linear, LayerNorm, Bilinear, add, log_softmax and a view over two inputs."""
    torch.manual_seed(3)
    lin = nn.Linear(7, 6).double()
    norm = nn.LayerNorm(6).double()
    bil = nn.Bilinear(4, 3, 6).double()
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    layers = [
        {"layer_id": "lin", "layer_type": "Linear", "args": {"in_features": 7, "out_features": 6}},
        {"layer_id": "norm", "layer_type": "LayerNorm", "args": {"normalized_shape": [6]}},
        {
            "layer_id": "bil",
            "layer_type": "Bilinear",
            "args": {"in1_features": 4, "in2_features": 3, "out_features": 6, "bias": True},
        },
    ]
    forward = [
        placeholder("a"),
        placeholder("b"),
        node("cat", "call_function", "cat", [["a", "b"]], {"dim": -1}),
        node("lin", "call_module", "lin", ["cat"]),
        node("norm", "call_module", "norm", ["lin"]),
        node("bil", "call_module", "bil", ["a", "b"]),
        node("add", "call_function", "add", ["norm", "bil"]),
        node("scaled", "call_function", "mul", [0.5, "add"]),
        node("view", "call_method", "view", ["scaled", 2, -1]),
        node("out", "call_function", "log_softmax", ["view"], {"dim": 1}),
        node("output", "output", "output", ["out"]),
    ]
    network = read_network(write_yaml(tmp_path / "net.yaml", layers, forward, ("a", "b")))
    write_parameters(tmp_path / "ps.hdf5", {"lin": lin, "norm": norm, "bil": bil})
    params = network.parameters_from_hdf5(tmp_path / "ps.hdf5")
    a, b = rng.standard_normal((2, 4)), rng.standard_normal((2, 3))

    def reference(a, b):
        h = norm(lin(torch.cat([a, b], dim=-1))) + bil(a, b)
        return F.log_softmax((0.5 * h).view(2, -1), dim=1)

    expected = reference(torch.as_tensor(a), torch.as_tensor(b)).detach().numpy()
    np.testing.assert_allclose(network.numpy([a, b], params), expected, rtol=0, atol=1e-12)


def test_flatten_and_batched_linear_keep_pytorch_order(tmp_path, rng):
    """Flatten of a 3-D input (row-major, as PyTorch), a batched Linear, softmax over dim 1."""
    torch.manual_seed(4)
    lin = nn.Linear(12, 5).double()
    layers = [
        {"layer_id": "flat", "layer_type": "Flatten", "args": {"start_dim": 1, "end_dim": -1}},
        {"layer_id": "lin", "layer_type": "Linear", "args": {"in_features": 12, "out_features": 5}},
    ]
    forward = [
        placeholder(),
        node("flat", "call_module", "flat", ["net_input"]),
        node("lin", "call_module", "lin", ["flat"]),
        node("softmax", "call_function", "softmax", ["lin"], {"dim": 1, "_stacklevel": 3}),
        node("output", "output", "output", ["softmax"]),
    ]
    network = read_network(write_yaml(tmp_path / "net.yaml", layers, forward))
    write_parameters(tmp_path / "ps.hdf5", {"lin": lin})
    params = network.parameters_from_hdf5(tmp_path / "ps.hdf5")
    x = rng.standard_normal((2, 3, 4))
    expected = F.softmax(lin(torch.flatten(torch.as_tensor(x), 1)), dim=1).detach().numpy()
    np.testing.assert_allclose(network.numpy(x, params), expected, rtol=0, atol=1e-12)
    # The same through CasADi: the input as a row-major column, the output likewise.
    y = network.casadi(ca.DM(x.reshape(-1, 1)), params, shapes=(2, 3, 4))
    np.testing.assert_allclose(np.asarray(y).ravel(), expected.ravel(), rtol=0, atol=1e-12)


def layout(path: Path) -> list[tuple]:
    """Every group and dataset of an HDF5 file: name, kind, shape and dtype."""
    items: list[tuple] = []

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset):
            items.append((name, "dataset", obj.shape, obj.dtype.str))
        else:
            items.append((name, "group"))

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return sorted(items)


def test_hdf5_round_trip_reproduces_the_suite_layout(tmp_path):
    net = sequential([nn.Tanh(), nn.ReLU()])
    _, suite_file = write_sequential(net, tmp_path, "functional", dtype=np.float32)
    network = read_network(tmp_path / "net.yaml")
    params = network.parameters_from_hdf5(suite_file)
    assert list(params) == ["layer0", "layer2", "layer4"]
    assert all(list(named) == ["weight", "bias"] for named in params.values())
    assert params["layer0"]["weight"].dtype == np.float64

    as_float32 = tmp_path / "as_float32.hdf5"
    network.parameters_to_hdf5(params, as_float32, dtype=np.float32)
    assert layout(as_float32) == layout(suite_file)  # names, shapes and dtypes
    default = tmp_path / "default.hdf5"
    network.parameters_to_hdf5(params, default)
    strip = [(i[0], i[1], *i[2:3]) for i in layout(suite_file)]
    assert [(i[0], i[1], *i[2:3]) for i in layout(default)] == strip  # float64 by default
    with h5py.File(default, "r") as f:
        assert f["metadata/pytorch_format"][()] == 1
    for path in (as_float32, default):
        again = network.parameters_from_hdf5(path)
        for layer_id, named in params.items():
            for name, value in named.items():
                np.testing.assert_array_equal(again[layer_id][name], value)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["net.yaml", "net_ps.hdf5", "as_float32.hdf5", "default.hdf5"]
    )


def test_input_and_output_files(tmp_path):
    path = tmp_path / "in.hdf5"
    with h5py.File(path, "w") as f:
        f.create_dataset("metadata/pytorch_format", data=np.uint8(1))
        f.create_dataset("inputs/input0/data", data=np.arange(6, dtype=np.float32).reshape(2, 3))
    arrays = read_arrays_hdf5(path, "inputs")
    assert list(arrays) == ["input0"]
    np.testing.assert_array_equal(arrays["input0"], np.arange(6.0).reshape(2, 3))
    with pytest.raises(PetabError, match=r"in\.hdf5: no group outputs"):
        read_arrays_hdf5(path, "outputs")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda f: f["parameters/net0/layer0/weight"].resize((6, 2)), None),
        (
            lambda f: f.__delitem__("parameters/net0/layer2/bias"),
            r"missing parameters/net0/layer2/bias",
        ),
        (
            lambda f: f.create_dataset("parameters/net0/layer9/weight", data=[1.0]),
            r"'layer9' is not a layer",
        ),
        (
            lambda f: f.create_dataset("parameters/net0/layer0/scale", data=[1.0]),
            r"has no array 'scale'",
        ),
        (lambda f: f.__setitem__("metadata/pytorch_format", np.uint8(0)), r"pytorch_format is 0"),
        (
            lambda f: f.move("parameters/net0", "parameters/other"),
            r"no group parameters/net0 \(found: other\)",
        ),
    ],
    ids=["shape", "missing", "unknown-layer", "unknown-array", "not-pytorch", "model-id"],
)
def test_bad_parameter_files(tmp_path, edit, message):
    net = sequential([nn.Tanh()])
    _, path = write_sequential(net, tmp_path, "functional")
    network = read_network(tmp_path / "net.yaml")
    if message is None:  # rewrite a dataset with the wrong shape
        with h5py.File(path, "a") as f:
            del f["parameters/net0/layer0/weight"]
            f.create_dataset("parameters/net0/layer0/weight", data=np.zeros((6, 2)))
        message = r"parameters/net0/layer0/weight has shape \(6, 2\); expected \(6, 3\)"
    else:
        with h5py.File(path, "a") as f:
            if "pytorch_format" in message:
                del f["metadata/pytorch_format"]
            edit(f)
    with pytest.raises(PetabError, match=message) as info:
        network.parameters_from_hdf5(path)
    assert str(path) in str(info.value)


def test_unsupported_layer_type_is_refused_naming_file_layer_and_type(tmp_path):
    layers = [
        {
            "layer_id": "norm1",
            "layer_type": "BatchNorm2d",
            "args": {"num_features": 2},
        },
    ]
    forward = [
        placeholder(),
        node("norm1", "call_module", "norm1", ["net_input"]),
        node("output", "output", "output", ["norm1"]),
    ]
    path = write_yaml(tmp_path / "net.yaml", layers, forward)
    with pytest.raises(UnsupportedError) as info:
        read_network(path)
    message = str(info.value)
    assert isinstance(info.value, PetabError)
    assert str(path) in message and "'norm1'" in message and "'BatchNorm2d'" in message
    assert "\n" not in message
    assert info.value.feature == "layer type 'BatchNorm2d'"


PLANTED = "collocnode_sciml_planted"


@pytest.mark.parametrize(
    ("layers", "forward_node", "text", "message"),
    [
        (
            [],
            node("x", "call_function", f"{PLANTED}.run", ["net_input"]),
            None,
            "unsupported call_function target",
        ),
        (
            [],
            node("x", "call_method", "__reduce__", ["net_input"]),
            None,
            "unsupported call_method target",
        ),
        (
            [],
            node("x", "call_function", "eval", ["net_input"]),
            None,
            "unsupported call_function target 'eval'",
        ),
        (
            [{"layer_id": "l1", "layer_type": f"{PLANTED}.Layer", "args": {}}],
            node("x", "call_module", "l1", ["net_input"]),
            None,
            "unsupported layer type",
        ),
        ([], None, f"nn_model_id: !!python/object/apply:{PLANTED}.run []\n", "not valid YAML"),
    ],
    ids=["function", "method", "builtin", "layer-type", "yaml-tag"],
)
def test_unknown_targets_are_refused_and_nothing_runs(
    tmp_path, monkeypatch, layers, forward_node, text, message
):
    marker = tmp_path / "planted_ran"
    (tmp_path / f"{PLANTED}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
        "def run(*args):\n    return 0\nclass Layer:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "net.yaml"
    if text is not None:
        path.write_text(text)
    else:
        forward = [placeholder(), forward_node, node("output", "output", "output", ["x"])]
        write_yaml(path, layers, forward)
    with pytest.raises(PetabError, match=message) as info:
        read_network(path)
    assert str(path) in str(info.value)
    assert PLANTED not in sys.modules
    assert not marker.exists()


@pytest.mark.parametrize(
    ("forward", "message"),
    [
        (
            [node("y", "call_method", "tanh", ["nowhere"])],
            r"node 'y': argument 'input' names no earlier node",
        ),
        (
            [node("y", "call_function", "elu", ["net_input"], {"alpah": 1.0})],
            r"node 'y' \(elu\): unknown argument 'alpah'",
        ),
        (
            [node("y", "call_function", "elu", ["net_input"], {"alpha": "big"})],
            r"argument 'alpha' must be a finite number",
        ),
        (
            [node("y", "call_module", "nolayer", ["net_input"])],
            r"call_module target 'nolayer' is not a layer",
        ),
        (
            [
                node("y", "call_method", "tanh", ["net_input"]),
                node("y", "call_method", "tanh", ["y"]),
            ],
            r"node 'y': name appears twice",
        ),
        ([node("y", "jump", "tanh", ["net_input"])], r"node 'y': op must be one of"),
    ],
    ids=["dangling", "unknown-kwarg", "bad-kwarg", "no-layer", "duplicate", "bad-op"],
)
def test_malformed_graphs_get_one_error_naming_the_node(tmp_path, forward, message):
    nodes = [placeholder(), *forward, node("output", "output", "output", [forward[-1]["name"]])]
    path = write_yaml(tmp_path / "net.yaml", [], nodes)
    with pytest.raises(PetabError, match=message) as info:
        read_network(path)
    assert str(info.value).startswith(f"{path}: ")


def test_missing_output_and_bad_layer_args(tmp_path):
    path = write_yaml(tmp_path / "a.yaml", [], [placeholder()])
    with pytest.raises(PetabError, match=r"a\.yaml: forward: has no output node"):
        read_network(path)
    layers = [
        {"layer_id": "l", "layer_type": "Linear", "args": {"in_features": 0, "out_features": 2}}
    ]
    path = write_yaml(
        tmp_path / "b.yaml",
        layers,
        [placeholder(), node("output", "output", "output", ["net_input"])],
    )
    with pytest.raises(
        PetabError, match=r"layer 'l' \(Linear\): argument 'in_features' must be a positive"
    ):
        read_network(path)
    with pytest.raises(PetabError, match=r"no such network file"):
        read_network(tmp_path / "missing.yaml")


def test_shape_mismatch_at_evaluation_names_the_node(tmp_path, rng):
    net = sequential([nn.Tanh()])
    network = read_network(write_sequential(net, tmp_path, "functional")[0])
    params = network.parameters_from_hdf5(tmp_path / "net_ps.hdf5")
    with pytest.raises(
        PetabError, match=r"node 'layer0' \(layer0\): input of shape \(4,\); Linear needs"
    ):
        network.numpy(rng.standard_normal(4), params)
    del params["layer2"]
    with pytest.raises(
        PetabError, match=r"node 'layer2' \(layer2\): no parameters for layer 'layer2'"
    ):
        network.numpy(rng.standard_normal(3), params)
