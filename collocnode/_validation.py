"""The one place where public inputs are checked.

Every public constructor and entry point validates through these helpers so that bad input
produces one clear ``ValueError`` / ``TypeError`` that names the field and the offending value.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from numbers import Integral, Real

import numpy as np


def _show(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _to_float(name: str, value: Real) -> float:
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} must be finite, got {_show(value)}") from None


def positive_int(name: str, value: object) -> int:
    """``value`` as an int > 0, or a ValueError/TypeError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be a positive integer, got {_show(value)}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def nonnegative_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {_show(value)}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return int(value)


def positive_float(name: str, value: object) -> float:
    """``value`` as a finite float > 0."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a positive number, got {_show(value)}")
    v = _to_float(name, value)
    if not np.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be a positive finite number, got {value}")
    return v


def nonnegative_float(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a non-negative number, got {_show(value)}")
    v = _to_float(name, value)
    if not np.isfinite(v) or v < 0.0:
        raise ValueError(f"{name} must be a non-negative finite number, got {value}")
    return v


def finite_float(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {_show(value)}")
    v = _to_float(name, value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value}")
    return v


def finite_array(
    name: str, value: object, ndim: int | None = None, shape: tuple[int | None, ...] | None = None
) -> np.ndarray:
    """``value`` as a float64 array, checked for finiteness and (optionally) dimension/shape.

    ``shape`` may contain ``None`` for free axes.
    """
    arr = _float_array(name, value, ndim, shape)
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        where = tuple(int(i) for i in bad)
        raise ValueError(f"{name} must be finite, found {float(arr[where])} at index {where}")
    return arr


def measured_array(
    name: str,
    value: object,
    ndim: int | None = None,
    shape: tuple[int | None, ...] | None = None,
    nan: str = "a value is missing",
) -> np.ndarray:
    """``value`` as a float64 array of finite numbers and NaN, where NaN has a meaning
    (``nan``: "a value is missing" for measurements, "it is free" for initial states); ±inf
    refused. ``ndim`` and ``shape`` as in `finite_array`."""
    arr = _float_array(name, value, ndim, shape)
    if np.any(np.isinf(arr)):
        where = tuple(int(i) for i in np.argwhere(np.isinf(arr))[0])
        raise ValueError(
            f"{name} must be finite (or NaN where {nan}), found {float(arr[where])} at index "
            f"{where}"
        )
    return arr


def real_array(
    name: str, value: object, ndim: int | None = None, shape: tuple[int | None, ...] | None = None
) -> np.ndarray:
    """``value`` as a float64 array of real numbers; ±inf allowed (bounds), NaN refused.

    ``ndim`` and ``shape`` as in `finite_array`.
    """
    arr = _float_array(name, value, ndim, shape)
    if np.any(np.isnan(arr)):
        where = tuple(int(i) for i in np.argwhere(np.isnan(arr))[0])
        raise ValueError(f"{name} must not be NaN, found nan at index {where}")
    return arr


def _float_array(
    name: str, value: object, ndim: int | None, shape: tuple[int | None, ...] | None
) -> np.ndarray:
    try:
        raw = np.asarray(value)
        if raw.dtype.kind not in "biuf":  # complex, strings, objects are not real numbers
            # an object array is accepted only if every entry is a real number: float() would
            # also turn the string "1.5" into a number
            if raw.dtype.kind != "O" or not all(_is_real(e) for e in raw.flat):
                raise TypeError
        arr = np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of real numbers, got {_show(value)}") from None
    except OverflowError:
        raise ValueError(f"{name} must be finite, got {_show(value)}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(
            s is not None and s != a for s, a in zip(shape, arr.shape, strict=True)
        ):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape)
            want += ",)" if len(shape) == 1 else ")"
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    return arr


def _is_real(value: object) -> bool:
    return isinstance(value, (Real, np.bool_))


def increasing(name: str, value: object, strict: bool = True) -> np.ndarray:
    """A finite 1-D array whose entries increase (strictly by default) and whose span
    ``value[-1] - value[0]`` is a finite float."""
    arr = finite_array(name, value, ndim=1)
    first, last = (float(arr[0]), float(arr[-1])) if arr.size else (0.0, 0.0)
    if not np.isfinite(last - first):  # Python floats: overflow gives inf, no warning
        raise ValueError(f"{name} spans [{first!r}, {last!r}], whose length overflows a float64")
    d = np.diff(arr)
    bad = np.flatnonzero(d <= 0 if strict else d < 0)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{name} must be {'strictly ' if strict else ''}increasing, "
            f"but {name}[{i}] = {float(arr[i])!r} >= {name}[{i + 1}] = {float(arr[i + 1])!r}"
            if strict
            else f"{name} must be non-decreasing, but {name}[{i}] > {name}[{i + 1}]"
        )
    return arr


def time_span(name: str, value: object) -> tuple[float, float]:
    """``value`` as a horizon ``(t0, tf)`` of finite floats with ``t0 < tf`` and a finite
    length ``tf - t0`` [s]; otherwise one ValueError/TypeError naming ``name``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a pair (t0, tf) of numbers, got {_show(value)}")
    if len(value) != 2:
        raise ValueError(f"{name} must be a pair (t0, tf), got {len(value)} values: {_show(value)}")
    t0 = finite_float(f"{name}[0]", value[0])
    tf = finite_float(f"{name}[1]", value[1])
    if not tf > t0:
        raise ValueError(f"{name} must satisfy t0 < tf, got {_show(value)}")
    if not np.isfinite(tf - t0):
        raise ValueError(f"{name} spans [{t0!r}, {tf!r}], whose length overflows a float64")
    return t0, tf


