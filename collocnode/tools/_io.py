"""Atomic, durable file output: a crash never leaves a half-written result behind, and a file
that was written survives a power cut or a killed node (the data and the rename are flushed to
disk). A write that fails for lack of storage (a full disk, a quota, a read-only file system) is
a `StorageError`, which a run treats as the end of the run rather than as a result.
"""

from __future__ import annotations

import errno
import io
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

#: errno values that say the storage cannot take the write (not that the data are wrong)
STORAGE_ERRNOS = frozenset(
    code
    for code in (
        errno.ENOSPC,
        getattr(errno, "EDQUOT", None),
        errno.EFBIG,
        errno.EROFS,
        errno.EIO,
    )
    if code is not None
)
_TEMPORARY_SUFFIX = ".tmp"


class StorageError(OSError):
    """A write a run depends on failed for lack of storage (no space, a quota, a read-only or
    failing disk): the run stops, and what it computed is not counted as a result."""


def storage_error(exc: BaseException | None) -> BaseException | None:
    """The storage failure behind ``exc``: itself, its cause or its context, whichever is a
    `StorageError` or has an ``errno`` in `STORAGE_ERRNOS` (an ``OSError``, or a
    library's own error that keeps the errno, such as a JIT compilation's); None if none is."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, StorageError) or getattr(exc, "errno", None) in STORAGE_ERRNOS:
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def fsync_directory(path: str | Path) -> None:
    """Flush a directory's entries (a rename into it, a new file) to disk; a no-op where the
    platform cannot open directories."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # file systems that cannot sync a directory (some network mounts)
        pass
    finally:
        os.close(fd)


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
    """Write ``data`` to a temporary file in the same directory, flush it to disk, rename it
    over ``path`` and flush the directory: after a crash ``path`` holds either the old or the
    new content, and after a return the new content survives one.

    Raises:
        StorageError: no space, a quota, a read-only or failing disk (naming ``path``).
        OSError: any other failure (naming ``path``).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=_TEMPORARY_SUFFIX
        )
    except OSError as exc:  # name the file asked for, not the temporary sibling
        raise _named(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)  # mkstemp creates 0600; give the file the usual permissions
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException as exc:
        with _suppress():
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, StorageError):
            raise _named(exc, path) from exc
        raise
    fsync_directory(path.parent)
    return path


def _named(exc: OSError, path: Path) -> OSError:
    """``exc`` as one line naming ``path``: a `StorageError` for lack of storage."""
    cls = StorageError if exc.errno in STORAGE_ERRNOS else type(exc)
    try:
        return cls(exc.errno, f"cannot write {str(path)!r}: {exc.strerror or exc}")
    except TypeError:  # an OSError subclass with another signature
        return OSError(exc.errno, f"cannot write {str(path)!r}: {exc.strerror or exc}")


def stale_temporaries(directory: str | Path) -> Iterator[Path]:
    """The temporary files `atomic_write_bytes` left in ``directory`` when its process was
    killed mid-write (``.<name>.<random>.tmp``); delete them only while no other process writes
    there."""
    directory = Path(directory)
    if not directory.is_dir():
        return
    for entry in directory.iterdir():
        if entry.name.startswith(".") and entry.name.endswith(_TEMPORARY_SUFFIX):
            if entry.is_file() and not entry.is_symlink():
                yield entry


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode())


def write_json(path: str | Path, obj: Any) -> Path:
    """``obj`` as indented strict JSON (see `jsonable`), written atomically."""
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
