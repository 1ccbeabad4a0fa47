"""Compile CasADi Functions to C once and reuse the shared library from an on-disk cache.

The cache key is a hash of the generated C source, the compiler command and the CasADi version, so a
model is compiled once and every later run with the same expressions loads the library directly.
The cache is the project's on-disk cache (`collocnode.tools._cache`): ``$COLLOCNODE_CACHE`` or
``$XDG_CACHE_HOME/collocnode`` (default ``~/.cache/collocnode``).

Loading a shared library runs its code, so a library is loaded only from a cache directory that
belongs to the current user and that no one else can write to (it is created with mode 0700), and
only if the library file itself belongs to the user and is not writable by group or others.
Anything else, a failed compilation, a missing compiler or an unwritable cache raises
`JITError`. A cached library that cannot be loaded (truncated or overwritten on disk) is
compiled again, with one `JITCacheWarning` line.

``jit="auto"`` compiles only where it pays (`jit_functions`): a library already in the cache is
loaded; otherwise the functions are compiled now when the evaluations they will serve are
estimated to save more than the compilation costs, and else they are used as CasADi builds them
while a compiler process of its own, detached from this one, writes the library into the cache
for the next run. No compiler, or a cache that is not safe, leaves the functions uncompiled.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import stat
import subprocess
import tempfile
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Literal

import casadi as ca

from ...tools._cache import cache_dir, unsafe
from .node_functions import BoundaryFunctions, NodeFunctions, SampleFunctions

# -O1: the generated node derivatives are long straight-line code; on the quarter-vehicle Hessian
# (42k instructions per node) -O1 compiled in 10 s and ran fastest, -O3 took 50 s and ran 1.7x
# slower (benchmarked with gcc 12).
CFLAGS = ("-O1", "-march=native", "-fPIC", "-shared")

#: what ``jit`` may be: compile (True), never (False), or only where it pays ("auto")
Jit = bool | Literal["auto"]
AUTO = "auto"
#: the iterations a solve that uses the functions is expected to take (a warm-started one: the
#: Van der Pol default takes 8, the quarter vehicle's 16); the cost estimate's multiplier
EXPECTED_ITERATIONS = 20
#: a background compilation younger than this [s] is taken to be still running
BACKGROUND_FRESH = 600.0

_log = logging.getLogger(__name__)
_started: set[Path] = set()  # the libraries this process has begun compiling in the background

_FIX = "set COLLOCNODE_CACHE to a directory only you can write to, or compile with jit=False"


class JITError(RuntimeError):
    """The JIT compilation cannot be used: no compiler, a failed compilation, or a cache
    directory or library that is unwritable or not safe to load from.

    The first line of the message says what and where in one line; for a failed compilation
    the tail of the compiler's stderr follows on later lines. ``errno`` is the operating
    system's error code where a file operation failed (a full disk: ``ENOSPC``), else None.
    """

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


class JITCacheWarning(UserWarning):
    """A cached JIT library could not be loaded and was compiled again."""


def compiler() -> str:
    """The C compiler: ``$CC``, else gcc or cc on PATH."""
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        raise JITError("jit=True needs a C compiler (gcc or cc on PATH, or $CC)")
    return cc


def safe_cache_dir() -> Path:
    """`cache_dir`, created with mode 0700 if missing, after checking that it belongs to
    the current user and is not writable by group or others.

    Raises:
        JITError: the directory cannot be created, is not a directory, or is not safe.
    """
    directory = cache_dir()
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = directory.stat()
    except OSError as exc:
        raise JITError(
            f"cannot create the JIT cache directory {str(directory)!r} ({exc.strerror or exc}); "
            f"{_FIX}",
            exc.errno,
        ) from None
    if not stat.S_ISDIR(st.st_mode):
        raise JITError(f"the JIT cache {str(directory)!r} is not a directory; {_FIX}")
    why = unsafe(st)
    if why:
        raise JITError(
            f"refusing to load compiled code from the JIT cache directory {str(directory)!r}: it "
            f"{why}; run chmod 700 on it if it is yours, or {_FIX}"
        )
    return directory


def _check_library(lib: Path) -> None:
    st = lib.lstat()  # a link is refused: what it points to was not checked
    if not stat.S_ISREG(st.st_mode):
        raise JITError(f"refusing to load {str(lib)!r}: not a regular file; delete it or {_FIX}")
    why = unsafe(st)
    if why:
        raise JITError(f"refusing to load {str(lib)!r}: it {why}; delete it or {_FIX}")


def check_jit(value: object) -> Jit:
    """``value`` if it is a ``jit`` choice (True, False, "auto"), else TypeError naming it."""
    if isinstance(value, bool) or value == AUTO:
        return value  # type: ignore[return-value]
    raise TypeError(f"jit must be True, False or 'auto', got {value!r}")


def jit_functions(
    functions: list[ca.Function], name: str, jit: Jit, pays: bool
) -> list[ca.Function]:
    """``functions`` as ``jit`` says: compiled (True), as they are (False), or with "auto"
    compiled where it pays: from the cache when the library is there, compiled now when
    ``pays`` (the caller's estimate that the evaluations save more than the compilation
    costs), else as they are while a detached compiler process fills the cache.

    Raises:
        JITError: with ``jit=True`` only, as `compile_functions`.
        TypeError: ``jit`` is none of True, False, "auto".
    """
    jit = check_jit(jit)
    if jit is True:
        return compile_functions(functions, name)
    if jit is False:
        return functions
    try:
        cc, source, lib = _source(functions, name)
        if os.path.lexists(lib) or pays:
            return _compiled(functions, name, cc, source, lib)
        _compile_in_background(cc, source, name, lib)
    except JITError as exc:  # auto: no compiler, or no safe cache, is no error
        _log.info("jit='auto' leaves %s uncompiled: %s", name, str(exc).splitlines()[0])
    return functions


def pays(
    points: int,
    seconds_per_point: float,
    compile_seconds: float,
    iterations: int = EXPECTED_ITERATIONS,
) -> bool:
    """Whether compiling pays: ``points`` evaluation points (collocation nodes, samples) each
    saving ``seconds_per_point`` per iteration over ``iterations``, against
    ``compile_seconds``."""
    return points * iterations * seconds_per_point > compile_seconds


def compile_functions(
    functions: list[ca.Function], name: str = "collocnode_nodes"
) -> list[ca.Function]:
    """The same Functions, compiled to C (one shared library), loaded with ``casadi.external``.

    Raises:
        JITError: no compiler, a failed compilation, or an unwritable or unsafe cache.
    """
    cc, source, lib = _source(functions, name)
    return _compiled(functions, name, cc, source, lib)


def _source(functions: list[ca.Function], name: str) -> tuple[str, str, Path]:
    """The compiler, the generated C source and the library's path in the cache (its name
    carries the hash of the source, the compiler, the flags and CasADi's version)."""
    gen = ca.CodeGenerator(f"{name}.c", {"with_header": False, "casadi_real": "double"})
    for f in functions:
        gen.add(f)
    source = gen.dump()
    cc = compiler()
    key = hashlib.sha256(
        "\n".join([source, cc, " ".join(CFLAGS), ca.__version__]).encode()
    ).hexdigest()[:24]
    return cc, source, safe_cache_dir() / f"{name}_{key}.so"


