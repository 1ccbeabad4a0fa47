"""collocnode.tools.io: an atomic write that cannot start names the file asked for."""

from __future__ import annotations

import tempfile

import pytest

from collocnode.tools.io import atomic_write_text


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
