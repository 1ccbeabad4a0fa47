"""The network read from a file: its layers, its forward graph's call nodes, its parameters and
its evaluation in CasADi."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np

from .._tables import PetabError
from ._args import Arg, is_int
from ._errors import EvalError
from ._functions import FUNCTIONS, METHODS
from ._hdf5 import load_h5py, read_parameters_hdf5, write_parameters_hdf5
from ._layers import LAYER_TYPES
from ._parameters import Params, layer_columns, numeric_parameters, split_vector
from ._tensor import Tensor, numel


@dataclass(frozen=True)
class Layer:
    """A layer of the network: its id, ``torch.nn`` type and constructor arguments (bound, with
    defaults filled in)."""

    layer_id: str
    layer_type: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class Node:
    """A call node of the forward graph (``call_module``, ``call_method`` or
    ``call_function``), its arguments bound by name; tensor arguments are node names."""

    name: str
    op: str
    target: str
    args: Mapping[str, Any]


def _resolve(arg: Arg, value: Any, env: Mapping[str, Tensor]) -> Any:
    """A bound argument's value with node names replaced by their tensors."""
    if arg.kind == "tensor":
        return env[value]
    if arg.kind == "tensors":
        return [env[v] for v in value]
    if arg.kind == "operand" and isinstance(value, str):
        return env[value]
    return value


