"""TrainingProblem: several trajectories sharing the weights, validation of its inputs."""

import numpy as np
import pytest

from collocnode import (
    BlockConstraint,
    IpoptOptions,
    NeuralODE,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP
from collocnode.transcription import StructuredNLP

QUIET = IpoptOptions(print_level=0, tol=1e-9, max_iter=300)


def oscillator(x0, t):
    """x' = y, y' = -x (exact)."""
    c, s = np.cos(t), np.sin(t)
    return np.column_stack([x0[0] * c + x0[1] * s, -x0[0] * s + x0[1] * c])


def linear_model():
    # one linear layer: the exact dynamics [[0, 1], [-1, 0]] is representable
    return NeuralODE(MLP((2, 2), "identity"))


def test_several_trajectories_share_the_weights_and_recover_the_dynamics():
    t = np.linspace(0, 2, 21)
    starts = ([1.0, 0.0], [0.0, 1.5], [-0.5, 0.5])
    data = [Trajectory(t, oscillator(np.array(x0), t)) for x0 in starts]
    prob = TrainingProblem(linear_model(), data, initial_state="data")
    sol = solve(prob, RadauIIA(10, 3, ipopt=QUIET), seed=0)
    assert sol.success
    assert sol.solution.n_segments == 3
    W = sol.params["f"][:4].reshape(2, 2)
    np.testing.assert_allclose(W, [[0, 1], [-1, 0]], atol=1e-5)
    for k, x0 in enumerate(starts):
        np.testing.assert_allclose(sol.solution.states(t, k), data[k].x, atol=1e-5)
        sim = sol.simulate(t, segment=k)
        np.testing.assert_allclose(sim.x, data[k].x, atol=1e-5)
        np.testing.assert_allclose(sim.x[0], x0, atol=1e-12)


def test_nlp_size_grows_linearly_with_trajectories():
    t = np.linspace(0, 1, 11)
    sizes = []
    for n in (1, 2, 4):
        data = [Trajectory(t, oscillator(np.array([1.0, 0.1 * k]), t)) for k in range(n)]
        dop = TrainingProblem(linear_model(), data).to_dop(np.zeros(6))
        from collocnode import Mesh

        nlp = StructuredNLP(dop, [Mesh.equidistant(0, 1, 5, 3)] * n)
        sizes.append((nlp.n_c, nlp.size.nnz_jacobian, nlp.n_z - 6))
    one = np.array(sizes[0])
    for n, size in zip((2, 4), sizes[1:], strict=True):
        np.testing.assert_array_equal(np.array(size), n * one)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(initial_state=np.zeros((3, 2))), "initial_state"),
        (dict(initial_state="first"), "initial_state"),
        (dict(tspan=(0.0, 0.5)), "tspan"),
        (dict(state_guess=["data"]), "state_guess"),
    ],
)
def test_bad_multi_trajectory_options(kwargs, match):
    t = np.linspace(0, 1, 11)
    data = [Trajectory(t, oscillator(np.array([1.0, 0.0]), t))] * 2
    with pytest.raises(ValueError, match=match):
        TrainingProblem(linear_model(), data, **kwargs)


def test_data_must_be_trajectories():
    with pytest.raises(TypeError, match=r"data\[1\]"):
        TrainingProblem(linear_model(), [Trajectory([0.0, 1.0], [[1, 0], [0, 1]]), "x"])


# ---- one clear error per bad field, naming the field and the value -----------------------------


def one_trajectory(n: int = 11) -> Trajectory:
    t = np.linspace(0, 1, n)
    return Trajectory(t, oscillator(np.array([1.0, 0.0]), t))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(state_guess=5), TypeError, r"^state_guess must be .* got 5$"),
        (dict(state_guess=[5]), TypeError, r"^state_guess\[0\] must be .* got 5$"),
        (dict(state_guess="zero"), ValueError, r"^unknown state_guess 'zero'"),
        (dict(tspan="ab"), TypeError, r"^tspan must be an array of real numbers, got 'ab'"),
        (dict(tspan=("a", "b")), TypeError, r"^tspan must be an array of real numbers"),
        (dict(tspan=(0.0, 0.5, 1.0)), ValueError, r"^tspan must have shape \(2,\)"),
        (dict(tspan=(0.0, np.nan)), ValueError, r"^tspan must be finite"),
        (dict(fit=5), TypeError, r"^fit must be 'states', 'outputs' or a sequence .* got 5$"),
        (dict(fit=[]), ValueError, r"^fit must name at least one column"),
        (dict(inputs=5), ValueError, r"^inputs must be one callable per trajectory \(1\), got 5"),
        (dict(block_constraints=5), TypeError, r"^block_constraints must be a sequence"),
        (dict(block_constraints=["f"]), TypeError, r"^block_constraints\[0\] must be a Block"),
        (dict(params_guess=np.zeros(3)), ValueError, r"^params_guess must have shape \(6,\)"),
        (dict(params_guess=[np.nan] * 6), ValueError, r"^params_guess must be finite"),
        (dict(interpolation="spline"), ValueError, r"^unknown interpolation 'spline'"),
        (dict(data=5), TypeError, r"^data must be a Trajectory or a sequence of them, got 5"),
    ],
)
def test_bad_fields_give_one_clear_error(kwargs, error, match):
    kwargs = {"data": one_trajectory(), **kwargs}
    with pytest.raises(error, match=match):
        TrainingProblem(linear_model(), **kwargs)


