"""Where a run writes: its run folder, the durable units of work in it, its staged summary.

A run's folder is ``--out``, made and marked (`collocnode._cli.run_folder`) when the run starts and
locked while it runs. What a run finishes unit by unit (the seeds of a robustness study, the
methods of a comparison run as tasks) is written straight into it, each file atomically and
flushed to disk, so that a run killed at any moment (kill -9, the OOM killer, a lost node)
leaves every finished unit where ``--resume`` looks. Only the run's summary (``result.json``,
``compare.json``, the plots) is staged in ``<folder>/.staging-<run id>`` and moved into the
folder when the run ends, however it ends.

- A new run needs ``--out`` absent or empty.
- ``--resume`` continues the run in ``--out`` (a marked folder, or an earlier run's folder written
  before folders were marked); the staged summary of a run killed there is moved into the folder
  first, and temporary files it left are removed. Where ``--out`` does not exist but a folder of
  a killed run of an earlier version (``.<out>.<id>.partial``) does, it is adopted as ``--out``.
- ``--overwrite`` replaces only a marked folder; anything else is refused and left untouched.
  The new run writes into a marked sibling ``.<out>.<run id>.partial`` and takes ``--out``'s
  place only if it ends successfully; otherwise the earlier run stays in ``--out`` and the new
  one is kept as ``<out>-<run id>``.
- A sibling ``.<out>.<id>.partial`` whose run was killed (no command holds it) is never left
  silently: it is adopted by ``--resume`` (above) or moved to ``<out>-<id>``, and a note says so.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from ..tools._io import STORAGE_ERRNOS, StorageError, fsync_directory, stale_temporaries
from ..tools._machine import command_line
from .run_folder import MARKER, FolderInUse, RunFolder, is_run_folder

STAGING = ".staging-"


def default_out(kind: str) -> Path:
    """``runs/<kind>-<YYYYmmdd-HHMMSS>`` (relative to the working directory)."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{kind}-{stamp}"


