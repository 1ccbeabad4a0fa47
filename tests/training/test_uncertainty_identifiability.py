"""What the data do not determine: non-identifiable combinations, flat profiles, parameters
held by their bounds or by block constraints, and intervals wider than their value."""

import warnings

import casadi as ca
import numpy as np
import pytest
from helpers import pendulum_model, pendulum_swings

from collocnode import (
    BlockConstraint,
    HybridModel,
    IpoptOptions,
    NeuralODE,
    Parameter,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP
from collocnode.training._uncertainty import UncertaintyWarning

ALG = RadauIIA(20, 3, ipopt=IpoptOptions(tol=1e-10, print_level=0))
SIGMA = 0.02


def decay_data(k=1.3, x0=1.5, seed=0):
    t = np.linspace(0.0, 2.0, 41)
    rng = np.random.default_rng(seed)
    return Trajectory(t=t, x=(x0 * np.exp(-k * t) + SIGMA * rng.standard_normal(t.size))[:, None])


def split_rate_problem():
    """x' = -(k₁ + k₂) x: only the sum is determined by the data."""
    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, b, p: ca.vertcat(-(p["k1"] + p["k2"]) * x[0]),
        parameters={
            "k1": Parameter(0.5, fit=True, lb=0.0, ub=5.0),
            "k2": Parameter(0.5, fit=True, lb=0.0, ub=5.0),
        },
    )
    return TrainingProblem(model, decay_data(), initial_state=np.array([1.5]))


def single_rate_problem():
    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, b, p: ca.vertcat(-p["k"] * x[0]),
        parameters={"k": Parameter(0.5, fit=True)},
    )
    return TrainingProblem(model, decay_data(), initial_state=np.array([1.5]))


@pytest.fixture(scope="module")
def split():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return solve(split_rate_problem(), ALG, seed=0)


def test_a_singular_information_is_reported_as_a_non_identifiable_direction(split):
    with pytest.warns(UncertaintyWarning, match="k1, k2 are not determined by the data"):
        unc = split.uncertainty(noise=SIGMA)
    ident = unc.identifiability
    assert ident.n_null == 1
    assert set(ident.non_identifiable) == {"k1", "k2"}
    direction = ident.sloppiest[0]
    assert not direction.identifiable
    coefficients = dict(direction.components)
    np.testing.assert_allclose(abs(coefficients["k1"]), abs(coefficients["k2"]), rtol=1e-6)
    assert coefficients["k1"] * coefficients["k2"] < 0  # k1 - k2: the sum is what is determined
    assert np.isinf(unc.std("k1")) and np.isinf(unc.std("k2"))
    lo, hi = unc.interval("k1")
    assert lo == -np.inf and hi == np.inf
    for matrix in (unc.covariance(), unc.covariance(which="data"), unc.correlation()):
        assert np.all(np.isfinite(matrix))
    assert "NOT IDENTIFIABLE" in unc.summary()
    assert unc.to_dict()["identifiability"]["non_identifiable"] == ["k1", "k2"]


