"""The quarter-vehicle recipe's strategies: the warm-started one against a cold start, the
stagnation rule in every phase, and the settings' errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from collocnode._experiments.qvm import QVMOptions, evaluate, generate
from collocnode._status import SolverStatus
from collocnode.recipes.qvm import Characteristics, QVMRecipe, input_spread
from collocnode.recipes.settings import CollocationSettings, RegressionSettings
from collocnode.tools._options import replace_flat


@pytest.fixture(scope="module")
def one_second():
    """1 s of the preset's noisy data (1001 samples) and the unseen road."""
    return generate(QVMOptions(duration=1.0))


def _recipe(strategy: str, **changes) -> QVMRecipe:
    # 60 intervals x 3 stages over the 1 s, no gcc: seconds per solve
    return replace_flat(QVMRecipe(strategy=strategy), jit=False, print_level=0, stages=3, **changes)


def test_warm_started_strategy_beats_a_cold_start_at_the_same_iteration_budget(one_second):
    system, split = one_second
    cold = _recipe("I", max_iter=15).train(system, split.train, seed=0)
    warm = _recipe("W", max_iter=15).train(system, split.train, seed=0)
    regression = warm.notes["regression"]
    assert regression["samples"] == 101  # every 10th of 1001 samples
    assert regression["iterations"] > 0 and np.isfinite(regression["objective"])
    # the regression's time is part of the strategy's total
    assert warm.total_s == pytest.approx(warm.solution.timings["total"] + warm.times["warm_start"])
    assert warm.solution.objective < cold.solution.objective / 3
    cold_m, _ = evaluate(cold.solution, system, split)
    warm_m, _ = evaluate(warm.solution, system, split)
    for block in ("friction", "spring"):
        err = warm_m["characteristic"][block]["max_rel_range"]
        assert err < cold_m["characteristic"][block]["max_rel_range"]
    assert warm_m["test_rmse_ratio"] < cold_m["test_rmse_ratio"] / 2


def test_the_stagnation_rule_stops_each_phase_and_pretraining_goes_on(one_second):
    system, split = one_second
    # rtol = 1 makes every window of 3 iterations "stagnant" once the objective settles
    recipe = _recipe("II", max_iter=100, stagnation_window=3, stagnation_rtol=1.0)
    trained = recipe.train(system, split.train, seed=0)
    pre = trained.phases["pretrain"]
    assert pre.status == SolverStatus.STOPPED and "stagnated" in pre.message
    assert pre.iterations < 100
    assert trained.solution.status == SolverStatus.STOPPED
    assert "stagnated" in trained.solution.message
    assert not trained.solution.status.ok


def test_a_users_stop_still_ends_strategy_two_with_the_rule_on(one_second):
    system, split = one_second
    recipe = _recipe("II", max_iter=20, stagnation_window=10)
    trained = recipe.train(system, split.train, seed=0, callback=lambda s: s.iteration == 2)
    assert trained.phases == {} and trained.solution.status == SolverStatus.STOPPED


def test_the_full_problem_stops_once_the_characteristics_settle(one_second):
    system, split = one_second
    free = _recipe("W", max_iter=40).train(system, split.train, seed=0)
    # rtol 5e-2 of the output scale: met within a few iterations of the warm start
    settled = _recipe("W", max_iter=40, settle_rtol=5e-2).train(system, split.train, seed=0)
    sol = settled.solution
    assert sol.status == SolverStatus.SETTLED and sol.status.ok
    assert "settled: the measure changed by less than 0.05" in sol.message
    assert 2 <= sol.iterations < free.solution.iterations
    # the settled characteristics are those of the longer run to the rule's tolerance
    measure = Characteristics(split.train)
    change = np.abs(_measured(measure, settled) - _measured(measure, free))
    assert np.max(change / np.maximum(np.abs(_measured(measure, free)), 1.0)) < 0.5


def _measured(measure: Characteristics, trained) -> np.ndarray:
    model, p = trained.solution.model, trained.solution.p

    class State:  # what the rule reads of an iteration
        def __init__(self) -> None:
            self.model = model

        def params_by_block(self):
            return model.split_params(p)

    return measure(State())


