"""Defects a user met on a system of their own, each one clear behaviour: a block called with
its inputs as separate arguments, inputs that contradict the recorded u, and discovery on a
model that failed its consistency check."""

import warnings

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    DiscoveryWarning,
    HybridModel,
    InconsistentModelWarning,
    IpoptOptions,
    Parameter,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    discover,
    solve,
)
from collocnode.models._hybrid import Blocks
from collocnode.nn import MLP


def test_a_block_takes_its_inputs_as_one_column_or_one_argument_each():
    model = HybridModel(
        n_states=2, blocks={"f": MLP((2, 3, 1), "tanh")}, rhs=lambda x, u, t, b, p: [x[1], 0]
    )
    w = np.linspace(-1.0, 1.0, model.n_params)
    x = ca.DM([0.3, -0.7])
    column = model.blocks["f"].casadi(x, w)
    bound = Blocks(model.blocks, {"f": w})["f"]
    assert float(bound(x[0], x[1])) == pytest.approx(float(column))
    assert float(bound(x)) == pytest.approx(float(column))
    with pytest.raises(ValueError, match="block 'f' takes 2 inputs"):
        bound(x[0])


def forced_data(u: np.ndarray) -> Trajectory:
    t = np.linspace(0.0, 1.0, 11)
    return Trajectory(t, np.exp(-t)[:, None], u=u[:, None])


def forced_model() -> HybridModel:
    return HybridModel(1, {}, lambda x, u, t, b, p: -x[0] + u[0], n_inputs=1, parameters={})


def test_inputs_that_contradict_the_recorded_u_are_one_clear_error():
    t = np.linspace(0.0, 1.0, 11)
    data = forced_data(np.sin(t))
    # the same signal as a function: accepted
    TrainingProblem(forced_model(), data, inputs=lambda s: np.sin(s)[:, None])
    with pytest.raises(
        ValueError,
        match=r"inputs\[0\] and data\[0\]\.u disagree: at t = 1 input 0 is 0 from inputs but "
        r"0\.841471 in the data",
    ):
        TrainingProblem(forced_model(), data, inputs=lambda s: np.zeros((np.size(s), 1)))


def test_discovery_on_an_inconsistent_model_warns():
    # x' = 3 x on a two-interval mesh: the collocation error grows like e^{3t}
    t = np.linspace(0.0, 2.0, 11)
    model = HybridModel(1, {}, lambda x, u, t, b, p: p["k"] * x, parameters={"k": Parameter(3.0)})
    problem = TrainingProblem(model, Trajectory(t, np.exp(3.0 * t)[:, None]), initial_state="data")
    with pytest.warns(InconsistentModelWarning):
        sol = solve(problem, RadauIIA(2, 2, ipopt=IpoptOptions(print_level=0)))
    with pytest.warns(DiscoveryWarning, match="failed its consistency check"):
        discover(sol, None)
    consistent = solve(problem, RadauIIA(40, 3, ipopt=IpoptOptions(print_level=0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiscoveryWarning)
        discover(consistent, None)


def test_a_prediction_past_the_training_range_warns_once_naming_block_and_input():
    from collocnode import ExtrapolationWarning, NeuralODE

    t = np.linspace(0.0, 3.0, 31)
    x = np.column_stack([np.cos(t), -np.sin(t)])  # inside [-1, 1]
    problem = TrainingProblem(
        NeuralODE(MLP((2, 2), "identity")), Trajectory(t, x), initial_state="data"
    )
    sol = solve(problem, RadauIIA(20, 3, ipopt=IpoptOptions(print_level=0)), seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtrapolationWarning)
        sol.simulate(t)  # the data's own start and horizon
    with pytest.warns(ExtrapolationWarning, match=r"block 'f' input 'x0' = 3 at t = 0, outside"):
        sol.simulate(t, np.array([3.0, 0.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtrapolationWarning)
        sol.simulate(t, np.array([3.0, 0.0]), check_range=False)
