"""What makes a folder a collocnode run folder: a marker file made when the command makes the
folder, and a lock on it held while a command runs there.

The marker (`MARKER`) is what ``--overwrite`` asks for before it replaces a folder, and
what ``--resume`` looks for; the lock (``flock`` on the marker, released by the kernel when its
process dies, kill -9 included) keeps two commands out of one folder and tells a folder left by
a killed run from one whose run is still going.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import socket
from pathlib import Path

from ..tools._io import fsync_directory

try:  # POSIX; elsewhere folders are not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

MARKER = ".collocnode-run.json"
"""The file that marks a run folder (hidden, as ``.git`` is): JSON saying which command made
the folder, when and where; its presence is the mark, its content a record."""


class FolderInUse(ValueError):
    """Another command is running in this run folder (it holds the folder's lock)."""


def is_run_folder(path: Path) -> bool:
    """Whether ``path`` is a directory that carries the marker (a regular file, not a link)."""
    marker = path / MARKER
    return path.is_dir() and marker.is_file() and not marker.is_symlink()


def marker_record(path: Path) -> dict[str, object]:
    """The marker's content ({} where it cannot be read: a folder made by a killed command)."""
    try:
        record = json.loads((path / MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


class RunFolder:
    """A run folder held by this process: marked, and locked until `release`.

    Use `make` for a new (or empty) folder, `mark` for an earlier run's folder
    without a marker (written before run folders were marked), `hold` for a marked one.

    Raises:
        FolderInUse: another command holds the folder.
        FileExistsError: `make` or `mark` found a marker already there.
        OSError: the folder or the marker cannot be written.
    """

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def make(cls, path: Path, run_id: str, command: str) -> RunFolder:
        """Make ``path`` (and its parents; an existing empty directory is taken) and mark it."""
        path.mkdir(parents=True, exist_ok=True)
        return cls._marked(path, run_id, command)

    @classmethod
    def mark(cls, path: Path, run_id: str, command: str) -> RunFolder:
        """Mark the existing folder ``path``."""
        return cls._marked(path, run_id, command)

    @classmethod
    def _marked(cls, path: Path, run_id: str, command: str) -> RunFolder:
        record = {
            "format": "collocnode-run",
            "run_id": run_id,
            "command": command,
            "created": datetime.datetime.now().isoformat(timespec="seconds"),
            "host": socket.gethostname(),
            "pid": os.getpid(),
        }
        marker = path / MARKER
        # O_EXCL: of two commands making one folder at once, one gets it, the other is refused
        fd = os.open(marker, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _lock(fd, path)
            os.write(fd, (json.dumps(record, indent=1) + "\n").encode())
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                marker.unlink()
            raise
        fsync_directory(path)
        return cls(path, fd)

    @classmethod
    def hold(cls, path: Path) -> RunFolder:
        """Lock the marked folder ``path``."""
        fd = os.open(path / MARKER, os.O_RDONLY)
        try:
            _lock(fd, path)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd)

    @staticmethod
    def in_use(path: Path) -> bool:
        """Whether a command holds the marked folder ``path`` now."""
        try:
            RunFolder.hold(path).release()
        except FolderInUse:
            return True
        except OSError:
            return False
        return False

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the lock
            self._fd = None


def _lock(fd: int, path: Path) -> None:
    if fcntl is None:  # pragma: no cover - Windows
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise FolderInUse(
            f"--out {str(path)!r} is in use by another running command; wait for it to end or "
            "name another directory"
        ) from None
