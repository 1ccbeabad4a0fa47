"""Compile CasADi Functions to C once and reuse the shared library from an on-disk cache.

The cache key is a hash of the generated C source, the compiler command and the CasADi version, so a
model is compiled once and every later run with the same expressions loads the library directly.
The cache lives in ``$COLLOCNODE_CACHE`` or ``$XDG_CACHE_HOME/collocnode`` (default
``~/.cache/collocnode``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import casadi as ca

# -O1: the generated node derivatives are long straight-line code; on the quarter-vehicle Hessian
# (42k instructions per node) -O1 compiled in 10 s and ran fastest, -O3 took 50 s and ran 1.7x
# slower (benchmarked with gcc 12).
CFLAGS = ("-O1", "-march=native", "-fPIC", "-shared")


def cache_dir() -> Path:
    root = os.environ.get("COLLOCNODE_CACHE")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "collocnode"


def compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        raise RuntimeError("jit=True needs a C compiler (gcc or cc on PATH, or $CC)")
    return cc


def compile_functions(
    functions: list[ca.Function], name: str = "collocnode_nodes"
) -> list[ca.Function]:
    """The same Functions, compiled to C (one shared library), loaded with ``casadi.external``."""
    gen = ca.CodeGenerator(f"{name}.c", {"with_header": False, "casadi_real": "double"})
    for f in functions:
        gen.add(f)
    source = gen.dump()
    cc = compiler()
    key = hashlib.sha256(
        "\n".join([source, cc, " ".join(CFLAGS), ca.__version__]).encode()
    ).hexdigest()[:24]
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    lib = directory / f"{name}_{key}.so"
    if not lib.exists():
        with tempfile.TemporaryDirectory(dir=directory) as tmp:
            src = Path(tmp) / f"{name}.c"
            src.write_text(source)
            out = Path(tmp) / "lib.so"
            proc = subprocess.run(
                [cc, *CFLAGS, str(src), "-o", str(out), "-lm"], capture_output=True, text=True
            )
            if proc.returncode != 0:
                raise RuntimeError(f"JIT compilation failed:\n{proc.stderr[-2000:]}")
            os.replace(out, lib)  # atomic: a concurrent run sees the whole library or none
    return [ca.external(f.name(), str(lib)) for f in functions]
