"""Validators of [`DynamicOptimizationProblem`][collocnode.DynamicOptimizationProblem]'s fields,
called once from its ``__post_init__``: one function per field or concern, each raising one clear
error naming the field and the value, and returning the field's normalised value where it has one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _validation as v
from ._problem_parts import Inputs, Samples, Segment
from ._variables import AlgebraicStates, Controls, per_component


def check_callable(name: str, fn: object, *, optional: bool = True) -> None:
    """A model function (``dynamics``, ``lagrange``, ``mayer``, ``sample_loss``)."""
    if fn is None and optional:
        return
    if not callable(fn):
        raise TypeError(f"{name} must be callable{' or None' if optional else ''}, got {fn!r}")


def check_optional_instance(name: str, value: object, kind: type) -> None:
    """A field that is one ``kind`` or None (``proximal``, ``path``, ``controls``, ...)."""
    if value is not None and not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__} or None, got {value!r:.80}")


def covers(inputs: Inputs, t0: float, tf: float) -> bool:
    """Whether sampled inputs cover ``[t0, tf]`` (to 1e-9 of the horizon; a function of time
    covers every horizon)."""
    span = inputs.span()
    if span is None:
        return True
    tol = 1e-9 * max(1.0, tf - t0)
    return not (span[0] > t0 + tol or span[1] < tf - tol)


def check_inputs(inputs: object, t0: float, tf: float) -> None:
    """The known inputs: an [`Inputs`][collocnode.Inputs] whose samples cover the horizon."""
    if not isinstance(inputs, Inputs):
        raise TypeError(f"inputs must be an Inputs object, got {inputs!r}")
    if not covers(inputs, t0, tf):
        span = inputs.span()
        raise ValueError(
            f"input samples cover [{span[0]}, {span[1]}], which does not cover the "
            f"horizon tspan = ({t0}, {tf})"
        )


def check_bounds(
    x_lb: Any, x_ub: Any, p_lb: Any, p_ub: Any, n_states: int, n_params: int
) -> dict[str, np.ndarray]:
    """The variable bounds per component (scalars broadcast, None: ±inf), lower <= upper."""
    bounds = {
        name: per_component(name, value, n, default)
        for name, value, n, default in (
            ("x_lb", x_lb, n_states, -np.inf),
            ("x_ub", x_ub, n_states, np.inf),
            ("p_lb", p_lb, n_params, -np.inf),
            ("p_ub", p_ub, n_params, np.inf),
        )
    }
    if np.any(bounds["x_lb"] > bounds["x_ub"]):
        raise ValueError(f"x_lb must be <= x_ub, got {bounds['x_lb']} and {bounds['x_ub']}")
    if np.any(bounds["p_lb"] > bounds["p_ub"]):
        raise ValueError("p_lb must be <= p_ub")
    return bounds


def check_p_guess(p_guess: Any, n_params: int) -> np.ndarray:
    """The parameters' initial guess, (n_params,); zeros for None."""
    if p_guess is None:
        return np.zeros(n_params)
    return v.finite_array("p_guess", p_guess, shape=(n_params,))


def check_x_guess(name: str, x_guess: Any, n_states: int) -> Any:
    """A states' guess: None, a callable of time, or a constant (n_states,)."""
    if x_guess is None or callable(x_guess):
        return x_guess
    return v.finite_array(name, x_guess, shape=(n_states,))


def check_x0(name: str, x0: Any, n_states: int) -> np.ndarray | None:
    """A fixed initial state (n_states,) whose NaN entries stay free, or None for a free one."""
    return None if x0 is None else v.measured_array(name, x0, shape=(n_states,), nan="it is free")


def check_x_nominal(x_nominal: Any, n_states: int) -> np.ndarray:
    """The states' typical magnitudes, positive, broadcast to (n_states,); ones for None."""
    if x_nominal is None:
        return np.ones(n_states)
    nominal = np.broadcast_to(v.finite_array("x_nominal", x_nominal), (n_states,)).copy()
    if np.any(nominal <= 0):
        raise ValueError(f"x_nominal must be positive, got {nominal}")
    return nominal


