"""The file's ``forward`` section: a torch.fx graph of nodes, each checked and its arguments
bound (placeholders first, call nodes naming only earlier nodes, one output last)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._args import Arg, bind
from ._errors import UnsupportedError
from ._functions import FUNCTIONS, METHODS, Function
from ._layers import LAYER_TYPES
from ._network import Layer, Node
from ._yaml import Checks

NODE_OPS = ("placeholder", "call_module", "call_method", "call_function", "output")


@dataclass
class Graph:
    """The forward graph read so far: placeholders, call nodes, every name and the output."""

    placeholders: list[str] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    output: str | None = None


def read_forward(check: Checks, forward: list, layers: Mapping[str, Layer]) -> Graph:
    """The graph of the ``forward`` list, given the file's ``layers``; it must have an output."""
    graph = Graph()
    for i, item in enumerate(forward):
        _read_node(check, graph, i, item, layers)
    if graph.output is None:
        raise check.fail("forward", "has no output node")
    return graph


def _read_node(check: Checks, graph: Graph, i: int, item: Any, layers: Mapping[str, Layer]) -> None:
    item = check.mapping(item, f"forward[{i}]", ("name", "op", "target"), ("args", "kwargs"))
    name = check.ident(item["name"], f"forward[{i}].name")
    where = f"node {name!r}"
    if name in graph.names:
        raise check.fail(where, "name appears twice in forward")
    if graph.output is not None:
        raise check.fail(where, f"comes after the output node {graph.output!r}")
    op, target = item["op"], item["target"]
    if op not in NODE_OPS:
        raise check.fail(where, f"op must be one of {', '.join(NODE_OPS)}, got {op!r}")
    if not isinstance(target, str):
        raise check.fail(where, f"target must be a string, got {target!r}")
    args, kwargs = _arguments(check, item, where)
    if op == "placeholder":
        if graph.nodes:
            raise check.fail(where, "placeholders must come before the other nodes")
        graph.placeholders.append(name)
    elif op == "output":
        graph.output = _output(check, where, args, kwargs, graph.names)
    elif op == "call_module":
        bound = _bind_module(check, where, target, args, kwargs, layers, graph.names)
        graph.nodes.append(Node(name, op, target, bound))
    else:
        bound = _bind_function(check, where, op, target, args, kwargs, graph.names)
        graph.nodes.append(Node(name, op, target, bound))
    graph.names.add(name)


def _arguments(check: Checks, item: Mapping[str, Any], where: str) -> tuple[list, dict]:
    """A node's ``args`` (a list) and ``kwargs`` (a mapping of names), empty when absent."""
    args = item.get("args")
    args = [] if args is None else check.listing(args, f"{where}: args")
    kwargs = item.get("kwargs")
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
        raise check.fail(where, f"kwargs must be a mapping of names, got {kwargs!r}")
    return args, kwargs


def _output(check: Checks, where: str, args: list, kwargs: dict, names: set[str]) -> str:
    """The node the output node returns (one earlier node: several outputs are refused)."""
    if kwargs or len(args) != 1:
        raise check.fail(where, "the output node takes one argument")
    if not isinstance(args[0], str):
        raise UnsupportedError(
            f"{check.path}: {where}: several outputs ({args[0]!r}) are not supported",
            "several outputs",
            "not supported",
        )
    check.refs({"output": args[0]}, (Arg("output", "tensor"),), names, where)
    return args[0]


def _bind_module(
    check: Checks,
    where: str,
    target: str,
    args: list,
    kwargs: dict,
    layers: Mapping[str, Layer],
    names: set[str],
) -> dict[str, Any]:
    """A ``call_module`` node's arguments bound to its layer type's forward arguments."""
    if target not in layers:
        raise check.fail(where, f"call_module target {target!r} is not a layer of the file")
    spec = LAYER_TYPES[layers[target].layer_type].call
    bound, problem = bind(spec, args, kwargs)
    if problem:
        raise check.fail(f"{where} (layer {target!r})", problem)
    check.refs(bound, spec, names, where)
    return bound


def _lookup(check: Checks, where: str, op: str, target: str) -> Function:
    """A ``call_function`` or ``call_method`` target from its table, or refused."""
    table, kind = (FUNCTIONS, "function") if op == "call_function" else (METHODS, "method")
    if target not in table:
        raise UnsupportedError(
            f"{check.path}: {where}: unsupported {op} target {target!r} (supported {kind}s: "
            f"{', '.join(sorted(table))})",
            f"{kind} {target!r}",
            "not supported",
        )
    return table[target]


def _bind_function(
    check: Checks, where: str, op: str, target: str, args: list, kwargs: dict, names: set[str]
) -> dict[str, Any]:
    """A ``call_function`` or ``call_method`` node's arguments bound to its target's."""
    fn = _lookup(check, where, op, target)
    if (
        fn.pack_from is not None
        and len(args) > fn.pack_from
        and not (len(args) == fn.pack_from + 1 and isinstance(args[-1], list))
    ):
        args = [*args[: fn.pack_from], list(args[fn.pack_from :])]
    bound, problem = bind(fn.args, args, kwargs)
    if problem:
        raise check.fail(f"{where} ({target})", problem)
    check.refs(bound, fn.args, names, where)
    return bound
