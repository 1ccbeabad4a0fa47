"""A trained model as the dynamics of a control problem (collocnode.models.control)."""

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    Controls,
    DynamicOptimizationProblem,
    HybridModel,
    Inputs,
    IpoptOptions,
    LearnedDynamics,
    NeuralODE,
    Parameter,
    RadauIIA,
    SolverStatus,
    control_problem,
    solve,
)
from collocnode.nn import MLP
from collocnode.serialize import load_model, save_model

ALG = RadauIIA(30, 3, ipopt=IpoptOptions(tol=1e-10, print_level=0))


def forced_decay() -> HybridModel:
    """x' = -k x + b u1 + u0 with fitted k and b: input 0 a known disturbance, input 1 the
    actuator."""
    return HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, nets, prm: -prm["k"] * x + prm["b"] * u[1] + u[0],
        n_inputs=2,
        parameters={"k": Parameter(0.5, fit=True), "b": Parameter(1.0, fit=True)},
        state_names=("x",),
    )


def cost(x, p, u, t):
    # u = [known disturbance, control]
    return x[0] ** 2 + 0.1 * u[1] ** 2


DISTURBANCE = Inputs.from_function(lambda t: 0.3 * np.sin(3 * t)[:, None], 1)


def test_learned_model_gives_the_same_optimum_as_its_equations_written_by_hand():
    trained_p = np.array([2.0, 0.7])  # k, b
    dop = control_problem(
        forced_decay(),
        (0.0, 2.0),
        Controls(1, lb=-1.0, ub=1.0),
        control_inputs=[1],
        inputs=DISTURBANCE,
        p=trained_p,
        lagrange=cost,
        x0=[1.0],
    )
    by_hand = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -2.0 * x + 0.7 * u[1] + u[0],
        n_states=1,
        n_params=0,
        tspan=(0.0, 2.0),
        lagrange=cost,
        x0=[1.0],
        inputs=DISTURBANCE,
        controls=Controls(1, lb=-1.0, ub=1.0),
    )
    learned, reference = solve(dop, ALG), solve(by_hand, ALG)
    assert learned.status == reference.status == SolverStatus.SUCCESS
    assert learned.objective == pytest.approx(reference.objective, rel=1e-12)
    t = np.linspace(0, 2, 9)
    np.testing.assert_allclose(learned.controls(t), reference.controls(t), atol=1e-9)
    # the weights are constants: no parameter unknowns, so no node-by-parameter border
    assert learned.size.n_variables == learned.mesh.n_nodes * 2


def test_a_loaded_model_file_is_the_same_dynamics(tmp_path, rng):
    model = NeuralODE(MLP((2, 4, 1), "tanh"), n_inputs=1)
    p = model.init_params(rng)
    path = save_model(tmp_path / "model.json", model, p)
    from_file = LearnedDynamics.of(load_model(path))
    direct = LearnedDynamics.of(model, p)
    x, u, t = ca.SX.sym("x"), ca.SX.sym("u"), ca.SX.sym("t")
    f = ca.Function("f", [x, u, t], [from_file(x, u, t), direct(x, u, t)])
    for xv, uv in rng.uniform(-2, 2, (5, 2)):
        a, b = f(xv, uv, 0.0)
        assert float(a) == float(b)
        assert float(a) == pytest.approx(float(model.function(xv, p, uv, 0.0)[0]), rel=1e-14)
    dop = control_problem(
        from_file, (0.0, 1.0), Controls(1, lb=-1, ub=1), x0=[0.5], lagrange=cost_all_controls
    )
    sol = solve(dop, RadauIIA(10, 3, ipopt=IpoptOptions(print_level=0)))
    assert sol.status == SolverStatus.SUCCESS
    assert sol.controls(0.5).shape == (1,)


def cost_all_controls(x, p, u, t):
    return x[0] ** 2 + 0.1 * u[0] ** 2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"controls": Controls(2)}, r"controls.n = 2 does not match the 1 model inputs named"),
        ({"control_inputs": [1, 0]}, r"controls.n = 1 does not match the 2 model inputs"),
        ({"control_inputs": [2]}, r"names input 2, but the model has 2 inputs"),
        ({"inputs": None}, r"inputs.n = 0, but the model has 2 inputs of which 1"),
        ({"p": None}, r"parameters are missing \(p is None\)"),
        ({"p": np.ones(3)}, r"p must have shape \(2,\)"),
    ],
)
def test_bad_control_problem_input_gives_one_clear_error(kwargs, match):
    args = {
        "controls": Controls(1),
        "control_inputs": [1],
        "inputs": DISTURBANCE,
        "p": np.array([2.0, 0.7]),
        **kwargs,
    }
    with pytest.raises(ValueError, match=match):
        control_problem(forced_decay(), (0.0, 1.0), **args)


def test_anything_but_a_trained_model_is_refused():
    with pytest.raises(TypeError, match="trained must be a TrainingSolution"):
        LearnedDynamics.of("model.json")
