"""simulate(): one clear error per bad argument, a step budget, and short output grids."""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from collocnode import NeuralODE, SimulationError, simulate
from collocnode.models._simulate import MAX_STEPS
from collocnode.nn import MLP

# x' = y, y' = -x: the weights of one identity layer
OSCILLATOR = NeuralODE(MLP((2, 2), "identity"))
P = np.array([0.0, 1.0, -1.0, 0.0, 0.0, 0.0])
X0 = np.array([1.0, 0.0])
T = np.linspace(0.0, 1.0, 6)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(rtol=-1), ValueError, r"^rtol must be a positive finite number, got -1"),
        (dict(rtol="tight"), TypeError, r"^rtol must be a positive number, got 'tight'"),
        (dict(atol=-1e-9), ValueError, r"^atol must be a number >= 0 or one per state"),
        (dict(atol=[1e-9] * 3), ValueError, r"^atol must be a number >= 0 or one per state \(2\)"),
        (dict(bound=np.nan), ValueError, r"^bound must be a positive finite number, got nan"),
        (dict(bound=np.inf), ValueError, r"^bound must be a positive finite number, got inf"),
        (dict(bound=0.0), ValueError, r"^bound must be a positive finite number, got 0.0"),
        (dict(max_step=0.0), ValueError, r"^max_step must be a positive number .* got 0.0"),
        (dict(max_step=np.nan), ValueError, r"^max_step must be a positive number .* got nan"),
        (dict(method="euler"), ValueError, r"^unknown method 'euler'; valid: cvodes, DOP853"),
        (dict(substeps=0), ValueError, r"^substeps must be a positive integer, got 0"),
        (dict(max_steps=0), ValueError, r"^max_steps must be a positive integer, got 0"),
        (dict(max_steps=1.5), TypeError, r"^max_steps must be a positive integer, got 1.5"),
        (dict(inputs=5), TypeError, r"^inputs must be callable, got 5"),
        (dict(t=[]), ValueError, r"^t must hold at least one output time, got an empty array"),
        (dict(t=5.0), ValueError, r"^t must have 1 dimension\(s\), got shape \(\)"),
        (dict(t=[-1e308, 1e308]), ValueError, r"^t spans \[-1e\+308, 1e\+308\], whose length"),
        (dict(x0=[1.0]), ValueError, r"^x0 must have shape \(2,\), got \(1,\)"),
        (dict(model="model"), TypeError, r"^model must be a HybridModel, got 'model'"),
    ],
)
def test_bad_arguments_give_one_clear_error(kwargs, error, match):
    args = {"model": OSCILLATOR, "p": P, "t": T, "x0": X0, **kwargs}
    with pytest.raises(error, match=match):
        simulate(**args)


@pytest.mark.parametrize("method", ["cvodes", "DOP853", "Radau", "rk4"])
def test_one_output_time_gives_the_initial_state(method):
    traj = simulate(OSCILLATOR, P, [0.25], X0, method=method)
    assert traj.t.tolist() == [0.25] and traj.x.tolist() == [X0.tolist()]


def test_per_state_atol_is_accepted():
    traj = simulate(OSCILLATOR, P, T, X0, atol=[1e-10, 1e-10])
    np.testing.assert_allclose(traj.x[:, 0], np.cos(T), atol=1e-8)


def test_an_endless_horizon_stops_at_the_step_budget():
    start = time.perf_counter()
    with pytest.raises(SimulationError, match=r"the step budget max_steps=200 is exhausted") as exc:
        simulate(OSCILLATOR, P, [0.0, 1e300], X0, max_steps=200)
    assert time.perf_counter() - start < 30.0
    # the time reached is where the solver stopped, named in the message
    assert 0.0 < exc.value.t_fail < 1e300
    assert f"failed at t = {exc.value.t_fail:.6g}" in str(exc.value)


