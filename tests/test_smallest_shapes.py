"""The smallest shapes every public constructor accepts: one state, no inputs, one fitted column,
one sample interval, one block, zero hidden layers, one parameter, one stage.

Each is constructed and, where it is a training problem, solved on a tiny instance whose answer
is known, so a shape that breaks inside CasADi (a (1, 1) symbol sliced into a 1 x 0 row) or
trains the wrong thing fails here."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    BlockConstraint,
    HybridModel,
    IpoptOptions,
    NeuralODE,
    Parameter,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    simulate,
    solve,
)
from collocnode.nn import MLP, RationalChebyshev

QUIET = IpoptOptions(print_level=0, tol=1e-10, max_iter=100)
T = np.linspace(0.0, 1.0, 11)
DECAY = np.exp(-T)  # x' = -x, x(0) = 1


def small(intervals: int = 10, stages: int = 2) -> RadauIIA:
    return RadauIIA(intervals, stages, ipopt=QUIET)


def decay_data(t: np.ndarray = T) -> Trajectory:
    return Trajectory(t, np.exp(-t))


# ---- containers and blocks --------------------------------------------------------------------


def test_trajectory_of_one_sample_and_one_state():
    traj = Trajectory([0.5], [2.0])
    assert (traj.n_samples, traj.n_states) == (1, 1)
    assert traj.u.shape == (1, 0) and traj.y.shape == (1, 0)
    assert (traj.t0, traj.tf) == (0.5, 0.5)
    assert traj.head(1).x.tolist() == [[2.0]] and traj.window(0.5, 0.5).n_samples == 1
    assert np.array_equal(traj.with_noise(0.0, seed=0).x, traj.x)


def test_mlp_without_hidden_layers_is_one_affine_map_on_every_backend():
    torch = pytest.importorskip("torch")
    net = MLP((1, 1))
    assert net.n_params == 2 and net.layer_shapes == [(1, 1)]
    w = np.array([-2.0, 0.5])
    x = np.array([[0.0], [1.0], [3.0]])
    np.testing.assert_allclose(net.numpy(x, w), -2.0 * x + 0.5)
    sym = net.casadi_function()
    np.testing.assert_allclose(float(sym(3.0, w)), -5.5)
    module = net.torch_module(w)
    np.testing.assert_allclose(module(torch.as_tensor(x)).detach().numpy(), -2.0 * x + 0.5)
    assert net.init_weights(0).shape == (2,)


def test_rational_block_of_degree_zero_is_a_constant():
    block = RationalChebyshev(0, 0, output_scale=2.0)
    assert block.n_params == 1
    w = np.array([0.75])
    np.testing.assert_allclose(block.numpy(np.array([[-0.5], [0.5]]), w), [[1.5], [1.5]])
    np.testing.assert_allclose(float(block.casadi_function()(0.3, w)), 1.5)


@pytest.mark.parametrize(
    "build, n_states, n_in",
    [
        (lambda: NeuralODE(MLP((1, 1))), 1, 1),
        (lambda: NeuralODE(MLP((2, 1)), n_inputs=1), 1, 2),
        (lambda: NeuralODE(MLP((2, 1)), time_input=True), 1, 2),
        (lambda: NeuralODE(MLP((2, 1)), second_order=True), 2, 2),
        (lambda: NeuralODE([MLP((1, 1))]), 1, 1),
    ],
)
def test_smallest_neural_odes_build_and_evaluate(build, n_states, n_in):
    model = build()
    assert model.n_states == n_states and len(model.blocks) == 1
    x = np.arange(1.0, n_states + 1.0)
    p = np.ones(model.n_params)
    u = np.ones(model.n_inputs)
    xdot, y = model.function(x, p, u, 0.5)
    assert xdot.shape == (n_states, 1) and y.shape == (0, 1)
    # every weight 1: the network's single output is sum of its inputs + 1
    inputs = np.concatenate([x, u, [0.5] if n_in > n_states + model.n_inputs else []])
    assert float(xdot[-1]) == pytest.approx(inputs.sum() + 1.0)


def test_hybrid_model_with_one_parameter_and_no_blocks():
    model = exponential_model()
    assert model.n_params == 1 and model.n_weights == 0 and model.slices == {"a": slice(0, 1)}
    xdot, _ = model.function(2.0, 3.0, np.zeros(0), 0.0)
    assert float(xdot) == -6.0
    assert model.split_params(np.array([3.0])) == {"a": 3.0}


def exponential_model(with_output: bool = False) -> HybridModel:
    """x' = -a x with one fitted parameter a and no network; optionally y = 2 x."""
    return HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, blocks, params: -params["a"] * x,
        outputs=(lambda x, u, t, blocks, params: 2.0 * x) if with_output else None,
        n_outputs=1 if with_output else 0,
        parameters={"a": Parameter(0.5, fit=True, lb=0.0, ub=10.0)},
    )


# ---- training problems: construct, solve a tiny instance, check the answer ---------------------


def test_one_state_neural_ode_trains():
    """The smallest neural ODE (one fitted column, no inputs), which once failed inside CasADi."""
    alg = RadauIIA(5, 2, ipopt=IpoptOptions(print_level=0, max_iter=300))
    sol = solve(TrainingProblem(NeuralODE(MLP((1, 3, 1))), decay_data()), alg, seed=0)
    assert sol.status.ok
    assert np.isfinite(sol.objective) and 0.0 <= sol.objective < 1e-3
    x = sol(T)[:, 0]
    assert np.sqrt(np.mean((x - DECAY) ** 2)) < 0.05 and np.all(np.diff(x) < 0)