def check_samples(name: str, samples: object, sample_loss: object, t0: float, tf: float) -> Samples:
    """Data terms of one trajectory: a `Samples` inside its horizon ``[t0, tf]`` (times
    within 1e-9 of it moved onto it), with a ``sample_loss`` to score them."""
    if not isinstance(samples, Samples):
        raise TypeError(f"{name} must be a Samples object or None, got {samples!r:.80}")
    if sample_loss is None:
        raise ValueError(f"{name} are given but sample_loss is None")
    return samples.inside(name, t0, tf)


def check_segment(
    k: int, segment: object, n_states: int, n_inputs: int, sample_loss: object
) -> Segment:
    """``segments[k]``: a `Segment` with a valid horizon, as many inputs as the problem
    (covering its horizon), and a valid initial state, guess and samples."""
    if not isinstance(segment, Segment):
        raise TypeError(f"segments[{k}] must be a Segment, got {segment!r}")
    a, b = v.time_span(f"segments[{k}].tspan", segment.tspan)
    if segment.inputs.n != n_inputs:
        raise ValueError(f"segments[{k}] has {segment.inputs.n} inputs, the problem {n_inputs}")
    if not covers(segment.inputs, a, b):
        span = segment.inputs.span()
        raise ValueError(
            f"segments[{k}] input samples cover [{span[0]}, {span[1]}], which does not "
            f"cover its horizon ({a}, {b})"
        )
    x0 = check_x0(f"segments[{k}].x0", segment.x0, n_states)
    guess = check_x_guess(f"segments[{k}].x_guess", segment.x_guess, n_states)
    samples = segment.samples
    if samples is not None:
        samples = check_samples(f"segments[{k}].samples", samples, sample_loss, a, b)
    return Segment((a, b), segment.inputs, x0, guess, samples)


def check_sample_widths(segments: Sequence[Segment]) -> None:
    """Every trajectory's samples hand ℓ rows of the same width."""
    widths = {seg.samples.n_data for seg in segments if seg.samples is not None}
    if len(widths) > 1:
        raise ValueError(
            f"every segment's samples must have the same number of data columns, got "
            f"{sorted(widths)}"
        )


def check_labels(name: str, labels: Sequence[str], n: int) -> tuple[str, ...]:
    """``state_names`` / ``param_names``: none, or one label per entry."""
    labels = tuple(labels)
    if labels and len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} labels for {n} entries")
    return labels


def check_node_variables(controls: object, algebraic: object) -> None:
    """The node-local unknowns: free controls and algebraic states, each of its kind or None."""
    check_optional_instance("controls", controls, Controls)
    check_optional_instance("algebraic", algebraic, AlgebraicStates)


def check_tf_bounds(
    tf_bounds: object,
    tspan: tuple[float, float],
    controls: Controls | None,
    inputs: Inputs,
    segments: Sequence[Segment],
    n_segments_given: int,
) -> tuple[float, float]:
    """A free final time's bounds: finite numbers ``t0 < lb <= tspan[1] <= ub``, on a problem
    whose times do not move with tf (no control rate penalty, known inputs, samples, or several
    segments: ``n_segments_given`` is ``len(segments)`` as given)."""
    t0, tf = tspan
    try:
        lb, ub = (float(b) for b in tf_bounds)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise ValueError(
            f"tf_bounds must be a pair (lb, ub) of numbers, got {tf_bounds!r:.80}"
        ) from None
    if not (np.isfinite(lb) and np.isfinite(ub)):
        raise ValueError(
            f"tf_bounds must be finite (a free final time needs both bounds), got ({lb!r}, {ub!r})"
        )
    if not t0 < lb <= ub:
        raise ValueError(f"tf_bounds must satisfy t0 = {t0!r} < lb <= ub, got ({lb!r}, {ub!r})")
    if not lb <= tf <= ub:
        raise ValueError(
            f"tspan[1] = {tf!r} is the guess of the free final time and must lie in "
            f"tf_bounds = ({lb!r}, {ub!r})"
        )
    for what, present in (
        ("a control rate penalty", controls is not None and controls.rate_penalty > 0),
        ("known inputs", inputs.n > 0),
        ("samples", any(seg.samples is not None for seg in segments)),
        ("several segments", n_segments_given > 1),
    ):
        if present:
            raise ValueError(f"a free final time (tf_bounds) cannot be combined with {what}")
    return lb, ub
