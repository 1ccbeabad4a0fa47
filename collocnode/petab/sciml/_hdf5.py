"""HDF5 array files: a network's parameters (``/parameters/<nn_model_id>/<layer_id>/<array_id>``
beside ``/metadata/pytorch_format``) and input or output arrays (``/<kind>/<id>/data``)."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._tables import PetabError

Shapes = Mapping[str, Mapping[str, tuple[int, ...]]]


def load_h5py() -> Any:
    try:
        import h5py
    except ImportError as exc:  # pragma: no cover
        raise ImportError("PEtab SciML array files need h5py (pip install h5py)") from exc
    return h5py


def _open_hdf5(h5py: Any, path: Path) -> Any:
    if not path.is_file():
        raise PetabError(f"{path}: no such HDF5 file")
    try:
        return h5py.File(path, "r")
    except OSError as exc:
        raise PetabError(f"{path}: not a readable HDF5 file ({exc})") from None


def _check_metadata(h5py: Any, f: Any, path: Path) -> None:
    """Refuse files that say their arrays are not in PyTorch's (row-major) layout."""
    meta = f.get("metadata", getlink=True)
    if meta is None:
        return
    meta = _group(h5py, f, "metadata", path)
    if "pytorch_format" in meta:
        flag = _dataset(h5py, f, "metadata/pytorch_format", path, ())
        if not flag:
            raise PetabError(f"{path}: metadata/pytorch_format is 0: arrays not in PyTorch layout")
    if "perm" in meta:
        link = meta.get("perm", getlink=True)
        value = meta["perm"][()] if isinstance(link, h5py.HardLink) else None
        value = value.decode() if isinstance(value, bytes) else value
        if value != "row":
            raise PetabError(f"{path}: metadata/perm is {value!r}; only 'row' is supported")


def _group(h5py: Any, f: Any, name: str, path: Path) -> Any:
    link = f.get(name, getlink=True)
    if link is None:
        parent = name.rpartition("/")[0]
        there = sorted(f[parent]) if parent and isinstance(f.get(parent), h5py.Group) else None
        found = f" (found: {', '.join(there) or 'nothing'})" if there is not None else ""
        raise PetabError(f"{path}: no group {name}{found}")
    if not isinstance(link, h5py.HardLink) or not isinstance(f[name], h5py.Group):
        raise PetabError(f"{path}: {name} is not a group")
    return f[name]


def _dataset(h5py: Any, f: Any, name: str, path: Path, shape: tuple[int, ...] | None) -> Any:
    """A numeric dataset as float64 (a number for a scalar), its shape checked against
    ``shape`` unless that is None."""
    link = f.get(name, getlink=True)
    if link is None:
        raise PetabError(f"{path}: no dataset {name}")
    if not isinstance(link, h5py.HardLink) or not isinstance(f[name], h5py.Dataset):
        raise PetabError(f"{path}: {name} is not a dataset")
    ds = f[name]
    if ds.dtype.kind not in "fiub":
        raise PetabError(f"{path}: {name} holds {ds.dtype}, not numbers")
    if shape is not None and ds.shape != shape:
        raise PetabError(f"{path}: {name} has shape {ds.shape}; expected {shape}")
    value = np.asarray(ds[()], dtype=np.float64)
    return float(value) if value.shape == () else value


def _read_layer_arrays(
    h5py: Any, f: Any, path: Path, net: str, layer_id: str, expected: Mapping[str, tuple[int, ...]]
) -> dict[str, np.ndarray]:
    """The arrays of one layer's group ``parameters/<net>/<layer_id>``, each one it must have."""
    lgroup = _group(h5py, f, f"parameters/{net}/{layer_id}", path)
    found = {}
    for name in lgroup:
        where = f"parameters/{net}/{layer_id}/{name}"
        if name not in expected:
            raise PetabError(
                f"{path}: {where}: layer {layer_id!r} has no array {name!r} "
                f"(it has {', '.join(expected)})"
            )
        found[name] = _dataset(h5py, f, where, path, expected[name])
    return found


def read_parameters_hdf5(
    path: str | os.PathLike[str],
    net: str,
    expected: Shapes,
    layer_ids: Collection[str],
    network_file: str,
) -> dict[str, dict[str, np.ndarray]]:
    """The parameters of the network ``net`` (file name ``network_file``, layers
    ``layer_ids``) in a parameter file: ``{layer_id: {array_id: array}}`` in the order of
    ``expected`` (``{layer_id: {array_id: shape}}``), which must be there whole and alone."""
    h5py = load_h5py()
    path = Path(path)
    with _open_hdf5(h5py, path) as f:
        _check_metadata(h5py, f, path)
        group = _group(h5py, f, f"parameters/{net}", path)
        found: dict[str, dict[str, np.ndarray]] = {}
        for layer_id in group:
            if layer_id not in expected:
                what = "has no parameters" if layer_id in layer_ids else "is not a layer"
                raise PetabError(
                    f"{path}: parameters/{net}/{layer_id}: {layer_id!r} {what} "
                    f"in the network {net!r} ({network_file})"
                )
            found[layer_id] = _read_layer_arrays(h5py, f, path, net, layer_id, expected[layer_id])
    for layer_id, named in expected.items():
        for name in named:
            if name not in found.get(layer_id, {}):
                raise PetabError(f"{path}: missing parameters/{net}/{layer_id}/{name}")
    return {k: {n: found[k][n] for n in named} for k, named in expected.items()}


def write_parameters_hdf5(
    h5py: Any,
    path: str | os.PathLike[str],
    net: str,
    arrays: Mapping[str, Mapping[str, np.ndarray]],
    dtype: Any,
) -> None:
    """Write ``arrays`` as the parameter file of the network ``net``, whole or not at all."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with h5py.File(tmp, "w") as f:
            f.create_group("metadata").create_dataset("pytorch_format", data=np.uint8(1))
            group = f.create_group("parameters").create_group(net)
            for layer_id, named in arrays.items():
                layer = group.create_group(layer_id)
                for name, value in named.items():
                    layer.create_dataset(name, data=value.astype(dtype))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_arrays_hdf5(path: str | os.PathLike[str], kind: str) -> dict[str, np.ndarray]:
    """The arrays of a PEtab SciML input or output file: ``{id: array}`` (float64, PyTorch's
    shape) from ``/<kind>/<id>/data``, with ``kind`` ``"inputs"`` or ``"outputs"``."""
    if kind not in ("inputs", "outputs"):
        raise ValueError(f"kind must be 'inputs' or 'outputs', got {kind!r}")
    h5py = load_h5py()
    path = Path(path)
    with _open_hdf5(h5py, path) as f:
        _check_metadata(h5py, f, path)
        group = _group(h5py, f, kind, path)
        out = {}
        for array_id in group:
            _group(h5py, f, f"{kind}/{array_id}", path)
            value = _dataset(h5py, f, f"{kind}/{array_id}/data", path, None)
            out[array_id] = np.asarray(value, dtype=np.float64)
        if not out:
            raise PetabError(f"{path}: group {kind} holds no arrays")
        return out
