"""HybridModel, NeuralODE and Parameter: one clear error per bad field, naming field and value."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from collocnode import HybridModel, NeuralODE, Parameter
from collocnode import _validation as v
from collocnode.nn import MLP


def model_with_rhs(rhs, n_states: int = 1) -> HybridModel:
    return HybridModel(n_states=n_states, blocks={"f": MLP((1, 1))}, rhs=rhs)


@pytest.mark.parametrize(
    "returned, error, match",
    [
        (None, TypeError, r"^rhs must return 1 values \(a CasADi expression or list\), got None"),
        ("x", TypeError, r"^rhs must return 1 values .* got 'x'"),
        ([1.0, 2.0], ValueError, r"^rhs must return 1 values, got shape \(2, 1\)"),
    ],
)
def test_rhs_returning_the_wrong_thing_is_one_clear_error(returned, error, match):
    model = model_with_rhs(lambda x, u, t, blocks, params: returned)
    with pytest.raises(error, match=match):
        model.function  # noqa: B018


def test_outputs_returning_none_is_one_clear_error():
    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, b, p: -x,
        outputs=lambda x, u, t, b, p: None,
        n_outputs=1,
    )
    with pytest.raises(TypeError, match=r"^outputs must return 1 values .* got None"):
        model.function  # noqa: B018


def test_symbolic_checks_the_shapes_of_its_arguments():
    model = NeuralODE(MLP((1, 1)))
    with pytest.raises(ValueError, match=r"^u must be a \(0, 1\) column, got shape \(1, 0\)"):
        model.symbolic(ca.SX.sym("x"), ca.SX.sym("p", 2), ca.SX(1, 0), ca.SX.sym("t"))
    with pytest.raises(ValueError, match=r"^p must be a \(2, 1\) column, got shape \(3, 1\)"):
        model.symbolic(ca.SX.sym("x"), ca.SX.sym("p", 3), ca.SX(0, 1), ca.SX.sym("t"))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(blocks=[MLP((1, 1))]), TypeError, r"^blocks must be a mapping of names to"),
        (dict(blocks={"f": "net"}), TypeError, r"^blocks\['f'\] must be a collocnode\.nn\.Block"),
        (dict(blocks={1: MLP((1, 1))}), TypeError, r"^blocks names must be strings, got 1"),
        (dict(parameters={"a": 1.0}), TypeError, r"^parameters\['a'\] must be a Parameter"),
        (dict(state_names="x"), TypeError, r"^state_names must be a sequence of strings"),
        (dict(state_names=("x", "v")), ValueError, r"^state_names has 2 labels for 1 columns"),
        (dict(state_names=(1,)), TypeError, r"^state_names must be a sequence of strings, got 1"),
        (dict(input_names=("u",)), ValueError, r"^input_names has 1 labels for 0 columns"),
    ],
)
def test_hybrid_model_fields(kwargs, error, match):
    fields = {"n_states": 1, "blocks": {}, "rhs": lambda x, u, t, b, p: -x, **kwargs}
    with pytest.raises(error, match=match):
        HybridModel(**fields)


def test_hybrid_model_refuses_more_states_than_fit_in_memory():
    with pytest.raises(ValueError, match=r"^n_states needs 10{30} states \(8e\+21 GB as float64\)"):
        HybridModel(n_states=10**30, blocks={}, rhs=lambda x, u, t, b, p: -x)


def test_a_block_fed_an_input_of_the_wrong_size_is_one_clear_error():
    # x[0] is 1×1: it would broadcast against the 2-input layer's weights without an error
    model = HybridModel(
        n_states=2, blocks={"f": MLP((2, 3, 2))}, rhs=lambda x, u, t, nets, p: nets["f"](x[0])
    )
    with pytest.raises(ValueError, match=r"^block 'f' takes 2 inputs \(a column\), got shape"):
        model.function  # noqa: B018


def test_hybrid_model_refuses_parameters_that_do_not_fit_in_memory(monkeypatch):
    # each block fits in "memory" (1000 floats), the two together do not
    monkeypatch.setattr(v, "physical_memory_bytes", lambda: 8 * 1000)
    blocks = {"a": MLP((1, 200, 1)), "b": MLP((1, 200, 1))}
    with pytest.raises(ValueError, match=r"^the model's parameter vector needs 1202 parameters"):
        HybridModel(n_states=1, blocks=blocks, rhs=lambda x, u, t, b, p: b["a"](x) + b["b"](x))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(lb=np.nan), ValueError, r"^lb must be a number or ±inf, got nan"),
        (dict(ub="1"), TypeError, r"^ub must be a number or ±inf, got '1'"),
        (dict(lb=2.0, ub=0.0), ValueError, r"^lb must be <= ub, got lb = 2.0, ub = 0.0"),
        (dict(fit="yes"), TypeError, r"^fit must be True or False, got 'yes'"),
        (dict(value=5.0, ub=1.0), ValueError, r"^parameter value 5.0 is outside its bounds"),
    ],
)
def test_parameter_fields(kwargs, error, match):
    with pytest.raises(error, match=match):
        Parameter(**{"value": 0.5, **kwargs})


def test_parameter_bounds_may_be_infinite_or_equal():
    assert Parameter(0.0, fit=True, lb=-np.inf, ub=np.inf).ub == np.inf
    assert Parameter(1.0, fit=np.bool_(True), lb=1.0, ub=1.0).lb == 1.0


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        (([],), {}, ValueError, r"^blocks must hold at least one network, got none"),
        (("net",), {}, TypeError, r"^blocks must be a mapping of names to"),
        (([MLP((1, 1)), "net"],), {}, TypeError, r"^blocks\['f1'\] must be a collocnode"),
        ((MLP((1, 1)),), dict(n_inputs="1"), TypeError, r"^n_inputs must be a non-negative"),
        ((MLP((1, 1)),), dict(n_inputs=-1), ValueError, r"^n_inputs must be a non-negative"),
        ((MLP((2, 1)),), dict(time_input="yes"), TypeError, r"^time_input must be True or False"),
        ((MLP((2, 1)),), dict(second_order=1), TypeError, r"^second_order must be True or False"),
        ((MLP((1, 1)),), dict(state_names=("a", "b")), ValueError, r"^state_names has 2 labels"),
        ((MLP((2, 2)),), dict(state_names="xy"), TypeError, r"^state_names must be a sequence of"),
        (
            (MLP((2, 1)),),
            {},
            ValueError,
            r"^block 'f' takes 2 inputs, but the neural ODE feeds it 1",
        ),
    ],
)
def test_neural_ode_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        NeuralODE(*args, **kwargs)


def test_rhs_may_return_a_list_of_expressions():
    model = HybridModel(n_states=2, blocks={}, rhs=lambda x, u, t, b, p: [x[1], -x[0] * x[1]])
    xdot = np.asarray(model.function([2.0, 3.0], [], [], 0.0)[0]).ravel()
    np.testing.assert_array_equal(xdot, [3.0, -6.0])
