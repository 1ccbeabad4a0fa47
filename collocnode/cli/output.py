"""A run's output directory: written into a fresh temporary sibling of ``--out`` and renamed to
``--out`` when the run ends, however it ends, so that two runs never mix their files; and the
command line that reruns the run, recorded with it."""

from __future__ import annotations

import datetime
import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path


def default_out(kind: str) -> Path:
    """``runs/<kind>-<YYYYmmdd-HHMMSS>`` (relative to the working directory)."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{kind}-{stamp}"


def command_line(script: str, argv: Sequence[str]) -> str:
    """The command that reruns this run, as a shell line: ``python SCRIPT ARGS``."""
    return shlex.join(["python", script, *argv])


class OutputDirectory:
    """A run's output: written into a temporary sibling of ``target`` named after the run id,
    renamed to ``target`` by :meth:`finish` (however the run ended).

    Raises ValueError (naming ``--out``) when ``target`` is a file, cannot be created, or is a
    non-empty directory and ``overwrite`` is off; with ``resume`` the earlier run in ``target``
    is copied into the new directory (its stored tasks are read back from there).
    """

    def __init__(
        self, target: Path, run_id: str, overwrite: bool = False, resume: bool = False
    ) -> None:
        if str(target).strip() in ("", "."):
            raise ValueError(f"--out must name a directory, got {str(target)!r}")
        self.target, self.overwrite = target, overwrite or resume
        if target.exists() and not target.is_dir():
            raise ValueError(f"--out {str(target)!r} is not a directory")
        if resume and not target.is_dir():
            raise ValueError(f"--resume: --out {str(target)!r} holds no earlier run")
        if target.is_dir() and any(target.iterdir()) and not self.overwrite:
            raise ValueError(
                f"--out {str(target)!r} is not empty; pass --overwrite to replace it, or name "
                "another directory"
            )
        self.path = target.parent / f".{target.name}.{run_id}.partial"
        try:
            self.path.mkdir(parents=True)
        except OSError as exc:
            raise ValueError(f"--out {str(target)!r} cannot be created: {exc.strerror}") from None
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise ValueError(f"--out {str(target)!r} is not writable")
        if resume:
            shutil.copytree(target, self.path, dirs_exist_ok=True, symlinks=True)

    def discard(self) -> None:
        """Remove the run's directory; the target stays as it was."""
        shutil.rmtree(self.path, ignore_errors=True)

    def finish(self) -> Path:
        """Rename the run's directory to the target (replacing it with ``overwrite``); if
        another run took the target meanwhile, the files stay where they are, and that path is
        returned."""
        old = None
        try:
            if self.target.is_dir():
                if any(self.target.iterdir()):
                    if not self.overwrite:
                        return self.path
                    old = self.target.parent / f".{self.target.name}.{self.path.stem}.old"
                    os.rename(self.target, old)
                else:
                    self.target.rmdir()
            os.rename(self.path, self.target)
        except OSError:
            return self.path
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return self.target
