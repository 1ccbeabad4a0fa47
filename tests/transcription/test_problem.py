"""DynamicOptimizationProblem, Constraint and Inputs: one clear error per bad field, also when
the dataclasses are built directly instead of through their ``make``/``from_*`` helpers."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import Constraint, Inputs


@pytest.mark.parametrize(
    "tspan, error, match",
    [
        (None, TypeError, r"^tspan must be a pair \(t0, tf\) of numbers, got None"),
        (5, TypeError, r"^tspan must be a pair \(t0, tf\) of numbers, got 5"),
        ("ab", TypeError, r"^tspan must be a pair \(t0, tf\) of numbers, got 'ab'"),
        ((0.0,), ValueError, r"^tspan must be a pair \(t0, tf\), got 1 values"),
        ((0.0, np.nan), ValueError, r"^tspan\[1\] must be finite, got nan"),
        ((1.0, 0.0), ValueError, r"^tspan must satisfy t0 < tf, got \(1.0, 0.0\)"),
        ((-1e308, 1e308), ValueError, r"^tspan spans \[-1e\+308, 1e\+308\], whose length overf"),
    ],
)
def test_a_bad_tspan_is_one_clear_error(tspan, error, match, make_dop):
    with pytest.raises(error, match=match):
        make_dop(tspan=tspan)


def test_a_tspan_array_is_accepted(make_dop):
    assert make_dop(tspan=np.array([0, 2])).tspan == (0.0, 2.0)


@pytest.mark.parametrize(
    "field, value, error, match",
    [
        ("x_lb", [2.0, 3.0], ValueError, r"^x_lb must be a scalar or have shape \(1,\), got shape"),
        ("x_lb", [[1.0]], ValueError, r"^x_lb must be a scalar or have shape \(1,\), got shape"),
        ("x_lb", "lb", TypeError, r"^x_lb must be an array of real numbers, got 'lb'"),
        ("x_ub", [np.nan], ValueError, r"^x_ub must not be NaN"),
        ("p_ub", [1.0, 2.0], ValueError, r"^p_ub must be a scalar or have shape \(1,\), got shape"),
        ("path", 5, TypeError, r"^path must be a Constraint or None, got 5"),
        ("boundary", "g", TypeError, r"^boundary must be a Constraint or None, got 'g'"),
    ],
)
def test_bad_bounds_and_constraints_are_one_clear_error(field, value, error, match, make_dop):
    with pytest.raises(error, match=match):
        make_dop(**{field: value})


def test_scalar_bounds_are_broadcast_to_every_component(make_dop):
    problem = make_dop(n_states=2, dynamics=lambda x, p, u, t: -x, x_lb=-3, x_ub=[4.0, 5.0])
    np.testing.assert_array_equal(problem.x_lb, [-3.0, -3.0])
    np.testing.assert_array_equal(problem.x_ub, [4.0, 5.0])


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((5, 1, [0.0], [0.0]), TypeError, r"^constraint.fn must be callable, got 5"),
        ((abs, -1, [0.0], [0.0]), ValueError, r"^constraint.n must be a positive integer, got -1"),
        ((abs, 2, [0.0], [0.0, 1.0]), ValueError, r"^constraint.lb must have shape \(2,\)"),
        ((abs, 1, [0.0], ["u"]), TypeError, r"^constraint.ub must be an array of real numbers"),
    ],
)
def test_a_constraint_built_directly_is_checked(args, error, match):
    with pytest.raises(error, match=match):
        Constraint(*args)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(n=-1), ValueError, r"^inputs.n must be a non-negative integer, got -1"),
        (dict(n="2"), TypeError, r"^inputs.n must be a non-negative integer, got '2'"),
        (dict(n=1, fn=5), TypeError, r"^inputs.fn must be callable, got 5"),
        (dict(n=1, kind="spline"), ValueError, r"^unknown inputs.kind 'spline'"),
    ],
)
def test_inputs_built_directly_are_checked(kwargs, error, match):
    with pytest.raises(error, match=match):
        Inputs(**kwargs)


@pytest.mark.parametrize(
    "returned, error, match",
    [
        (np.ones((3, 3)), ValueError, r"^inputs\(t\) must return shape \(3, 1\) for 3 times, got"),
        (None, TypeError, r"^inputs\(t\) must be an array of real numbers, got None"),
        (np.full(3, np.nan), ValueError, r"^inputs\(t\) must be finite, found nan"),
    ],
)
def test_an_input_function_returning_the_wrong_thing_is_one_clear_error(returned, error, match):
    with pytest.raises(error, match=match):
        Inputs.from_function(lambda t: returned, 1)(np.zeros(3))
