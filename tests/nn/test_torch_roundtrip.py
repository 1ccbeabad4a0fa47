import numpy as np
import pytest

from collocnode.nn import ACTIVATIONS, MLP

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("activation", ["tanh", "sigmoid", "squareplus", "silu", "softplus"])
def test_torch_module_matches_casadi_and_round_trips(activation, rng):
    spec = MLP((3, 7, 7, 2), activation, input_shift=(0.1, 0.2, 0.3), output_scale=(2.0, 0.5))
    w = spec.init_weights(rng)
    module = spec.torch_module(w)
    x = rng.standard_normal((11, 3))
    y_torch = module(torch.as_tensor(x)).detach().numpy()
    y_ca = np.array(spec.casadi_function()(x.T, w)).T
    np.testing.assert_allclose(y_torch, y_ca, rtol=1e-12, atol=1e-12)
    # torch -> flat -> CasADi: perturb in torch, read back, compare.
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.01)
    w2 = module.get_flat()
    np.testing.assert_allclose(
        module(torch.as_tensor(x)).detach().numpy(), spec.numpy(x, w2), rtol=1e-12, atol=1e-12
    )


def test_torch_rational_set_flat_checks_the_shape():
    from collocnode.nn import RationalChebyshev

    module = RationalChebyshev(2, 1).torch_module()
    with pytest.raises(ValueError, match=r"^weights must have shape \(4,\), got \(5,\)"):
        module.set_flat(np.zeros(5))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_every_activation_has_a_torch_form_that_agrees_with_numpy(name):
    from collocnode.nn._torch import torch_activation

    x = np.linspace(-30.0, 30.0, 121)
    got = torch_activation(name)(torch.tensor(x, dtype=torch.float64)).numpy()
    # torch's softplus returns x itself above 20 (an error below 2.1e-9 there)
    np.testing.assert_allclose(got, ACTIVATIONS[name].numpy(x), rtol=1e-10, atol=3e-9)
