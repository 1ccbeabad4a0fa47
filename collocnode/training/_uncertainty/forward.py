"""Forward sensitivities of a re-simulated model: the linearised predictive anywhere in time.

The collocation sensitivities dx/dθ (`collocnode.training._uncertainty.linearization`) exist on the
training horizon only. Beyond it (and for the re-simulation rather than the collocation trajectory
inside it) the sensitivities S = dx/dθ obey the variational equation along the simulated trajectory,

    x' = f(x, p, u, t),      S' = f_x S + f_p P,      S(t0) = dx0/dθ,

P = dp/dθ (the selection of the fitted entries of p). The augmented system is integrated by
[`collocnode.simulate`][collocnode.simulate] as a model of its own (n_x (1 + n_θ) states), so it
gets the same integrators, step budget and failure reports as every simulation.

Why not sample the weights and re-simulate: a network's weights have many directions the data
do not constrain (sloppy directions of the information), along which the Laplace posterior is
as wide as the prior; a draw moves far along them, and the nonlinear network then leaves the
data's region, so re-simulated draws spread far beyond what the data allow. The linearised
predictive (the delta method on the model's first-order response, as for Bayesian neural
networks' "GLM predictive") sees only the directions that move the trajectory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import casadi as ca
import numpy as np

from ...models._hybrid import HybridModel
from ...models._simulate import simulate


def sensitivity_model(model: HybridModel, p: np.ndarray, p_columns: np.ndarray) -> HybridModel:
    """The augmented model [x, vec(S)] of the variational equation at the parameters ``p``
    (its own parameter vector is empty); ``p_columns``: for every entry of θ its index into p,
    -1 for an initial state (n_θ,). S is stored column by column (CasADi's ``vec``)."""
    n_x, n_t = model.n_states, p_columns.size
    x, pp = ca.SX.sym("x", n_x), ca.SX.sym("p", model.n_params)
    u, t = ca.SX.sym("u", model.n_inputs), ca.SX.sym("t")
    xdot, _ = model.symbolic(x, pp, u, t)
    jac = ca.Function(
        "variational", [x, pp, u, t], [xdot, ca.jacobian(xdot, x), ca.jacobian(xdot, pp)]
    )
    P = np.zeros((model.n_params, n_t))
    fitted = np.flatnonzero(p_columns >= 0)
    P[p_columns[fitted], fitted] = 1.0
    p_dm, P_dm = ca.DM(p), ca.DM(P)

    def rhs(xa: Any, ua: Any, ta: Any, blocks: Any, params: Any) -> Any:
        xs = xa[:n_x]
        S = ca.reshape(xa[n_x:], n_x, n_t)
        f, fx, fp = jac(xs, p_dm, ua, ta)
        return ca.vertcat(f, ca.vec(ca.mtimes(fx, S) + ca.mtimes(fp, P_dm)))

    return HybridModel(n_states=n_x * (1 + n_t), blocks={}, rhs=rhs, n_inputs=model.n_inputs)


def simulate_sensitivities(
    model: HybridModel,
    p: np.ndarray,
    p_columns: np.ndarray,
    t: np.ndarray,
    x0: np.ndarray,
    dx0: np.ndarray,
    inputs: Callable[[np.ndarray], np.ndarray] | None = None,
    **kwargs: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """x (n, n_x) and S = dx/dθ (n, n_x, n_θ) on ``t`` from ``x0`` with ``dx0`` = dx0/dθ
    (n_x, n_θ); ``kwargs`` go to [`collocnode.simulate`][collocnode.simulate].

    Raises:
        SimulationError: the integration of the augmented system failed.
    """
    n_x, n_t = model.n_states, p_columns.size
    augmented = sensitivity_model(model, p, p_columns)
    start = np.concatenate([x0, dx0.ravel(order="F")])
    kwargs.setdefault("rtol", 1e-8)
    kwargs.setdefault("atol", 1e-8)
    # sensitivities grow (along a limit cycle linearly in time): a blow-up is judged by a
    # bound far above the states'
    kwargs.setdefault("bound", 1e9)
    traj = simulate(augmented, np.zeros(0), t, start, inputs=inputs, **kwargs)
    x = traj.x[:, :n_x]
    S = traj.x[:, n_x:].reshape(t.size, n_t, n_x).transpose(0, 2, 1)
    return x, S