def resume_command(script: str, argv: Sequence[str], out: Path) -> str:
    """The command that continues this run in ``out``: its arguments without ``--out``,
    ``--overwrite`` and ``--resume``, then ``--out OUT --resume``."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--out":
            skip = True
        elif arg in ("--overwrite", "--resume") or arg.startswith("--out="):
            continue
        else:
            kept.append(arg)
    return command_line(script, [*kept, "--out", str(out), "--resume"])


class OutputDirectory:
    """A run's output (see the module docstring).

    Attributes:
        target: ``--out``.
        folder: the run folder, where the units go: ``target``, or with ``--overwrite`` of an
            earlier run its sibling ``.<name>.<run id>.partial``.
        path: where the summary goes while the run runs (moved into ``folder`` by
            `finish`).
        notes: lines for the user about folders found, adopted or moved.
        ending: set by `finish` where this run did not replace the earlier run it was
            to replace: where that run stays ("" otherwise).

    Raises:
        ValueError: one line naming ``--out``: not a directory, not empty (and not a run to
            resume or replace), no run to resume, a folder ``--overwrite`` may not replace, in
            use by another command, or not writable.
        StorageError: the folder cannot be written for lack of storage.
    """

    def __init__(
        self,
        target: Path,
        run_id: str,
        overwrite: bool = False,
        resume: bool = False,
        command: str = "",
    ) -> None:
        if str(target).strip() in ("", "."):
            raise ValueError(f"--out must name a directory, got {str(target)!r}")
        if target.exists() and not target.is_dir():
            raise ValueError(f"--out {str(target)!r} is not a directory")
        self.target, self.run_id, self.command = target, run_id, command
        self.notes: list[str] = []
        self.ending = ""
        self.replacing = False
        self._made = False  # this run made ``target``
        self._marked = False  # this run marked a folder that existed before
        self._held: list[RunFolder] = []
        orphans = _killed_siblings(target)
        try:
            if resume:
                self.folder = self._continue(target, orphans)
            elif _holds_files(target):
                if not overwrite:
                    raise ValueError(_not_empty(target))
                self.folder = self._replacement(target)
            else:
                self.folder = self._new(target)
            for orphan in orphans:
                self._surface(orphan)
            self.path = self.folder / f"{STAGING}{run_id}"
            self.path.mkdir()
            if not os.access(self.path, os.W_OK | os.X_OK):
                raise ValueError(f"--out {str(target)!r} is not writable")
        except FolderInUse:
            self._release()
            raise
        except OSError as exc:
            self._undo()
            if isinstance(exc, StorageError) or exc.errno in STORAGE_ERRNOS:
                raise StorageError(
                    exc.errno, f"--out {str(target)!r} cannot be written: {exc.strerror or exc}"
                ) from None
            raise ValueError(
                f"--out {str(target)!r} cannot be created: {exc.strerror or exc}"
            ) from None
        except BaseException:
            self._undo()
            raise

    # ---- choosing the run folder ---------------------------------------------------------------

    def _new(self, target: Path) -> Path:
        self._made = not target.exists()
        self._held.append(RunFolder.make(target, self.run_id, self.command))
        self._marked = not self._made
        return target

    def _replacement(self, target: Path) -> Path:
        """The marked sibling a run that replaces ``target`` writes into; ``target`` must be a
        run folder that no command holds (it stays held until the run ends)."""
        if not is_run_folder(target):
            raise ValueError(
                f"--overwrite replaces only a folder written by collocnode (one holding "
                f"{MARKER}); --out {str(target)!r} holds {_listing(target)}: name another "
                "directory, or move those files away yourself"
            )
        self._held.append(RunFolder.hold(target))
        sibling = target.parent / f".{target.name}.{self.run_id}.partial"
        self._held.append(RunFolder.make(sibling, self.run_id, self.command))
        self.replacing = True
        return sibling

    def _continue(self, target: Path, orphans: list[Path]) -> Path:
        """The run folder ``--resume`` continues: ``target`` (a marked folder, or an earlier
        run's), or a killed run's sibling adopted as ``target``."""
        if _holds_files(target):
            if is_run_folder(target):
                self._held.append(RunFolder.hold(target))
            elif _earlier_run(target):
                self._held.append(RunFolder.mark(target, self.run_id, self.command))
                self._marked = True
            else:
                raise ValueError(
                    f"--resume: --out {str(target)!r} holds no collocnode run (no {MARKER}, "
                    "no result.json, compare.json, seeds/ or methods/)"
                )
        elif orphans:
            orphan = max(orphans, key=_mtime)  # the last killed one
            self._adopt(orphan, target)
            orphans.remove(orphan)
        else:
            raise ValueError(f"--resume: --out {str(target)!r} holds no earlier run")
        self._take_staged_summaries(target)
        for stale in [*stale_temporaries(target / "seeds"), *stale_temporaries(target / "methods")]:
            stale.unlink()
        return target

    def _adopt(self, orphan: Path, target: Path) -> None:
        if target.is_dir():
            target.rmdir()  # empty: checked by the caller
        os.rename(orphan, target)
        if is_run_folder(target):
            self._held.append(RunFolder.hold(target))
        else:  # staged by a collocnode that did not mark folders
            self._held.append(RunFolder.mark(target, self.run_id, self.command))
        self.notes.append(
            f"--resume: adopted {orphan.name}, the folder of a run that was killed before it "
            f"ended, as {target}"
        )

    def _take_staged_summaries(self, folder: Path) -> None:
        """Move the summary a killed run staged in ``folder`` into it (newer than what the
        folder holds)."""
        for staged in sorted(folder.glob(f"{STAGING}*"), key=_mtime):
            if staged.is_dir() and not staged.is_symlink():
                _merge(staged, folder)
                self.notes.append(
                    f"moved the summary a killed run had staged in {staged.name} into {folder}"
                )

    def _surface(self, orphan: Path) -> None:
        """A killed run's sibling folder, made visible as ``<out>-<its id>``."""
        visible = _free(orphan.parent / f"{self.target.name}-{_orphan_id(orphan)}")
        with contextlib.suppress(OSError):
            os.rename(orphan, visible)
            self.notes.append(
                f"found {orphan.name}, the folder of a run that was killed before it ended; "
                f"moved it to {visible} (continue it with --resume --out {visible})"
            )

    # ---- ending --------------------------------------------------------------------------------

    def finish(self, success: bool = True) -> Path:
        """Move the staged summary into the run folder; when this run replaces an earlier one,
        put it in ``--out``'s place if it ended successfully, else keep both (`notes`
        says where each is). Returns where this run's files are now. Does not raise: where a
        step fails, the files stay where they are, that place is returned and noted."""
        where = self.folder
        try:
            _merge(self.path, self.folder)
        except OSError:  # its files stay staged, and that is where they are
            where = self.path
        if self.replacing:
            if where == self.folder:
                where = self._replace_or_keep(success)
            else:
                self.ending = f"the earlier run stays in {self.target}"
        self._release()
        return where

    def _replace_or_keep(self, success: bool) -> Path:
        target = self.target
        if success:
            old = target.parent / f".{target.name}.{self.run_id}.old"
            try:
                os.rename(target, old)
                os.rename(self.folder, target)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    if not target.exists():
                        os.rename(old, target)
                self.ending = (
                    f"the earlier run stays in {target} (they could not be swapped: "
                    f"{exc.strerror or exc})"
                )
                return self.folder
            fsync_directory(target.parent)
            if is_run_folder(old):
                shutil.rmtree(old, ignore_errors=True)
            return target
        kept = _free(target.parent / f"{target.name}-{self.run_id}")
        try:
            os.rename(self.folder, kept)
        except OSError:
            kept = self.folder
        self.ending = f"the earlier run stays in {target}"
        return kept

    def discard(self) -> None:
        """Undo this run: its staged summary removed, the folder it made or marked as it was;
        units written into an existing run folder stay."""
        shutil.rmtree(self.path, ignore_errors=True)
        self._undo()

    def _undo(self) -> None:
        path = getattr(self, "path", None)
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)
        folder = getattr(self, "folder", None)
        if self.replacing and folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        elif self._made or self._marked:
            with contextlib.suppress(OSError):
                (self.target / MARKER).unlink()
            if self._made:
                with contextlib.suppress(OSError):
                    self.target.rmdir()  # only if nothing else was written
        self._release()

    def _release(self) -> None:
        for held in self._held:
            held.release()
        self._held = []


