import numpy as np
import pytest

from collocnode.nn import RationalChebyshev

torch = pytest.importorskip("torch")


def test_chebyshev_recurrence_matches_cosines(rng):
    from collocnode.nn._rational import chebyshev_basis

    s = rng.uniform(-1, 1, 50)
    T = chebyshev_basis(s, 7)
    for k, Tk in enumerate(T):
        np.testing.assert_allclose(Tk, np.cos(k * np.arccos(s)), atol=1e-13)


@pytest.mark.parametrize("fixed_theta0", [True, False])
def test_rational_backends_agree_and_match_formula(rng, fixed_theta0):
    spec = RationalChebyshev(
        num_degree=3,
        den_degree=2,
        input_shift=0.1,
        input_scale=2.0,
        output_scale=5.0,
        positive_denominator=False,
        fixed_theta0=fixed_theta0,
    )
    assert spec.n_params == 4 + 2 + (not fixed_theta0)
    w = rng.normal(0, 0.3, spec.n_params)
    x = rng.uniform(-1.9, 2.1, (13, 1))
    s = (x[:, 0] - 0.1) / 2.0
    T = [np.ones_like(s), s, 2 * s**2 - 1, 4 * s**3 - 3 * s]
    theta = [1.0, w[4], w[5]] if fixed_theta0 else [w[4] + 1.0, w[5], w[6]]
    if not fixed_theta0:
        w[4] += 1.0  # the denominator away from zero
    expected = 5.0 * sum(w[k] * T[k] for k in range(4)) / sum(theta[k] * T[k] for k in range(3))
    np.testing.assert_allclose(spec.numpy(x, w)[:, 0], expected, rtol=1e-12)
    np.testing.assert_allclose(
        np.array(spec.casadi_function()(x.T, w)).ravel(), expected, rtol=1e-12
    )
    mod = spec.torch_module(w)
    np.testing.assert_allclose(mod(torch.as_tensor(x)).detach().numpy()[:, 0], expected, rtol=1e-12)
    np.testing.assert_allclose(mod.get_flat(), w)


def test_paper_sizes_and_domain():
    spec = RationalChebyshev(input_shift=0.0, input_scale=0.3)
    assert spec.n_params == 15  # eq. 19 with N = D = 7 and θ_0 fixed to 1
    assert spec.domain == (-0.3, 0.3)
    # eq. 19 as written: θ_0 free, 16 per block, the paper's "merely 32" for two blocks
    assert RationalChebyshev(fixed_theta0=False).n_params == 16
    with pytest.raises(ValueError, match="input_scale"):
        RationalChebyshev(input_scale=0.0)


def test_positive_denominator_has_no_poles(rng):
    spec = RationalChebyshev(num_degree=2, den_degree=3)
    w = rng.normal(0, 3.0, spec.n_params)
    x = np.linspace(-1, 1, 201)[:, None]
    s = x[:, 0]
    q = w[3] * s + w[4] * (2 * s**2 - 1) + w[5] * (4 * s**3 - 3 * s)
    num = w[0] + w[1] * s + w[2] * (2 * s**2 - 1)
    np.testing.assert_allclose(spec.numpy(x, w)[:, 0], num / (1 + q**2), rtol=1e-12)


def test_free_theta0_scale_invariance_and_init(rng):
    """Eq. 19 with θ_0 free is unchanged by scaling all ω and θ (the flat direction that
    ``fixed_theta0`` removes), and its initial denominator starts near θ_0 = 1."""
    spec = RationalChebyshev(4, 3, positive_denominator=False, fixed_theta0=False)
    w = spec.init_weights(rng)
    assert abs(w[5] - 1.0) < 0.5  # θ_0 = 1 + N(0, 0.1²)
    x = np.linspace(-1, 1, 101)[:, None]
    np.testing.assert_allclose(spec.numpy(x, 3.7 * w), spec.numpy(x, w), rtol=1e-12)


def test_bad_rational_specs():
    with pytest.raises(TypeError, match=r"^fixed_theta0 must be True or False, got 1"):
        RationalChebyshev(fixed_theta0=1)
    with pytest.raises(TypeError, match=r"^positive_denominator must be True or False, got 'no'"):
        RationalChebyshev(positive_denominator="no")
    with pytest.raises(ValueError, match=r"^RationalChebyshev degrees \(1000000000000000, 1\)"):
        RationalChebyshev(10**15, 1)
    with pytest.raises(ValueError, match=r"^x must have shape \(\.\.\., 1\), got \(3, 2\)"):
        RationalChebyshev(2, 1).numpy(np.zeros((3, 2)), np.zeros(4))
