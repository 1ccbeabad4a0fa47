"""Derivative labels of sampled trajectories, for the methods that regress on them.

FNODE (Wang, Wang & Negrut, §2.3) fits its acceleration network to labels obtained by
differentiating the sampled velocities of the training window once; the Hamiltonian and Lagrangian
networks (`collocnode.compare.methods.hnn`, `collocnode.compare.methods.lnn`) are given the same
labels, so all three see the same data. The differentiation itself is
`collocnode.tools._derivatives`; this module picks the signal (``q'`` of a second-order system,
``x`` of a first-order one) and the options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import _validation as v
from ..._data import Trajectory
from ...tools import _derivatives as tg
from .field import RolloutOptions

TARGETS = ("hybrid", "fft", "fd", "exact")


@dataclass(frozen=True)
class LabelOptions(RolloutOptions):
    """Options of the methods trained on derivative labels (FNODE, HNN, LNN).

    Attributes:
        targets: acceleration labels: "hybrid" (FFT inside, FD at the ends; FNODE's),
            "fft", "fd" (central differences), or "exact" (the system's true accelerations at the
            samples; the reference code's "analytical" option, for diagnosis only).
        reflection: mirror of FNODE eq. 19, "even" (as printed) or "odd" (through the end point).
        sigma: width of the Gaussian low-pass in frequency-index units (None: n/20, FNODE eq. 21;
            ``float("inf")``: no filter).
        edge_fraction: share of samples at each end that use finite differences (hybrid).
    """

    targets: str = "hybrid"
    reflection: str = "even"
    sigma: float | None = None
    edge_fraction: float = 0.02

    def __post_init__(self) -> None:
        super().__post_init__()
        v.choice("targets", self.targets, TARGETS)
        v.choice("reflection", self.reflection, ("even", "odd"))
        if self.sigma is not None and self.sigma != float("inf"):
            v.positive_float("sigma", self.sigma)
        f = v.nonnegative_float("edge_fraction", self.edge_fraction)
        if f >= 0.5:
            raise ValueError(f"edge_fraction must be < 0.5, got {self.edge_fraction}")


def fnode_targets(system: Any, traj: Trajectory, layout: Any, options: LabelOptions) -> np.ndarray:
    """Derivative labels of one training trajectory: ``z̈`` of the model positions
    ``(n, n_q)`` (second order) or ``x'`` ``(n, n_states)`` (first order), in state units per
    second.

    Only ``traj`` is differentiated, so the labels cannot depend on samples after it.
    """
    z = layout.reduce(traj.x)
    if options.targets == "exact":
        if layout.second_order:
            acc = np.stack(
                [
                    system.acceleration(t, x, u if u.size else None)
                    for t, x, u in zip(traj.t, traj.x, traj.u, strict=True)
                ]
            )
            idx = list(layout.independent) if layout.partitioned else slice(None)
            return acc[:, idx]
        return np.stack(
            [
                system.rhs(t, x, u if u.size else None)
                for t, x, u in zip(traj.t, traj.x, traj.u, strict=True)
            ]
        )
    dt = tg.uniform_step(traj.t)
    signal = z[:, layout.n_q :] if layout.second_order else z
    kw: dict[str, Any] = {}
    if options.targets in ("fft", "hybrid"):
        kw = {"reflection": options.reflection, "sigma": options.sigma}
    if options.targets == "hybrid":
        kw["edge_fraction"] = options.edge_fraction
    return tg.derivative(signal, dt, options.targets, **kw)
