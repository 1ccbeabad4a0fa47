"""Fixed-step integrators, written once for numpy arrays and torch tensors.

Used by MBD-NODE (one-step training loss, MBD-NODE eq. 17), by the FNODE rollout (FNODE eq. 9)
and by the metrics. Each integrator advances ``x' = f(t, x)`` by one step ``h``; states have shape
``(..., n_states)`` and ``f`` must accept and return that shape. Second-order systems order their
state as ``[q, q']`` with ``n_coords`` positions; only the leapfrog scheme needs to know that.

The stages are the textbook ones (Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.1). The MBD-NODE
reference code's RK4 reuses the stage-2 velocity in stages 3 and 4 and is only first order; the
convergence-order test in ``tests/test_fixed_step.py`` guards against that class of bug.
That scheme is also available, under the name ``"rk4_mbdnode_code"`` and with its true order 1,
so that the effect of the bug on the published MBD-NODE numbers can be measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v

Field = Callable[[float, Any], Any]


class DivergenceError(FloatingPointError):
    """A rollout left the finite range.

    Attributes:
        step: index of the first sample that is non-finite or beyond the blow-up bound.
        t: its time [s].
        partial: the rollout up to (excluding) that sample, shape ``(step, n_states)``.
    """

    def __init__(self, step: int, t: float, partial: np.ndarray | None = None, why: str = ""):
        self.step = int(step)
        self.t = float(t)
        self.partial = partial
        reason = f" ({why})" if why else ""
        super().__init__(f"rollout diverged at step {self.step} (t = {self.t:.6g} s){reason}")


def _cat(a: Any, b: Any) -> Any:
    if isinstance(a, np.ndarray):
        return np.concatenate([a, b], axis=-1)
    import torch

    return torch.cat([a, b], dim=-1)


@dataclass(frozen=True)
class Integrator:
    """One explicit one-step scheme: ``name``, classical ``order``, and whether it is symplectic
    and needs the second-order state layout."""

    name: str
    order: int
    symplectic: bool = False
    second_order_only: bool = False

    def step(self, f: Field, t: float, x: Any, h: float, n_coords: int = 0) -> Any:
        raise NotImplementedError

    def _split(self, x: Any, n_coords: int) -> tuple[Any, Any]:
        """``(q, q')`` of a second-order state ``[q, q']``; a ValueError otherwise."""
        if n_coords <= 0 or 2 * n_coords != x.shape[-1]:
            raise ValueError(
                f"{self.name} needs a second-order state [q, q'] with n_coords = n_states / 2, "
                f"got n_coords={n_coords} for {x.shape[-1]} states"
            )
        return x[..., :n_coords], x[..., n_coords:]


class _Euler(Integrator):
    def step(self, f: Field, t: float, x: Any, h: float, n_coords: int = 0) -> Any:
        return x + h * f(t, x)


class _Midpoint(Integrator):
    # explicit midpoint rule: x1 = x + h f(t + h/2, x + h/2 f(t, x))
    def step(self, f: Field, t: float, x: Any, h: float, n_coords: int = 0) -> Any:
        k1 = f(t, x)
        return x + h * f(t + 0.5 * h, x + 0.5 * h * k1)


class _RK4(Integrator):
    def step(self, f: Field, t: float, x: Any, h: float, n_coords: int = 0) -> Any:
        k1 = f(t, x)
        k2 = f(t + 0.5 * h, x + 0.5 * h * k1)
        k3 = f(t + 0.5 * h, x + 0.5 * h * k2)
        k4 = f(t + h, x + h * k3)
        return x + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


class _RK4MBDNODECode(Integrator):
    """The "RK4" of the MBD-NODE released code (``Model/Integrator.py``), for ``q'' = a``.

    Its stages 3 and 4 move the positions but keep the stage-2 velocity ``v2 = v + h/2 a1``:
    ``a2 = a(q + h/2 v, v2)``, ``a3 = a(q + h/2 v2, v2)``, ``a4 = a(q + h v2, v2)``, then
    ``q1 = q + h (v + 5 v2) / 6`` and ``v1 = v + h (a1 + 2 a2 + 2 a3 + a4) / 6``. The position
    update is ``q + h v + 5/12 h² a`` against the exact ``1/2 h² a``: first order.
    """

    def step(self, f: Field, t: float, x: Any, h: float, n_coords: int = 0) -> Any:
        q, v = self._split(x, n_coords)
        a1 = f(t, x)[..., n_coords:]
        v2 = v + 0.5 * h * a1
        a2 = f(t + 0.5 * h, _cat(q + 0.5 * h * v, v2))[..., n_coords:]
        a3 = f(t + 0.5 * h, _cat(q + 0.5 * h * v2, v2))[..., n_coords:]
        a4 = f(t + h, _cat(q + h * v2, v2))[..., n_coords:]
        q1 = q + (h / 6.0) * (v + 5.0 * v2)
        return _cat(q1, v + (h / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4))


class _Leapfrog(Integrator):
    """Störmer–Verlet in kick-drift-kick form for ``q'' = a(t, q, q')``.

    When ``a`` does not depend on ``q'`` this is exactly velocity Verlet (symplectic, order 2).
    Learned accelerations take ``q'`` as an input, so the closing half-kick is evaluated at the
    Euler-predicted velocity ``v + h a0``: its O(h²) error enters multiplied by h/2, which keeps
    the scheme second order for velocity-dependent (e.g. damped) fields while staying explicit.
    """

    def step(self, f: Field, t: float, x: Any, h: float, n_coords: int = 0) -> Any:
        q, p = self._split(x, n_coords)
        a0 = f(t, x)[..., n_coords:]
        p_half = p + 0.5 * h * a0
        q1 = q + h * p_half
        a1 = f(t + h, _cat(q1, p + h * a0))[..., n_coords:]
        return _cat(q1, p_half + 0.5 * h * a1)


EULER = _Euler("euler", order=1)
MIDPOINT = _Midpoint("midpoint", order=2)
RK4 = _RK4("rk4", order=4)
LEAPFROG = _Leapfrog("leapfrog", order=2, symplectic=True, second_order_only=True)
RK4_MBDNODE_CODE = _RK4MBDNODECode("rk4_mbdnode_code", order=1, second_order_only=True)

INTEGRATORS: dict[str, Integrator] = {
    i.name: i for i in (EULER, MIDPOINT, RK4, LEAPFROG, RK4_MBDNODE_CODE)
}


def get_integrator(name: str) -> Integrator:
    """The integrator called ``name``; a ValueError lists the valid names."""
    return INTEGRATORS[v.choice("integrator", name, INTEGRATORS)]


def check_integrator(name: str, n_coords: int) -> Integrator:
    """``get_integrator(name)``, refusing leapfrog for a first-order system."""
    method = get_integrator(name)
    if method.second_order_only and n_coords <= 0:
        raise ValueError(
            f"integrator {name!r} needs a second-order system (state [q, q']); "
            f"use one of: {', '.join(k for k, m in INTEGRATORS.items() if not m.second_order_only)}"
        )
    return method


def integrate(
    f: Field,
    t: Sequence[float] | np.ndarray,
    x0: Any,
    method: str | Integrator = "rk4",
    n_coords: int = 0,
    substeps: int = 1,
    blowup: float = 1e8,
    post_step: Callable[[Any], Any] | None = None,
) -> Any:
    """Roll ``x' = f(t, x)`` out from ``x0`` over the grid ``t`` (``(n,)``, increasing, may be
    non-uniform), taking ``substeps`` equal steps per grid interval.

    Returns the states at ``t``, shape ``(n, *x0.shape)``, as the same kind of array as ``x0``.
    ``post_step`` maps the state after every grid interval (e.g. a projection). Raises
    `DivergenceError` at the first sample that is non-finite or whose largest entry exceeds
    ``blowup`` in magnitude, carrying the samples before it.
    """
    scheme = method if isinstance(method, Integrator) else check_integrator(method, n_coords)
    grid = v.increasing("t", t)
    substeps = v.positive_int("substeps", substeps)
    is_np = isinstance(x0, np.ndarray)
    if is_np:
        stack = np.stack
    else:
        import torch

        stack = torch.stack
    out = [x0]
    x = x0
    for k in range(grid.size - 1):
        h = (grid[k + 1] - grid[k]) / substeps
        for s in range(substeps):
            x = scheme.step(f, float(grid[k] + s * h), x, float(h), n_coords)
        if post_step is not None:
            x = post_step(x)
        if not _finite(x) or _max_abs(x) > blowup:
            part = stack(out)
            part = part if is_np else part.detach().cpu().numpy()
            why = "non-finite state" if not _finite(x) else f"|x| > {blowup:g}"
            raise DivergenceError(k + 1, grid[k + 1], part, why)
        out.append(x)
    return stack(out)


def _finite(x: Any) -> bool:
    if isinstance(x, np.ndarray):
        return bool(np.all(np.isfinite(x)))
    import torch

    return bool(torch.isfinite(x).all())


def _max_abs(x: Any) -> float:
    if x.size == 0 if isinstance(x, np.ndarray) else x.numel() == 0:
        return 0.0
    return float(abs(x).max())
