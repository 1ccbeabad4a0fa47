import casadi as ca
import numpy as np
import pytest

from collocnode.nn import ACTIVATIONS, MLP, require_c2

SPECS = [
    MLP((2, 5, 5, 1), "sigmoid"),
    MLP((1, 5, 5, 1), "squareplus", input_scale=(0.01,), output_scale=(100.0,)),
    MLP((3, 8, 2), "tanh", init="torch_default", input_shift=(1.0, -2.0, 0.5)),
    MLP((4, 3), "identity"),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.sizes}-{s.activation}")
def test_casadi_matches_numpy(spec, rng):
    w = spec.init_weights(rng)
    assert w.shape == (spec.n_params,)
    x = rng.standard_normal((9, spec.n_in))
    f = spec.casadi_function()
    y_ca = np.array(f(x.T, w)).T
    np.testing.assert_allclose(y_ca, spec.numpy(x, w), rtol=1e-13, atol=1e-13)


def test_param_count_matches_paper():
    # Langenkamp et al.: two 2-5-5-1 nets have 102 weights, two 1-5-5-1 nets 92.
    assert 2 * MLP((2, 5, 5, 1)).n_params == 102
    assert 2 * MLP((1, 5, 5, 1)).n_params == 92


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_backends_agree(name, rng):
    from collocnode.nn import get_activation

    act = get_activation(name)
    x = np.linspace(-30, 30, 121)
    sx = ca.SX.sym("x")
    f = ca.Function("f", [sx], [act.casadi(sx)])
    np.testing.assert_allclose(np.array(f(x)).ravel(), act.numpy(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["sigmoid", "silu", "tanh", "squareplus"])
def test_activation_derivatives_finite_at_extreme_inputs(name):
    # IPOPT may try steps that drive pre-activations to ±1e3; a NaN in the Hessian there ends the
    # solve with an evaluation error (1 / (1 + exp(-x)) differentiates to inf/inf for x < -709).
    from collocnode.nn import get_activation

    sx = ca.SX.sym("x")
    y = get_activation(name).casadi(sx)
    g = ca.gradient(y, sx)
    f = ca.Function("f", [sx], [y, g, ca.gradient(g, sx)])
    for x in (-1e3, -750.0, 750.0, 1e3):
        assert all(np.isfinite(float(v)) for v in f(x)), (name, x)


def test_non_smooth_activation_rejected_for_ipopt():
    with pytest.raises(ValueError, match="relu"):
        require_c2("relu")
    require_c2("squareplus")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(sizes=(2,)), "sizes"),
        (dict(sizes=(2, 0, 1)), r"sizes\[1\]"),
        (dict(sizes=(2, 1), activation="swish"), "activation 'swish'"),
        (dict(sizes=(2, 1), input_scale=(1.0, 0.0)), "input_scale"),
        (dict(sizes=(2, 1), output_scale=(1.0, 2.0)), "output_scale"),
    ],
)
def test_bad_specs(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        MLP(**kwargs)