def _compiled(
    functions: list[ca.Function], name: str, cc: str, source: str, lib: Path
) -> list[ca.Function]:
    """The functions loaded from ``lib``, compiled first where it is not in the cache."""
    directory = lib.parent
    if not os.path.lexists(lib):
        _compile(cc, source, name, directory, lib)
    _check_library(lib)
    try:
        return _load(functions, lib)
    except RuntimeError as exc:  # a damaged file in the cache: ours to replace
        warnings.warn(
            f"the cached JIT library {str(lib)!r} cannot be loaded ({_load_error(exc, lib)}); "
            "compiling it again",
            JITCacheWarning,
            stacklevel=2,
        )
    with contextlib.suppress(FileNotFoundError):
        lib.unlink()
    _compile(cc, source, name, directory, lib)
    _check_library(lib)
    try:
        return _load(functions, lib)
    except RuntimeError as exc:
        raise JITError(
            f"the JIT library {str(lib)!r} was compiled but cannot be loaded: "
            f"{_load_error(exc, lib)}"
        ) from None


def _load(functions: list[ca.Function], lib: Path) -> list[ca.Function]:
    return [ca.external(f.name(), str(lib)) for f in functions]


def _load_error(exc: BaseException, lib: Path) -> str:
    """Why the dynamic loader refused ``lib``, from CasADi's message (which lists every
    directory it searched): the loader's words for the path itself, e.g. "file too short"."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    own = f"Error code: {lib}:"
    for line in lines:
        if line.startswith(own):
            return line[len(own) :].strip()[:200]
    return (lines[0] if lines else type(exc).__name__)[:200]


def compile_derivatives(
    node: NodeFunctions,
    bnd: BoundaryFunctions,
    samples: list[SampleFunctions],
    jit: Jit = True,
    pays: bool = True,
) -> tuple[NodeFunctions, BoundaryFunctions, list[SampleFunctions]]:
    """The same functions with their derivative Functions compiled (one shared library): the
    first and second derivatives, the Lagrangian's gradient and the fused values-and-first
    derivatives (which only the callbacks evaluate, never nlpsol's own graph).

    Only these functions are compiled: nlpsol differentiates the f/g graph (for its
    internal ``nlp_grad``), which needs symbolic value functions. ``jit`` and ``pays`` as for
    `jit_functions`."""
    names = [k for k in ("first", "second", "lag_grad", "fused") if getattr(node, k) is not None]
    sample_names = ("first", "second", "fused")
    sample_fns = [getattr(s, k) for s in samples for k in sample_names if getattr(s, k) is not None]
    *compiled, bf, bs = jit_functions(
        [*(getattr(node, k) for k in names), *sample_fns, bnd.first, bnd.second],
        "collocnode_nodes",
        jit,
        pays,
    )
    node = replace(node, **dict(zip(names, compiled[: len(names)], strict=True)))
    compiled_samples = iter(compiled[len(names) :])
    samples = [
        replace(
            s,
            **{k: next(compiled_samples) for k in sample_names if getattr(s, k) is not None},
        )
        for s in samples
    ]
    return node, replace(bnd, first=bf, second=bs), samples


def _compile_in_background(cc: str, source: str, name: str, lib: Path) -> None:
    """Start compiling ``source`` into ``lib`` in a process of its own session, which outlives
    this one: it writes into a private folder of the cache and renames the library into place
    (atomic: a run sees the whole library or none), then removes the folder. Once per library
    and process, and not while another run's compilation of it is fresh."""
    if lib in _started:
        return
    prefix = f".{lib.stem}-"
    now = time.time()
    for other in lib.parent.glob(prefix + "*"):
        with contextlib.suppress(OSError):
            if now - other.stat().st_mtime < BACKGROUND_FRESH:
                return
    _started.add(lib)
    try:
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir=lib.parent))
        src = folder / f"{name}.c"
        src.write_text(source)
    except OSError as exc:
        raise JITError(
            f"cannot write to the JIT cache directory {str(lib.parent)!r} ({exc.strerror or exc})"
        ) from None
    out = folder / "lib.so"
    script = (
        f'if "$0" {" ".join(CFLAGS)} "$1" -o "$2" -lm; then chmod 755 "$2" && mv -f "$2" "$3"; '
        'fi; rm -rf "$4"'
    )
    # at a lower priority: on a machine without a free core the run itself goes first
    nice = [found, "-n", "10"] if (found := shutil.which("nice")) else []
    try:
        subprocess.Popen(
            [*nice, "sh", "-c", script, cc, str(src), str(out), str(lib), str(folder)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise JITError(f"cannot start the C compiler {cc!r} ({exc.strerror or exc})") from None
    _log.info("compiling %s in the background for later runs: %s", name, lib)


def _compile(cc: str, source: str, name: str, directory: Path, lib: Path) -> None:
    try:
        with tempfile.TemporaryDirectory(dir=directory) as tmp:
            src = Path(tmp) / f"{name}.c"
            src.write_text(source)
            out = Path(tmp) / "lib.so"
            try:
                proc = subprocess.run(
                    [cc, *CFLAGS, str(src), "-o", str(out), "-lm"], capture_output=True, text=True
                )
            except OSError as exc:  # $CC names no runnable program
                raise JITError(
                    f"cannot run the C compiler {cc!r} ({exc.strerror or exc})"
                ) from None
            if proc.returncode != 0 or not out.is_file():
                tail = proc.stderr[-2000:].strip()
                raise JITError(
                    f"JIT compilation of {name} with {cc!r} failed (exit status "
                    f"{proc.returncode})" + (f"; compiler output:\n{tail}" if tail else "")
                )
            os.chmod(out, 0o755)  # whatever the umask: not writable by group or others
            os.replace(out, lib)  # atomic: a concurrent run sees the whole library or none
    except OSError as exc:
        raise JITError(
            f"cannot write to the JIT cache directory {str(directory)!r} "
            f"({exc.strerror or exc}); {_FIX}",
            exc.errno,
        ) from None
