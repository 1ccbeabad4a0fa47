"""The same seed gives the same result: identical data, initial weights and IPOPT iterates."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import IpoptOptions, NeuralODE, RadauIIA, TrainingProblem, problems, solve
from collocnode.nn import MLP
from collocnode.transcription._ipopt.backends import BACKENDS


def vdp_problem(noise_seed: int = 0) -> TrainingProblem:
    system = problems.get("vdp")
    data = system.generate(noise=0.05, seed=noise_seed, n_steps=60, n_train=60).train
    model = NeuralODE([MLP((2, 4, 4, 1), "sigmoid") for _ in range(2)])
    return TrainingProblem(model, data, regularization=1e-4, initial_state=system.x0)


def train(seed: int, backend: str):
    # threads=2 on purpose: the threaded map over nodes must not change the sums
    alg = RadauIIA(
        20, 3, threads=2, ipopt=IpoptOptions(max_iter=15, print_level=0, backend=backend)
    )
    return solve(vdp_problem(), alg, seed=seed)


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_seed_gives_identical_iterates(backend):
    a, b = train(3, backend), train(3, backend)
    assert a.iterations == b.iterations > 0
    objectives_a = np.array([h[2] for h in a.history])
    objectives_b = np.array([h[2] for h in b.history])
    assert objectives_a.size == a.iterations + 1  # iteration 0 is recorded too
    assert objectives_a.tobytes() == objectives_b.tobytes()
    assert a.p.tobytes() == b.p.tobytes()
    assert a.solution.x_nodes.tobytes() == b.solution.x_nodes.tobytes()
    assert a.objective == b.objective and a.status == b.status


def test_seed_sets_the_initial_weights():
    model = vdp_problem().model
    same = [model.init_params(np.random.default_rng(5)) for _ in range(2)]
    other = model.init_params(np.random.default_rng(6))
    assert same[0].tobytes() == same[1].tobytes()
    assert not np.array_equal(same[0], other)
    # and solve() uses it: a different seed starts IPOPT somewhere else
    first = [train(seed, "casadi").history[0][2] for seed in (5, 6)]
    assert first[0] != first[1]


def test_same_noise_seed_gives_identical_data():
    system = problems.get("vdp")
    a, b = (system.generate(noise=0.1, seed=11).full for _ in range(2))
    c = system.generate(noise=0.1, seed=12).full
    assert a.x.tobytes() == b.x.tobytes()
    assert not np.array_equal(a.x, c.x)
