"""Atomic file output: a crash never leaves a half-written result behind."""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np


def jsonable(obj: Any) -> Any:
    """``obj`` as strict JSON data, for every JSON file this library writes.

    Mappings become dicts with string keys, lists and tuples lists, numpy arrays nested lists,
    numpy scalars Python numbers, enums their values, and non-finite floats None (strict JSON
    has no NaN or Infinity). Anything else is returned unchanged, so ``json.dumps`` names what
    it cannot encode.
    """
    if isinstance(obj, Enum):
        return jsonable(obj.value)
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return jsonable(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    return obj


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file in the same directory, then rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:  # name the file asked for, not the temporary sibling
        raise type(exc)(exc.errno, f"cannot write {str(path)!r}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)  # mkstemp creates 0600; give the file the usual permissions
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with _suppress():
            os.unlink(tmp)
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode())


def write_json(path: str | Path, obj: Any) -> Path:
    """``obj`` as indented strict JSON (see :func:`jsonable`), written atomically."""
    return atomic_write_text(path, json.dumps(jsonable(obj), indent=2, allow_nan=False) + "\n")


def write_npz(path: str | Path, arrays: Mapping[str, np.ndarray]) -> Path:
    """``arrays`` as one ``.npz`` file (loadable with ``allow_pickle=False``), written
    atomically."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return atomic_write_bytes(path, buffer.getvalue())


def save_figure(
    fig: Any, path: str | Path, dpi: int = 120, metadata: dict[str, str] | None = None
) -> Path:
    """Save a matplotlib figure atomically and close it; ``metadata`` goes into the file's text
    fields (PNG keywords such as a run id)."""
    import io

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fmt = Path(path).suffix.lstrip(".") or "png"
    fig.savefig(buf, format=fmt, dpi=dpi, bbox_inches="tight", metadata=metadata)
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True
