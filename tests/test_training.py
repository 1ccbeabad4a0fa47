"""TrainingProblem: several trajectories sharing the weights, validation of its inputs."""

from dataclasses import replace

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
from collocnode.training import cell_weights
from collocnode.transcription import Mesh, StructuredNLP

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
        sizes.append((nlp.layout.n_c, nlp.layout.size.nnz_jacobian, nlp.layout.n_z - 6))
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
        (dict(lb=1.0, ub=0.0), r"'f' needs lb <= ub"),
        (dict(ub=[0.0, 0.0, 0.0]), r"'f'\.ub must be a scalar"),
        (dict(at=[0.0]), r"'f'\.at must have 2 entries"),
    ],
)
def test_block_constraint_bounds_are_checked(constraint, match):
    constraint = BlockConstraint("f", **{"at": [0.0, 0.0], **constraint})
    with pytest.raises(ValueError, match=match):
        TrainingProblem(linear_model(), one_trajectory(), block_constraints=[constraint])


@pytest.mark.parametrize(
    "fields, error, match",
    [
        (dict(block=5, at=None), TypeError, r"^BlockConstraint.block must be a block name, got 5"),
        (dict(block="f", at=None), TypeError, r"^block constraint 'f'.at must be an array of real"),
        (dict(block="f", at="origin"), TypeError, r"^block constraint 'f'.at must be an array"),
        (dict(block="f", at=[np.nan]), ValueError, r"^block constraint 'f'.at must be finite"),
        (dict(block="f", at=[0.0], lb=np.nan), ValueError, r"^block constraint 'f'.lb must not be"),
    ],
)
def test_a_block_constraint_checks_what_needs_no_model(fields, error, match):
    with pytest.raises(error, match=match):
        BlockConstraint(**fields)


def test_inputs_for_a_model_without_inputs_are_refused():
    with pytest.raises(ValueError, match=r"^inputs are given \(<function .*\) but the model"):
        TrainingProblem(linear_model(), one_trajectory(), inputs=lambda t: np.ones((t.size, 1)))


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


# ---- the loss at the measurement times ---------------------------------------------------------


def irregular(x0, t_end: float = 2.0, n: int = 13, seed: int = 0) -> Trajectory:
    """Exact oscillator samples at random times, including both ends."""
    t = np.sort(np.r_[0.0, np.random.default_rng(seed).uniform(0, t_end, n - 2), t_end])
    return Trajectory(t, oscillator(np.array(x0), t))


def test_cell_weights_are_the_trapezoid_rule_and_cover_the_horizon():
    t = np.array([0.0, 0.5, 1.5, 2.0])
    np.testing.assert_allclose(
        cell_weights(t, np.ones(4, bool), 0.0, 2.0), [0.25, 0.75, 0.75, 0.25]
    )
    # missing values: the observed neighbours' cells grow over them; the ends reach t0 and tf
    w = cell_weights(t, np.array([False, True, False, True]), 0.0, 2.0)
    np.testing.assert_allclose(w, [0.0, 1.25, 0.0, 0.75])
    assert cell_weights(t, np.array([False, False, True, False]), 0.0, 2.0).sum() == 2.0


def test_samples_are_the_data_with_cell_weights_over_the_scales():
    data = irregular([1.0, 0.0])
    prob = TrainingProblem(
        linear_model(), data, loss="samples", sample_weights="cells", scale=[2.0, 0.5]
    )
    samples = prob.samples()
    np.testing.assert_array_equal(samples.t, data.t)
    np.testing.assert_array_equal(samples.data[:, :2], data.x)
    w = cell_weights(data.t, np.ones(data.n_samples, bool), 0.0, 2.0)
    np.testing.assert_allclose(samples.data[:, 2:], np.column_stack([w / 4.0, w / 0.25]))
    dop = prob.to_dop(np.zeros(6))
    assert dop.lagrange is None and dop.n_inputs == 0 and dop.samples is not None


