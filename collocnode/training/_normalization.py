"""Network inputs at order one without the user's help: the normalisation from the data.

A tanh network fed a temperature of 350 K is saturated before training starts; one fed 0.001
barely leaves its linear part. An [`MLP`][collocnode.nn.MLP] with a hidden layer whose input
shift and scale were left None takes them from the data when its first training problem is
built: each input of the block, evaluated at every trajectory's sample times on the data where
a state is measured and on the problem's state guess where it is not, gives its mean (the
shift) and standard deviation (the scale; the mean's magnitude, or 1, where the input is
constant). An input already of order one (a standard deviation between 0.2 and 5, a mean
within 2 of them of 0) is left as it is (shift 0, scale 1), so a well-scaled problem trains
as it would by hand; a temperature of 350 ± 5 K or a concentration of 1e-3 ± 1e-4 reaches the
network at order one, whatever its unit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._discovery.samples import DiscoveryError, evaluate_traced, trace_block
from ._guess import physics_params

#: the standard deviations of an input that a tanh or sigmoid layer takes as they are
ORDER_ONE = (0.2, 5.0)
#: how many standard deviations from 0 the mean of such an input may lie
MAX_OFFSET = 2.0


def normalize_inputs(problem: Any) -> None:
    """Set the input normalisation of every block of ``problem.model`` that leaves it to the
    data (``inputs_from_data``), from the block's inputs over ``problem``'s samples (module
    docstring). Blocks the physics never calls keep theirs."""
    model = problem.model
    waiting = [name for name, b in model.blocks.items() if getattr(b, "inputs_from_data", False)]
    if not waiting:
        return
    p = physics_params(model) if problem.params_guess is None else problem.params_guess
    points = [_guess_points(problem, k) for k in range(problem.n_trajectories)]
    for name in waiting:
        try:
            io, calls, _ = trace_block(model, name)
        except DiscoveryError:  # never called: nothing to take the normalisation from
            continue
        z = np.vstack([evaluate_traced(io, calls, p, t, x, u)[0] for t, x, u in points])
        z = z[np.all(np.isfinite(z), axis=1)]
        if not z.size:
            continue
        model.blocks[name].set_input_normalization(*input_normalization(z))


def input_normalization(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The shift and scale (n_in,) each for a block's inputs sampled as ``z`` (m, n_in): an
    input of order one (standard deviation in `ORDER_ONE`, mean within `MAX_OFFSET` standard
    deviations of 0) keeps shift 0 and scale 1; any other gets its mean and standard deviation
    (the mean's magnitude, or 1, where it is constant)."""
    shift = z.mean(axis=0)
    spread = z.std(axis=0)
    fallback = np.where(np.abs(shift) > 0, np.abs(shift), 1.0)
    scale = np.where(spread > 1e-12 * np.maximum(np.abs(shift), 1.0), spread, fallback)
    low, high = ORDER_ONE
    order_one = (spread >= low) & (spread <= high) & (np.abs(shift) <= MAX_OFFSET * spread)
    return np.where(order_one, 0.0, shift), np.where(order_one, 1.0, scale)


def _guess_points(problem: Any, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Trajectory k's sample times in its horizon (n,), the states there (n, n_states: the
    measured values, the state guess elsewhere) and the known inputs there (n, n_inputs)."""
    data, inside = problem.trajectories[k], problem._inside(k)
    t = data.t[inside]
    guess = problem._state_guess(k)
    x = guess(t) if callable(guess) else np.tile(np.asarray(guess, dtype=float), (t.size, 1))
    x = np.asarray(x, dtype=float).reshape(t.size, problem.model.n_states)
    measured = problem.measured(k)[inside]
    x = np.where(measured, data.x[inside], x)  # the data wherever a state is measured
    u_fn = problem.input_function(k)
    u = np.zeros((t.size, 0)) if u_fn is None else np.asarray(u_fn(t), dtype=float)
    return t, x, u.reshape(t.size, -1)
