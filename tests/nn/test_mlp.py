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


def test_a_network_too_large_for_memory_is_refused_before_drawing_weights(monkeypatch):
    from collocnode import _validation as v

    # issue example: 2e9 hidden units, 6e9 weights = 48 GB; checked against a 16 GB machine so
    # that the test does not depend on this one's memory
    monkeypatch.setattr(v, "physical_memory_bytes", lambda: 16 * 10**9)
    with pytest.raises(ValueError) as exc:
        MLP((1, 2 * 10**9, 1))
    assert str(exc.value) == (
        "MLP sizes (1, 2000000000, 1) needs 6000000001 weights (48 GB as float64), more than "
        "this machine's memory (16 GB)"
    )
    assert MLP((1, 10**8, 1)).n_params == 3 * 10**8 + 1  # 2.4 GB: fits, nothing drawn yet


def test_a_network_beyond_any_memory_is_refused():
    with pytest.raises(ValueError, match=r"^MLP sizes \(1, 1000000000000000, 1\) needs"):
        MLP((1, 10**15, 1))


@pytest.mark.parametrize("sizes", [None, "1,2", 2.5])
def test_sizes_must_be_a_sequence_of_widths(sizes):
    with pytest.raises(TypeError, match=r"^sizes"):
        MLP(sizes)


def test_numpy_forward_checks_the_input_width():
    net = MLP((2, 3, 1))
    with pytest.raises(ValueError, match=r"^x must have shape \(\.\.\., 2\), got \(4, 3\)"):
        net.numpy(np.zeros((4, 3)), net.init_weights(0))


@pytest.mark.parametrize("init", ["xavier_normal", "xavier_normal_torch_bias"])
def test_xavier_weights_with_zero_or_torch_linear_biases(init):
    torch = pytest.importorskip("torch")
    spec = MLP((4, 400, 3), "tanh", init=init)
    (W1, b1), (W2, b2) = spec.unflatten(spec.init_weights(0))
    assert np.std(W1) == pytest.approx(np.sqrt(2 / 404), rel=0.05)
    assert np.std(W2) == pytest.approx(np.sqrt(2 / 403), rel=0.05)
    if init == "xavier_normal":
        assert not b1.any() and not b2.any()
        return
    # the biases torch.nn.Linear draws, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), which the seed
    # papers' code keeps when it applies xavier_normal_ to the weights
    torch.manual_seed(0)
    ref = torch.nn.Linear(4, 400).bias.detach().numpy()
    assert np.max(np.abs(b1)) <= 0.5 and np.max(np.abs(ref)) <= 0.5
    assert np.std(b1) == pytest.approx(np.std(ref), rel=0.15)
    assert np.std(b1) == pytest.approx(0.5 / np.sqrt(3), rel=0.15)
    assert np.max(np.abs(b2)) <= 1 / np.sqrt(400)