@pytest.mark.parametrize(
    "constraint, match",
    [
        (BlockConstraint("f", at=[0.0, 0.0], lb=np.nan), r"'f'\.lb must not be NaN"),
        (BlockConstraint("f", at=[0.0, 0.0], lb=1.0, ub=0.0), r"'f' needs lb <= ub"),
        (BlockConstraint("f", at=[0.0, 0.0], ub=[0.0, 0.0, 0.0]), r"'f'\.ub must be a scalar"),
    ],
)
def test_block_constraint_bounds_are_checked(constraint, match):
    with pytest.raises(ValueError, match=match):
        TrainingProblem(linear_model(), one_trajectory(), block_constraints=[constraint])


def test_block_constraint_bounds_may_be_infinite_and_one_per_output():
    ok = BlockConstraint("f", at=[0.0, 0.0], lb=[-np.inf, 0.0], ub=np.inf)
    assert TrainingProblem(linear_model(), one_trajectory(), block_constraints=[ok])


def test_short_data_is_refused_at_construction():
    with pytest.raises(ValueError, match=r"^data\[0\] must hold at least 2 samples"):
        TrainingProblem(linear_model(), one_trajectory(1))
    with pytest.raises(ValueError, match=r"^interpolation 'cubic' needs >= 4 samples.*data\[0\]"):
        TrainingProblem(linear_model(), one_trajectory(3))
    assert TrainingProblem(linear_model(), one_trajectory(3), interpolation="linear")


def test_state_guess_trajectory_must_match_the_model():
    other = Trajectory(np.linspace(0, 1, 11), np.zeros(11))
    with pytest.raises(ValueError, match=r"^state_guess is a Trajectory with 1 states"):
        TrainingProblem(linear_model(), one_trajectory(), state_guess=other)


def test_fields_are_stored_in_their_checked_form():
    prob = TrainingProblem(
        linear_model(), one_trajectory(), tspan=[0.0, 0.5], params_guess=[0, 1, -1, 0, 0, 0]
    )
    assert prob.tspan == (0.0, 0.5) and prob.horizon == (0.0, 0.5)
    assert prob.params_guess.dtype == np.float64 and prob.params_guess.shape == (6,)


def test_columns_names_the_fitted_columns_in_loss_order():
    prob = TrainingProblem(linear_model(), one_trajectory(), fit=["x1", "x0"])
    assert prob.columns == (("x", 1), ("x", 0))
    np.testing.assert_array_equal(prob.targets(), prob.data.x[:, [1, 0]])
    assert TrainingProblem(linear_model(), one_trajectory()).columns == (("x", 0), ("x", 1))


@pytest.fixture(scope="module")
def trained():
    t = np.linspace(0, 1, 11)
    data = Trajectory(t, oscillator(np.array([1.0, 0.0]), t))
    return solve(TrainingProblem(linear_model(), data), RadauIIA(5, 2, ipopt=QUIET), seed=0)


def test_training_solution_forwards_the_collocation_solution(trained):
    assert trained.iterations == trained.solution.iterations
    assert trained.objective == trained.solution.objective


def test_a_typo_on_a_training_solution_names_the_training_solution(trained):
    with pytest.raises(
        AttributeError, match=r"^'TrainingSolution' object has no attribute 'sucess'"
    ):
        trained.sucess  # noqa: B018
    with pytest.raises(AttributeError, match=r"'TrainingSolution' .* '_private'"):
        trained._private  # noqa: B018
    assert not hasattr(trained, "sucess")


@pytest.mark.parametrize(
    "t, error, match",
    [
        (5.0, ValueError, r"^t must have 1 dimension\(s\), got shape \(\)"),
        ([], ValueError, r"^t must hold at least one output time"),
        ("abc", TypeError, r"^t must be an array of real numbers"),
        ([1.0, 0.5], ValueError, r"^t must be strictly increasing"),
    ],
)
def test_training_solution_simulate_checks_t(trained, t, error, match):
    with pytest.raises(error, match=match):
        trained.simulate(t)


def test_training_solution_simulate_checks_segment(trained):
    with pytest.raises(ValueError, match=r"^segment must be < 1 \(the number of trajectories\)"):
        trained.simulate([0.0, 1.0], segment=1)
    with pytest.raises(TypeError, match=r"^segment must be a non-negative integer, got 'a'"):
        trained.simulate([0.0, 1.0], segment="a")
    assert trained.simulate([0.5]).x.shape == (1, 2)
