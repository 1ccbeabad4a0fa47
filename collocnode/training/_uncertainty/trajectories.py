"""Bands of a trained model's trajectories
([`Uncertainty.trajectory_band`][collocnode.Uncertainty.trajectory_band]).

Three ways, each a function of the [`Uncertainty`][collocnode.Uncertainty] ``unc``, the distribution
``post`` (posterior or data-only), the times ``t`` (n,), the trajectory ``k`` and whether the
model outputs rather than the states are wanted:

* `forward_band`: the re-simulation from the start of the horizon with its forward
  sensitivities (`collocnode.training._uncertainty.forward`), the delta method on them;
* `collocation_band`: the collocation trajectory with the collocation sensitivities (inside
  the training horizon);
* `sampled_trajectory_band`: quantiles of re-simulations at draws from ``post``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...models._simulate import SimulationError, simulate
from .bands import Band
from .forward import simulate_sensitivities
from .points import chunks, outputs_at
from .posterior import ParameterPosterior, delta_band, sampled_band


def _start(unc: Any, k: int, t: np.ndarray) -> tuple[np.ndarray, bool]:
    """The times of a re-simulation of trajectory k from its horizon's start that reports
    at ``t``, and whether the start was prepended."""
    t0 = unc.solution.problem.horizon_of(k)[0]
    prepend = not t.size or t[0] > t0
    return (np.concatenate([[t0], t]) if prepend else t), prepend


def forward_band(
    unc: Any,
    post: ParameterPosterior,
    t: np.ndarray,
    k: int,
    outputs: bool,
    level: float,
    kwargs: dict[str, Any],
) -> Band:
    sol = unc.solution
    problem, model = sol.problem, sol.model
    t_sim, prepend = _start(unc, k, t)
    inputs = problem.input_function(k)
    x0 = np.asarray(sol.solution.states(t_sim[0], k), dtype=float)
    dx0 = unc.linearization.node_sensitivity[k][0]
    p, p_cols = np.asarray(sol.p, dtype=float), unc.quantities.p_index
    x, S = simulate_sensitivities(model, p, p_cols, t_sim, x0, dx0, inputs, **kwargs)
    if prepend:
        x, S = x[1:], S[1:]
    if not outputs:
        return delta_band(t, x, S, post, level)
    u = inputs(t) if inputs is not None else np.zeros((t.size, 0))
    y, jx, jp = outputs_at(model, x, p, u, t)
    g = np.einsum("nyx,nxt->nyt", jx, S) + post.p_gradient(jp)
    return delta_band(t, y, g, post, level)


def collocation_band(
    unc: Any, post: ParameterPosterior, t: np.ndarray, k: int, outputs: bool, level: float
) -> Band:
    sol, lin = unc.solution, unc.linearization
    model = sol.model
    columns = (
        [("y", j) for j in range(model.n_outputs)]
        if outputs
        else [("x", i) for i in range(model.n_states)]
    )
    value = np.empty((t.size, len(columns)))
    grad = np.empty((t.size, len(columns), unc.quantities.n))
    for part, q, g in chunks(
        sol, k, t, lin.node_sensitivity[k], unc.quantities.p_index, columns=columns
    ):
        value[part], grad[part] = q, g
    return delta_band(t, value, grad, post, level)


def sampled_trajectory_band(
    unc: Any,
    post: ParameterPosterior,
    t: np.ndarray,
    k: int,
    outputs: bool,
    level: float,
    samples: int,
    seed: int | None,
    kwargs: dict[str, Any],
) -> Band:
    sol = unc.solution
    problem, model = sol.problem, sol.model
    t_sim, prepend = _start(unc, k, t)
    inputs = problem.input_function(k)
    x0_fit = np.asarray(sol.solution.states(t_sim[0], k), dtype=float)
    own = [
        (i, int(unc.quantities.state[i, 1]))
        for i in unc.quantities.of_kind("initial_state")
        if unc.quantities.state[i, 0] == k
    ]

    def run(p: np.ndarray, x0: np.ndarray) -> np.ndarray:
        traj = simulate(model, p, t_sim, x0, inputs=inputs, **kwargs)
        out = traj.y if outputs else traj.x
        return out[1:] if prepend else out

    value = run(np.asarray(sol.p, dtype=float), x0_fit)
    theta = post.sample(samples, seed)
    P = post.parameter_vectors(theta)
    draws, failed = [], 0
    for p, th in zip(P, theta, strict=True):
        x0 = x0_fit.copy()
        for i, s in own:
            x0[s] = th[i]
        try:
            draws.append(run(p, x0))
        except SimulationError:
            failed += 1
    # the draws do not move along undetermined directions: the band is bounded where the
    # linearised one is (inside the horizon; beyond it taken as bounded)
    bounded = np.ones(value.shape, dtype=bool)
    inside = t <= problem.horizon_of(k)[1]
    if np.any(inside):
        bounded[inside] = collocation_band(unc, post, t[inside], k, outputs, level).bounded
    return sampled_band(t, value, np.array(draws), level, bounded, failed)
