"""collocnode.tools._io: an atomic write that cannot start names the file asked for; a write
that finds no space is a StorageError (the end of a run, not a result); a killed write's
temporary file is recognisable."""

from __future__ import annotations

import errno
import os
import tempfile

import pytest

from collocnode.tools._io import StorageError, atomic_write_text, stale_temporaries, storage_error


def test_a_write_that_cannot_create_its_temporary_file_names_the_target(tmp_path, monkeypatch):
    def refuse(*args, dir=None, prefix="", suffix=""):
        name = f"{dir}/{prefix}x1y2{suffix}"
        raise PermissionError(13, "Permission denied", name)

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    target = tmp_path / "model.json"
    with pytest.raises(PermissionError) as info:
        atomic_write_text(target, "{}")
    assert str(info.value) == f"[Errno 13] cannot write {str(target)!r}: Permission denied"
    assert ".tmp" not in str(info.value)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("code", "storage"), [(errno.ENOSPC, True), (errno.EDQUOT, True), (errno.EACCES, False)]
)
def test_a_write_that_finds_no_space_is_a_storage_error_naming_the_target(
    tmp_path, monkeypatch, code, storage
):
    def full(fd):  # where a full disk shows on a file system that allocates late
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "seed-3.json"
    with pytest.raises(OSError) as info:
        atomic_write_text(target, "{}")
    assert isinstance(info.value, StorageError) is storage
    assert info.value.strerror == f"cannot write {str(target)!r}: {os.strerror(code)}"
    assert not list(tmp_path.iterdir())  # the temporary file is gone too
    assert (storage_error(RuntimeError("wrapped")) is None) and (
        (storage_error(_chained(info.value)) is not None) is storage
    )


def _chained(cause: BaseException) -> BaseException:
    try:
        raise RuntimeError("a library's own error") from cause
    except RuntimeError as exc:
        return exc


def test_temporary_files_of_a_killed_write_are_found(tmp_path):
    (tmp_path / ".seed-1.json.a1b2.tmp").write_text('{"half')
    (tmp_path / "seed-0.json").write_text("{}")
    (tmp_path / ".hidden").write_text("not ours")
    assert [p.name for p in stale_temporaries(tmp_path)] == [".seed-1.json.a1b2.tmp"]
    assert list(stale_temporaries(tmp_path / "absent")) == []