def test_rk4_counts_its_steps_against_the_budget():
    t = np.linspace(0.0, 10.0, 101)
    with pytest.raises(SimulationError, match=r"max_steps=50 is exhausted \(100 output interval"):
        simulate(OSCILLATOR, P, t, X0, method="rk4", substeps=2, max_steps=50)
    assert simulate(OSCILLATOR, P, t, X0, method="rk4", substeps=2, max_steps=200).x.shape == (
        101,
        2,
    )


def test_the_default_budget_is_documented_and_ample():
    assert MAX_STEPS >= 100_000
    assert "max_steps" in simulate.__doc__ and "MAX_STEPS" in simulate.__doc__


def test_the_step_budget_leaves_the_integration_unchanged():
    # the budgeted solver takes exactly the steps of scipy's own DOP853
    t = np.linspace(0.0, 6.0, 31)
    traj = simulate(OSCILLATOR, P, t, X0, rtol=1e-8, atol=1e-8)
    ref = solve_ivp(
        lambda tt, x: np.array([x[1], -x[0]]),
        (0.0, 6.0),
        X0,
        method="DOP853",
        t_eval=t,
        rtol=1e-8,
        atol=1e-8,
    )
    np.testing.assert_allclose(traj.x, ref.y.T, rtol=0, atol=1e-14)


def test_inputs_of_the_wrong_size_name_the_expected_shape():
    model = NeuralODE(MLP((3, 2), "identity"), n_inputs=1)
    p = np.zeros(model.n_params)
    with pytest.raises(ValueError, match=r"^inputs\(t\) must return shape \(1, 1\) for 1 times"):
        simulate(model, p, T, X0, inputs=lambda t: np.zeros((t.size, 2)))


@pytest.mark.parametrize(
    "returned, error, match",
    [
        (None, TypeError, r"^inputs\(t\) must be an array of real numbers, got None"),
        ("u", TypeError, r"^inputs\(t\) must be an array of real numbers, got 'u'"),
        (np.nan, ValueError, r"^inputs\(t\) must be finite, found nan"),
    ],
)
def test_inputs_that_are_not_finite_numbers_are_one_clear_error(returned, error, match):
    # None and NaN once became NaN inputs and scipy's stepper shrank its step forever
    model = NeuralODE(MLP((3, 2), "identity"), n_inputs=1)
    start = time.perf_counter()
    with pytest.raises(error, match=match):
        simulate(model, np.zeros(model.n_params), T, X0, inputs=lambda t: returned)
    assert time.perf_counter() - start < 5.0


def test_a_right_hand_side_that_is_not_finite_stops_at_once():
    import casadi as ca

    from collocnode import HybridModel

    model = HybridModel(
        n_states=1, blocks={"f": MLP((1, 1))}, rhs=lambda x, u, t, nets, params: ca.sqrt(x - 10)
    )
    start = time.perf_counter()
    with pytest.raises(SimulationError, match=r"at t = 0: the model's right-hand side is not fin"):
        simulate(model, np.zeros(model.n_params), [0.0, 0.1], [1.0], max_steps=1000)
    assert time.perf_counter() - start < 5.0


def _forced_damped_oscillator():
    from collocnode import HybridModel

    return HybridModel(
        n_states=2,
        blocks={},
        rhs=lambda x, u, t, nets, params: np.array([x[1], -x[0] - x[1] + u[0]]),
        n_inputs=1,
    )


@pytest.mark.parametrize("method", ["cvodes", "DOP853", "Radau", "BDF", "LSODA"])
def test_forced_damped_oscillator_matches_its_exact_solution(method):
    """x'' + x' + x = 1 from rest, a known input: x(t) = 1 - e^(-t/2) (cos ωt + sin ωt / (2ω)),
    ω = √3/2."""
    t = np.linspace(0.0, 6.0, 25)
    ones = lambda tt: np.ones((tt.size, 1))  # noqa: E731
    traj = simulate(
        _forced_damped_oscillator(),
        np.zeros(0),
        t,
        np.zeros(2),
        inputs=ones,
        method=method,
        rtol=1e-10,
        atol=1e-12,
    )
    w = np.sqrt(3.0) / 2
    exact = 1 - np.exp(-t / 2) * (np.cos(w * t) + np.sin(w * t) / (2 * w))
    np.testing.assert_allclose(traj.x[:, 0], exact, atol=1e-6)


