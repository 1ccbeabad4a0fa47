"""The JIT cache loads compiled code only from a directory and a file that are the user's own;
every failure (compiler, cache) is one JITError whose first line says what and where."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import casadi as ca
import pytest

from collocnode.transcription._nlp import jit
from collocnode.transcription._nlp.jit import JITError, compile_functions

needs_compiler = pytest.mark.skipif(
    not (os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")),
    reason="needs a C compiler",
)


def square() -> ca.Function:
    x = ca.SX.sym("x")
    return ca.Function("collocnode_test_square", [x], [x**2])


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("COLLOCNODE_CACHE", str(root))
    return root


def refused(match: str) -> JITError:
    with pytest.raises(JITError, match=match) as info:
        compile_functions([square()], name="t")
    assert isinstance(info.value, RuntimeError)
    return info.value


def first_line_names(error: JITError, *words: str) -> None:
    line = str(error).splitlines()[0]
    for word in words:
        assert word in line


@needs_compiler
def test_cache_is_created_private_and_reused(cache):
    (f,) = compile_functions([square()], name="t")
    assert float(f(3.0)) == 9.0
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    (lib,) = cache.glob("t_*.so")
    assert not lib.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    compiled_at = lib.stat().st_mtime_ns
    (g,) = compile_functions([square()], name="t")
    assert float(g(-2.0)) == 4.0
    assert lib.stat().st_mtime_ns == compiled_at, "loaded from the cache, not compiled again"


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_cache_writable_by_others_is_refused(cache, mode):
    cache.mkdir()
    os.chmod(cache, mode)
    error = refused("writable by group or others")
    first_line_names(error, str(cache), "COLLOCNODE_CACHE", "chmod 700")
    assert "\n" not in str(error)
    assert list(cache.iterdir()) == [], "nothing compiled into it"


def test_cache_of_another_user_is_refused(cache, monkeypatch):
    cache.mkdir(mode=0o700)
    other = os.geteuid() + 1
    monkeypatch.setattr(jit.os, "geteuid", lambda: other)
    error = refused(f"owned by uid {cache.stat().st_uid}, not by the current user")
    first_line_names(error, str(cache), "COLLOCNODE_CACHE")


@needs_compiler
def test_library_planted_in_a_shared_cache_is_not_loaded(cache):
    compile_functions([square()], name="t")
    os.chmod(cache, 0o777)  # e.g. a cache under /tmp: anyone could have put the library there
    refused("writable by group or others")


@needs_compiler
def test_library_writable_by_others_is_refused(cache):
    compile_functions([square()], name="t")
    (lib,) = cache.glob("t_*.so")
    os.chmod(lib, 0o666)
    error = refused("writable by group or others")
    first_line_names(error, str(lib), "delete it")


@needs_compiler
def test_library_behind_a_link_is_refused(cache, tmp_path):
    compile_functions([square()], name="t")
    (lib,) = cache.glob("t_*.so")
    elsewhere = tmp_path / "elsewhere.so"
    os.replace(lib, elsewhere)
    lib.symlink_to(elsewhere)
    refused("not a regular file")


def test_failed_compilation_is_one_jit_error_with_the_compiler_output(cache, tmp_path, monkeypatch):
    fake = tmp_path / "fake-cc"
    fake.write_text("#!/bin/sh\necho 'fake.c:1: error: no way' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    error = refused("JIT compilation of t")
    first_line, *rest = str(error).splitlines()
    assert "exit status 3" in first_line and str(fake) in first_line
    assert rest == ["fake.c:1: error: no way"]
    assert not list(cache.glob("*.so"))


def test_compiler_that_cannot_run_is_one_jit_error(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    error = refused("cannot run the C compiler")
    assert "\n" not in str(error)


@pytest.mark.parametrize("where", ["file", "below_file"])
def test_cache_that_cannot_be_created_is_one_jit_error(tmp_path, monkeypatch, where):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    path = blocker if where == "file" else blocker / "cache"
    monkeypatch.setenv("COLLOCNODE_CACHE", str(path))
    error = refused("JIT cache")
    first_line_names(error, str(path), "COLLOCNODE_CACHE")
    assert "\n" not in str(error)


@needs_compiler
@pytest.mark.parametrize(
    "damage", [b"", b"\x7fELF not a library any more"], ids=["truncated", "overwritten"]
)
def test_a_damaged_cached_library_is_compiled_again_with_one_warning_line(cache, damage):
    compile_functions([square()], name="t")
    (lib,) = cache.glob("t_*.so")
    lib.write_bytes(damage)  # a crash mid-write of an older version, a disk error
    with pytest.warns(jit.JITCacheWarning) as seen:
        (f,) = compile_functions([square()], name="t")
    assert float(f(3.0)) == 9.0
    (message,) = [str(w.message) for w in seen]
    assert "\n" not in message and str(lib) in message and "compiling it again" in message
    assert stat.S_IMODE(lib.stat().st_mode) & 0o022 == 0 and lib.stat().st_size > 1000


def test_a_cache_on_a_full_disk_is_a_jit_error_that_keeps_the_errno(cache, monkeypatch):
    import errno

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(jit, "compiler", lambda: "cc")
    monkeypatch.setattr(Path, "write_text", full)
    error = refused("cannot write to the JIT cache directory")
    assert error.errno == errno.ENOSPC  # a run stops on it rather than counting a failed seed
    from collocnode.tools._io import storage_error

    assert storage_error(error) is error


# ---- jit="auto": compiled only where it pays ------------------------------------------------


def is_compiled(f: ca.Function) -> bool:
    """A Function loaded from a shared library (``casadi.external``), not the SX one."""
    return f.class_name() != "SXFunction"


def wait_for_library(cache: Path, name: str, seconds: float = 60.0) -> Path:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        found = list(cache.glob(f"{name}_*.so"))
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no {name} library in the cache after {seconds} s")


@needs_compiler
def test_auto_uncompiled_now_and_from_the_cache_once_the_background_compiler_is_done(cache):
    (f,) = jit.jit_functions([square()], "bg", "auto", pays=False)
    assert not is_compiled(f) and float(f(3.0)) == 9.0
    lib = wait_for_library(cache, "bg")
    assert not lib.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    # the compiler's private folder is gone once it renamed the library into place
    import time

    end = time.monotonic() + 30
    while list(cache.glob(".bg_*")) and time.monotonic() < end:
        time.sleep(0.1)
    assert not list(cache.glob(".bg_*"))
    (g,) = jit.jit_functions([square()], "bg", "auto", pays=False)
    assert is_compiled(g) and float(g(-2.0)) == 4.0


@needs_compiler
def test_auto_compiles_now_where_it_pays(cache):
    (f,) = jit.jit_functions([square()], "now", "auto", pays=True)
    assert is_compiled(f) and float(f(3.0)) == 9.0
    assert len(list(cache.glob("now_*.so"))) == 1


def test_auto_without_a_compiler_leaves_the_functions_as_built(cache, monkeypatch):
    monkeypatch.setenv("CC", str(cache / "no-such-compiler"))
    monkeypatch.setattr(jit.shutil, "which", lambda name: None)
    (f,) = jit.jit_functions([square()], "none", "auto", pays=True)
    assert not is_compiled(f) and float(f(3.0)) == 9.0


def test_auto_with_an_unsafe_cache_loads_nothing_from_it(cache):
    cache.mkdir(mode=0o777)
    os.chmod(cache, 0o777)
    (f,) = jit.jit_functions([square()], "unsafe", "auto", pays=True)
    assert not is_compiled(f)
    assert not list(cache.glob("unsafe_*"))


def test_a_fresh_background_compilation_of_another_run_is_not_started_again(cache, monkeypatch):
    jit.safe_cache_dir()
    started = []
    monkeypatch.setattr(jit.subprocess, "Popen", lambda *a, **k: started.append(a))
    *_, lib = jit._source([square()], "twice")
    (cache / f".{lib.stem}-other").mkdir()  # another run's compilation, just begun
    jit.jit_functions([square()], "twice", "auto", pays=False)
    assert started == []


def test_the_estimate_compiles_a_large_nlp_and_not_a_small_one():
    # the Van der Pol default's 2,500 nodes do not pay back a 2 s compilation in 20 iterations
    assert not jit.pays(2_500, 3.0e-5, 2.0)
    # the quarter vehicle's 12,500 do
    assert jit.pays(12_500, 3.0e-5, 2.0)


@pytest.mark.parametrize("value", ["yes", 1, None, "Auto"])
def test_a_jit_that_is_no_choice_is_refused_naming_it(value):
    from collocnode import RadauIIA

    with pytest.raises(TypeError, match="jit must be True, False or 'auto'"):
        RadauIIA(jit=value)
    with pytest.raises(TypeError, match="jit must be True, False or 'auto'"):
        jit.jit_functions([], "collocnode_nodes", value, pays=False)
