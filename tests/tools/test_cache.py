"""The on-disk array cache: round trip, keys, a damaged or untrusted file, pruning, and a cache
that cannot be written (no error)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from collocnode.tools import _cache as cache


@pytest.fixture
def root(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("COLLOCNODE_CACHE", str(path))
    return path


def test_arrays_round_trip_in_a_private_folder(root, rng):
    x = rng.normal(size=(7, 5))
    assert cache.load_arrays("kind", "k") is None
    cache.store_arrays("kind", "k", {"x": x, "n": np.arange(3)})
    loaded = cache.load_arrays("kind", "k")
    np.testing.assert_array_equal(loaded["x"], x)
    np.testing.assert_array_equal(loaded["n"], np.arange(3))
    assert os.stat(root / "kind").st_mode & 0o777 == 0o700
    assert [p.name for p in (root / "kind").iterdir()] == ["k.npz"]  # no temporary file left


def test_keys_differ_with_any_part_and_hash_bytes_as_they_are():
    base = cache.key_of("qvm", (1.0, 2.0), b"\x00\x01")
    assert base == cache.key_of("qvm", (1.0, 2.0), b"\x00\x01")
    assert len(base) == 24 and all(c in "0123456789abcdef" for c in base)
    others = {
        cache.key_of("qvm", (1.0, 2.0000000001), b"\x00\x01"),
        cache.key_of("qvm", (1.0, 2.0), b"\x00\x02"),
        cache.key_of("qv", "m", (1.0, 2.0), b"\x00\x01"),  # parts are delimited
    }
    assert base not in others and len(others) == 3


def test_a_damaged_file_is_recomputed_and_removed(root):
    cache.store_arrays("kind", "k", {"x": np.ones(3)})
    (root / "kind" / "k.npz").write_bytes(b"not a zip file")
    assert cache.load_arrays("kind", "k") is None
    assert not (root / "kind" / "k.npz").exists()


def test_pickled_objects_are_not_loaded(root):
    (root / "kind").mkdir(parents=True, mode=0o700)
    root.chmod(0o700)
    np.savez(root / "kind" / "k.npz", x=np.array([{"code": 1}], dtype=object))
    assert cache.load_arrays("kind", "k") is None


@pytest.mark.parametrize("where", ["file", "folder"])
def test_a_file_others_can_write_is_not_read(root, where):
    cache.store_arrays("kind", "k", {"x": np.ones(3)})
    path = root / "kind" / "k.npz" if where == "file" else root / "kind"
    path.chmod(0o777 if where == "folder" else 0o666)
    assert cache.load_arrays("kind", "k") is None
    cache.store_arrays("kind", "k2", {"x": np.ones(3)})  # nor written into, no error
    assert (root / "kind" / "k2.npz").exists() == (where == "file")


def test_only_the_newest_files_are_kept(root):
    for i in range(5):
        cache.store_arrays("kind", f"k{i}", {"x": np.full(2, i)}, keep=3)
        os.utime(root / "kind" / f"k{i}.npz", (1000 + i, 1000 + i))
    assert sorted(p.stem for p in (root / "kind").glob("*.npz")) == ["k2", "k3", "k4"]


def test_an_unwritable_cache_keeps_nothing_and_raises_nothing(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("COLLOCNODE_CACHE", str(blocker))
    cache.store_arrays("kind", "k", {"x": np.ones(3)})
    assert cache.load_arrays("kind", "k") is None
