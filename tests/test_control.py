"""A trained model as the dynamics of a control problem (collocnode.models._control)."""

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


def two_tanks() -> HybridModel:
    """Two tanks in a row: dh1/dt = u - a1 sqrt(h1), dh2/dt = a1 sqrt(h1) - a2 sqrt(h2), the
    outflow coefficients a1, a2 [m^0.5/s] fitted (p = [a1, a2]) and the inflow u the control.
    sqrt has an infinite derivative at an empty tank."""
    return HybridModel(
        n_states=2,
        blocks={},
        rhs=lambda x, u, t, nets, prm: [
            u[0] - prm["a1"] * ca.sqrt(x[0]),
            prm["a1"] * ca.sqrt(x[0]) - prm["a2"] * ca.sqrt(x[1]),
        ],
        n_inputs=1,
        parameters={"a1": Parameter(0.5, fit=True), "a2": Parameter(0.4, fit=True)},
        state_names=("h1", "h2"),
    )


TANKS_P = np.array([0.5, 0.4])
TANKS_ALG = RadauIIA(20, 3, ipopt=IpoptOptions(print_level=0))


def fill_second_tank(x, p, u, t):
    return (x[1] - 1.0) ** 2 + 0.01 * u[0] ** 2


def test_a_control_problem_under_a_square_root_solves_without_a_state_guess():
    """The default guess of the states was 0, where sqrt's derivative is infinite: IPOPT
    stopped at once with Invalid_Number_Detected. It is the initial state held constant."""
    dop = control_problem(
        two_tanks(),
        (0.0, 10.0),
        Controls(1, lb=0.0, ub=1.0),
        p=TANKS_P,
        x0=[0.2, 0.1],
        lagrange=fill_second_tank,
    )
    sol = solve(dop, TANKS_ALG)
    assert sol.status == SolverStatus.SUCCESS, sol.message
    assert sol(10.0)[1] == pytest.approx(1.0, abs=0.1)  # the second tank filled to 1 m
    np.testing.assert_array_equal(dop.x_guess, [0.2, 0.1])


@pytest.mark.parametrize(
    ("fields", "inside"),
    [
        # empty tanks: the guess leaves the singular point, upward
        ({"x0": [0.0, 0.0]}, lambda g: np.all(g > 0)),
        # and stays strictly inside the bounds
        ({"x0": [0.0, 0.0], "x_lb": 0.0, "x_ub": 2.0}, lambda g: np.all((g > 0) & (g < 2))),
        # a free initial state: the middle of the bounds; an initial state outside them: inside
        ({"x0": [np.nan, 3.0], "x_lb": 0.0, "x_ub": 2.0}, lambda g: g[0] == 1 and 1.9 < g[1] < 2),
    ],
)
def test_the_default_state_guess_is_in_the_bounds_and_off_singular_points(fields, inside):
    from collocnode.models._control import default_state_guess

    dop = control_problem(
        two_tanks(), (0.0, 10.0), Controls(1, lb=0.0, ub=1.0), p=TANKS_P, **fields
    )
    guess = dop.x_guess
    assert guess.shape == (2,) and inside(guess), guess
    np.testing.assert_array_equal(default_state_guess(dop), guess)
    if fields["x0"][0] == 0.0:
        sol = solve(dop.remake(lagrange=fill_second_tank), TANKS_ALG)
        assert sol.status == SolverStatus.SUCCESS, sol.message


def test_the_default_guess_steps_down_where_a_step_up_leaves_the_domain():
    """x' = u - sqrt(1 - x) at x0 = 1: above 1 the square root is NaN, below it finite."""
    drain = HybridModel(
        n_states=1, blocks={}, rhs=lambda x, u, t, nets, prm: [u[0] - ca.sqrt(1 - x[0])], n_inputs=1
    )
    dop = control_problem(drain, (0.0, 1.0), Controls(1), p=np.zeros(0), x0=[1.0])
    assert dop.x_guess[0] == pytest.approx(0.99)


def test_a_given_state_guess_is_kept():
    dop = control_problem(
        two_tanks(), (0.0, 1.0), Controls(1), p=TANKS_P, x0=[0.2, 0.1], x_guess=[0.5, 0.6]
    )
    np.testing.assert_array_equal(dop.x_guess, [0.5, 0.6])


def test_an_evaluation_error_names_the_infinite_derivative_its_cause_and_the_lever():
    """The same tanks written by hand, with the default guess of a DynamicOptimizationProblem
    (0): the solve fails, and its message says where, why and what to give."""
    plant = two_tanks()
    dop = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: plant.symbolic(x, ca.DM(TANKS_P), u, t)[0],
        n_states=2,
        n_params=0,
        tspan=(0.0, 10.0),
        x0=[0.2, 0.1],
        controls=Controls(1, lb=0.0, ub=1.0),
        lagrange=fill_second_tank,
    )
    sol = solve(dop, TANKS_ALG)
    assert sol.status == SolverStatus.EVALUATION_ERROR
    assert sol.message.startswith(
        "non-finite derivative of the dynamics with respect to state x[0] at collocation node 0"
    ), sol.message
    assert "likely cause" in sol.message and "sqrt(x) at x = 0" in sol.message
    assert "x_guess" in sol.message and "x_lb" in sol.message