@dataclass(frozen=True, eq=False)
class Network:
    """A PEtab SciML network read by `read_network`.

    ``input_ids`` are the forward pass's arguments in order (the file's ``inputs``; the graph's
    placeholders are matched to them by position), ``layers`` the declared layers in file order,
    ``nodes`` the call nodes in graph order and ``output`` the node the graph returns."""

    path: Path
    nn_model_id: str
    input_ids: tuple[str, ...]
    placeholders: tuple[str, ...]
    layers: Mapping[str, Layer]
    nodes: tuple[Node, ...]
    output: str

    # --- parameters -----------------------------------------------------------------------

    def parameter_shapes(self) -> dict[str, dict[str, tuple[int, ...]]]:
        """``{layer_id: {array_id: shape}}`` (PyTorch's shapes) for every layer with
        parameters, in file order (``weight`` before ``bias``)."""
        shapes = {}
        for layer in self.layers.values():
            arrays = LAYER_TYPES[layer.layer_type].arrays(layer.args)
            if arrays:
                shapes[layer.layer_id] = arrays
        return shapes

    @property
    def n_parameters(self) -> int:
        """The number of scalar parameters (the length of `parameters_to_vector`)."""
        return sum(numel(s) for a in self.parameter_shapes().values() for s in a.values())

    def parameters_to_vector(self, params: Params) -> np.ndarray:
        """The parameters as one vector ``(n_parameters,)``: layers in file order, each
        array flattened row-major (the order `parameters_from_vector` reads)."""
        arrays = numeric_parameters(self.parameter_shapes(), params)
        parts = [a.ravel() for named in arrays.values() for a in named.values()]
        return np.concatenate(parts) if parts else np.zeros(0)

    def parameters_from_vector(self, theta: Any) -> dict[str, dict[str, Any]]:
        """``{layer_id: {array_id: value}}`` from one vector of ``n_parameters`` entries in
        `parameters_to_vector`'s order: numpy arrays in PyTorch's shapes for a numpy
        ``theta``, row-major CasADi columns for a CasADi column (e.g. ``SX.sym``), which
        `casadi` accepts as they are."""
        return split_vector(theta, self.parameter_shapes())

    def parameters_from_hdf5(
        self, path: str | os.PathLike[str]
    ) -> dict[str, dict[str, np.ndarray]]:
        """The parameters in a PEtab SciML parameter file: ``{layer_id: {array_id: array}}``,
        float64 arrays in PyTorch's shapes, read from
        ``/parameters/<nn_model_id>/<layer_id>/<array_id>``. Every layer with parameters must
        be there with all its arrays, and nothing else."""
        return read_parameters_hdf5(
            path, self.nn_model_id, self.parameter_shapes(), self.layers, self.path.name
        )

    def parameters_to_hdf5(
        self, params: Params, path: str | os.PathLike[str], dtype: Any = np.float64
    ) -> None:
        """Write ``params`` (``{layer_id: {array_id: array}}``, PyTorch's shapes) as a PEtab
        SciML parameter file: ``/metadata/pytorch_format = 1`` (uint8) and
        ``/parameters/<nn_model_id>/<layer_id>/<array_id>`` as ``dtype`` (float64 by default;
        the test suite's files are float32). The parameters are checked first and the file is
        written whole or not at all."""
        h5py = load_h5py()
        arrays = numeric_parameters(self.parameter_shapes(), params)
        write_parameters_hdf5(h5py, path, self.nn_model_id, arrays, dtype)

    # --- evaluation -----------------------------------------------------------------------

    def output_shape(self, shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
        """The output's PyTorch shape for inputs of PyTorch shapes ``shapes`` (one per input)."""
        if len(shapes) != len(self.input_ids):
            raise ValueError(f"{len(shapes)} shapes given; the network takes {len(self.input_ids)}")
        inputs = [Tensor(tuple(s), ca.DM.zeros(numel(s), 1)) for s in shapes]
        zeros = {
            k: {n: np.zeros(s) for n, s in a.items()} for k, a in self.parameter_shapes().items()
        }
        return self._forward(inputs, zeros).shape

    def casadi(self, x: Any, params: Params, shapes: Any = None) -> Any:
        """The network's output on CasADi input(s), as a row-major CasADi column.

        ``x``: for one input a CasADi SX/MX/DM column (or a sequence of columns, one per
        input), each the row-major flattening of a PyTorch tensor of shape ``shapes[i]``
        (default: 1-D, ``(len(x),)``; for one input ``shapes`` may be the shape itself).
        ``params``: ``{layer_id: {array_id: value}}``, values numpy arrays in PyTorch's shapes
        or CasADi columns of their row-major entries (as `parameters_from_vector` gives),
        or CasADi matrices of 2-D arrays. Returns a column of ``prod(output shape)`` entries
        (`output_shape`)."""
        xs = list(x) if isinstance(x, (list, tuple)) else [x]
        if len(xs) != len(self.input_ids):
            raise ValueError(f"{len(xs)} inputs given; the network takes {len(self.input_ids)}")
        if shapes is None:
            shapes = [None] * len(xs)
        elif len(xs) == 1 and all(is_int(s) for s in shapes):
            shapes = [shapes]
        if len(shapes) != len(xs):
            raise ValueError(f"{len(shapes)} shapes given for {len(xs)} inputs")
        tensors = [
            _column_input(i, xi, shape)
            for i, (xi, shape) in enumerate(zip(xs, shapes, strict=True))
        ]
        return self._forward(tensors, params).flat

    def numpy(self, x: Any, params: Params) -> np.ndarray:
        """The network's output on numeric input(s), in float64 (evaluated by CasADi).

        ``x``: one array in PyTorch's shape (or a sequence of them, one per input when the
        network takes several); ``params`` as for `casadi`. Returns an array in the
        output's PyTorch shape."""
        several = len(self.input_ids) > 1
        xs = [np.asarray(a, dtype=float) for a in (x if several else [x])]
        if len(xs) != len(self.input_ids):
            raise ValueError(f"{len(xs)} inputs given; the network takes {len(self.input_ids)}")
        tensors = [Tensor(a.shape, ca.DM(a.reshape(-1, 1))) for a in xs]
        out = self._forward(tensors, params)
        return np.asarray(ca.DM(out.flat).full(), dtype=float).reshape(out.shape)

    def _forward(self, inputs: list[Tensor], params: Params) -> Tensor:
        env: dict[str, Any] = dict(zip(self.placeholders, inputs, strict=True))
        for node in self.nodes:
            try:
                env[node.name] = self._call(node, env, params)
            except EvalError as exc:
                raise PetabError(
                    f"{self.path}: node {node.name!r} ({node.target}): {exc}"
                ) from None
        return env[self.output]

    def _call(self, node: Node, env: Mapping[str, Tensor], params: Params) -> Tensor:
        if node.op == "call_module":
            layer = self.layers[node.target]
            kind = LAYER_TYPES[layer.layer_type]
            tensors = {a.name: _resolve(a, node.args[a.name], env) for a in kind.call}
            arrays = layer_columns(layer.layer_id, kind.arrays(layer.args), params)
            return kind.apply(layer.args, arrays, **tensors)
        fn = (FUNCTIONS if node.op == "call_function" else METHODS)[node.target]
        return fn.apply(**{a.name: _resolve(a, node.args[a.name], env) for a in fn.args})


def _column_input(i: int, xi: Any, shape: Sequence[int] | None) -> Tensor:
    """Input ``i`` of `Network.casadi` (a column, or numbers) as a tensor of ``shape``
    (default: 1-D)."""
    if not isinstance(xi, (ca.SX, ca.MX, ca.DM)):
        xi = ca.DM(np.asarray(xi, dtype=float).reshape(-1, 1))
    if xi.shape[1] != 1:
        raise ValueError(f"input {i} is {xi.shape}; expected a column")
    shape = (xi.shape[0],) if shape is None else tuple(int(s) for s in shape)
    if numel(shape) != xi.shape[0]:
        raise ValueError(f"input {i} has {xi.shape[0]} entries; shape {shape} has {numel(shape)}")
    return Tensor(shape, xi)
