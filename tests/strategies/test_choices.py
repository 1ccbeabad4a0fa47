"""The choices a newcomer need not make: λ on held-out data, several starts, and the defaults of
a first solve."""

import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import pytest

from collocnode import (
    Auto,
    DynamicOptimizationProblem,
    IpoptOptions,
    Multistart,
    NeuralODE,
    RadauIIA,
    RegularizationPath,
    Solution,
    SolverStatus,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.algorithm import final
from collocnode.nn import MLP
from collocnode.strategies import (
    AutoRecord,
    MultistartRecord,
    NaivePredictorWarning,
    RegularizationPathRecord,
    UntilConsistentRecord,
)

QUIET = IpoptOptions(print_level=0, max_iter=500)
LEAF = RadauIIA(20, 3, ipopt=QUIET)


def oscillator(starts=((1.0, 0.0),), noise=0.02, tf=4.0, n=41):
    """x' = y, y' = -x from each start, noisy; a linear network can represent it exactly."""
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, tf, n)
    data = []
    for x0, y0 in starts:
        x = np.column_stack([x0 * np.cos(t) + y0 * np.sin(t), -x0 * np.sin(t) + y0 * np.cos(t)])
        data.append(Trajectory(t, x + noise * rng.standard_normal(x.shape)))
    model = NeuralODE(MLP((2, 2), "identity"))
    return TrainingProblem(model, data if len(data) > 1 else data[0], initial_state="data")


# ---- the regularization path ---------------------------------------------------------------------


def test_the_path_scores_every_lambda_on_the_end_of_the_horizon_and_refits_the_whole():
    problem = oscillator()
    res = solve(problem, RegularizationPath(LEAF, lambdas=(1.0, 1e-2, 1e-4, 1e-6)), seed=0)
    res = res.record(RegularizationPath)
    assert isinstance(res, RegularizationPathRecord)
    assert [p.regularization for p in res.path] == [1.0, 1e-2, 1e-4, 1e-6][: len(res.path)]
    assert "final 20% of the horizon" in res.holdout
    # a strong penalty pulls the weights of the exact linear model to zero: it forecasts worst
    errors = {p.regularization: p.holdout_error for p in res.path}
    assert errors[1.0] > 5 * min(errors.values())
    assert res.chosen < 1.0 and res.verified
    refit = final(res)
    assert refit.problem.regularization == res.chosen
    assert refit.problem.horizon == problem.horizon  # the whole problem
    assert refit.status == SolverStatus.SUCCESS and refit.consistency.consistent
    assert f"{res.chosen:g} (chosen)" in res.table()
    assert res.to_dict()["chosen"] == res.chosen and res.figure() is not None


def test_held_out_trajectories_are_simulated_from_their_own_start():
    problem = oscillator(starts=((1.0, 0.0), (0.0, 1.0), (0.5, 0.5)))
    alg = RegularizationPath(LEAF, lambdas=(1e-2, 1e-5), holdout=(1,), refit=False)
    res = solve(problem, alg, seed=0).record(RegularizationPath)
    assert res.holdout == "trajectories [1]"
    assert final(res).problem.n_trajectories == 2  # trained without the held-out one
    assert all(np.isfinite(p.holdout_error) for p in res.path)


def test_the_chosen_model_is_scored_against_a_naive_predictor():
    """The oscillator's forecast beats persistence of the last training sample by far, silently;
    a penalty so strong that the network is zero forecasts no better, and is warned of."""
    problem = oscillator()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NaivePredictorWarning)
        res = solve(problem, RegularizationPath(LEAF, lambdas=(1e-4,)), seed=0)
    res = res.record(RegularizationPath)
    chosen = res.path[0].holdout_error
    assert chosen < 0.5 * res.naive_error  # 0.22 against 1.03
    assert f"a naive predictor's {res.naive_error:.4g}" in res.describe()
    assert res.to_dict()["naive_error"] == res.naive_error
    with pytest.warns(NaivePredictorWarning, match="no better than a naive predictor"):
        solve(problem, RegularizationPath(LEAF, lambdas=(1e4,), refit=False), seed=0)


def test_the_path_stops_after_points_that_do_worse_than_the_best():
    problem = oscillator()
    res = solve(
        problem,
        RegularizationPath(LEAF, lambdas=(1e-6, 1e-4, 1e-2, 1.0, 10.0), patience=1, refit=False),
        seed=0,
    ).record(RegularizationPath)
    # solved from the largest: 10 and 1 are worse than the smaller ones that follow, so no
    # early stop until the best is passed
    assert res.path[0].regularization == 10.0
    assert len(res.path) <= 5


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: RegularizationPath(lambdas=()), ValueError, "at least one"),
        (lambda: RegularizationPath(lambdas=(1e-3, 0.0)), ValueError, r"lambdas\[1\]"),
        (lambda: RegularizationPath(lambdas=1e-3), TypeError, "lambdas must be a sequence"),
        (lambda: RegularizationPath(holdout=1.5), ValueError, r"holdout must be a fraction"),
        (lambda: RegularizationPath(holdout=()), ValueError, "at least one trajectory"),
        (lambda: RegularizationPath(holdout="last"), ValueError, "holdout"),
        (lambda: RegularizationPath(patience=-1), ValueError, "patience"),
        (
            lambda: solve(oscillator(), RegularizationPath(LEAF, holdout=(0,))),
            ValueError,
            r"holdout \(0,\) leaves no trajectory to train on",
        ),
        (
            lambda: solve(oscillator(n=6), RegularizationPath(LEAF, holdout=0.9)),
            ValueError,
            "leaves 1 samples to train on and 5 to score",
        ),
        (
            lambda: solve(
                oscillator(starts=((1, 0), (0, 1))), RegularizationPath(LEAF, holdout=0.2)
            ),
            ValueError,
            "holds out the end of one trajectory, the problem has 2",
        ),
    ],
)
def test_bad_paths_are_one_clear_error_before_any_work(make, error, match):
    with pytest.raises(error, match=match):
        make()


