"""Van der Pol as the seed paper trains it (Langenkamp et al. §4.2, eq. 21)."""

from __future__ import annotations

from .generic import SystemRecipe
from .settings import CollocationSettings


def paper_regularization(noise: float) -> float:
    """The paper's λ for noise level σ: 1e-4, or 1e-3 for σ >= 0.5."""
    return 1e-3 if noise >= 0.5 else 1e-4


# Two 2-5-5-1 sigmoid networks (one per derivative) on raw signals, x(0) known (eqs. 21d-e), the
# constant state guess and random weights, 500 intervals x 5 stages, tol 1e-7; METIS orders the
# KKT matrix (docs/performance.md: 0.49x of MUMPS's automatic choice on the spectral variant).
VDP = SystemRecipe(
    hidden=5,
    activation="sigmoid",
    normalize=False,
    per_state_nets=True,
    initial_state="system",
    state_guess="constant",
    collocation=CollocationSettings(
        intervals=500,
        stages=5,
        tol=1e-7,
        max_iter=200,
        jit="auto",
        mumps_ordering="metis",
    ),
)