def test_samples_recover_the_dynamics_from_irregular_times_per_trajectory():
    """Different sample times per trajectory, a mask on one: the exact dynamics come back."""
    data = [irregular([1.0, 0.0], seed=1), irregular([0.0, 1.5], n=9, seed=2)]
    mask = np.ones((9, 2), bool)
    mask[2:5, 0] = False
    prob = TrainingProblem(
        linear_model(), data, initial_state="data", loss="samples", mask=[None, mask]
    )
    sol = solve(prob, RadauIIA(10, 3, ipopt=QUIET), seed=0)
    assert sol.success
    np.testing.assert_allclose(sol.params["f"][:4].reshape(2, 2), [[0, 1], [-1, 0]], atol=1e-5)


def test_a_missing_value_contributes_nothing(rng):
    """Whatever the data hold at a masked entry, the NLP is the same."""
    data = irregular([1.0, 0.0])
    mask = np.ones((data.n_samples, 2), bool)
    mask[[3, 7], 1] = False
    mask[5, :] = False
    junk = data.x.copy()
    junk[[3, 7], 1] = [1e3, -7.0]
    junk[5] = 42.0
    nlps = [
        StructuredNLP(
            TrainingProblem(
                linear_model(), Trajectory(data.t, x), loss="samples", mask=mask
            ).to_dop(np.zeros(6)),
            Mesh.equidistant(0.0, 2.0, 4, 3),
        )
        for x in (data.x, junk)
    ]
    z = rng.uniform(-1, 1, nlps[0].layout.n_z)
    assert float(nlps[0].fn_f(z)) == float(nlps[1].fn_f(z))
    # a fully masked sample is dropped, the others keep their own columns' weights
    assert sum(g.n for g in nlps[0].sample_groups) == data.n_samples - 1


def test_tspan_keeps_the_samples_inside_it():
    prob = TrainingProblem(linear_model(), one_trajectory(), loss="samples", tspan=(0.25, 0.75))
    samples = prob.samples()
    assert samples.t.min() >= 0.25 and samples.t.max() <= 0.75
    assert samples.data[:, 2].sum() == pytest.approx(0.5)  # the cells cover the window


def test_samples_need_no_interpolation():
    """Three samples: too few for the cubic spline of the node loss, enough at the samples."""
    prob = TrainingProblem(linear_model(), one_trajectory(3), loss="samples")
    assert prob.to_dop(np.zeros(6)).samples.n == 3


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(loss="points"), ValueError, r"^unknown loss 'points'; valid: nodes, samples"),
        (
            dict(mask=np.ones((11, 2), bool)),
            ValueError,
            r"^mask needs loss='samples' .* got loss='nodes'",
        ),
        (
            dict(loss="samples", mask=np.ones((11, 3), bool)),
            ValueError,
            r"^mask must have shape \(11, 2\) \(samples x fitted columns\), got \(11, 3\)",
        ),
        (
            dict(loss="samples", mask=np.full((11, 2), 0.5)),
            TypeError,
            r"^mask must be an array of booleans \(True: observed\)",
        ),
        (
            dict(loss="samples", mask=np.zeros((11, 2))),
            ValueError,
            r"^the observation model observes nothing in data\[0\]: no fitted column "
            r"\('x0', 'x1'\) has an observed value in the horizon \[0\.0, 1\.0\] \(mask\)$",
        ),
        (
            dict(loss="samples", tspan=(0.01, 0.09)),
            ValueError,
            r"^the observation model observes nothing in data\[0\]: .* in the horizon "
            r"\[0\.01, 0\.09\]$",
        ),
    ],
)
def test_bad_sample_loss_fields_give_one_clear_error(kwargs, error, match):
    with pytest.raises(error, match=match):
        TrainingProblem(linear_model(), one_trajectory(), **kwargs)