# ---- several starts --------------------------------------------------------------------------


def test_several_starts_keep_the_best_and_report_the_spread():
    res = solve(oscillator(), Multistart(LEAF, starts=3), seed=4).record(Multistart)
    assert isinstance(res, MultistartRecord)
    assert [s.start for s in res.starts] == [0, 1, 2]
    assert res.starts[0].seed == 4 and len({s.seed for s in res.starts}) == 3
    best = res.starts[res.best]
    assert best.objective == min(s.objective for s in res.starts)
    spread = res.spread()
    assert spread["starts"] == 3 and spread["converged"] == 3 and spread["consistent"] == 3
    assert final(res).status == SolverStatus.SUCCESS
    assert "(best)" in res.table()


def test_a_given_guess_is_perturbed_for_the_other_starts():
    problem = replace(oscillator(), params_guess=np.array([0.0, 1.0, -1.0, 0.0, 0.0, 0.0]))
    points = Multistart(LEAF, starts=3, perturb=0.2).starting_points(problem, 0)
    guesses = [p.params_guess for _, p in points]
    np.testing.assert_array_equal(guesses[0], problem.params_guess)
    assert not np.allclose(guesses[1], guesses[0]) and not np.allclose(guesses[2], guesses[1])


def test_starts_on_an_executor_return_plain_data_and_the_best_is_solved_here():
    with ThreadPoolExecutor(2) as pool:
        sol = solve(oscillator(), Multistart(LEAF, starts=2, executor=pool), seed=1)
        res = sol.record(Multistart)
    assert "repeat_best" in res.times
    assert final(res).status == SolverStatus.SUCCESS
    assert final(res).objective == pytest.approx(res.starts[res.best].objective, rel=1e-6)
    with pytest.raises(ValueError, match="callback is not supported with Multistart"):
        with ThreadPoolExecutor(1) as pool:
            solve(oscillator(), Multistart(LEAF, executor=pool), callback=lambda s: None)


@pytest.mark.parametrize(
    ("fields", "error", "match"),
    [
        ({"starts": 0}, ValueError, "starts"),
        ({"perturb": -0.1}, ValueError, "perturb"),
        ({"executor": "dask"}, TypeError, "executor must be a concurrent.futures.Executor"),
    ],
)
def test_bad_multistart_settings_name_the_field(fields, error, match):
    with pytest.raises(error, match=match):
        Multistart(LEAF, **fields)


# ---- the defaults of a first solve ---------------------------------------------------------------


def test_a_first_solve_chooses_the_mesh_lambda_and_guess_and_says_so():
    sol = solve(oscillator(), seed=0)
    res = sol.record(Auto)
    assert isinstance(res, AutoRecord) and final(res) is sol
    assert sol.describe().splitlines()[0] == res.describe()
    assert "UntilConsistent" in sol.summary()
    assert res.path is not None and res.path.chosen in [p.regularization for p in res.path.path]
    assert isinstance(res.solution, UntilConsistentRecord)
    trained = final(res)
    assert trained.status == SolverStatus.SUCCESS and trained.consistency.consistent
    assert trained.problem.regularization == res.path.chosen
    text = res.describe()
    assert "intervals from the data" in text and f"λ = {res.path.chosen:g}" in text
    assert "WarmStarted" in repr(res.algorithm)


def test_a_given_lambda_is_kept_and_a_dop_gets_the_collocation_alone():
    res = solve(replace(oscillator(), regularization=1e-3), seed=0).record(Auto)
    assert res.path is None and final(res).problem.regularization == 1e-3
    dop = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -x, n_states=1, n_params=0, tspan=(0.0, 1.0), x0=[1.0]
    )
    res = solve(dop, Auto(RadauIIA(intervals="auto", ipopt=QUIET))).record(Auto)
    assert isinstance(final(res), Solution) and final(res).mesh.n_intervals == 100


# ---- a stop on what the user measures --------------------------------------------------------


def test_a_solve_settles_when_the_learned_field_stops_changing():
    from collocnode import StopWhenSettled
    from collocnode.training._callbacks import block_outputs

    grid = np.linspace(-1.0, 1.0, 5)
    grid = np.column_stack([grid, grid[::-1]])
    # a tanh network to a tolerance of 1e-12: the last iterations polish what the field shows
    problem = replace(oscillator(), model=NeuralODE(MLP((2, 8, 2), "tanh")), regularization=1e-6)
    leaf = RadauIIA(20, 3, ipopt=IpoptOptions(print_level=0, max_iter=400, tol=1e-12))
    full = solve(problem, leaf, seed=0, check=False)
    alg = StopWhenSettled(leaf, block_outputs("f", grid), rtol=1e-2, patience=1)
    settled = solve(problem, alg, seed=0, check=False)
    assert settled.status == SolverStatus.SETTLED and settled.status.ok
    assert "settled: the measure changed by less than 0.01" in settled.message
    assert settled.iterations < full.iterations
    # the field it settled on is the one the full solve ends with
    f = settled.model.blocks["f"]
    np.testing.assert_allclose(
        f.numpy(grid, settled.params["f"]), f.numpy(grid, full.params["f"]), atol=1e-2
    )


def test_bad_settle_rules_are_one_clear_error():
    from collocnode import StopWhenSettled

    with pytest.raises(TypeError, match="measure"):
        StopWhenSettled(LEAF, measure=None)
    with pytest.raises(ValueError, match="rtol"):
        StopWhenSettled(LEAF, measure=lambda s: 0.0, rtol=0.0)
