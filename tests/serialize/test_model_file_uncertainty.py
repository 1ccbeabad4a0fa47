"""The uncertainty section of a model file: written with the model, read back checked, and a
loaded model draws the same bands as the trained one."""

import json

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    BlockConstraint,
    HybridModel,
    IpoptOptions,
    Parameter,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP
from collocnode.serialize import load_model, register_builder, save_model


@register_builder("tests.serialize.test_model_file_uncertainty:oscillator")
def oscillator(hidden: int = 3) -> HybridModel:
    """x'' = -k x - D(x'), D a network with D(0) = 0."""
    return HybridModel(
        n_states=2,
        blocks={"damping": MLP((1, hidden, 1), "tanh")},
        rhs=lambda s, u, t, b, p: ca.vertcat(s[1], -p["k"] * s[0] - b["damping"](s[1])),
        parameters={"k": Parameter(3.0, fit=True)},
        recipe=("tests.serialize.test_model_file_uncertainty:oscillator", {"hidden": hidden}),
    )


@pytest.fixture(scope="module")
def trained():
    t = np.linspace(0.0, 4.0, 41)
    rng = np.random.default_rng(0)
    x = np.column_stack([np.cos(2 * t), -2 * np.sin(2 * t)]) * np.exp(-0.1 * t)[:, None]
    data = Trajectory(t=t, x=x + 0.01 * rng.standard_normal(x.shape))
    problem = TrainingProblem(
        oscillator(),
        data,
        initial_state="data",
        regularization=1e-4,
        block_constraints=(BlockConstraint("damping", 0.0),),
    )
    sol = solve(problem, RadauIIA(40, 3, ipopt=IpoptOptions(tol=1e-9, print_level=0)), seed=0)
    return sol, sol.uncertainty()


def test_a_loaded_model_draws_the_bands_of_the_trained_one(trained, tmp_path):
    sol, unc = trained
    path = save_model(tmp_path / "model.json", sol, uncertainty=unc)
    loaded = load_model(path)
    v = np.linspace(-2.0, 2.0, 7)
    for which in ("posterior", "data"):
        for method in ("delta", "sampling"):
            before = unc.block_band("damping", v, which=which, method=method, seed=3)
            after = loaded.block_band("damping", v, which=which, method=method, seed=3)
            np.testing.assert_array_equal(after.lower, before.lower)
            np.testing.assert_array_equal(after.upper, before.upper)
    stored = loaded.uncertainty
    assert stored.hessian == "gauss-newton" and stored.converged
    assert set(stored.noise) == {"x0", "x1"} and stored.noise_estimated
    np.testing.assert_array_equal(stored.posterior.covariance(), unc.covariance())
    np.testing.assert_array_equal(stored.posterior.std(), unc.std())


def test_a_file_without_uncertainty_says_so(trained, tmp_path):
    sol, _ = trained
    loaded = load_model(save_model(tmp_path / "model.json", sol))
    assert loaded.uncertainty is None
    with pytest.raises(ValueError, match="holds no uncertainty"):
        loaded.block_band("damping", np.zeros(3))


def test_uncertainty_of_another_parameter_vector_is_refused(trained, tmp_path):
    sol, unc = trained
    with pytest.raises(ValueError, match="another parameter vector"):
        save_model(tmp_path / "model.json", sol.model, p=sol.p + 1.0, uncertainty=unc)
    with pytest.raises(TypeError, match=r"result of sol\.uncertainty"):
        save_model(tmp_path / "model.json", sol, uncertainty=unc.posterior)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda u: u.update(kinds=["weight"] * len(u["kinds"])), "kinds do not match the model"),
        (
            lambda u: u.update(kinds=["initial_state"] * len(u["kinds"])),
            "p_index must be -1 exactly",
        ),
        (lambda u: u.update(rcond=-1.0), "rcond must be a positive number"),
        (lambda u: u.update(hessian="bfgs"), "hessian must be"),
        (lambda u: u.update(noise={"x0": 0.0}), "noise must map column labels to positive"),
        (lambda u: u.pop("precision"), "missing field uncertainty.precision"),
        (lambda u: u.update(extra=1), "unexpected field 'extra'"),
        (lambda u: u["values"]["$array"]["data"].__setitem__(0, 123.0), "values do not match"),
        (
            lambda u: u["precision"]["$array"].update(shape=[1, 1], data=[1.0]),
            r"precision must have shape \(",
        ),
    ],
)
def test_a_damaged_uncertainty_section_is_one_clear_error(trained, tmp_path, edit, match):
    sol, unc = trained
    path = save_model(tmp_path / "model.json", sol, uncertainty=unc)
    doc = json.loads(path.read_text())
    edit(doc["uncertainty"])
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=match):
        load_model(path)