def test_a_mask_for_several_trajectories_is_one_per_trajectory():
    data = [one_trajectory(), one_trajectory(5)]
    with pytest.raises(ValueError, match=r"^mask must give one array \(or None\) per trajectory"):
        TrainingProblem(linear_model(), data, loss="samples", mask=np.ones((11, 2), bool))
    with pytest.raises(ValueError, match=r"^mask\[1\] must have shape \(5, 2\)"):
        TrainingProblem(linear_model(), data, loss="samples", mask=[None, np.ones((11, 2))])
    with pytest.raises(ValueError, match=r"^the observation model observes nothing in data\[1\]"):
        TrainingProblem(linear_model(), data, loss="samples", mask=[None, np.zeros((5, 2))])


def test_a_column_a_trajectory_never_observes_is_hidden_there():
    """Not an error: the other trajectory measures it, the physics couples it to the other."""
    data = [one_trajectory(), one_trajectory(5)]
    gap = np.ones((5, 2), bool)
    gap[:, 0] = False
    prob = TrainingProblem(linear_model(), data, loss="samples", mask=[None, gap])
    assert not prob.measured(1)[:, 0].any() and prob.measured(1)[:, 1].all()
    assert not prob.hidden_states().any()  # data[0] measures both


def test_an_initial_state_from_data_is_free_where_the_first_value_is_missing():
    mask = np.c_[np.ones(11), np.r_[0, np.ones(10)]].astype(bool)
    prob = TrainingProblem(
        linear_model(), one_trajectory(), loss="samples", mask=mask, initial_state="data"
    )
    x0 = prob.initial_states()[0]
    assert x0[0] == 1.0 and np.isnan(x0[1])
    assert np.isnan(prob.to_dop(np.zeros(6)).x0[1])


def test_the_mask_leaves_missing_values_out_of_the_scales():
    data = one_trajectory()
    x = data.x.copy()
    x[4, 0] = 100.0  # a placeholder where the value is missing
    mask = np.ones((11, 2), bool)
    mask[4, 0] = False
    prob = TrainingProblem(
        linear_model(), Trajectory(data.t, x), loss="samples", mask=mask, scale="std"
    )
    keep = np.arange(11) != 4
    assert prob.scales()[0] == pytest.approx(data.x[keep, 0].std())
    assert prob.nominal()[0] == pytest.approx(data.x[keep, 0].std())
    guess = prob.to_dop(np.zeros(6)).state_guess(data.t)  # "constant": x(t0) everywhere
    assert np.all(guess == x[0])
    data_guess = TrainingProblem(
        linear_model(), Trajectory(data.t, x), loss="samples", mask=mask, state_guess="data"
    ).to_dop(np.zeros(6))
    # the "data" guess runs through the observed values only
    assert data_guess.state_guess(data.t[4:5])[0, 0] == pytest.approx(
        (x[3, 0] + x[5, 0]) / 2, rel=1e-12
    )


@pytest.mark.parametrize("exact_inputs", [True, False])
def test_samples_see_the_known_inputs_at_the_sample_times(exact_inputs):
    """x' = -x + u with u = sin t, exact or interpolated from data.u: the weights come back."""
    t = np.sort(np.r_[0.0, np.random.default_rng(3).uniform(0, 4, 15), 4.0])
    x = (np.sin(t) - np.cos(t) + np.exp(-t)) / 2
    # exact inputs need no data.u
    data = Trajectory(t, x) if exact_inputs else Trajectory(t, x, u=np.sin(t))
    model = NeuralODE(MLP((2, 1), "identity"), n_inputs=1)
    prob = TrainingProblem(
        model,
        data,
        initial_state="data",
        loss="samples",
        inputs=(lambda tt: np.sin(tt)[:, None]) if exact_inputs else None,
    )
    sol = solve(prob, RadauIIA(20, 3, ipopt=QUIET), seed=0)
    assert sol.success
    # interpolating u by a cubic spline costs accuracy, the exact inputs none
    np.testing.assert_allclose(
        sol.params["f"][:2], [-1.0, 1.0], atol=1e-5 if exact_inputs else 2e-3
    )


