"""SINDy as a method of the comparison: pysindy's regression behind the trainer interface, its
equations, its rollout and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import problems
from collocnode.compare._run.config import CompareConfig
from collocnode.compare._run.one_method import run_method
from collocnode.compare.methods.registry import make_trainer, method_class
from collocnode.compare.methods.sindy import SINDy, SINDyOptions
from collocnode.tools._fixed_step import DivergenceError

pytest.importorskip("pysindy")


@pytest.fixture(scope="module")
def lorenz():
    system = problems.get("lorenz")
    return system, system.generate(n_steps=3500, n_train=3000)


def test_sindy_is_registered_and_takes_the_comparison_wide_settings():
    assert method_class("sindy") is SINDy
    trainer = make_trainer("sindy", "vdp", quick=True, device="cpu", seed=1, epochs=3)
    assert isinstance(trainer.options, SINDyOptions) and trainer.options.seed == 1


def test_lorenz_from_one_noise_free_trajectory_has_the_exact_sparsity(lorenz):
    system, split = lorenz
    trainer = make_trainer("sindy", "lorenz")
    result = trainer.fit(system, split.train)
    assert result.status == "success" and result.epochs == 1
    truth = system.library_coefficients()
    found = trainer.coefficients()
    terms = ("1", "x", "y", "z", "x^2", "x y", "x z", "y^2", "y z", "z^2")
    for j, state in enumerate("xyz"):
        true = {terms[k]: truth[k, j] for k in np.flatnonzero(truth[:, j])}
        assert set(found[state]) == set(true)
        for term, c in true.items():
            assert found[state][term] == pytest.approx(c, rel=0.05)
    assert result.n_params == trainer.n_params == 7
    assert result.message == "; ".join(trainer.equations())
    # the compiled right-hand side is pysindy's
    x = split.train.x[::97]
    np.testing.assert_allclose(
        trainer.vector_field(x), trainer.model.predict(x), rtol=1e-10, atol=1e-10
    )
    pred = trainer.predict(split.full.t[:100], split.full.x[0])
    assert pred.shape == (100, 3) and np.allclose(pred[0], split.full.x[0])
    # the first second, before the 1 % coefficient errors grow by chaos
    assert np.abs(pred - split.full.x[:100]).max() < 0.05 * np.abs(split.full.x[:100]).max()


def test_known_inputs_enter_the_library_and_the_rollout(oscillator):
    split = oscillator.generate()
    trainer = make_trainer("sindy", degree=1, threshold=0.05)
    assert trainer.fit(oscillator, split.train).status == "success"
    # q'' = -k q - c q' + F with k = 4, c = 0.2: the input is a term of its own
    assert trainer.coefficients()["v"] == {
        "q": pytest.approx(-4.0, rel=0.01),
        "v": pytest.approx(-0.2, rel=0.01),
        "F": pytest.approx(1.0, rel=0.01),
    }
    t, x0 = split.full.t, split.full.x[0]
    by_default = trainer.predict(t, x0)
    by_callable = trainer.predict(t, x0, oscillator.inputs)
    by_samples = trainer.predict(t, x0, split.full.u)
    np.testing.assert_allclose(by_default, by_callable, rtol=1e-12)
    np.testing.assert_allclose(by_samples, by_callable, atol=1e-2)


def test_a_rollout_that_blows_up_is_a_divergence():
    system = problems.get("vdp")
    split = system.generate(noise=0.1, seed=0)
    trainer = make_trainer("sindy", blowup=10.0)
    trainer.fit(system, split.train)
    assert np.abs(trainer.predict(split.full.t, split.full.x[0])).max() < 10.0
    # the discovered equations (with a cubic damping term) leave |x| < 10 from (5, 5)
    with pytest.raises(DivergenceError, match=r"rollout diverged at step \d+ .*left ±10"):
        trainer.predict(np.linspace(0, 20, 201), np.array([5.0, 5.0]))


def test_a_threshold_that_removes_every_term_is_a_failed_fit():
    system = problems.get("vdp")
    trainer = make_trainer("sindy", threshold=1e3)
    result = trainer.fit(system, system.generate(n_steps=100, n_train=80).train)
    assert result.status == "failed" and "removed every term" in result.message


@pytest.mark.parametrize(
    ("option", "match"),
    [
        ({"param_inputs": ("mu",)}, "SINDy takes no parameter inputs"),
        ({"optimizer": "lasso"}, "unknown optimizer 'lasso'"),
        ({"differentiation": "spectral"}, "unknown differentiation 'spectral'"),
        ({"degree": 0}, "degree"),
    ],
)
def test_bad_options_are_named(option, match):
    with pytest.raises(ValueError, match=match):
        make_trainer("sindy", **option)


def test_the_comparison_runs_sindy():
    system = problems.get("vdp")
    split = system.generate(noise=0.05, seed=0)
    row = run_method("sindy", system, split, CompareConfig("vdp", ("sindy",)), progress=False)
    assert row.status == "success", row.message
    assert row.train_time_s > 0 and np.isfinite(row["full_mse"])