def test_the_settle_measure_is_each_characteristic_over_its_scale(one_second):
    _, split = one_second
    measure = Characteristics(split.train, points=5)
    s_dv, s_dz = input_spread(split.train)
    assert measure.grids["friction"][:, 0] == pytest.approx(s_dv * np.linspace(-2, 2, 5))
    assert measure.grids["spring"][:, 0] == pytest.approx(s_dz * np.linspace(-2, 2, 5))
    trained = _recipe("W", max_iter=3).train(*one_second[:1], split.train, seed=0)
    value = _measured(measure, trained)
    assert value.shape == (10,)
    model = trained.solution.model
    weights = model.split_params(trained.solution.p)
    for k, name in enumerate(("friction", "spring")):
        block = model.blocks[name]
        raw = block.numpy(measure.grids[name], weights[name]).ravel()
        assert value[5 * k : 5 * k + 5] == pytest.approx(raw / abs(block.output_scale[0]))


def test_the_settle_rule_is_off_at_zero_and_wraps_only_the_full_problem(one_second):
    _, split = one_second
    assert "StopWhenSettled" not in repr(_recipe("II").algorithm(split.train))
    alg = _recipe("II", settle_rtol=1e-3).algorithm(split.train)
    assert repr(alg).count("StopWhenSettled") == 1
    assert repr(alg.pretrain).count("StopWhenSettled") == 0


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: QVMRecipe(settle_rtol=-1.0), "settle_rtol"),
        (lambda: QVMRecipe(strategy="IV"), "strategy.*'IV'"),
        (lambda: CollocationSettings(max_iter=5, stagnation_window=10), "stagnation_window = 10"),
        (lambda: CollocationSettings(stagnation_window=-1), "stagnation_window"),
        (lambda: CollocationSettings(stagnation_rtol=0.0), "stagnation_rtol"),
        (lambda: RegressionSettings(smoothing="loess"), "smoothing.*'loess'"),
        (lambda: RegressionSettings(stride=0), "stride"),
        (lambda: RegressionSettings(regression_hessian="bfgs"), "regression_hessian"),
        (lambda: RegressionSettings(regression_rtol=-1.0), "regression_rtol"),
        (lambda: QVMRecipe(regression={"stride": 5}), "RegressionSettings"),
        (lambda: QVMRecipe(rational_form="eq19"), "rational_form.*'eq19'"),
    ],
)
def test_settings_errors_name_the_field_and_value(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


@pytest.mark.parametrize("strategy", ["I", "II", "W"])
def test_the_four_state_formulation_fits_the_same_data_as_the_five_state_one(one_second, strategy):
    """Road height and velocity as inputs (eq. 14's four states): the same loss on the same
    data, and at the same iteration budget the four-state fit is not worse."""
    system, split = one_second
    five = _recipe(strategy, max_iter=15).train(system, split.train, seed=0)
    four = _recipe(strategy, max_iter=15, road_as_input=True).train(system, split.train, seed=0)
    model = four.solution.model
    assert (model.n_states, model.n_inputs) == (4, 2)
    assert model.input_names == ("z_r", *system.input_names)
    # the exact road height can only help: no worse than the five-state fit at the same budget
    assert four.solution.objective < 1.15 * five.solution.objective
    metrics, _ = evaluate(four.solution, system, split)
    assert metrics["simulation_error"] is None and metrics["test_rmse_ratio"] < 10


def test_the_four_state_model_sees_the_road_height_of_the_system(one_second):
    """The four-state right-hand side with u = [z_r(t), ż_r(t)] equals the five-state one with
    z_r as a state, at the same forces (random network weights)."""
    import casadi as ca

    from collocnode.recipes.qvm import hybrid_model, road_inputs

    system, split = one_second
    recipe = QVMRecipe()
    five = hybrid_model(system, *recipe.blocks(system, split.train))
    four = hybrid_model(system, *recipe.blocks(system, split.train), road_as_input=True)
    p = five.init_params(np.random.default_rng(3))
    t = split.train.t[::50]
    x = split.train.x[::50]
    u5, u4 = road_inputs(system.road, five)(t), road_inputs(system.road, four)(t)
    truth = system.simulate(t, np.zeros(5), road=system.road).x
    np.testing.assert_allclose(u4[:, 0], truth[:, 4], rtol=0, atol=1e-12)
    for k in range(t.size):
        x5 = np.r_[x[k, :4], u4[k, 0]]
        d5, y5 = (np.asarray(a).ravel() for a in five.function(x5, p, u5[k], t[k]))
        d4, y4 = (np.asarray(a).ravel() for a in four.function(x[k, :4], p, u4[k], t[k]))
        np.testing.assert_allclose(d4, d5[:4], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(y4, y5, rtol=1e-12, atol=1e-12)
    assert isinstance(five.function, ca.Function)


@pytest.mark.parametrize("road_as_input", [False, True])
def test_road_inputs_one_time_at_a_time_equal_the_exact_sums(one_second, road_as_input):
    """An integrator's one-time calls go through the road's Chebyshev re-expansion; they agree
    with the exact harmonic sums of the array path to round-off, in shape too."""
    from collocnode.recipes.qvm import hybrid_model, road_inputs

    system, split = one_second
    model = hybrid_model(system, *QVMRecipe().blocks(system, split.train), road_as_input)
    u = road_inputs(system.road, model)
    t = np.random.default_rng(0).uniform(0.0, system.road.horizon, 50)
    one_at_a_time = np.concatenate([u(np.atleast_1d(tk)) for tk in t])
    np.testing.assert_allclose(one_at_a_time, u(t), rtol=0, atol=1e-12)
    assert u(np.array(0.5)).shape == (model.n_inputs,)
    # a problem driven by the road is sent to other processes (ADMM blocks on Dask workers)
    copy = pickle.loads(pickle.dumps(u))
    np.testing.assert_array_equal(copy(t), u(t))
    np.testing.assert_array_equal(copy(np.array(t[0])), u(np.array(t[0])))


def test_a_fleet_of_drives_is_one_problem_with_each_trajectory_on_its_own_road(one_second):
    from collocnode.problems._road import ISO8608Road
    from collocnode.recipes.qvm import hybrid_model

    system, split = one_second
    other = type(system)(road=ISO8608Road.paper_calibrated("D", seed=2))
    data = [split.train, other.generate(seed=1, n_steps=split.train.n_samples).train]
    recipe = QVMRecipe()
    model = hybrid_model(system, *recipe.blocks(system, split.train), road_as_input=True)
    problem = recipe.problem(model, data, [system.road, other.road], "data", None)
    assert problem.n_trajectories == 2
    t = split.train.t[::100]
    for inputs, road in zip(problem.inputs, (system.road, other.road), strict=True):
        # the road's Chebyshev re-expansion: its exact harmonic sums to round-off
        np.testing.assert_allclose(inputs(t)[:, 1], road.velocity(t), rtol=1e-11, atol=1e-15)
    with pytest.raises(ValueError, match="road: one road per trajectory, got 1 roads for 2"):
        recipe.problem(model, data, system.road, "data", None)


def test_a_four_state_model_saves_and_loads_as_four_states(one_second, tmp_path):
    from collocnode.recipes.qvm import hybrid_model
    from collocnode.serialize import load_model, save_model

    system, split = one_second
    model = hybrid_model(system, *QVMRecipe().blocks(system, split.train), road_as_input=True)
    p = model.init_params(np.random.default_rng(0))
    loaded = load_model(save_model(tmp_path / "four.npz", model, p))
    assert (loaded.model.n_states, loaded.model.n_inputs) == (4, 2)
    x, u = np.array([1e-3, -2e-3, 0.1, -0.2]), np.array([5e-3, 0.3])
    for a, b in zip(loaded.model.function(x, p, u, 0.0), model.function(x, p, u, 0.0), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_rational_surrogates_started_by_the_regression(one_second):
    # strategy III-W: eq. 19 as written (32 parameters), fitted by the regression first
    system, split = one_second
    recipe = _recipe("III-W", max_iter=15, rational_form="paper")
    friction, spring = recipe.blocks(system, split.train)
    assert friction.n_params == spring.n_params == 16
    trained = recipe.train(system, split.train, seed=0)
    regression = trained.notes["regression"]
    assert regression["samples"] == 101 and regression["iterations"] > 0
    assert np.isfinite(regression["objective"]) and np.isfinite(trained.solution.objective)
    # the regression's time is part of the strategy's total, as for W
    assert trained.total_s == pytest.approx(
        trained.solution.timings["total"] + trained.times["warm_start"]
    )