def test_the_identifiable_combination_has_the_single_parameter_interval(split):
    """The band of k₁ + k₂ is finite and equals the interval of k in x' = -k x."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncertaintyWarning)
        unc = split.uncertainty(noise=SIGMA)
    band = unc.band(lambda p: p[0] + p[1], np.zeros(1))
    single = solve(single_rate_problem(), ALG, seed=0).uncertainty(noise=SIGMA)
    assert band.bounded.all()
    np.testing.assert_allclose(band.std[0], single.std("k"), rtol=1e-6)
    np.testing.assert_allclose(band.value[0], single.quantities.values[0], rtol=1e-6)
    # k1 alone: unbounded, infinite and flagged, not NaN
    alone = unc.band(lambda p: p[0], np.zeros(1))
    assert not alone.bounded[0] and np.isinf(alone.upper[0]) and not np.isnan(alone.std).any()


def test_the_profile_of_an_undetermined_parameter_is_flat_and_flagged(split):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncertaintyWarning)
        unc = split.uncertainty(noise=SIGMA)
    with pytest.warns(UncertaintyWarning, match="profile of 'k1' is flat"):
        profile = split.profile("k1", uncertainty=unc, values=np.linspace(0.1, 1.2, 5))
    assert profile.converged.all()
    assert profile.flat and profile.interval == (-np.inf, np.inf)
    assert np.abs(profile.delta).max() < 1e-3  # k2 takes up whatever k1 leaves
    assert profile.to_dict()["flat"] is True


def test_the_profile_of_a_determined_parameter_matches_the_laplace_interval():
    """x' = -k x is nearly linear in k around the fit: the profile interval and the Laplace
    interval agree to a few per cent of their width."""
    sol = solve(single_rate_problem(), ALG, seed=0)
    unc = sol.uncertainty()
    profile = sol.profile("k", uncertainty=unc, points=7)
    assert not profile.flat and profile.converged.all()
    lo, hi = profile.interval
    lap_lo, lap_hi = unc.interval("k")
    width = lap_hi - lap_lo
    assert abs(lo - lap_lo) < 0.05 * width and abs(hi - lap_hi) < 0.05 * width
    np.testing.assert_allclose(profile.delta[profile.values.size // 2], 0.0, atol=1e-8)


def test_a_parameter_at_its_bound_is_held_not_fitted():
    """k bounded above below its best value ends at the bound: no interval, named as held."""
    problem = single_rate_problem()
    model = problem.model
    bounded = HybridModel(
        n_states=1,
        blocks={},
        rhs=model.rhs,
        parameters={"k": Parameter(0.5, fit=True, ub=1.0)},
    )
    sol = solve(TrainingProblem(bounded, problem.data, initial_state=np.array([1.5])), ALG, seed=0)
    unc = sol.uncertainty(noise=SIGMA)
    assert unc.quantities.held == {"k": "at upper bound"} and unc.quantities.n == 0
    with pytest.raises(ValueError, match=r"not fitted freely \(at upper bound"):
        unc.std("k")


def test_block_constraints_hold_their_values_exactly():
    """NN(0) = 0 (seed paper eq. 17) is a constraint on the weights: the band of the block at
    0 has zero width, and the band elsewhere is finite."""
    t = np.linspace(0.0, 3.0, 31)
    rng = np.random.default_rng(1)
    x = np.column_stack([np.cos(t), -np.sin(t)]) + 0.01 * rng.standard_normal((t.size, 2))
    net = MLP((1, 4, 1), "tanh")
    model = HybridModel(
        n_states=2,
        blocks={"spring": net},
        rhs=lambda s, u, tt, b, p: ca.vertcat(s[1], -b["spring"](s[0])),
    )
    problem = TrainingProblem(
        model,
        Trajectory(t=t, x=x),
        initial_state="data",
        regularization=1e-4,
        block_constraints=(BlockConstraint("spring", 0.0),),
    )
    sol = solve(problem, RadauIIA(30, 3, ipopt=IpoptOptions(tol=1e-9, print_level=0)), seed=0)
    unc = sol.uncertainty()
    band = unc.block_band("spring", np.array([-0.5, 0.0, 0.5]))
    assert band.bounded.all()
    assert band.std[1] < 1e-6 * band.std[[0, 2]].min()
    # the basis keeps θ on the constraint: C T = 0 for the block's gradient at 0
    assert unc.linearization.basis.shape == (model.n_params, model.n_params - 1)


def test_an_interval_wider_than_its_value_is_flagged():
    """A rate of 0.01 seen through noise 0.2 over 1 s is not determined to its own size."""
    t = np.linspace(0.0, 1.0, 11)
    rng = np.random.default_rng(2)
    data = Trajectory(t=t, x=(np.exp(-0.01 * t) + 0.2 * rng.standard_normal(t.size))[:, None])
    problem = TrainingProblem(single_rate_problem().model, data, initial_state=np.array([1.0]))
    sol = solve(problem, ALG, seed=0)
    with pytest.warns(UncertaintyWarning, match="interval of k is wider than its value"):
        unc = sol.uncertainty(noise=0.2)
    assert unc.identifiability.wide == ("k",)
    assert "wide intervals" in unc.summary()


def test_a_neural_ode_reports_its_sloppy_directions_by_weight_name():
    t = np.linspace(0.0, 2.0, 21)
    data = Trajectory(t=t, x=np.column_stack([np.cos(t), -np.sin(t)]), state_names=("q", "v"))
    model = NeuralODE(MLP((2, 3, 2), "tanh"), state_names=("q", "v"))
    problem = TrainingProblem(model, data, initial_state="data", regularization=1e-3)
    sol = solve(problem, RadauIIA(20, 3, ipopt=IpoptOptions(tol=1e-8, print_level=0)), seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncertaintyWarning)
        unc = sol.uncertainty(noise=0.01)
    ident = unc.identifiability
    assert len(ident.sloppiest) == 5
    for direction in ident.sloppiest:
        assert direction.components and all(n.startswith("f[") for n, _ in direction.components)
    assert np.all(np.diff(ident.eigenvalues) >= 0) and ident.eigenvalues[-1] == 1.0
    # with the prior every weight has a finite posterior interval
    assert np.all(np.isfinite(unc.std()))


def _decay_rhs(x, u, t, blocks, params):
    return ca.vertcat(-params["k"] * x[0])


def test_profile_re_solves_run_on_an_executor_with_the_same_result():
    """The grid points are independent solves: on a process pool they give what they give
    one after another (the warm solution crosses without its NLP)."""
    from concurrent.futures import ProcessPoolExecutor

    model = HybridModel(
        n_states=1, blocks={}, rhs=_decay_rhs, parameters={"k": Parameter(0.5, fit=True)}
    )
    sol = solve(TrainingProblem(model, decay_data(), initial_state=np.array([1.5])), ALG, seed=0)
    unc = sol.uncertainty()
    grid = np.linspace(1.25, 1.35, 4)
    here = sol.profile("k", uncertainty=unc, values=grid)
    with ProcessPoolExecutor(max_workers=2) as pool:
        there = sol.profile("k", uncertainty=unc, values=grid, executor=pool)
    np.testing.assert_allclose(there.objective, here.objective, rtol=1e-10)
    assert there.statuses == here.statuses


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"name": "f"}, ValueError, "name must be a fitted physical parameter"),
        ({"name": "k", "values": [0.1, 9.0]}, ValueError, "outside the bounds of 'k'"),
        ({"name": "k", "level": 2.0}, ValueError, r"level must be in \(0, 1\)"),
        ({"name": "k", "alg": "RadauIIA"}, TypeError, "alg must be an algorithm object"),
    ],
)
def test_bad_profile_arguments(kwargs, error, match):
    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=_decay_rhs,
        parameters={"k": Parameter(0.5, fit=True, lb=0.0, ub=5.0)},
    )
    sol = solve(TrainingProblem(model, decay_data(), initial_state=np.array([1.5])), ALG, seed=0)
    with pytest.raises(error, match=match):
        sol.profile(**kwargs)


def test_a_profile_end_set_by_another_parameters_bound_or_by_the_grid_is_named():
    """x' = -k1·k2·x determines the product only; k2 <= 3 makes k1 >= 1/3 of the product
    look determined below, an artefact of the bound; above, nothing closes the profile within
    the grid."""
    t = np.linspace(0.0, 3.0, 31)
    rng = np.random.default_rng(0)
    data = Trajectory(t, np.exp(-t)[:, None] + 0.01 * rng.standard_normal((t.size, 1)))
    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, b, p: ca.vertcat(-p["k1"] * p["k2"] * x[0]),
        parameters={
            "k1": Parameter(0.7, fit=True, lb=0.2, ub=5.0),
            "k2": Parameter(0.7, fit=True, lb=0.2, ub=3.0),
        },
    )
    problem = TrainingProblem(model, data, initial_state=[1.0])
    sol = solve(problem, RadauIIA(intervals=30, ipopt=IpoptOptions(print_level=0)))
    with pytest.warns(UncertaintyWarning, match="not determined by the data"):
        unc = sol.uncertainty()
    with pytest.warns(UncertaintyWarning) as caught:
        profile = sol.profile("k1", uncertainty=unc, values=np.linspace(0.2, 5.0, 13))
    messages = " ".join(str(w.message) for w in caught)
    assert profile.limits == ("bound of k2", "grid")
    assert profile.one_sided and not profile.flat
    assert "closed below only by the bound of k2" in messages
    assert "open above" in messages
    assert profile.to_dict()["limits"] == ["bound of k2", "grid"]


def test_an_exact_hessian_indefinite_in_a_parameter_is_not_silently_infinite():
    """A pendulum's g/L beside a learned damping, three swings: on this seed the exact
    Hessian's data part has a negative eigenvalue along g/L, so its data-only std is infinite;
    the data determine g/L (Gauss-Newton), and the warning says so."""
    data, model = pendulum_swings(0), pendulum_model()
    problem = TrainingProblem(
        model, data, regularization=1e-5, initial_state="data", state_guess="data", scale="none"
    )
    alg = RadauIIA(intervals=60, ipopt=IpoptOptions(print_level=0, max_iter=300))
    sol = solve(problem, alg, seed=0)
    with pytest.warns(UncertaintyWarning, match=r"indefinite .* move gL.*Gauss-Newton: 0\.0"):
        unc = sol.uncertainty(hessian="exact")
    assert np.isinf(unc.std("gL", which="data"))
    assert np.isfinite(unc.std("gL"))
