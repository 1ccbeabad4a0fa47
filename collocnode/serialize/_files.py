"""Writing and reading model files: save_model, load_model and the loaded model."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validation as v
from ..models._hybrid import HybridModel
from ..tools._io import atomic_write_text
from ..training._uncertainty import Band
from ._builders import check_arguments, check_builders, lookup, name_for_saving
from ._codec import check_depth, decode, decode_block, encode
from ._format import (
    DEFAULT_MAX_BYTES,
    FORMAT,
    FORMAT_VERSION,
    MAX_DEPTH,
    MAX_ELEMENTS,
    SUPPORTED_VERSIONS,
    TAG_BLOCK,
    Builder,
    one_line,
    only,
    require,
    show,
)
from ._uncertainty import StoredUncertainty, decode_uncertainty, encode_uncertainty

# ---- recipes --------------------------------------------------------------------------------


def _rebuild(
    recipe: Any, builders: Mapping[str, Builder], budget: int, call: str = "load_model"
) -> HybridModel:
    """The model a recipe read from a file describes, built by its registered builder."""
    recipe = require(recipe, ("function", "kwargs"), "model.recipe")
    only(recipe, ("function", "kwargs"), "model.recipe")
    name, fn, overrides = lookup(recipe["function"], builders, "model.recipe.function", call)
    if not isinstance(recipe["kwargs"], dict):
        raise ValueError(
            f"model.recipe.kwargs must be an object, got {type(recipe['kwargs']).__name__}"
        )
    kwargs = decode(recipe["kwargs"], "model.recipe.kwargs", budget)
    if not isinstance(kwargs, dict):  # a tagged value such as {"$float": ...}
        raise ValueError(f"model.recipe.kwargs must be an object, got {show(kwargs)}")
    check_arguments(name, fn, kwargs, overrides, "model.recipe.kwargs")
    try:
        model = fn(**kwargs)
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # the builder's own check of its (well-typed) arguments
        raise ValueError(
            f"model.recipe {name!r} failed: {type(exc).__name__}: {one_line(exc)}"
        ) from None
    if not isinstance(model, HybridModel):
        raise ValueError(
            f"model.recipe {name!r} returned a {type(model).__name__}, not a HybridModel"
        )
    return model


def _adopt_normalization(rebuilt: HybridModel, blocks: Mapping[str, Any]) -> None:
    """Give the networks of a rebuilt model that take their input normalisation from the data
    (`collocnode.nn.MLP.inputs_from_data`) the normalisation of the same block in ``blocks``
    (the trained model's, or the file's): a recipe builds its networks afresh, before any
    data."""
    for name, block in rebuilt.blocks.items():
        source = blocks.get(name)
        if (
            getattr(block, "inputs_from_data", False)
            and source is not None
            and not getattr(source, "inputs_from_data", True)
            and getattr(source, "n_in", None) == block.n_in
        ):
            block.set_input_normalization(source.input_shift, source.input_scale)


def _stored_blocks(blocks: dict[str, Any], budget: int) -> dict[str, Any]:
    """The file's readable block list, each block decoded: it must name known types too (it is
    what a reader trusts)."""
    out = {}
    for name, block in blocks.items():
        where = f"model.blocks[{name!r}]"
        require(block, ("type", "fields"), where)
        only(block, ("type", "fields"), where)
        out[name] = decode_block(
            {TAG_BLOCK: block["type"], "fields": block["fields"]}, where, budget
        )
    return out


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
            name: encode(block, f"model.blocks[{name!r}]") for name, block in model.blocks.items()
        },
        "slices": {name: [s.start, s.stop] for name, s in model.slices.items()},
    }


def _block_json(encoded: dict[str, Any]) -> dict[str, Any]:
    # the readable form written under model.blocks: {"type": ..., "fields": ...}
    return {"type": encoded[TAG_BLOCK], "fields": encoded["fields"]}


def _json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True)


def _checksum(p: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(p, dtype="<f8").tobytes()).hexdigest()


# ---- public API -------------------------------------------------------------------------------


def save_model(
    path: str | Path,
    model: Any,
    p: np.ndarray | None = None,
    metadata: Mapping[str, Any] | None = None,
    builders: Mapping[str, Builder] | None = None,
    uncertainty: Any = None,
) -> Path:
    """Write a trained model to one JSON file, atomically.

    Args:
        path: the file to write (parent directories are created); not a directory.
        model: a [`HybridModel`][collocnode.HybridModel] whose ``recipe`` names a registered
            model builder (every [`NeuralODE`][collocnode.NeuralODE] has one), or a
            [`TrainingSolution`][collocnode.TrainingSolution], whose model, ``p`` and status are
            taken.
        p: the parameter vector, shape ``(model.n_params,)``; finite. Optional for a
            TrainingSolution.
        metadata: free-form JSON-able data (numpy values, enums, systems and blocks are
            converted; arrays are stored as float64 or int64): the problem the model came from,
            training settings, status, ...
        builders: model builders by name besides the registered ones (see
            [`register_builder`][collocnode.serialize.register_builder]); the recipe may name one,
            or be the function itself.
        uncertainty: the model's ``sol.uncertainty()``
            ([`Uncertainty`][collocnode.Uncertainty]) to store with it: the
            Laplace posterior of its fitted quantities, from which the loaded model draws
            bands (`LoadedModel.uncertainty`); it must belong to ``p``.

    Returns:
        The path written.

    Raises:
        ValueError: ``path`` is a directory, no recipe, a builder that is not registered, a
            recipe that rebuilds a different model, data nested too deeply, or a ``p`` of the
            wrong shape or with NaN/Inf.
        TypeError: a recipe argument or metadata value that cannot be stored (named).

    Examples:
        Write a model and its parameters with some metadata, and read them back:

        ```python
        import tempfile
        from pathlib import Path

        from collocnode import NeuralODE
        from collocnode.nn import MLP
        from collocnode.serialize import load_model, save_model

        model = NeuralODE(MLP((2, 8, 2), "tanh"), state_names=("x", "y"))
        p = model.init_params(0)  # or pass a TrainingSolution: its model and parameters
        with tempfile.TemporaryDirectory() as folder:
            path = save_model(Path(folder) / "vdp.json", model, p, metadata={"system": "vdp"})
            print(path.name, path.stat().st_size, "bytes")
            loaded = load_model(path)
        assert (loaded.p == p).all() and loaded.metadata == {"system": "vdp"}
        ```
    """
    if Path(path).is_dir():
        raise ValueError(
            f"path {str(path)!r} is a directory; save_model writes one file: give a file name "
            f"such as {str(Path(path) / 'model.json')!r}"
        )
    extra = check_builders(builders)
    model, p, meta = _model_and_parameters(model, p)
    if metadata is not None and not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a dict, got {metadata!r}")
    meta.update(metadata or {})
    recipe = _checked_recipe(model, extra)
    doc = _document(model, recipe, p, meta, uncertainty)
    # allow_nan=False: the encoder already replaced non-finite floats; this guards the claim
    return atomic_write_text(path, json.dumps(doc, indent=1, allow_nan=False) + "\n")


def _model_and_parameters(
    model: Any, p: np.ndarray | None
) -> tuple[HybridModel, np.ndarray, dict[str, Any]]:
    """The model to save, its checked parameters (n_params,) and the metadata it brings: a
    TrainingSolution gives its model, ``p`` (unless given) and its solver's status."""
    from ..training import TrainingSolution

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
            "or with a registered model builder that sets HybridModel(recipe=(name, kwargs))"
        )
    return model, p, meta


