"""The interface every benchmark system implements, written once."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

from .. import _validation as v
from ..data import Trajectory


@dataclass(frozen=True)
class Split:
    """A training window and an extrapolation (test) window of one trajectory."""

    train: Trajectory
    test: Trajectory
    full: Trajectory


class System(ABC):
    """A dynamical system ``x' = f(t, x, u)`` with its ground truth and its data.

    Subclasses set the class attributes and implement :meth:`rhs`. Everything else has a default
    that subclasses override where the system has more structure (constraints, invariants,
    second-order form, inputs, a closed-form solution).

    Conventions:
        * states ``x`` have shape ``(n_states,)``; batched calls accept ``(..., n_states)``;
        * a second-order system (``n_coords > 0``) orders its state as ``[q, q']`` with
          ``q`` of length ``n_coords``; :meth:`acceleration` returns ``q''``;
        * known inputs ``u(t)`` have shape ``(n_inputs,)``;
        * times in seconds, SI units throughout.
    """

    name: str = ""
    preset: str = "default"
    state_names: tuple[str, ...] = ()
    input_names: tuple[str, ...] = ()
    n_coords: int = 0  # > 0 for second-order systems: state = [q (n_coords), q' (n_coords)]
    dt: float = 0.01  # default sampling step [s]
    n_steps: int = 400  # default number of samples
    n_train: int = 300  # samples in the training window (the rest is extrapolation)

    # preset name -> parameter values; the first preset is the default and follows the paper text
    PRESETS: dict[str, dict[str, float]] = {"default": {}}
    # parameters that must be > 0 (masses, lengths, ...); checked by the constructor
    POSITIVE: tuple[str, ...] = ()

    def __init__(self, preset: str | None = None, **overrides: float) -> None:
        preset = next(iter(self.PRESETS)) if preset is None else preset
        v.choice(f"preset of {self.name}", preset, self.PRESETS)
        self.preset = preset
        params = dict(self.PRESETS[preset])
        for key, value in overrides.items():
            if key not in params:
                raise ValueError(
                    f"unknown parameter {key!r} of {self.name}; valid: {', '.join(params)}"
                )
            params[key] = v.finite_float(key, value)
        for key in self.POSITIVE:
            if key in params:
                v.positive_float(key, params[key])
        self.params: dict[str, float] = params

    # --- dynamics ----------------------------------------------------------------------------
    @property
    def n_states(self) -> int:
        return len(self.state_names)

    @property
    def n_inputs(self) -> int:
        return len(self.input_names)

    @abstractmethod
    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        """``x'`` for state ``x`` (shape ``(..., n_states)``) at time ``t`` with input ``u``."""

    def casadi_rhs(self, x: Any, u: Any, t: Any) -> Any:
        """The same right-hand side written with CasADi symbols (SX/MX column vectors).

        Needed for hybrid models and derivative checks; systems that have it override this.
        """
        raise NotImplementedError(f"{self.name} has no CasADi right-hand side")

    def inputs(self, t: np.ndarray | float) -> np.ndarray:
        """Known inputs at ``t``: shape ``(n_inputs,)`` for scalar t, ``(len(t), n_inputs)``."""
        t = np.asarray(t, dtype=float)
        return np.zeros((*t.shape, self.n_inputs))

    def acceleration(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        """``q''`` of a second-order system; shape ``(..., n_coords)``."""
        if not self.n_coords:
            raise ValueError(f"{self.name} is not a second-order system")
        return self.rhs(t, x, u)[..., self.n_coords :]

    # --- structure -----------------------------------------------------------------------------
    @property
    def n_constraints(self) -> int:
        return 0

    def constraints(self, x: np.ndarray, t: float = 0.0) -> np.ndarray:
        """Holonomic (or other) constraints g(x) = 0; shape ``(..., n_constraints)``."""
        return np.zeros((*np.shape(x)[:-1], 0))

    def constraint_jacobian(self, x: np.ndarray, t: float = 0.0) -> np.ndarray:
        """dg/dx, shape ``(n_constraints, n_states)`` for one state."""
        return np.zeros((0, self.n_states))

    def invariants(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Conserved quantities (energy, momentum, Casimir) along trajectories; name -> (...)."""
        return {}

    def exact_solution(self, t: np.ndarray, x0: np.ndarray) -> np.ndarray | None:
        """Closed-form solution at ``t`` (shape ``(len(t), n_states)``), or None."""
        return None

    # --- ground truth and data -------------------------------------------------------------------
    @property
    def x0(self) -> np.ndarray:
        """Default initial state."""
        raise NotImplementedError

    def time_grid(
        self, n_steps: int | None = None, dt: float | None = None, t0: float = 0.0
    ) -> np.ndarray:
        n = v.positive_int("n_steps", self.n_steps if n_steps is None else n_steps)
        h = v.positive_float("dt", self.dt if dt is None else dt)
        return t0 + h * np.arange(n)

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray | None = None,
        rtol: float = 1e-12,
        atol: float = 1e-12,
        method: str = "DOP853",
    ) -> Trajectory:
        """Ground truth on the grid ``t`` (closed form when available, else scipy at ``rtol``)."""
        t = v.increasing("t", t)
        x0 = self.x0 if x0 is None else v.finite_array("x0", x0, shape=(self.n_states,))
        x = self.exact_solution(t, x0)
        if x is None:
            sol = solve_ivp(
                lambda tt, xx: self.rhs(tt, xx, self.inputs(tt) if self.n_inputs else None),
                (t[0], t[-1]),
                x0,
                method=method,
                t_eval=t,
                rtol=rtol,
                atol=atol,
            )
            if not sol.success:
                raise RuntimeError(f"ground truth of {self.name} failed: {sol.message}")
            x = sol.y.T
        return Trajectory(
            t=t,
            x=x,
            u=self.inputs(t) if self.n_inputs else None,
            state_names=self.state_names,
            input_names=self.input_names,
            params=dict(self.params),
        )

    def generate(
        self,
        noise: float = 0.0,
        seed: int | None = None,
        n_steps: int | None = None,
        n_train: int | None = None,
        dt: float | None = None,
        x0: np.ndarray | None = None,
    ) -> Split:
        """Ground-truth trajectory with optional Gaussian state noise, split into train/test.

        The noise (std ``noise``) is added to every state; the ``test`` window keeps the same
        noise realisation as ``full``. Use :meth:`simulate` for noise-free references.
        """
        noise = v.nonnegative_float("noise", noise)
        t = self.time_grid(n_steps, dt)
        n_tr = v.positive_int("n_train", self.n_train if n_train is None else n_train)
        if n_tr > t.size:
            raise ValueError(f"n_train must be <= n_steps = {t.size}, got {n_tr}")
        full = self.simulate(t, x0)
        if noise > 0:
            full = full.with_noise(noise, seed=seed)
        test = full.tail(n_tr - 1) if n_tr < t.size else full.tail(t.size - 1)
        return Split(train=full.head(n_tr), test=test, full=full)

    def __repr__(self) -> str:
        ps = ", ".join(f"{k}={val:g}" for k, val in self.params.items())
        return f"{type(self).__name__}(name={self.name!r}, preset={self.preset!r}, {ps})"
