"""Reading a network file: the top-level keys, ``inputs``, ``layers`` and the ``forward``
graph, checked and assembled into a `Network`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._args import bind
from ._errors import UnsupportedError
from ._forward import read_forward
from ._layers import LAYER_TYPES, why_not
from ._network import Layer, Network
from ._yaml import Checks, load_yaml


def read_network(yaml_path: str | os.PathLike[str]) -> Network:
    """Read and check a PEtab SciML network file (YAML).

    Every layer type and node target must be in `LAYER_TYPES`, `METHODS` or
    `FUNCTIONS`; their arguments are checked, and every node argument that is a tensor
    must name an earlier node. A malformed file raises one
    [`PetabError`][collocnode.petab.PetabError], an unsupported layer or target one
    `UnsupportedError`, each naming the file and the layer or node."""
    path = Path(yaml_path)
    data = load_yaml(path)
    check = Checks(path)
    top = check.mapping(data, "", ("nn_model_id", "inputs", "layers", "forward"))
    nn_model_id = check.ident(top["nn_model_id"], "nn_model_id")
    input_ids = _read_inputs(check, top["inputs"])
    layers = _read_layers(check, top["layers"])
    graph = read_forward(check, check.listing(top["forward"], "forward"), layers)
    if len(graph.placeholders) != len(input_ids):
        raise check.fail(
            "forward",
            f"has {len(graph.placeholders)} placeholder(s) but inputs lists {len(input_ids)}",
        )
    assert graph.output is not None  # read_forward refuses a graph without one
    return Network(
        path=path,
        nn_model_id=nn_model_id,
        input_ids=tuple(input_ids),
        placeholders=tuple(graph.placeholders),
        layers=layers,
        nodes=tuple(graph.nodes),
        output=graph.output,
    )


def _read_inputs(check: Checks, inputs: Any) -> list[str]:
    """The ``input_id`` of each entry of ``inputs``, each once."""
    input_ids: list[str] = []
    for i, item in enumerate(check.listing(inputs, "inputs")):
        item = check.mapping(item, f"inputs[{i}]", ("input_id",))
        input_id = check.ident(item["input_id"], f"inputs[{i}].input_id")
        if input_id in input_ids:
            raise check.fail(f"inputs[{i}]", f"input_id {input_id!r} appears twice")
        input_ids.append(input_id)
    return input_ids


def _read_layers(check: Checks, items: Any) -> dict[str, Layer]:
    """The ``layers`` by ``layer_id``, in file order."""
    layers: dict[str, Layer] = {}
    for i, item in enumerate(check.listing(items, "layers")):
        layer = _read_layer(check, i, item, layers)
        layers[layer.layer_id] = layer
    return layers


def _read_layer(check: Checks, i: int, item: Any, earlier: Mapping[str, Layer]) -> Layer:
    """One entry of ``layers`` (an id not among the ``earlier`` layers'): a supported
    ``layer_type`` and its checked ``args``."""
    item = check.mapping(item, f"layers[{i}]", ("layer_id", "layer_type"), ("args",))
    layer_id = check.ident(item["layer_id"], f"layers[{i}].layer_id")
    where = f"layer {layer_id!r}"
    if layer_id in earlier:
        raise check.fail(where, "layer_id appears twice")
    layer_type = item["layer_type"]
    if not isinstance(layer_type, str):
        raise check.fail(where, f"layer_type must be a string, got {layer_type!r}")
    if layer_type not in LAYER_TYPES:
        reason = why_not(layer_type)
        raise UnsupportedError(
            f"{check.path}: {where}: unsupported layer type {layer_type!r} ({reason}; supported: "
            f"{', '.join(sorted(LAYER_TYPES))})",
            f"layer type {layer_type!r}",
            reason,
        )
    args = item.get("args") or {}
    if not isinstance(args, dict):
        raise check.fail(where, f"args must be a mapping, got {type(args).__name__}")
    kind = LAYER_TYPES[layer_type]
    bound, problem = bind(kind.args, [], args)
    if problem or (problem := kind.check(bound)):
        raise check.fail(f"{where} ({layer_type})", problem)
    reason = kind.refuse(bound)
    if reason:
        raise UnsupportedError(
            f"{check.path}: {where} ({layer_type}): {reason}", f"layer type {layer_type!r}", reason
        )
    return Layer(layer_id, layer_type, bound)
