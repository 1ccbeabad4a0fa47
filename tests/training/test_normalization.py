"""Network inputs normalised from the data where the user left it to the library."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import HybridModel, TrainingProblem, Trajectory, simulate
from collocnode.nn import MLP
from collocnode.training._normalization import input_normalization


def test_an_input_of_order_one_is_left_and_others_are_standardised():
    rng = np.random.default_rng(0)
    z = np.column_stack(
        [
            rng.normal(0.3, 1.0, 500),  # order one: kept
            rng.normal(350.0, 5.0, 500),  # a temperature in K
            rng.normal(1e-3, 1e-4, 500),  # a small concentration
            np.full(500, 7.0),  # constant: scaled by its magnitude
        ]
    )
    shift, scale = input_normalization(z)
    assert shift[0] == 0.0 and scale[0] == 1.0
    np.testing.assert_allclose(shift[1:3], z[:, 1:3].mean(axis=0))
    np.testing.assert_allclose(scale[1:3], z[:, 1:3].std(axis=0))
    assert shift[3] == pytest.approx(7.0) and scale[3] == pytest.approx(7.0)


def _heated(net: MLP) -> tuple[HybridModel, Trajectory]:
    """c' = 1 − k(T) c with the temperature T ≈ 350 K a measured input, k learned."""
    t = np.linspace(0.0, 20.0, 41)
    temperature = 350.0 + 8.0 * np.sin(0.5 * t)
    c = 1.0 + 0.5 * np.exp(-0.3 * t)
    data = Trajectory(t, c[:, None], u=temperature[:, None], state_names=("c",))
    model = HybridModel(
        1, {"k": net}, lambda x, u, tt, b, p: [1.0 - b["k"](u[0]) * x[0]], n_inputs=1
    )
    return model, data


def test_a_problem_sets_the_normalisation_of_a_network_that_left_it_once():
    net = MLP((1, 8, 1), "tanh")
    assert net.inputs_from_data
    model, data = _heated(net)
    TrainingProblem(model, data)
    temperature = data.u[:, 0]
    assert net.input_shift == pytest.approx((temperature.mean(),))
    assert net.input_scale == pytest.approx((temperature.std(),))
    assert not net.inputs_from_data
    # a second problem on other data keeps it: the weights trained stay meaningful
    other = Trajectory(data.t, data.x, u=data.u + 20.0, state_names=("c",))
    TrainingProblem(model, other)
    assert net.input_shift == pytest.approx((temperature.mean(),))
    with pytest.raises(ValueError, match="taken from the data only once"):
        net.set_input_normalization([0.0], [1.0])


@pytest.mark.parametrize(
    "given", [{"input_shift": 0.0}, {"input_scale": 1.0}, {"input_shift": 0.0, "input_scale": 1.0}]
)
def test_a_given_normalisation_is_never_replaced(given):
    net = MLP((1, 8, 1), "tanh", **given)
    assert not net.inputs_from_data
    model, data = _heated(net)
    TrainingProblem(model, data)
    assert net.input_shift == (0.0,) and net.input_scale == (1.0,)


def test_an_affine_network_keeps_its_weights_meaning():
    """No hidden layer: the weights are the matrix the user reads."""
    assert not MLP((2, 2), "identity").inputs_from_data


def test_the_users_model_simulates_what_the_problem_trains():
    """The block is normalised in place: the model the user holds and the problem's agree, and
    a model function built before the problem is rebuilt."""
    net = MLP((1, 8, 1), "tanh")
    model, data = _heated(net)
    p = model.init_params(0)
    x0 = np.array([1.5])
    u = lambda tt: np.interp(tt, data.t, data.u[:, 0])[..., None]  # noqa: E731
    before = simulate(model, p, data.t, x0, inputs=u).x
    problem = TrainingProblem(model, data)
    after = simulate(model, p, data.t, x0, inputs=u).x
    through_problem = simulate(problem.model, p, data.t, x0, inputs=u).x
    np.testing.assert_allclose(after, through_problem)
    assert not np.allclose(before, after)
