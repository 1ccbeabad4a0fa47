"""TrainingProblem: several trajectories sharing the weights, validation of its inputs."""

import numpy as np
import pytest

from collocnode import IpoptOptions, NeuralODE, RadauIIA, TrainingProblem, Trajectory, solve
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
