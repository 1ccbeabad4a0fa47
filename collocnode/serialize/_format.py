"""What every part of a model file shares: the format's constants and limits, the tags of
non-JSON values, and the small helpers of its error messages."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..models._hybrid import HybridModel
from ..nn._base import Block

FORMAT = "collocnode-model"
FORMAT_VERSION = 1
SUPPORTED_VERSIONS: tuple[int, ...] = (1,)
"""Format versions [`load_model`][collocnode.serialize.load_model] reads."""

DEFAULT_MAX_BYTES = 64 * 2**20
"""Largest model file [`load_model`][collocnode.serialize.load_model] reads unless told otherwise
[bytes] (64 MiB; a model of a million parameters takes about 20 MB)."""
MAX_ELEMENTS = 2**24
"""Most elements of one array, and most weights of one model, in a model file."""
MAX_DEPTH = 64
"""Deepest nesting of JSON objects and lists in a model file."""
MAX_NDIM = 8
"""Most dimensions of an array in a model file."""

Builder = Callable[..., HybridModel]
"""A model builder: keyword arguments (JSON values, arrays, blocks, systems, Parameters) -> a
[`HybridModel`][collocnode.HybridModel] whose ``recipe`` names the builder."""

# Tags of the non-JSON values a recipe or the metadata may hold; user dict keys may not start
# with "$", so a tag can never be confused with data.
TAG_BLOCK, TAG_SYSTEM, TAG_PARAMETER, TAG_ARRAY, TAG_FLOAT = (
    "$block",
    "$system",
    "$parameter",
    "$array",
    "$float",
)
TAGS = (TAG_BLOCK, TAG_SYSTEM, TAG_PARAMETER, TAG_ARRAY, TAG_FLOAT)
ARRAY_DTYPES = ("<f8", "<i8")
SAMPLING_FIELDS = ("dt", "n_steps", "n_train")


def block_types() -> dict[str, type[Block]]:
    """Block classes a file may name, by class name."""
    from ..nn import MLP, RationalChebyshev

    return {cls.__name__: cls for cls in (MLP, RationalChebyshev)}


def show(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def require(obj: Any, keys: Sequence[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ValueError(f"{where} must be an object, got {type(obj).__name__}")
    for key in keys:
        if key not in obj:
            raise ValueError(f"missing field {where}.{key}" if where else f"missing field {key}")
    return obj


def only(obj: dict[str, Any], keys: Sequence[str], where: str) -> None:
    for key in obj:
        if key not in keys:
            raise ValueError(f"{where}: unexpected field {show(key)}; expected {', '.join(keys)}")