def _checked_recipe(model: HybridModel, extra: Mapping[str, Builder]) -> dict[str, Any]:
    """The model's recipe as stored, ``{"function": name, "kwargs": ...}``, after rebuilding a
    model from it: it must have the same layout, through the same checks load_model makes (fail
    now, not when the file is needed)."""
    if not isinstance(model.recipe, tuple) or len(model.recipe) != 2:
        raise ValueError(f"model.recipe must be (builder name, kwargs), got {show(model.recipe)}")
    target, kwargs = model.recipe
    name = name_for_saving(target, extra)
    if not isinstance(kwargs, Mapping):
        raise ValueError(f"model.recipe kwargs must be a dict, got {show(kwargs)}")
    if model.n_params > MAX_ELEMENTS:
        raise ValueError(
            f"the model has {model.n_params} parameters, more than a model file holds "
            f"({MAX_ELEMENTS})"
        )
    recipe = {"function": name, "kwargs": encode(dict(kwargs), "model.recipe.kwargs", 4)}
    rebuilt = _rebuild(json.loads(json.dumps(recipe)), extra, model.n_params, "save_model")
    _adopt_normalization(rebuilt, model.blocks)
    if _describe(rebuilt) != _describe(model):
        raise ValueError(
            f"model.recipe {name!r} rebuilds a model with a different layout than the model "
            "being saved (blocks, sizes, names or parameter slices differ)"
        )
    return recipe


