"""A network that took its input normalisation from the data keeps it through a model file,
though its recipe builds it afresh."""

import numpy as np

from collocnode import HybridModel, IpoptOptions, RadauIIA, TrainingProblem, Trajectory, solve
from collocnode.nn import MLP
from collocnode.serialize import load_model, register_builder, save_model


@register_builder("tests.serialize.test_model_file_normalization:heated")
def heated(hidden: int = 4) -> HybridModel:
    """c' = 1 − k(T) c, the temperature T ≈ 350 K a known input, k a network."""
    return HybridModel(
        1,
        {"k": MLP((1, hidden, 1), "tanh")},
        lambda x, u, t, b, p: [1.0 - b["k"](u[0]) * x[0]],
        n_inputs=1,
        state_names=("c",),
        recipe=("tests.serialize.test_model_file_normalization:heated", {"hidden": hidden}),
    )


def test_the_normalisation_travels_with_the_weights(tmp_path):
    t = np.linspace(0.0, 10.0, 21)
    temperature = 350.0 + 8.0 * np.sin(0.5 * t)
    c = 1.0 + 0.5 * np.exp(-0.3 * t)
    data = Trajectory(t, c[:, None], u=temperature[:, None], state_names=("c",))
    problem = TrainingProblem(heated(), data, regularization=1e-4)
    assert problem.model.blocks["k"].input_shift[0] > 300.0  # taken from the data
    ipopt = IpoptOptions(tol=1e-8, max_iter=200, print_level=0)
    sol = solve(problem, RadauIIA(20, 3, ipopt=ipopt), seed=0, check=False)
    loaded = load_model(save_model(tmp_path / "model.json", sol))
    block = loaded.model.blocks["k"]
    assert block.input_shift == problem.model.blocks["k"].input_shift
    assert block.input_scale == problem.model.blocks["k"].input_scale
    for temperature_now in (340.0, 350.0, 360.0):
        args = (np.array([1.0]), np.array([temperature_now]), 0.0)
        after = loaded.model.function(args[0], loaded.p, *args[1:])[0]
        before = problem.model.function(args[0], sol.p, *args[1:])[0]
        np.testing.assert_allclose(np.asarray(after), np.asarray(before), rtol=1e-12)