def _holds_files(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())


def _not_empty(target: Path) -> str:
    if is_run_folder(target):
        return (
            f"--out {str(target)!r} holds an earlier run; pass --resume to continue it, "
            "--overwrite to replace it, or name another directory"
        )
    return (
        f"--out {str(target)!r} is not empty; name another directory (--overwrite replaces only "
        "a folder written by collocnode)"
    )


def _listing(folder: Path, shown: int = 3) -> str:
    names = sorted(p.name for p in folder.iterdir())
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _earlier_run(folder: Path) -> bool:
    """A run's folder written before folders were marked: its summary or its stored units."""
    return any((folder / name).exists() for name in ("result.json", "compare.json")) or any(
        (folder / name).is_dir() for name in ("seeds", "methods")
    )


def _killed_siblings(target: Path) -> list[Path]:
    """The folders ``.<name>.<id>.partial`` beside ``target`` that no running command holds:
    runs that were killed (by kill -9, or of a version that staged whole runs there)."""
    parent = target.parent
    if not parent.is_dir():
        return []
    found = []
    for entry in parent.glob(f".{target.name}.*.partial"):
        if entry.is_dir() and not entry.is_symlink():
            if not (is_run_folder(entry) and RunFolder.in_use(entry)):
                found.append(entry)
    return found


def _orphan_id(orphan: Path) -> str:
    """The run id in ``.<name>.<id>.partial``."""
    return orphan.name[: -len(".partial")].rsplit(".", 1)[-1]


def _free(path: Path) -> Path:
    """``path``, or ``path.2``, ``path.3``, ... whichever does not exist."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _merge(source: Path, destination: Path) -> None:
    """Move everything in ``source`` into ``destination`` (files replace files, folders are
    merged), then remove ``source``."""
    if not source.is_dir():
        return
    for entry in source.iterdir():
        dest = destination / entry.name
        if entry.is_dir() and not entry.is_symlink() and dest.is_dir():
            _merge(entry, dest)
        elif dest.is_dir() and not dest.is_symlink():
            continue  # a file where the folder has a directory: left in the staging folder
        else:
            os.replace(entry, dest)
    with contextlib.suppress(OSError):
        source.rmdir()
    fsync_directory(destination)