def _document(
    model: HybridModel,
    recipe: dict[str, Any],
    p: np.ndarray,
    meta: dict[str, Any],
    uncertainty: Any = None,
) -> dict[str, Any]:
    """The model file's JSON document (with the model's stored ``uncertainty`` where given),
    checked not to nest too deeply."""
    from .._version import __version__

    description = _describe(model)
    description["blocks"] = {k: _block_json(b) for k, b in description["blocks"].items()}
    section = None
    if uncertainty is not None:
        section = encode_uncertainty(uncertainty)
        if not np.array_equal(uncertainty.posterior.p, p):
            raise ValueError("uncertainty belongs to another parameter vector than p")
    doc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "model": {"recipe": recipe, **description},
        "p": p.tolist(),
        "p_sha256": _checksum(p),
        "metadata": encode(meta, "metadata", 2),
        **({"uncertainty": section} if section is not None else {}),
    }
    try:
        check_depth(doc)
    except ValueError as exc:
        raise ValueError(f"cannot save the model: {exc}") from None
    return doc


@dataclass(frozen=True)
class LoadedModel:
    """A model read by [`load_model`][collocnode.serialize.load_model].

    Attributes:
        model: the rebuilt [`HybridModel`][collocnode.HybridModel].
        p: its parameter vector, shape ``(model.n_params,)`` (read-only).
        metadata: the free-form metadata stored with it.
        library_version: the collocnode version that wrote the file.
        format_version: the file format version.
        uncertainty: the stored Laplace posterior of the fitted quantities
            (`StoredUncertainty`), or None when the
            file has none.
    """

    model: HybridModel
    p: np.ndarray
    metadata: dict[str, Any] = field(default_factory=dict)
    library_version: str = ""
    format_version: int = FORMAT_VERSION
    uncertainty: StoredUncertainty | None = None

    def block_band(
        self, block: str, inputs: np.ndarray, which: str = "posterior", **options: Any
    ) -> Band:
        """The band of a block's output over ``inputs`` from the stored uncertainty
        (`ParameterPosterior.block_band`: ``output``,
        ``level``, ``method``, ``samples``, ``seed``)."""
        if self.uncertainty is None:
            raise ValueError(
                "the model file holds no uncertainty: save it with "
                "save_model(..., uncertainty=sol.uncertainty())"
            )
        return self.uncertainty.pick(which).block_band(self.model, block, inputs, **options)

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
        """[`collocnode.simulate`][collocnode.simulate] of the loaded model: states (and outputs) on
        ``t`` (n,) from ``x0`` (n_states,); ``inputs(t: (n,)) -> (n, n_inputs)`` if the model has
        inputs. Returns a [`Trajectory`][collocnode.Trajectory]."""
        from ..models._simulate import simulate

        return simulate(self.model, self.p, t, x0, inputs=inputs, **kwargs)