def test_one_state_linear_neural_ode_recovers_the_rate():
    prob = TrainingProblem(NeuralODE(MLP((1, 1), "identity")), decay_data(), initial_state="data")
    sol = solve(prob, small(), seed=0)
    assert sol.success
    np.testing.assert_allclose(sol.params["f"], [-1.0, 0.0], atol=1e-3)
    np.testing.assert_allclose(sol.simulate(T).x[:, 0], DECAY, atol=1e-4)


def test_two_state_model_fitting_one_state_column():
    t = np.linspace(0.0, 2.0, 21)
    x = np.column_stack([np.cos(t), -np.sin(t)])
    model = NeuralODE(MLP((2, 2), "identity"))
    prob = TrainingProblem(
        model, Trajectory(t, x), fit=["x0"], initial_state="data", state_guess="data"
    )
    assert prob.columns == (("x", 0),)
    sol = solve(prob, small(10, 3), seed=0)
    assert sol.status.ok and 0.0 <= sol.objective < 1e-8
    np.testing.assert_allclose(sol(t)[:, 0], x[:, 0], atol=1e-4)


def test_one_fitted_parameter_without_blocks_is_recovered():
    # the parameter vector is a (1, 1) symbol: every split of it must keep its meaning
    data = Trajectory(T, np.exp(-2.0 * T))
    sol = solve(TrainingProblem(exponential_model(), data, initial_state="data"), small())
    assert sol.success
    assert sol.params["a"] == pytest.approx(2.0, abs=1e-3)


def test_one_parameter_with_regularization():
    # the weight penalty covers no weights here; it must be zero, not a slice of p
    data = Trajectory(T, np.exp(-2.0 * T))
    plain = solve(TrainingProblem(exponential_model(), data, initial_state="data"), small())
    prob = TrainingProblem(exponential_model(), data, initial_state="data", regularization=1.0)
    sol = solve(prob, small())
    assert sol.success
    assert sol.params["a"] == pytest.approx(plain.params["a"], rel=1e-9)
    assert sol.objective == pytest.approx(plain.objective, rel=1e-9, abs=1e-15)


def test_one_output_column_fitted():
    data = Trajectory(T, np.exp(-2.0 * T), y=2.0 * np.exp(-2.0 * T))
    model = exponential_model(with_output=True)
    prob = TrainingProblem(model, data, fit="outputs", initial_state="data")
    assert prob.columns == (("y", 0),)
    sol = solve(prob, small())
    assert sol.success and sol.params["a"] == pytest.approx(2.0, abs=1e-3)


def test_one_sample_interval_with_linear_interpolation():
    data = decay_data(np.array([0.0, 1.0]))
    prob = TrainingProblem(
        NeuralODE(MLP((1, 1), "identity")), data, interpolation="linear", initial_state="data"
    )
    sol = solve(prob, small(1, 1), seed=0)
    assert sol.status.ok and np.isfinite(sol.objective) and sol.objective >= 0.0
    assert sol.solution.mesh.n_nodes == 2
    assert np.all(np.isfinite(sol.p))


def test_one_stage_one_interval_with_an_input():
    # x' = u - x, u = 1: one input, one state, one Radau stage
    t = np.linspace(0.0, 1.0, 6)
    x = 1.0 - np.exp(-t)
    data = Trajectory(t, x, u=np.ones(t.size))
    model = NeuralODE(MLP((2, 1), "identity"), n_inputs=1)
    prob = TrainingProblem(model, data, initial_state="data")
    sol = solve(prob, small(1, 1), seed=0)
    assert sol.status.ok and np.all(np.isfinite(sol.p))
    sim = sol.simulate(t)
    assert sim.x.shape == (t.size, 1) and np.all(np.isfinite(sim.x))


def test_a_list_of_one_trajectory_is_one_trajectory():
    prob = TrainingProblem(NeuralODE(MLP((1, 1), "identity")), [decay_data()])
    assert isinstance(prob.data, Trajectory) and prob.n_trajectories == 1


def test_block_constraint_on_a_one_input_block():
    # x' = F(x) with F(0) = 0 enforced; the data x' = -x satisfies it
    prob = TrainingProblem(
        NeuralODE(MLP((1, 1), "identity")),
        decay_data(),
        initial_state="data",
        block_constraints=[BlockConstraint("f", at=0.0)],
    )
    sol = solve(prob, small(), seed=0)
    assert sol.success
    assert sol.params["f"][1] == pytest.approx(0.0, abs=1e-12)  # F(0) = b = 0, a constraint
    assert sol.params["f"][0] == pytest.approx(-1.0, abs=1e-3)


# ---- simulation -------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["DOP853", "rk4"])
def test_simulate_one_state_at_one_and_two_times(method):
    model = exponential_model(with_output=True)
    one = simulate(model, [2.0], [0.0], [1.5], method=method)
    assert one.x.tolist() == [[1.5]] and one.y.tolist() == [[3.0]]
    two = simulate(model, [2.0], [0.0, 0.1], [1.0], method=method, substeps=50)
    np.testing.assert_allclose(two.x[:, 0], np.exp(-2.0 * np.array([0.0, 0.1])), rtol=1e-9)


def test_symbolic_model_of_one_state_in_mx():
    model = NeuralODE(MLP((1, 1)))
    xdot, _ = model.symbolic(ca.MX.sym("x"), ca.MX.sym("p", 2), ca.MX(0, 1), ca.MX.sym("t"))
    assert xdot.shape == (1, 1)
