"""Trained models in one file: save on one side, load on either (CasADi or torch).

A model file is UTF-8 JSON, written atomically (temporary file, then rename)::

    {
      "format": "collocnode-model",
      "format_version": 1,
      "library_version": "0.1.0",
      "model": {
        "recipe": {"function": "collocnode.models:NeuralODE", "kwargs": {...}},
        "n_states": 2, "n_inputs": 0, "n_outputs": 0, "n_params": 102,
        "state_names": [...], "input_names": [...], "output_names": [...],
        "blocks": {"f0": {"type": "MLP", "fields": {...}}, ...},
        "slices": {"f0": [0, 51], ...}
      },
      "p": [...],                    # the parameter vector, shortest round-trip float repr
      "p_sha256": "...",             # of p as little-endian float64 bytes
      "metadata": {...}              # free-form: problem, training settings, status, ...
    }

The physics of a hybrid model is Python code, so a model is stored as its *recipe*
(:attr:`collocnode.models.HybridModel.recipe`): the importable function that built it and that
function's keyword arguments. Blocks are stored by type name and dataclass fields (their input
and output scales, i.e. the normalisation, are fields), systems by registry name, preset and
parameters, and physical :class:`~collocnode.models.Parameter` objects by their fields.
``blocks``, ``slices`` and the sizes are written for readers of the file and checked against the
rebuilt model on loading.

JSON writes every float with its shortest round-trip representation, so ``p`` comes back bit for
bit and a loaded model reproduces the saved model's rollout exactly on the same machine.

Loading imports the recipe function, i.e. runs code named in the file; by default only functions
inside ``collocnode`` are allowed (``trusted_modules`` extends the list).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np

from . import _validation as v
from .io import atomic_write_text
from .models import HybridModel, Parameter
from .nn.base import Block

FORMAT = "collocnode-model"
FORMAT_VERSION = 1
SUPPORTED_VERSIONS: tuple[int, ...] = (1,)
"""Format versions :func:`load_model` reads."""

_TRUSTED = ("collocnode",)
# Tags of the non-JSON values a recipe or the metadata may hold; user dict keys may not start
# with "$", so a tag can never be confused with data.
_BLOCK, _SYSTEM, _PARAMETER, _ARRAY, _FLOAT = "$block", "$system", "$parameter", "$array", "$float"


def _block_types() -> dict[str, type[Block]]:
    """Block classes a file may name, by class name."""
    from .nn import MLP, RationalChebyshev

    return {cls.__name__: cls for cls in (MLP, RationalChebyshev)}


# ---- encoding ---------------------------------------------------------------------------------


def _encode(obj: Any, where: str) -> Any:
    """``obj`` as plain JSON data; ``where`` names the field in error messages."""
    from .problems import System

    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, Enum):
        return _encode(obj.value, where)
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        # strict JSON has no NaN/Inf; parameter bounds are often infinite
        return f if math.isfinite(f) else {_FLOAT: repr(f)}
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            raise TypeError(f"{where}: cannot store an array of dtype {obj.dtype}")
        return {
            _ARRAY: {
                "dtype": obj.dtype.str,
                "shape": list(obj.shape),
                "data": _encode(obj.ravel().tolist(), where),
            }
        }
    if isinstance(obj, Block):
        if not dataclasses.is_dataclass(obj):
            raise TypeError(f"{where}: block {type(obj).__name__} is not a dataclass")
        name = type(obj).__name__
        if name not in _block_types():
            raise TypeError(
                f"{where}: unknown block type {name!r}; storable: {', '.join(_block_types())}"
            )
        fields = {
            f.name: _encode(getattr(obj, f.name), f"{where}.{f.name}")
            for f in dataclasses.fields(obj)
            if f.init
        }
        return {_BLOCK: name, "fields": fields}
    if isinstance(obj, Parameter):
        return {
            _PARAMETER: {
                f.name: _encode(getattr(obj, f.name), f"{where}.{f.name}")
                for f in dataclasses.fields(obj)
            }
        }
    if isinstance(obj, System):
        # the physics of every registered system depends on its parameters only; sampling is
        # kept so that generate() of the rebuilt system gives the same grid
        return {
            _SYSTEM: {
                "name": obj.name,
                "preset": obj.preset,
                "params": _encode(dict(obj.params), f"{where}.params"),
                "sampling": {"dt": float(obj.dt), "n_steps": obj.n_steps, "n_train": obj.n_train},
            }
        }
    if isinstance(obj, Mapping):
        out = {}
        for key, val in obj.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: dict keys must be strings, got {key!r}")
            if key.startswith("$"):
                raise TypeError(f"{where}: dict keys may not start with '$', got {key!r}")
            out[key] = _encode(val, f"{where}[{key!r}]")
        return out
    if isinstance(obj, (list, tuple)):
        return [_encode(val, f"{where}[{i}]") for i, val in enumerate(obj)]
    raise TypeError(
        f"{where}: cannot store a {type(obj).__name__} in a model file "
        "(JSON values, numpy arrays, blocks, systems and Parameters can be stored)"
    )


def _decode(obj: Any, where: str) -> Any:
    """Inverse of :func:`_encode`; malformed data raises ValueError naming ``where``."""
    if isinstance(obj, list):
        return [_decode(val, f"{where}[{i}]") for i, val in enumerate(obj)]
    if not isinstance(obj, dict):
        return obj
    if _FLOAT in obj:
        text = obj[_FLOAT]
        if text not in ("inf", "-inf", "nan"):
            raise ValueError(f"{where}: invalid non-finite float {text!r}")
        return float(text)
    if _ARRAY in obj:
        spec = _require(obj[_ARRAY], ("dtype", "shape", "data"), where)
        try:
            arr = np.array(_decode(spec["data"], where), dtype=np.dtype(spec["dtype"]))
            return arr.reshape(spec["shape"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: invalid array ({exc})") from None
    if _BLOCK in obj:
        return _decode_block(obj, where)
    if _PARAMETER in obj:
        fields = _decode(obj[_PARAMETER], where)
        try:
            return Parameter(**fields)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: invalid parameter ({exc})") from None
    if _SYSTEM in obj:
        return _decode_system(obj[_SYSTEM], where)
    return {key: _decode(val, f"{where}[{key!r}]") for key, val in obj.items()}


def _decode_block(obj: dict[str, Any], where: str) -> Block:
    name = obj[_BLOCK]
    types = _block_types()
    if name not in types:
        raise ValueError(f"{where}: unknown block type {name!r}; known: {', '.join(types)}")
    fields = _decode(_require(obj, ("fields",), where)["fields"], f"{where}.fields")
    if not isinstance(fields, dict):
        raise ValueError(f"{where}.fields must be an object, got {fields!r}")
    try:
        return types[name](**fields)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: invalid {name} block ({exc})") from None


def _decode_system(spec: Any, where: str) -> Any:
    from . import problems

    spec = _require(spec, ("name", "preset", "params"), where)
    overrides = dict(_decode(spec["params"], f"{where}.params"))
    overrides.update(spec.get("sampling", {}))
    try:
        return problems.get(spec["name"], spec["preset"], **overrides)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: cannot rebuild system {spec['name']!r} ({exc})") from None


def _require(obj: Any, keys: Sequence[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ValueError(f"{where} must be an object, got {type(obj).__name__}")
    for key in keys:
        if key not in obj:
            raise ValueError(f"missing field {where}.{key}" if where else f"missing field {key}")
    return obj


# ---- recipes --------------------------------------------------------------------------------


def _resolve(target: str, trusted: Sequence[str], where: str) -> Callable[..., Any]:
    """The function named ``"module:function"``, imported only from trusted modules."""
    if not isinstance(target, str) or target.count(":") != 1:
        raise ValueError(f"{where} must be 'module:function', got {target!r}")
    module, name = target.split(":")
    if not any(module == t or module.startswith(t + ".") for t in trusted):
        raise ValueError(
            f"{where} {target!r} is outside the trusted modules ({', '.join(trusted)}); "
            "loading it would run code named in the file: pass "
            f"trusted_modules=({module.split('.')[0]!r},) if you trust it"
        )
    try:
        fn = getattr(import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{where} {target!r} cannot be imported ({exc})") from None
    if not callable(fn):
        raise ValueError(f"{where} {target!r} is not callable")
    return fn


def _rebuild(recipe: dict[str, Any], trusted: Sequence[str]) -> HybridModel:
    recipe = _require(recipe, ("function", "kwargs"), "model.recipe")
    fn = _resolve(recipe["function"], trusted, "model.recipe.function")
    kwargs = _decode(recipe["kwargs"], "model.recipe.kwargs")
    if not isinstance(kwargs, dict):
        raise ValueError(f"model.recipe.kwargs must be an object, got {type(kwargs).__name__}")
    try:
        model = fn(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"model.recipe {recipe['function']!r} failed: {exc}") from None
    if not isinstance(model, HybridModel):
        raise ValueError(
            f"model.recipe {recipe['function']!r} returned a {type(model).__name__}, "
            "not a HybridModel"
        )
    return model


def _describe(model: HybridModel) -> dict[str, Any]:
    """What the file states about the model besides its recipe (checked on loading)."""
    return {
        "n_states": model.n_states,
        "n_inputs": model.n_inputs,
        "n_outputs": model.n_outputs,
        "n_params": model.n_params,
        "state_names": list(model.state_names),
        "input_names": list(model.input_names),
        "output_names": list(model.output_names),
        "blocks": {
            name: _encode(block, f"model.blocks[{name!r}]") for name, block in model.blocks.items()
        },
        "slices": {name: [s.start, s.stop] for name, s in model.slices.items()},
    }


def _block_json(encoded: dict[str, Any]) -> dict[str, Any]:
    # the readable form written under model.blocks: {"type": ..., "fields": ...}
    return {"type": encoded[_BLOCK], "fields": encoded["fields"]}


def _checksum(p: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(p, dtype="<f8").tobytes()).hexdigest()


# ---- public API -------------------------------------------------------------------------------


def save_model(
    path: str | Path,
    model: Any,
    p: np.ndarray | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Path:
    """Write a trained model to one JSON file, atomically.

    Args:
        path: the file to write (parent directories are created).
        model: a :class:`~collocnode.models.HybridModel` with a ``recipe`` (every
            :func:`~collocnode.models.NeuralODE` has one), or a
            :class:`~collocnode.training.TrainingSolution`, whose model, ``p`` and status are
            taken.
        p: the parameter vector, shape ``(model.n_params,)``; finite. Optional for a
            TrainingSolution.
        metadata: free-form JSON-able data (numpy values, enums, systems and blocks are
            converted): the problem the model came from, training settings, status, ...

    Returns:
        The path written.

    Raises:
        ValueError: no recipe, a recipe that cannot be imported from another process, or a
            ``p`` of the wrong shape or with NaN/Inf.
        TypeError: a recipe argument or metadata value that cannot be stored (named).
    """
    from . import __version__
    from .training import TrainingSolution

    meta: dict[str, Any] = {}
    if isinstance(model, TrainingSolution):
        sol = model
        model = sol.model
        p = sol.p if p is None else p
        meta.update(
            status=sol.status.value,
            ipopt_status=sol.solution.ipopt_status,
            objective=sol.solution.objective,
            iterations=sol.solution.iterations,
        )
    if not isinstance(model, HybridModel):
        raise TypeError(f"model must be a HybridModel or TrainingSolution, got {model!r}")
    if p is None:
        raise ValueError("p is required when model is a HybridModel")
    p = v.finite_array("p", p, shape=(model.n_params,))
    if model.recipe is None:
        raise ValueError(
            "model has no recipe, so it cannot be rebuilt from a file: build it with NeuralODE, "
            "or give HybridModel(recipe=('module:function', kwargs))"
        )
    if metadata is not None and not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a dict, got {metadata!r}")
    meta.update(metadata or {})

    target, kwargs = model.recipe
    module = target.split(":")[0] if isinstance(target, str) else ""
    if module == "__main__":
        raise ValueError(
            f"model.recipe function {target!r} is defined in __main__ (a script or notebook), "
            "which another process cannot import; move it into a module"
        )
    recipe = {"function": target, "kwargs": _encode(dict(kwargs), "model.recipe.kwargs")}
    # Fail now, not when the file is needed: the recipe must rebuild a model of the same layout.
    rebuilt = _rebuild(json.loads(json.dumps(recipe)), trusted=(module,))
    if _describe(rebuilt) != _describe(model):
        raise ValueError(
            f"model.recipe {target!r} rebuilds a model with a different layout than the model "
            "being saved (blocks, sizes, names or parameter slices differ)"
        )
    description = _describe(model)
    description["blocks"] = {k: _block_json(b) for k, b in description["blocks"].items()}
    doc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "model": {"recipe": recipe, **description},
        "p": p.tolist(),
        "p_sha256": _checksum(p),
        "metadata": _encode(meta, "metadata"),
    }
    # allow_nan=False: the encoder already replaced non-finite floats; this guards the claim
    return atomic_write_text(path, json.dumps(doc, indent=1, allow_nan=False) + "\n")


@dataclass(frozen=True)
class LoadedModel:
    """A model read by :func:`load_model`.

    Attributes:
        model: the rebuilt :class:`~collocnode.models.HybridModel`.
        p: its parameter vector, shape ``(model.n_params,)`` (read-only).
        metadata: the free-form metadata stored with it.
        library_version: the collocnode version that wrote the file.
        format_version: the file format version.
    """

    model: HybridModel
    p: np.ndarray
    metadata: dict[str, Any] = field(default_factory=dict)
    library_version: str = ""
    format_version: int = FORMAT_VERSION

    @property
    def params(self) -> dict[str, np.ndarray | float]:
        """Block weights (arrays) and fitted physical parameters (floats) by name."""
        return self.model.split_params(self.p)

    def torch_modules(self, dtype: Any = None, device: Any = None) -> dict[str, Any]:
        """Block name -> ``torch.nn.Module`` holding that block's trained weights (float64 by
        default; the flat weight layout is the same as in ``p``)."""
        return {
            # a writable copy: torch warns about (and cannot own) read-only numpy memory
            name: block.torch_module(
                self.p[self.model.slices[name]].copy(), dtype=dtype, device=device
            )
            for name, block in self.model.blocks.items()
        }

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        inputs: Callable[[np.ndarray], np.ndarray] | None = None,
        **kwargs: Any,
    ) -> Any:
        """:func:`collocnode.simulate.simulate` of the loaded model: states (and outputs) on
        ``t`` (n,) from ``x0`` (n_states,); ``inputs(t: (n,)) -> (n, n_inputs)`` if the model has
        inputs. Returns a :class:`~collocnode.data.Trajectory`."""
        from .simulate import simulate

        return simulate(self.model, self.p, t, x0, inputs=inputs, **kwargs)


def load_model(path: str | Path, trusted_modules: Sequence[str] = ()) -> LoadedModel:
    """Read a model written by :func:`save_model`.

    Args:
        path: the model file.
        trusted_modules: modules besides ``collocnode`` whose recipe functions may be imported
            (a file names the function that rebuilds its model; importing it runs its code).

    Raises:
        ValueError: not a collocnode model file, an unsupported format version (the message
            lists the supported ones), a missing or malformed field (named), an unknown block
            type, an untrusted recipe, or a file whose parameters do not fit the rebuilt model.
        OSError: the file cannot be read.
    """
    path = Path(path)
    if isinstance(trusted_modules, str):
        trusted_modules = (trusted_modules,)
    trusted = (*_TRUSTED, *trusted_modules)
    raw = path.read_bytes()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"{str(path)!r} is not a collocnode model file (not JSON)") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(
            f"{str(path)!r} is not a collocnode model file (format {found!r}, expected {FORMAT!r})"
        )
    try:
        return _load(doc, trusted)
    except ValueError as exc:
        raise ValueError(f"{str(path)!r}: {exc}") from None


def _load(doc: dict[str, Any], trusted: Sequence[str]) -> LoadedModel:
    _require(doc, ("format_version",), "")
    version = doc["format_version"]
    if version not in SUPPORTED_VERSIONS or isinstance(version, bool):
        written_by = doc.get("library_version", "an unknown version")
        raise ValueError(
            f"format_version {version!r} (written by collocnode {written_by}) is not supported; "
            f"this collocnode reads format versions {', '.join(map(str, SUPPORTED_VERSIONS))}"
        )
    _require(doc, ("library_version", "model", "p"), "")
    spec = _require(
        doc["model"],
        ("recipe", "n_states", "n_inputs", "n_outputs", "n_params", "blocks", "slices"),
        "model",
    )
    for key in ("blocks", "slices"):
        if not isinstance(spec[key], dict):
            raise ValueError(f"model.{key} must be an object, got {type(spec[key]).__name__}")
    for name, block in spec["blocks"].items():
        # the readable block list must name known types too (it is what a reader trusts)
        _require(block, ("type", "fields"), f"model.blocks[{name!r}]")
        _decode_block({_BLOCK: block["type"], "fields": block["fields"]}, f"model.blocks[{name!r}]")
    model = _rebuild(spec["recipe"], trusted)
    described = _describe(model)
    described["blocks"] = {k: _block_json(b) for k, b in described["blocks"].items()}
    for key in described:
        if key in spec and described[key] != spec[key]:
            raise ValueError(
                f"model.{key} does not match the model its recipe rebuilds: "
                f"file {spec[key]!r}, rebuilt {described[key]!r}"
            )
    try:
        p = v.finite_array("p", doc["p"], shape=(model.n_params,))
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    if "p_sha256" in doc and doc["p_sha256"] != _checksum(p):
        raise ValueError("p does not match p_sha256 (the file was edited or corrupted)")
    p.setflags(write=False)
    metadata = _decode(doc.get("metadata", {}), "metadata")
    return LoadedModel(
        model=model,
        p=p,
        metadata=metadata if isinstance(metadata, dict) else {"value": metadata},
        library_version=str(doc["library_version"]),
        format_version=int(version),
    )


__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "SUPPORTED_VERSIONS",
    "LoadedModel",
    "load_model",
    "save_model",
]