def load_model(
    path: str | Path,
    builders: Mapping[str, Builder] | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    **removed: Any,
) -> LoadedModel:
    """Read a model written by [`save_model`][collocnode.serialize.save_model].

    The file is data: its recipe is rebuilt only by a model builder of the library or one
    registered with [`register_builder`][collocnode.serialize.register_builder] or given in
    ``builders``, matched by exact name, and only after the arguments were checked against the
    builder's signature and annotations. Nothing the file names is imported.

    Args:
        path: the model file.
        builders: model builders by name besides the library's and the registered ones, e.g.
            ``{"mypackage.models:oscillator": oscillator}``.
        max_bytes: the largest file read [bytes] (default `DEFAULT_MAX_BYTES`, 64 MiB);
            the size is checked before reading.

    Raises:
        ValueError: not a collocnode model file, not a regular file (a FIFO, a device, a
            directory: refused before anything is read), a file larger than ``max_bytes``, a key
            given twice in one object, data nested more than `MAX_DEPTH` levels, an
            unsupported format version (the message lists the supported ones), a missing or
            malformed field (named; the checksum ``p_sha256`` included), a builder that is not
            registered, arguments the builder does not take or of the wrong type, an unknown
            block type, an array that is not float64/int64 or whose shape does not match its
            data, a block larger than ``p``, or a file whose parameters do not fit the rebuilt
            model.
        TypeError: ``trusted_modules`` (removed: register builders instead) or another unknown
            keyword; ``builders`` that is not a dict of functions.
        OSError: the file cannot be read.

    Examples:
        The loaded model simulates as the one that was saved:

        ```python
        import tempfile
        from pathlib import Path

        import numpy as np

        from collocnode import NeuralODE, simulate
        from collocnode.nn import MLP
        from collocnode.serialize import load_model, save_model

        model = NeuralODE(MLP((2, 8, 2), "tanh"), state_names=("x", "y"))
        p = model.init_params(0)
        with tempfile.TemporaryDirectory() as folder:
            path = save_model(Path(folder) / "model.json", model, p)
            loaded = load_model(path)  # the model rebuilt by its builder, nothing imported
        t = np.linspace(0.0, 1.0, 11)
        again = loaded.simulate(t, np.array([1.0, 0.0]))
        before = simulate(model, p, t, np.array([1.0, 0.0]))
        assert np.allclose(again.x, before.x)
        print(loaded.model.state_names, loaded.library_version, again.x[-1])
        ```
    """
    if removed:
        if "trusted_modules" in removed:
            raise TypeError(
                "load_model(trusted_modules=...) was removed: a model file no longer names "
                "modules to import; register the function that builds your model with "
                "@collocnode.serialize.register_builder(name) or pass builders={name: function}"
            )
        raise TypeError(f"load_model() got an unexpected keyword argument {next(iter(removed))!r}")
    extra = check_builders(builders)
    max_bytes = v.positive_int("max_bytes", max_bytes)
    path = Path(path)
    doc = _parse(_read(path, max_bytes), path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(
            f"{str(path)!r} is not a collocnode model file (format {show(found)}, "
            f"expected {FORMAT!r})"
        )
    try:
        check_depth(doc)
        return _load(doc, extra)
    except ValueError as exc:
        raise ValueError(f"{str(path)!r}: {one_line(exc)}") from None


def _read(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, refusing a file larger than ``max_bytes`` before reading it, and a
    special file (a FIFO, a device, a socket) before reading from it: it is opened without
    blocking (a FIFO with no writer would block ``open`` forever) and its type checked on the
    open descriptor, so that nothing can swap it in between."""

    def too_large(size: int | str) -> ValueError:
        return ValueError(
            f"{str(path)!r} is {size} bytes, more than max_bytes = {max_bytes}; pass a larger "
            "max_bytes to load_model if you trust this file"
        )

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise ValueError(f"{str(path)!r} is {kind}, not a model file (a regular file)")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise too_large(size)
        # read what fstat reports, then on until EOF: a pipe or a growing file reports less
        raw = bytearray(fh.read(size + 1))
        while len(raw) <= max_bytes:
            more = fh.read(min(2**20, max_bytes + 1 - len(raw)))
            if not more:
                break
            raw += more
    if len(raw) > max_bytes:
        raise too_large(f"more than {max_bytes}")
    return bytes(raw)


_FILE_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


class _NonFiniteToken(ValueError):
    pass


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict, refusing a key given twice (``json`` keeps the last, so
    a reader and this library could see different files)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"duplicate key {show(key)} (given twice in one object)")
        out[key] = value
    return out


def _refuse_constant(token: str) -> float:
    raise _NonFiniteToken(
        f"the number {token} is not JSON (save_model writes non-finite floats as "
        f'{{"$float": "{token.lower().replace("infinity", "inf")}"}})'
    )


def _parse(raw: bytes, path: Path) -> Any:
    try:
        return json.loads(
            raw.decode("utf-8"), parse_constant=_refuse_constant, object_pairs_hook=_no_duplicates
        )
    except (_NonFiniteToken, _DuplicateKey) as exc:
        raise ValueError(f"{str(path)!r}: {exc}") from None
    except RecursionError:  # the C parser's own depth limit, far above MAX_DEPTH
        raise ValueError(
            f"{str(path)!r}: the data is nested too deeply (more than {MAX_DEPTH} levels)"
        ) from None
    except (UnicodeDecodeError, ValueError) as exc:  # ValueError: also over-long integers
        raise ValueError(
            f"{str(path)!r} is not a collocnode model file (not JSON: {show(str(exc), 80)})"
        ) from None


def _load(doc: dict[str, Any], builders: Mapping[str, Builder]) -> LoadedModel:
    require(doc, ("format_version",), "")
    version = doc["format_version"]
    if (
        isinstance(version, bool)
        or not isinstance(version, int)
        or version not in SUPPORTED_VERSIONS
    ):
        written_by = doc.get("library_version", "an unknown version")
        raise ValueError(
            f"format_version {show(version)} (written by collocnode {show(written_by)}) is not "
            f"supported; this collocnode reads format versions "
            f"{', '.join(map(str, SUPPORTED_VERSIONS))}"
        )
    require(doc, ("library_version", "model", "p"), "")
    if not isinstance(doc["library_version"], str):
        raise ValueError(f"library_version must be a string, got {show(doc['library_version'])}")
    p_list = doc["p"]
    if not isinstance(p_list, list):
        raise ValueError(f"p must be an array of real numbers, got {show(p_list)}")
    if len(p_list) > MAX_ELEMENTS:
        raise ValueError(
            f"p has {len(p_list)} values, more than a model file holds ({MAX_ELEMENTS})"
        )
    # no block of the model can have more weights than the file carries values of p
    budget = len(p_list)
    spec = require(
        doc["model"],
        ("recipe", "n_states", "n_inputs", "n_outputs", "n_params", "blocks", "slices"),
        "model",
    )
    for key in ("blocks", "slices"):
        if not isinstance(spec[key], dict):
            raise ValueError(f"model.{key} must be an object, got {type(spec[key]).__name__}")
    model = _rebuild(spec["recipe"], builders, budget)
    _adopt_normalization(model, _stored_blocks(spec["blocks"], budget))
    described = _describe(model)
    described["blocks"] = {k: _block_json(b) for k, b in described["blocks"].items()}
    for key in described:
        # compared as JSON text: 1 == True == 1.0 in Python, not in the file
        if key in spec and _json(described[key]) != _json(spec[key]):
            raise ValueError(
                f"model.{key} does not match the model its recipe rebuilds: "
                f"file {show(spec[key], 200)}, rebuilt {show(described[key], 200)}"
            )
    if len(p_list) != model.n_params:
        raise ValueError(f"p must have shape ({model.n_params},), got ({len(p_list)},)")
    for i, x in enumerate(p_list):
        if type(x) not in (int, float):
            raise ValueError(f"p must be an array of real numbers, got {show(x)} at index {i}")
    try:
        p = v.finite_array("p", p_list, shape=(model.n_params,))
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    # every version of the format has written the checksum: a file without one was edited
    if "p_sha256" not in doc:
        raise ValueError(
            "missing field p_sha256, the checksum of p that save_model writes (the file was "
            "edited or truncated)"
        )
    if doc["p_sha256"] != _checksum(p):
        raise ValueError("p does not match p_sha256 (the file was edited or corrupted)")
    p.setflags(write=False)
    metadata = decode(doc.get("metadata", {}), "metadata", MAX_ELEMENTS)
    stored = None
    if doc.get("uncertainty") is not None:
        stored = decode_uncertainty(doc["uncertainty"], model, p)
    return LoadedModel(
        model=model,
        p=p,
        metadata=metadata if isinstance(metadata, dict) else {"value": metadata},
        library_version=str(doc["library_version"]),
        format_version=int(version),
        uncertainty=stored,
    )


__all__ = ["LoadedModel", "load_model", "save_model"]