def test_implicit_methods_get_the_jacobian_unchanged(monkeypatch):
    """The Jacobian handed to scipy is df/dx in rows = equations (a transposed one would still
    converge, only slower, so it is checked directly)."""
    import importlib

    sim = importlib.import_module("collocnode.models._simulate")  # the package exports the function
    seen = {}
    real = sim.solve_bounded

    def spy(rhs, t, x0, method, **kwargs):
        seen["jac"] = kwargs["jac"]
        return real(rhs, t, x0, method, **kwargs)

    monkeypatch.setattr(sim, "solve_bounded", spy)
    ones = lambda tt: np.ones((tt.size, 1))  # noqa: E731
    simulate(_forced_damped_oscillator(), np.zeros(0), T, X0, inputs=ones, method="Radau")
    np.testing.assert_array_equal(seen["jac"](0.0, X0), [[0.0, 1.0], [-1.0, -1.0]])


@pytest.mark.parametrize("kind", ["linear", "cubic"])
def test_sampled_inputs_reach_the_compiled_integrator_with_their_own_interpolation(kind):
    """x' = -x + u with u the samples of sin t: the compiled integrator interpolates them as
    the problem does; compared with scipy on the same interpolant."""
    from collocnode.transcription import Inputs

    knots = np.linspace(0.0, 6.0, 31)
    u = Inputs.from_samples(knots, np.sin(knots)[:, None], kind)
    model = _forced_damped_oscillator()
    t = np.linspace(0.0, 6.0, 13)
    compiled = simulate(
        model, np.zeros(0), t, X0, inputs=u, method="cvodes", rtol=1e-10, atol=1e-12
    )
    reference = simulate(
        model, np.zeros(0), t, X0, inputs=u, method="DOP853", rtol=1e-10, atol=1e-12
    )
    # B-spline (CasADi) and not-a-knot (scipy) cubics differ near the ends by O(h⁴)
    np.testing.assert_allclose(compiled.x, reference.x, atol=1e-7 if kind == "linear" else 1e-4)
    np.testing.assert_allclose(compiled.u, reference.u)


def test_a_stiff_model_takes_the_compiled_integrators_implicit_path():
    """Robertson's kinetics: cheap for CVODES, beyond an explicit method's step budget."""
    import casadi as ca

    from collocnode import HybridModel

    def rhs(x, u, t, b, p):
        return ca.vertcat(
            -0.04 * x[0] + 1e4 * x[1] * x[2],
            0.04 * x[0] - 1e4 * x[1] * x[2] - 3e7 * x[1] ** 2,
            3e7 * x[1] ** 2,
        )

    model = HybridModel(3, {}, rhs)
    t = np.r_[0.0, np.logspace(-5, 3, 50)]
    atol = 1e-8 * np.array([1.0, 1e-5, 1.0])
    stiff = simulate(model, np.zeros(0), t, [1, 0, 0], method="cvodes", rtol=1e-8, atol=atol)
    ref = solve_ivp(
        lambda tt, x: np.asarray(rhs(ca.DM(x), 0, tt, 0, 0)).ravel(),
        (0, 1e3),
        [1, 0, 0],
        method="Radau",
        t_eval=t,
        rtol=1e-10,
        atol=1e-14,
    )
    np.testing.assert_allclose(stiff.x, ref.y.T, rtol=1e-5, atol=1e-10)
    with pytest.raises(SimulationError, match="step budget"):
        simulate(
            model, np.zeros(0), t, [1, 0, 0], method="DOP853", rtol=1e-8, atol=atol, max_steps=5000
        )