def choice(name: str, value: object, options: Iterable[str]) -> str:
    """``value`` if it is one of ``options``; otherwise a ValueError listing the valid ones."""
    opts = list(options)
    if not isinstance(value, str) or value not in opts:
        raise ValueError(f"unknown {name} {_show(value)}; valid: {', '.join(map(str, opts))}")
    return value


def optional_seed(name: str, value: object) -> int | None:
    """``value`` if it is None or an int >= 0 (a seed for ``numpy.random.default_rng``)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be None or a non-negative integer, got {_show(value)}")
    return nonnegative_int(name, value)


def function(name: str, value: object) -> Callable:
    """``value`` if it is callable; otherwise a TypeError naming ``name``."""
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {_show(value)}")
    return value


#: the longest label (a state, input or output name) accepted [characters]
MAX_LABEL_LENGTH = 256
# Unicode's Bidi_Control characters: they reorder what a terminal, an editor or a plot shows
# (a name that reads "x" may hold other text), so a label never holds one
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def label(name: str, value: object) -> str:
    """``value`` as a label that prints as what it is: a string of at most
    `MAX_LABEL_LENGTH` characters without control characters (newlines, tabs, NUL, line
    and paragraph separators) or bidirectional controls; one error naming ``name`` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {_show(value)}")
    if len(value) > MAX_LABEL_LENGTH:
        raise ValueError(
            f"{name} must have at most {MAX_LABEL_LENGTH} characters, got {len(value)} "
            f"({_show(value, 40)})"
        )
    for ch in value:
        if ch in _BIDI_CONTROLS:
            raise ValueError(
                f"{name} must not hold a bidirectional control character, got U+{ord(ch):04X} "
                f"in {_show(value)}"
            )
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            raise ValueError(
                f"{name} must not hold a control character or a line break, got "
                f"U+{ord(ch):04X} in {_show(value)}"
            )
    return value


def names(name: str, value: object, length: int | None = None) -> tuple[str, ...]:
    """``value`` as a tuple of labels (`label`: column names); empty means "no labels".

    A single string is refused rather than split into characters.
    """
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a sequence of strings, got {_show(value)}")
    labels = tuple(value)
    bad = [label for label in labels if not isinstance(label, str)]
    if bad:
        raise TypeError(f"{name} must be a sequence of strings, got {_show(bad[0])} in it")
    if length is not None and labels and len(labels) != length:
        raise ValueError(f"{name} has {len(labels)} labels for {length} columns")
    for i, text in enumerate(labels):
        label(f"{name}[{i}]", text)
    return labels


def physical_memory_bytes() -> int | None:
    """This machine's physical memory in bytes, or None where the OS does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def memory_limit_bytes() -> int | None:
    """The memory this process may still take [bytes]: the machine's physical memory, or less
    where an address-space limit (``ulimit -v``, ``RLIMIT_AS``: less what the process already
    maps) or a cgroup v2 memory limit (a container, a batch job: less what the group uses) says
    so; None where nothing is known."""
    limits = [physical_memory_bytes()]
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limits.append(max(soft - _mapped_bytes(), 0))
    except (ImportError, OSError, ValueError):
        pass
    try:
        limit = open("/sys/fs/cgroup/memory.max").read().strip()
        used = open("/sys/fs/cgroup/memory.current").read().strip()
        if limit.isdigit() and used.isdigit():
            limits.append(max(int(limit) - int(used), 0))
    except OSError:
        pass
    known = [x for x in limits if x is not None]
    return min(known) if known else None


def _mapped_bytes() -> int:
    """The address space this process maps now (Linux ``VmSize``; 0 where unknown)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def fits_in_memory(name: str, n_values: int, what: str = "values") -> int:
    """``n_values`` if that many float64 numbers fit in this machine's physical memory;
    otherwise a ValueError naming ``name``, the count and the size in GB."""
    limit = physical_memory_bytes()
    need = 8 * int(n_values)
    if limit is not None and need > limit:
        raise ValueError(
            f"{name} needs {n_values} {what} ({need / 1e9:.3g} GB as float64), more than this "
            f"machine's memory ({limit / 1e9:.3g} GB)"
        )
    return int(n_values)
