"""The interface every benchmark system implements, written once.

`System` is an ODE ``x' = f(t, x, u)`` with its ground truth and data generation;
`HolonomicSystem` adds the multibody form ``M q'' + Φ_qᵀ λ = Q``, ``Φ(q) = 0`` whose ground
truth is integrated in minimal (independent) coordinates with the dependent ones recovered by
coordinate partitioning (`collocnode.problems._partition`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._data import Trajectory
from ..tools import _fixed_step as fixed_step
from ..tools._ivp import MAX_STEPS, SimulationError, solve_bounded
from . import _partition as partition

InputFn = Callable[[float], np.ndarray]

_SAMPLING_FIELDS = ("dt", "n_steps", "n_train")


@dataclass(frozen=True)
class Split:
    """A training window and an extrapolation (test) window of one trajectory."""

    train: Trajectory
    test: Trajectory
    full: Trajectory


class System(ABC):
    """A dynamical system ``x' = f(t, x, u)`` with its ground truth and its data.

    Subclasses set the class attributes and implement `rhs`. Everything else has a default
    that subclasses override where the system has more structure (constraints, invariants,
    second-order form, inputs, a closed-form solution).

    Conventions:
        * states ``x`` have shape ``(n_states,)``; batched calls accept ``(..., n_states)``;
        * a second-order system (``n_coords > 0``) orders its state as ``[q, q']`` with
          ``q`` of length ``n_coords``; `acceleration` returns ``q''``;
        * known inputs ``u(t)`` have shape ``(n_inputs,)``;
        * times in seconds, SI units throughout.

    Constructor keywords are parameter overrides (names from the preset) plus the sampling fields
    ``dt``, ``n_steps`` and ``n_train``; presets listed in ``SAMPLING`` change the sampling too.
    """

    name: str = ""
    preset: str = "default"
    state_names: tuple[str, ...] = ()
    input_names: tuple[str, ...] = ()
    n_coords: int = 0  # > 0 for second-order systems: state = [q (n_coords), q' (n_coords)]
    dt: float = 0.01  # default sampling step [s]
    n_steps: int = 400  # default number of samples
    n_train: int = 300  # samples in the training window (the rest is extrapolation)
    max_steps: int = MAX_STEPS  # step budget of the ground-truth integrator

    # preset name -> parameter values; the first preset is the default and follows the paper text
    PRESETS: dict[str, dict[str, float]] = {"default": {}}
    # preset name -> sampling that differs from the class defaults ({"dt", "n_steps", "n_train"})
    SAMPLING: dict[str, dict[str, float]] = {}
    # preset name -> the fixed-step scheme of `collocnode.tools._fixed_step` that produced that
    # preset's published data (one step per sample interval); the ground truth of such a preset
    # is that scheme's solution, not the ODE's
    GENERATORS: dict[str, str] = {}
    # parameters that must be > 0 (masses, lengths, ...); checked by the constructor
    POSITIVE: tuple[str, ...] = ()
    # parameters that must be >= 0 (damping, friction, ...); checked by the constructor
    NONNEGATIVE: tuple[str, ...] = ()

    def __init__(self, preset: str | None = None, **overrides: float) -> None:
        preset = next(iter(self.PRESETS)) if preset is None else preset
        v.choice(f"preset of {self.name}", preset, self.PRESETS)
        self.preset = preset
        params = dict(self.PRESETS[preset])
        sampling = dict(self.SAMPLING.get(preset, {}))
        for key, value in overrides.items():
            if key in _SAMPLING_FIELDS:
                sampling[key] = value
                continue
            if key not in params:
                valid = ", ".join([*params, *_SAMPLING_FIELDS])
                raise ValueError(f"unknown parameter {key!r} of {self.name}; valid: {valid}")
            params[key] = v.finite_float(key, value)
        for key in self.POSITIVE:
            if key in params:
                v.positive_float(key, params[key])
        for key in self.NONNEGATIVE:
            if key in params:
                v.nonnegative_float(key, params[key])
        if "dt" in sampling:
            self.dt = v.positive_float("dt", sampling["dt"])
        if "n_steps" in sampling:
            self.n_steps = v.positive_int("n_steps", sampling["n_steps"])
        if "n_train" in sampling:
            self.n_train = v.positive_int("n_train", sampling["n_train"])
        if self.n_train > self.n_steps:
            raise ValueError(f"n_train must be <= n_steps = {self.n_steps}, got {self.n_train}")
        self.params: dict[str, float] = params
        self.generator: str | None = self.GENERATORS.get(preset)

    # --- dynamics ----------------------------------------------------------------------------
    @property
    def n_states(self) -> int:
        return len(self.state_names)

    @property
    def n_inputs(self) -> int:
        return len(self.input_names)

    @abstractmethod
    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        """``x'`` for state ``x`` (shape ``(..., n_states)``) at time ``t`` with input ``u``
        (``(n_inputs,)`` or batched like ``x``; None means the default signal `inputs`)."""

    def casadi_rhs(self, x: Any, u: Any, t: Any) -> Any:
        """The same right-hand side written with CasADi symbols (SX/MX column vectors).

        Needed for hybrid models and derivative checks; systems that have it override this.
        """
        raise NotImplementedError(f"{self.name} has no CasADi right-hand side")

    def inputs(self, t: np.ndarray | float) -> np.ndarray:
        """Known inputs at ``t``: shape ``(n_inputs,)`` for scalar t, ``(len(t), n_inputs)``."""
        t = np.asarray(t, dtype=float)
        return np.zeros((*t.shape, self.n_inputs))

    def positions(self, x: np.ndarray) -> np.ndarray:
        """``q`` of a second-order system: ``x[..., :n_coords]``."""
        self._require_second_order()
        return np.asarray(x, dtype=float)[..., : self.n_coords]

    def velocities(self, x: np.ndarray) -> np.ndarray:
        """``q'`` of a second-order system: ``x[..., n_coords:2 n_coords]``."""
        self._require_second_order()
        return np.asarray(x, dtype=float)[..., self.n_coords : 2 * self.n_coords]

    def acceleration(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        """``q''`` of a second-order system; shape ``(..., n_coords)``."""
        self._require_second_order()
        return self.rhs(t, x, u)[..., self.n_coords :]

    def _require_second_order(self) -> None:
        if not self.n_coords:
            raise ValueError(f"{self.name} is not a second-order system")

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

    def invariant_scales(self) -> dict[str, float]:
        """A natural magnitude of each invariant (e.g. the depth of a potential well), used by
        `invariant_drift` where the invariant itself can be zero; name -> scale."""
        return {}

    def invariant_drift(self, x: np.ndarray) -> dict[str, float]:
        """Largest relative change of each invariant along the samples ``x`` (``(n, n_states)``):
        ``max_t |I(t) − I(0)| / max(|I(0)|, scale)`` with the scale of
        `invariant_scales` (``tiny`` if none)."""
        x = v.finite_array("x", x, ndim=2)
        scales = self.invariant_scales()
        out = {}
        for key, val in self.invariants(x).items():
            val = np.asarray(val, dtype=float)
            ref = max(abs(float(val[0])), float(scales.get(key, 0.0)), np.finfo(float).tiny)
            out[key] = float(np.max(np.abs(val - val[0]))) / ref
        return out

    def exact_solution(self, t: np.ndarray, x0: np.ndarray) -> np.ndarray | None:
        """Closed-form solution at ``t`` from ``x0`` at ``t[0]`` (shape ``(len(t), n_states)``),
        or None."""
        return None

    # --- ground truth and data -------------------------------------------------------------------
    @property
    def x0(self) -> np.ndarray:
        """Default initial state."""
        raise NotImplementedError

    def sample_x0(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """A random initial state as the papers draw them (for multi-trajectory data sets)."""
        raise NotImplementedError(f"{self.name} ({self.preset}) has no random initial states")

    def time_grid(
        self, n_steps: int | None = None, dt: float | None = None, t0: float = 0.0
    ) -> np.ndarray:
        n = v.positive_int("n_steps", self.n_steps if n_steps is None else n_steps)
        # the states, inputs and time of every sample are stored
        v.fits_in_memory("n_steps", n * (1 + self.n_states + self.n_inputs), "samples")
        h = v.positive_float("dt", self.dt if dt is None else dt)
        return t0 + h * np.arange(n)

    def _input_fn(self, inputs: InputFn | None) -> InputFn | None:
        """The input signal used for simulation: ``inputs`` if given, else `inputs`."""
        if not self.n_inputs:
            if inputs is not None:
                raise ValueError(f"inputs given, but {self.name} has no inputs")
            return None
        if inputs is None:
            return self.inputs
        if not callable(inputs):
            raise TypeError(f"inputs must be a callable t -> u, got {inputs!r}")
        return inputs

    def _input_samples(self, fn: InputFn | None, t: np.ndarray) -> np.ndarray | None:
        if fn is None:
            return None
        u = np.stack([np.asarray(fn(float(ti)), dtype=float).reshape(-1) for ti in t])
        if u.shape[1] != self.n_inputs:
            raise ValueError(f"inputs must return {self.n_inputs} values, got {u.shape[1]}")
        return u

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray | None = None,
        rtol: float = 1e-12,
        atol: float = 1e-12,
        method: str = "DOP853",
        inputs: InputFn | None = None,
        use_exact: bool = True,
    ) -> Trajectory:
        """Ground truth on the grid ``t`` (closed form when available and ``use_exact``, else
        scipy ``method`` at ``rtol``/``atol``; for a preset with a `generator`, that
        fixed-step scheme with one step per interval of ``t``).

        ``inputs`` replaces the default known input signal `inputs` (a callable
        ``t -> u`` of shape ``(n_inputs,)``). An integration that fails or needs more than
        ``max_steps`` steps raises a [`SimulationError`][collocnode.SimulationError].
        """
        t = _sample_times(t)
        x0 = self.x0 if x0 is None else v.finite_array("x0", x0, shape=(self.n_states,))
        u_fn = self._input_fn(inputs)
        exact = use_exact and inputs is None and self.generator is None
        x = self.exact_solution(t, x0) if exact else None
        if x is None:
            x = self._integrate(self.rhs, t, x0, u_fn, rtol, atol, method)
        return self._trajectory(t, x, u_fn)

    def _integrate(
        self,
        f: Callable[..., np.ndarray],
        t: np.ndarray,
        x0: np.ndarray,
        u_fn: InputFn | None,
        rtol: float,
        atol: float,
        method: str,
    ) -> np.ndarray:
        rtol = v.positive_float("rtol", rtol)
        atol = v.positive_float("atol", atol)
        if t.size == 1:
            return x0[None, :].copy()
        if self.generator is not None:
            try:
                return fixed_step.integrate(
                    lambda tt, xx: f(tt, xx, None if u_fn is None else u_fn(tt)),
                    t,
                    x0,
                    self.generator,
                    n_coords=x0.size // 2 if self.n_coords else 0,
                )
            except fixed_step.DivergenceError as exc:
                raise SimulationError(
                    f"ground truth of {self.name} ({self.generator}): {exc}", exc.t
                ) from None
        x0_text = np.array2string(x0, precision=4)
        return solve_bounded(
            lambda tt, xx: f(tt, xx, None if u_fn is None else u_fn(tt)),
            t,
            x0,
            method,
            max_steps=self.max_steps,
            what=f"ground truth of {self.name} from x0 = {x0_text}",
            rtol=rtol,
            atol=atol,
        )

    def _trajectory(self, t: np.ndarray, x: np.ndarray, u_fn: InputFn | None) -> Trajectory:
        return Trajectory(
            t=t,
            x=x,
            u=self._input_samples(u_fn, t),
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
        inputs: InputFn | None = None,
    ) -> Split:
        """Ground-truth trajectory with optional Gaussian state noise, split into train/test.

        The noise (std ``noise``) is added to every state; the ``test`` window keeps the same
        noise realisation as ``full`` and starts at the last training sample. Use
        `simulate` for noise-free references.
        """
        noise = v.nonnegative_float("noise", noise)
        t = self.time_grid(n_steps, dt)
        n_tr = v.positive_int("n_train", self.n_train if n_train is None else n_train)
        if n_tr > t.size:
            raise ValueError(f"n_train must be <= n_steps = {t.size}, got {n_tr}")
        full = self.simulate(t, x0, inputs=inputs)
        if noise > 0:
            full = full.with_noise(noise, seed=seed)
        test = full.tail(n_tr - 1) if n_tr < t.size else full.tail(t.size - 1)
        return Split(train=full.head(n_tr), test=test, full=full)

    def __repr__(self) -> str:
        ps = ", ".join(f"{k}={val:g}" for k, val in self.params.items())
        return f"{type(self).__name__}(name={self.name!r}, preset={self.preset!r}, {ps})"


class HolonomicSystem(System):
    """A planar multibody system in absolute coordinates with holonomic constraints.

    Equations of motion (MBD-NODE eq. 1)::

        [ M     Φ_qᵀ ] [ q'' ]   [ Q(t, q, q', u) − C(q, q', λ₀) λ ]
        [ Φ_q   0    ] [ λ   ] = [ γ(q, q')                        ],   Φ(q) = 0,

    with ``γ = −(Φ_q q')_q q'``. ``C λ`` holds generalized forces proportional to the constraint
    reactions (Coulomb friction); it is linearised at the reactions ``λ₀`` of the same problem
    without it, which is exact as long as the reactions keep their sign (checked).

    The state is ``[q, q']`` (``2 n_coords``). `rhs` is the index-1 form (it drifts off
    the constraint manifold if integrated directly); `simulate` instead integrates the
    exact reduced dynamics of the independent coordinates ``independent`` (`minimal_rhs`)
    and recovers the dependent positions by Newton on ``Φ(q) = 0`` and the dependent velocities
    from ``Φ_q q' = 0``.

    Subclasses implement `mass_matrix`, `phi`, `phi_q`, `phi_q_dot_q`,
    `applied_forces`, `position_guess` and optionally `reaction_forces`.
    """

    independent: tuple[int, ...] = ()
    newton_tol: float = 1e-12

    # --- model -----------------------------------------------------------------------------
    @abstractmethod
    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """Generalized mass matrix, shape ``(..., n_coords, n_coords)`` (or broadcastable)."""

    @abstractmethod
    def phi(self, q: np.ndarray) -> np.ndarray:
        """Position constraints ``Φ(q)``, shape ``(..., n_constraints)``."""

    @abstractmethod
    def phi_q(self, q: np.ndarray) -> np.ndarray:
        """Constraint Jacobian ``Φ_q``, shape ``(..., n_constraints, n_coords)``."""

    @abstractmethod
    def phi_q_dot_q(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """``∂(Φ_q q')/∂q``, shape ``(..., n_constraints, n_coords)`` (gives γ and the velocity
        constraint Jacobian)."""

    @abstractmethod
    def applied_forces(
        self, t: float, q: np.ndarray, qd: np.ndarray, u: np.ndarray | None
    ) -> np.ndarray:
        """Generalized applied forces ``Q``, shape ``(..., n_coords)``."""

    def reaction_forces(self, q: np.ndarray, qd: np.ndarray, lam0: np.ndarray) -> np.ndarray | None:
        """``C`` (shape ``(..., n_coords, n_constraints)``) of reaction-dependent forces
        ``−C λ``, given the reactions ``lam0`` without them; None if there are none."""
        return None

    @abstractmethod
    def position_guess(self, q_independent: np.ndarray) -> np.ndarray:
        """A starting configuration ``(..., n_coords)`` on the intended assembly branch."""

    # --- constraint helpers ------------------------------------------------------------------
    @property
    def n_constraints(self) -> int:
        return self.n_coords - len(self.independent)

    @property
    def dependent(self) -> tuple[int, ...]:
        return tuple(int(i) for i in partition.split_indices(self.n_coords, self.independent)[1])

    def gamma(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Right-hand side of the acceleration constraints ``Φ_q q'' = γ``; ``(..., m)``."""
        return -np.einsum("...ij,...j->...i", self.phi_q_dot_q(q, qd), qd)

    def constraints(self, x: np.ndarray, t: float = 0.0) -> np.ndarray:
        """``Φ(q)`` of the state ``x`` (``(..., 2 n_coords)``); shape ``(..., n_constraints)``."""
        return self.phi(self.positions(x))

    def constraint_jacobian(self, x: np.ndarray, t: float = 0.0) -> np.ndarray:
        """``∂Φ(q)/∂x = [Φ_q, 0]``; shape ``(..., n_constraints, 2 n_coords)``."""
        jq = self.phi_q(self.positions(x))
        return np.concatenate([jq, np.zeros_like(jq)], axis=-1)

    def velocity_constraints(self, x: np.ndarray) -> np.ndarray:
        """``Φ_q(q) q'``, zero on the manifold; shape ``(..., n_constraints)``."""
        return np.einsum("...ij,...j->...i", self.phi_q(self.positions(x)), self.velocities(x))

    def state_constraints(self, x: np.ndarray) -> np.ndarray:
        """Position and velocity constraints ``[Φ(q), Φ_q q']``; shape ``(..., 2 m)`` (the full
        invariant manifold of the state, e.g. for SNDE-style stabilisation)."""
        return np.concatenate([self.constraints(x), self.velocity_constraints(x)], axis=-1)

    def state_constraint_jacobian(self, x: np.ndarray) -> np.ndarray:
        """``∂[Φ, Φ_q q']/∂x = [[Φ_q, 0], [(Φ_q q')_q, Φ_q]]``; shape ``(..., 2m, 2n)``."""
        q, qd = self.positions(x), self.velocities(x)
        jq = self.phi_q(q)
        top = np.concatenate([jq, np.zeros_like(jq)], axis=-1)
        bottom = np.concatenate([self.phi_q_dot_q(q, qd), jq], axis=-1)
        return np.concatenate([top, bottom], axis=-2)

    # --- dynamics ------------------------------------------------------------------------------
    def accelerations(
        self, t: float, x: np.ndarray, u: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(q'', λ)`` from the KKT system above; shapes ``(..., n)`` and ``(..., m)``."""
        x = np.asarray(x, dtype=float)
        q, qd = self.positions(x), self.velocities(x)
        n, m = self.n_coords, self.n_constraints
        jq = self.phi_q(q)
        shape = x.shape[:-1]
        kkt = np.zeros((*shape, n + m, n + m))
        kkt[..., :n, :n] = self.mass_matrix(q)
        kkt[..., :n, n:] = np.swapaxes(jq, -1, -2)
        kkt[..., n:, :n] = jq
        b = np.concatenate(
            [
                np.broadcast_to(self.applied_forces(t, q, qd, u), (*shape, n)),
                self.gamma(q, qd),
            ],
            axis=-1,
        )
        sol = np.linalg.solve(kkt, b[..., None])[..., 0]
        coupling = self.reaction_forces(q, qd, sol[..., n:])
        if coupling is not None:
            lam0 = sol[..., n:]
            kkt[..., :n, n:] += coupling
            sol = np.linalg.solve(kkt, b[..., None])[..., 0]
            # only the reactions that enter C must keep their sign
            active = np.any(coupling != 0, axis=-2)
            if np.any(active & (lam0 * sol[..., n:] < 0)):
                raise RuntimeError(
                    f"{self.name}: a constraint reaction changed sign under friction "
                    "(the Coulomb problem has no unique solution there)"
                )
        return sol[..., :n], sol[..., n:]

    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        """``[q', q'']`` with ``q''`` from the KKT system; shape ``(..., 2 n_coords)``."""
        x = np.asarray(x, dtype=float)
        return np.concatenate([self.velocities(x), self.accelerations(t, x, u)[0]], axis=-1)

    # --- partitioning ----------------------------------------------------------------------------
    def minimal(self, x: np.ndarray) -> np.ndarray:
        """Independent coordinates and velocities ``[q_i, q_i']``; shape ``(..., 2k)``."""
        ind = list(self.independent)
        return np.concatenate([self.positions(x)[..., ind], self.velocities(x)[..., ind]], axis=-1)

    def recover(self, z: np.ndarray, q_guess: np.ndarray | None = None) -> np.ndarray:
        """Full consistent states ``(..., 2 n_coords)`` from minimal states ``z`` (``(..., 2k)``).

        Positions by Newton on ``Φ(q) = 0`` from ``q_guess`` (default `position_guess`),
        velocities from ``Φ_q q' = 0``.
        """
        k = len(self.independent)
        z = v.finite_array("z", z)
        if z.shape[-1:] != (2 * k,):
            raise ValueError(f"z must have shape (..., {2 * k}), got {z.shape}")
        guess = self.position_guess(z[..., :k]) if q_guess is None else q_guess
        q = partition.recover_positions(
            self.phi, self.phi_q, z[..., :k], guess, self.independent, tol=self.newton_tol
        )
        qd = partition.recover_velocities(self.phi_q, q, z[..., k:], self.independent)
        return np.concatenate([q, qd], axis=-1)

    def recover_trajectory(self, z: np.ndarray) -> np.ndarray:
        """`recover` of a whole sequence ``z`` (``(n, 2k)``) in one batched Newton solve
        from `position_guess`, which keeps every sample on the intended branch."""
        return self.recover(v.finite_array("z", z, ndim=2))

    def minimal_rhs(
        self,
        t: float,
        z: np.ndarray,
        u: np.ndarray | None = None,
        q_guess: np.ndarray | None = None,
    ) -> np.ndarray:
        """Exact reduced dynamics ``[q_i', q_i'']`` of the minimal state ``z`` (``(..., 2k)``)."""
        x = self.recover(z, q_guess)
        return self.minimal(self.rhs(t, x, u))

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray | None = None,
        rtol: float = 1e-12,
        atol: float = 1e-12,
        method: str = "DOP853",
        inputs: InputFn | None = None,
        use_exact: bool = True,
    ) -> Trajectory:
        """Ground truth by coordinate partitioning: the minimal state is integrated by scipy
        ``method``; the samples are completed by `recover_trajectory`. ``x0`` must be
        consistent (``|Φ|``, ``|Φ_q q'|`` ≤ 1e-8). ``use_exact`` is accepted for interface
        compatibility; there is no closed form."""
        t = _sample_times(t)
        x0 = self.x0 if x0 is None else v.finite_array("x0", x0, shape=(self.n_states,))
        worst = float(np.max(np.abs(self.state_constraints(x0)), initial=0.0))
        if worst > 1e-8:
            raise ValueError(
                f"x0 violates the constraints of {self.name} (max |Φ|, |Φ_q q'| = {worst:.3g}); "
                "build it with recover()"
            )
        u_fn = self._input_fn(inputs)
        q_last = [self.positions(x0)]

        def reduced(tt: float, z: np.ndarray, u: np.ndarray | None) -> np.ndarray:
            # warm start from the last configuration: consecutive stages are close
            x = self.recover(z, q_last[0])
            q_last[0] = x[: self.n_coords]
            return self.minimal(self.rhs(tt, x, u))

        z = self._integrate(reduced, t, self.minimal(x0), u_fn, rtol, atol, method)
        return self._trajectory(t, self.recover_trajectory(z), u_fn)


def _sample_times(t: object) -> np.ndarray:
    """``t`` as increasing sample times with at least one entry."""
    t = v.increasing("t", t)
    if t.size == 0:
        raise ValueError("t must hold at least one sample time, got an empty array")
    return t


class CasadiColumns:
    """Indexes a CasADi column vector with numpy's ``x[..., i]``, so that one formula written
    for batched numpy states also builds the symbolic expression."""

    def __init__(self, x: Any) -> None:
        self._x = x

    def __getitem__(self, key: tuple[Any, int]) -> Any:
        return self._x[key[-1]]