def test_warm_start_refuses_a_mask():
    from collocnode.training._warmstart import fit_initial_guess

    mask = np.ones((11, 2), bool)
    mask[3, 1] = False
    prob = TrainingProblem(linear_model(), one_trajectory(), loss="samples", mask=mask)
    with pytest.raises(ValueError, match=r"^warm_start smooths every sample .* with a mask"):
        fit_initial_guess(prob)


# ---- parts of a training problem (consensus ADMM's blocks, pre-training) ---------------------
def _scaled_problem():
    from tests.helpers import decay_problem

    return decay_problem(3, scale="std", initial_state="data")


def test_a_subset_keeps_the_whole_problems_scaling_and_its_trajectories_fields():
    whole = _scaled_problem()
    part = whole.subset([2, 0])
    assert part.n_trajectories == 2
    assert part.trajectories[0] is whole.trajectories[2]
    np.testing.assert_allclose(part.scales(), whole.scales())
    np.testing.assert_allclose(part.nominal(), whole.nominal())
    np.testing.assert_allclose(part.initial_states()[0], whole.initial_states()[2])
    own = type(whole)(whole.model, list(part.trajectories), scale="std")
    assert not np.allclose(own.scales(), whole.scales())  # the frozen scaling is not its own


def test_a_window_is_a_piece_of_the_whole_or_a_problem_of_its_own():
    from collocnode import Proximal
    from tests.helpers import decay_problem

    whole = decay_problem(1, scale="std", initial_state="data")
    piece = whole.window(0.5, 1.5)
    assert piece.horizon == (0.5, 1.5) and piece.initial_state is None
    assert piece.data is whole.data
    np.testing.assert_allclose(piece.scales(), whole.scales())
    x_half = np.interp(0.5, whole.data.t, whole.data.x[:, 0])
    np.testing.assert_allclose(piece.to_dop().state_guess(np.array([0.7]))[0], [x_half])
    head = whole.window(0.0, 0.5, cut=True)
    assert head.data.tf == pytest.approx(0.5) and head.initial_state is not None
    assert head.scales()[0] == pytest.approx(np.std(head.data.x[:, 0]))
    # the pull of a consensus method on the window's ends, in the NLP's units
    prox = Proximal(1.0, params=[1.0], initial=[0.3], final=[0.2])
    assert replace(piece, proximal=prox).to_dop().proximal is prox


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda p: p.subset([]), ValueError, "at least one trajectory"),
        (lambda p: p.subset([3]), ValueError, "index 3 is out of range for a problem with 3"),
        (lambda p: p.subset([-1]), ValueError, "trajectories"),
        (lambda p: p.window(0.0, 1.0), ValueError, "window cuts one trajectory"),
        (lambda p: p.subset([0]).window(1.0, 3.0), ValueError, "non-empty part of the horizon"),
        (lambda p: p.subset([0]).window(1.0, 1.0), ValueError, "non-empty part of the horizon"),
        (
            lambda p: replace(p, proximal="pull"),
            TypeError,
            "proximal must be a Proximal or None",
        ),
        (
            lambda p: replace(p, proximal=__import__("collocnode").Proximal(1.0, params=[1, 2])),
            ValueError,
            r"proximal.params must have shape \(1,\)",
        ),
        (
            lambda p: replace(p, proximal=__import__("collocnode").Proximal(1.0, initial=[1.0])),
            ValueError,
            "proximal.initial pulls the state of one trajectory, the problem has 3",
        ),
        (
            lambda p: __import__("collocnode").Proximal(0.0),
            ValueError,
            "rho",
        ),
    ],
)
def test_bad_parts_and_pulls_are_one_clear_error(make, error, match):
    with pytest.raises(error, match=match):
        make(_scaled_problem())
