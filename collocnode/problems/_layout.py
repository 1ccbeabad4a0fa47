"""Which coordinates a model learns, and how its state maps back to the system's state.

Unconstrained systems: the model state is the system state. A second-order system (state
``[q, q']``) gets a network for the accelerations ``q''``; a first-order one a network for ``x'``.

Constrained second-order systems use generalized coordinate partitioning (MBD-NODE eqs. 21–23,
FNODE §3.5): the model learns only the independent coordinates ``q_I`` and their velocities, and
the dependent ones are recovered from the position constraints Φ(q) = 0 by Newton's method and
from Φ_q q' = 0 (``collocnode.problems._partition``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v


@dataclass(frozen=True)
class StateLayout:
    """The map between a system state ``x`` (``n_states``) and a model state ``z``.

    Attributes:
        n_states: system states.
        n_coords: positions of a second-order system (0 for first-order systems).
        independent: indices into ``q`` of the independent coordinates, or None (no partition).
        n_inputs: known inputs u(t) fed to the network.
        n_params: parameter inputs μ fed to the network.
    """

    n_states: int
    n_coords: int = 0
    independent: tuple[int, ...] | None = None
    n_inputs: int = 0
    n_params: int = 0

    def __post_init__(self) -> None:
        if self.independent is not None:
            idx = tuple(int(i) for i in self.independent)
            if not idx or len(set(idx)) != len(idx) or min(idx) < 0 or max(idx) >= self.n_coords:
                raise ValueError(
                    f"independent must list distinct coordinate indices in [0, {self.n_coords}), "
                    f"got {self.independent!r}"
                )
            object.__setattr__(self, "independent", idx)

    @classmethod
    def for_system(
        cls,
        system: Any,
        n_params: int = 0,
        independent: tuple[int, ...] | None = None,
        partition: bool = True,
    ) -> StateLayout:
        """The layout for ``system``: partitioned when it is a mechanism with holonomic
        position constraints Φ(q) = 0 (it has ``phi``/``phi_q``; its ``independent`` unless
        ``independent`` is given) and ``partition`` is on. Other constraints (conserved
        quantities, non-holonomic ones) leave the layout unpartitioned."""
        n_coords = int(getattr(system, "n_coords", 0) or 0)
        holonomic = bool(n_coords and hasattr(system, "phi") and hasattr(system, "phi_q"))
        idx = None
        if partition and holonomic and system.n_constraints > 0:
            idx = independent if independent is not None else _system_independent(system)
        elif independent is not None:
            raise ValueError(
                f"independent coordinates given, but {system.name} has no holonomic position "
                "constraints to partition (or partition is off)"
            )
        return cls(system.n_states, n_coords, idx, system.n_inputs, n_params)

    # --- sizes ---------------------------------------------------------------------------------
    @property
    def second_order(self) -> bool:
        return self.n_coords > 0

    @property
    def partitioned(self) -> bool:
        return self.independent is not None

    @property
    def n_q(self) -> int:
        """Model positions (second order) — all of q, or the independent ones."""
        return len(self.independent) if self.partitioned else self.n_coords

    @property
    def n_model(self) -> int:
        """Length of the model state z."""
        return 2 * self.n_q if self.second_order else self.n_states

    @property
    def n_out(self) -> int:
        """Network outputs: accelerations (second order) or the full derivative."""
        return self.n_q if self.second_order else self.n_states

    @property
    def n_net_in(self) -> int:
        return self.n_model + self.n_inputs + self.n_params

    @property
    def state_index(self) -> np.ndarray:
        """Columns of x that make up z."""
        if not self.partitioned:
            return np.arange(self.n_states)
        idx = np.asarray(self.independent)
        return np.concatenate([idx, self.n_coords + idx])

    # --- maps ----------------------------------------------------------------------------------
    def reduce(self, x: np.ndarray) -> np.ndarray:
        """System states ``(..., n_states)`` -> model states ``(..., n_model)``."""
        return np.asarray(x)[..., self.state_index]

    def expand(self, z: np.ndarray, system: Any, x_guess: np.ndarray) -> np.ndarray:
        """Model states ``(n, n_model)`` -> system states ``(n, n_states)``.

        Without a partition this is the identity. With one, the dependent positions come from
        Newton on Φ(q) = 0 (``partition.recover_positions``), started from the system's
        ``position_guess`` of the independent coordinates when it has one (all samples at once)
        and otherwise from the previous sample's solution (``x_guess`` for the first); the
        dependent velocities come from Φ_q q' = 0.
        """
        z = np.asarray(z, dtype=float)
        if not self.partitioned:
            return z
        from . import _partition as partition

        n_q, idx = self.n_q, self.independent
        qi, qdi = z[:, :n_q], z[:, n_q:]
        if hasattr(system, "position_guess"):
            q = partition.recover_positions(
                system.phi, system.phi_q, qi, system.position_guess(qi), idx
            )
        else:
            q = np.empty((z.shape[0], self.n_coords))
            guess = v.finite_array("x_guess", x_guess, shape=(self.n_states,))[: self.n_coords]
            for k in range(z.shape[0]):
                q[k] = guess = partition.recover_positions(
                    system.phi, system.phi_q, qi[k], guess, idx
                )
        qd = partition.recover_velocities(system.phi_q, q, qdi, idx)
        return np.concatenate([q, qd], axis=1)


def _system_independent(system: Any) -> tuple[int, ...]:
    idx = getattr(system, "independent", None)
    if idx is None or not len(idx):
        raise ValueError(
            f"{system.name} has constraints but names no independent coordinates "
            "(independent); pass independent=... explicitly"
        )
    return tuple(int(i) for i in np.atleast_1d(idx))
