"""The parts a [`DynamicOptimizationProblem`][collocnode.DynamicOptimizationProblem] is assembled
from: known inputs u(t) ([`Inputs`][collocnode.Inputs]), constraints with bounds
([`Constraint`][collocnode.Constraint]), data terms at sample times (`Samples`), the trajectories of
a multi-trajectory problem (`Segment`) and the proximal term of consensus ADMM
([`Proximal`][collocnode.Proximal]). Each checks its own fields; how they fit the problem is checked
by `collocnode.transcription._checks`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as v

SymbolicFn = Callable[..., Any]


@dataclass(frozen=True)
class Inputs:
    """Known inputs u(t), shape (n_inputs,) at each time.

    Either a vectorised callable ``fn(t: (n,)) -> (n, n_inputs)`` (exact, e.g. a road profile) or
    samples ``(t, values)`` interpolated by a cubic spline (``kind="cubic"``, not-a-knot) or
    piecewise linearly (``kind="linear"``). Values at the collocation nodes are computed once.
    """

    n: int
    fn: Callable[[np.ndarray], np.ndarray] | None = None
    t: np.ndarray | None = None
    values: np.ndarray | None = None
    kind: str = "cubic"
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        v.nonnegative_int("inputs.n", self.n)
        if self.fn is not None:
            v.function("inputs.fn", self.fn)
        v.choice("inputs.kind", self.kind, ("cubic", "linear"))

    @classmethod
    def from_samples(
        cls, t: np.ndarray, values: np.ndarray, kind: str = "cubic", names: tuple[str, ...] = ()
    ) -> Inputs:
        t = v.increasing("inputs.t", t)
        values = v.finite_array("inputs.values", values)
        if values.ndim == 1:
            values = values[:, None]
        if values.ndim != 2 or values.shape[0] != t.size:
            raise ValueError(
                f"inputs.values must have shape ({t.size}, n_inputs) to match inputs.t, "
                f"got {values.shape}"
            )
        v.choice("inputs.kind", kind, ("cubic", "linear"))
        if kind == "cubic" and t.size < 4:
            raise ValueError(f"cubic input interpolation needs >= 4 samples, got {t.size}")
        return cls(n=values.shape[1], t=t, values=values, kind=kind, names=tuple(names))

    @classmethod
    def from_function(
        cls, fn: Callable[[np.ndarray], np.ndarray], n: int, names: tuple[str, ...] = ()
    ) -> Inputs:
        if not callable(fn):
            raise TypeError(f"inputs function must be callable, got {fn!r}")
        return cls(n=v.positive_int("n_inputs", n), fn=fn, names=tuple(names))

    @classmethod
    def none(cls) -> Inputs:
        return cls(n=0)

    def span(self) -> tuple[float, float] | None:
        return None if self.t is None else (float(self.t[0]), float(self.t[-1]))

    def __call__(self, t: np.ndarray) -> np.ndarray:
        """Inputs at times ``t`` (n,), shape (n, n_inputs)."""
        t = np.asarray(t, dtype=float)
        if self.n == 0:
            return np.zeros((t.size, 0))
        if self.fn is not None:
            out = v.finite_array("inputs(t)", self.fn(t))
            if out.size != t.size * self.n:
                raise ValueError(
                    f"inputs(t) must return shape ({t.size}, {self.n}) for {t.size} times, "
                    f"got shape {out.shape}"
                )
            out = out.reshape(t.size, self.n)
        else:
            lo, hi = self.span()  # type: ignore[misc]
            tol = 1e-9 * max(1.0, abs(hi - lo))
            if t.size and (t.min() < lo - tol or t.max() > hi + tol):
                raise ValueError(
                    f"input samples cover [{lo}, {hi}] but values are needed on "
                    f"[{t.min()}, {t.max()}]"
                )
            if self.kind == "linear":
                out = np.column_stack(
                    [np.interp(t, self.t, self.values[:, k]) for k in range(self.n)]
                )
            else:
                from scipy.interpolate import CubicSpline

                out = CubicSpline(self.t, self.values, axis=0)(np.clip(t, lo, hi))
        if not np.all(np.isfinite(out)):
            raise ValueError("inputs produced non-finite values")
        return out


@dataclass(frozen=True)
class Constraint:
    """``lb <= fn(...) <= ub`` with ``n`` components; equality where lb == ub."""

    fn: SymbolicFn
    n: int
    lb: np.ndarray
    ub: np.ndarray

    def __post_init__(self) -> None:
        v.function("constraint.fn", self.fn)
        n = v.positive_int("constraint.n", self.n)
        object.__setattr__(self, "lb", v.real_array("constraint.lb", self.lb, shape=(n,)))
        object.__setattr__(self, "ub", v.real_array("constraint.ub", self.ub, shape=(n,)))

    @classmethod
    def make(cls, name: str, fn: SymbolicFn, n: int, lb: Any = 0.0, ub: Any = 0.0) -> Constraint:
        if not callable(fn):
            raise TypeError(f"{name} must be callable, got {fn!r}")
        n = v.positive_int(f"{name}.n", n)
        lo = np.broadcast_to(np.asarray(lb, dtype=float), (n,)).copy()
        hi = np.broadcast_to(np.asarray(ub, dtype=float), (n,)).copy()
        if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
            raise ValueError(f"{name} bounds must satisfy lb <= ub, got lb={lo}, ub={hi}")
        return cls(fn=fn, n=n, lb=lo, ub=hi)


@dataclass(frozen=True)
class Samples:
    """Data terms at given times of one trajectory: ``Σ_s w_s ℓ(x(t_s), p, u(t_s), t_s, d_s)``
    with the problem's ``sample_loss`` ℓ.

    x(t_s) is the state polynomial of the collocation interval that holds t_s (barycentric
    Lagrange interpolation over its m + 1 points), so each term depends only on that interval's
    node states and on p.

    Attributes:
        t: sample times, shape ``(n,)`` [s], inside the trajectory's horizon, in any order
            (repeated times are allowed).
        data: the constants d_s handed to ℓ, shape ``(n, n_data)`` (e.g. the measured values and
            per-column weights).
        weights: w_s >= 0, shape ``(n,)``; default ones.
    """

    t: np.ndarray
    data: np.ndarray
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        t = v.finite_array("samples.t", self.t, ndim=1)
        if t.size == 0:
            raise ValueError("samples.t must hold at least one time, got an empty array")
        data = v.finite_array("samples.data", self.data)
        if data.ndim == 1:
            data = data[:, None]
        if data.ndim != 2 or data.shape[0] != t.size:
            raise ValueError(
                f"samples.data must have shape ({t.size}, n_data) to match samples.t, "
                f"got {data.shape}"
            )
        w = (
            np.ones(t.size)
            if self.weights is None
            else v.finite_array("samples.weights", self.weights, shape=(t.size,))
        )
        if np.any(w < 0):
            i = int(np.flatnonzero(w < 0)[0])
            raise ValueError(f"samples.weights must be >= 0, got samples.weights[{i}] = {w[i]!r}")
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "weights", w)

    @property
    def n(self) -> int:
        return int(self.t.size)

    @property
    def n_data(self) -> int:
        return int(self.data.shape[1])

    def inside(self, name: str, t0: float, tf: float) -> Samples:
        """These samples checked to lie in ``[t0, tf]`` (times within 1e-9 of the span outside
        it are moved onto the end); a ValueError naming ``name`` and the first time outside."""
        tol = 1e-9 * max(1.0, tf - t0)
        bad = np.flatnonzero((self.t < t0 - tol) | (self.t > tf + tol))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"{name}.t[{i}] = {float(self.t[i])!r} lies outside the horizon [{t0!r}, {tf!r}]"
            )
        return Samples(np.clip(self.t, t0, tf), self.data, self.weights)


@dataclass(frozen=True)
class Segment:
    """One trajectory of a multi-trajectory problem: its horizon, known inputs, optional fixed
    initial state and state guess, and its data terms (`Samples`, or None). All
    segments share the parameters p."""

    tspan: tuple[float, float]
    inputs: Inputs = field(default_factory=Inputs.none)
    x0: Any = None
    x_guess: Any = None
    samples: Samples | None = None


@dataclass(frozen=True)
class Proximal:
    """A proximal term ½ ρ Σ_i (z_i − c_i)² on some unknowns of the NLP: the pull of consensus
    ADMM toward the consensus value (Boyd et al. 2011, §7.2).

    Args:
        rho: the penalty ρ > 0, per squared unknown (NLP units).
        params: the centre of the parameters, (n_params,), or None for no pull on them.
        initial, final: the centre of the first and of the last node's states in the NLP's
            scaled units (x / x_nominal), (n_states,), or None; only on a problem with one
            trajectory.
    """

    rho: float
    params: np.ndarray | None = None
    initial: np.ndarray | None = None
    final: np.ndarray | None = None

    def __post_init__(self) -> None:
        v.positive_float("rho", self.rho)
        for name in ("params", "initial", "final"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, v.finite_array(f"proximal.{name}", value))

    def indices(self, n_nodes: int, width: int) -> np.ndarray:
        """The NLP indices of the pulled unknowns for a problem with ``n_nodes`` nodes of
        ``width`` unknowns each, parameters after them
        (`collocnode.transcription._nlp.structured`)."""
        parts = []
        if self.params is not None:
            parts.append(n_nodes * width + np.arange(self.params.size))
        if self.initial is not None:
            parts.append(np.arange(self.initial.size))
        if self.final is not None:
            parts.append((n_nodes - 1) * width + np.arange(self.final.size))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=int)

    def center(self) -> np.ndarray:
        """The centre of the pulled unknowns, in the order of
        [`indices`][collocnode.Proximal.indices]."""
        parts = [c for c in (self.params, self.initial, self.final) if c is not None]
        return np.concatenate(parts) if parts else np.zeros(0)
