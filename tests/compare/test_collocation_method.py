"""Collocation inside the comparison harness."""

import numpy as np
import pytest

from collocnode import problems
from collocnode.compare import make_trainer
from collocnode.compare._run import add_time_to_target


@pytest.mark.parametrize("name", ["vdp", "slider_crank"])
def test_collocation_trains_and_predicts_through_the_trainer_interface(name):
    system = problems.get(name)
    split = system.generate(n_steps=60, n_train=40)
    trainer = make_trainer("collocation", name, quick=True, intervals=20, epochs=60, hidden=(6,))
    result = trainer.fit(system, split.train)
    assert result.status in ("success", "iteration_limit")
    assert result.n_params == trainer.n_params > 0
    assert "consistent: " in result.message  # the consistency check's verdict is in the row
    x = trainer.predict(split.full.t, split.full.x[0])
    assert x.shape == split.full.x.shape and np.all(np.isfinite(x))
    if name == "slider_crank":  # dependent coordinates recovered on Φ(q) = 0
        assert np.max(np.abs(system.constraints(x))) < 1e-8


def test_the_callback_reaches_the_collocation_solve_and_can_stop_it():
    system = problems.get("vdp")
    train = system.generate(n_steps=41, n_train=41).train
    trainer = make_trainer("collocation", "vdp", quick=True, intervals=10, epochs=50)
    seen = []
    result = trainer.fit(
        system, train, callback=lambda s: seen.append(s.iteration) or len(seen) == 3
    )
    assert result.status == "stopped" and len(seen) == 3
    assert result.epochs == seen[-1]


@pytest.mark.parametrize("hessian", ["limited-memory", "sr1"])
def test_collocation_accepts_a_hessian_approximation(hessian):
    system = problems.get("vdp")
    split = system.generate(n_steps=60, n_train=40)
    trainer = make_trainer(
        "collocation", "vdp", quick=True, intervals=10, epochs=5, hidden=(6,), hessian=hessian
    )
    result = trainer.fit(system, split.train)
    assert result.epochs == 5 and np.isfinite(result.best_loss)


def test_unknown_hessian_is_named():
    with pytest.raises(ValueError, match="hessian"):
        make_trainer("collocation", "vdp", hessian="newton")


def test_qvm_gets_the_hybrid_model_instead_of_the_black_box_one():
    from collocnode.compare.methods.collocation import Collocation, CollocationOptions
    from collocnode.recipes.qvm import QVMRecipe

    qvm, vdp = problems.get("qvm"), problems.get("vdp")
    hybrid, generic = make_trainer("collocation", "qvm"), make_trainer("collocation", "vdp")
    assert type(hybrid) is type(generic) is Collocation  # one adapter: the recipe decides
    assert isinstance(hybrid.options.recipe, QVMRecipe) and hybrid.not_applicable(qvm) is None
    assert "hybrid" in generic.not_applicable(qvm)
    assert "hybrid" in Collocation().not_applicable(qvm)  # the generic recipe by default
    assert hybrid.not_applicable(vdp)  # and the hybrid applies to qvm only
    assert (hybrid.derivative_source, generic.derivative_source) == ("output", None)
    with pytest.raises(TypeError, match="recipe must be one of the recipes"):
        CollocationOptions(recipe="x")


def test_the_comparison_settings_reach_the_recipe_by_name():
    trainer = make_trainer("collocation", "vdp", quick=True, epochs=7, stages=2, hidden=(4,))
    opts = trainer.options
    assert (opts.settings.max_iter, opts.settings.stages, opts.recipe.hidden) == (7, 2, (4,))
    assert trainer.epoch_limit == 7
    again = make_trainer("collocation", "vdp", lr=1e-2, device="cpu", seed=3).options
    assert again.seed == 3 and again.recipe == make_trainer("collocation", "vdp").options.recipe
    with pytest.raises(ValueError, match="epochs must be a positive integer"):
        make_trainer("collocation", "vdp", epochs=0)
    with pytest.raises(ValueError, match="lr must be a positive finite number"):
        make_trainer("collocation", "vdp", lr=-1.0)
    with pytest.raises(ValueError, match="unknown option 'strategy' of SystemRecipe"):
        make_trainer("collocation", "vdp", strategy="W")
    assert make_trainer("collocation", "qvm", strategy="W").options.recipe.strategy == "W"


def test_time_to_target_uses_each_curve_and_the_collocation_error():
    rows = [
        {"method": "collocation", "test_mse": 1e-3, "train_time_s": 2.0},
        {"method": "node", "test_mse": 5e-4, "curve": [(1.0, 1e-1), (30.0, 9e-4), (60.0, 5e-4)]},
        {"method": "fnode", "test_mse": 1e-1, "curve": [(1.0, 2e-1), (5.0, 1e-1)]},
    ]
    add_time_to_target(rows)
    assert [r["time_to_target_s"] for r in rows] == [2.0, 30.0, None]
