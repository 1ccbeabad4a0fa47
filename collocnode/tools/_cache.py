"""The on-disk cache: what is costly to compute and cheap to keep, reused by later runs.

Two kinds of entries live in it: compiled libraries of node functions
(`collocnode.transcription._nlp.jit`) and arrays such as long reference simulations
(`load_arrays` / `store_arrays`, one ``.npz`` file per key in a folder per kind).

The cache is ``$COLLOCNODE_CACHE``, else ``$XDG_CACHE_HOME/collocnode``, else
``~/.cache/collocnode``. Its folders are created with mode 0700; a file is read only from a
folder that belongs to the current user and that no one else can write to, and only if the file
itself belongs to the user and is not writable by group or others. Arrays are read with
``allow_pickle=False``: a cached file is data, never code.

An array cache that cannot be read or written is no error: `load_arrays` answers None (the
caller computes) and `store_arrays` keeps nothing, each with one line on this module's logger.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat
import tempfile
from pathlib import Path

import numpy as np

#: the array files kept per kind; the oldest go first
ARRAYS_KEPT = 32

_log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """The cache's root: ``$COLLOCNODE_CACHE``, else ``$XDG_CACHE_HOME/collocnode``, else
    ``~/.cache/collocnode``."""
    root = os.environ.get("COLLOCNODE_CACHE")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "collocnode"


def unsafe(st: os.stat_result) -> str | None:
    """Why a file or folder with status ``st`` may not be trusted, or None if it may: it must
    belong to the current user and not be writable by group or others."""
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not by the current user (uid {os.geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def key_of(*parts: object) -> str:
    """A file-name-safe key (24 hex digits of SHA-256) for ``parts``: bytes are hashed as they
    are, anything else by its ``repr`` (give values whose repr says everything that matters)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else repr(part).encode()
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()[:24]


def _trusted(folder: Path) -> bool:
    """Whether ``folder`` and the cache's root above it may be used (`unsafe`); OSError where
    either cannot be read."""
    for item in (folder.parent, folder):
        why = unsafe(item.stat())
        if why:
            _log.info("not using the cache folder %s: it %s", item, why)
            return False
    return True


def load_arrays(kind: str, key: str) -> dict[str, np.ndarray] | None:
    """The arrays stored under ``kind`` / ``key``, or None where there are none or they cannot
    be trusted or read (a damaged file is removed)."""
    path = cache_dir() / kind / f"{key}.npz"
    try:
        if not _trusted(path.parent):
            return None
        st = path.lstat()  # a link is not followed: what it points to was not checked
    except OSError:
        return None
    why = "is not a regular file" if not stat.S_ISREG(st.st_mode) else unsafe(st)
    if why:
        _log.info("not reading the cached arrays %s: it %s", path, why)
        return None
    try:
        with np.load(path, allow_pickle=False) as stored:
            return {name: stored[name] for name in stored.files}
    except Exception as exc:  # a truncated or foreign file: recomputed, and replaced
        _log.info("the cached arrays %s cannot be read (%s); computing them again", path, exc)
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def store_arrays(
    kind: str, key: str, arrays: dict[str, np.ndarray], keep: int = ARRAYS_KEPT
) -> None:
    """Keep ``arrays`` under ``kind`` / ``key`` (written atomically: a reader sees the whole
    file or none), and at most ``keep`` files of ``kind`` (the oldest are removed)."""
    folder = cache_dir() / kind
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _trusted(folder):
            return
        with tempfile.NamedTemporaryFile(dir=folder, suffix=".tmp", delete=False) as tmp:
            np.savez(tmp, **arrays)
        os.replace(tmp.name, folder / f"{key}.npz")
        stored = sorted(folder.glob("*.npz"), key=lambda p: p.stat().st_mtime)
        for old in stored[: max(0, len(stored) - keep)]:
            old.unlink()
    except OSError as exc:
        _log.info("cannot keep arrays in the cache folder %s (%s)", folder, exc.strerror or exc)
        with contextlib.suppress(OSError, NameError):
            os.unlink(tmp.name)
