"""The observation model: which values each trajectory measures, NaN, masks, hidden states,
names from the data, and the errors and warnings when the data cannot determine the model."""

from __future__ import annotations

import warnings

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    HybridModel,
    IpoptOptions,
    NeuralODE,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    UndeterminedStateWarning,
    solve,
)
from collocnode.nn import MLP
from collocnode.transcription import Mesh, StructuredNLP

QUIET = IpoptOptions(print_level=0, tol=1e-10, max_iter=300)
T = np.linspace(0.0, 2.0, 21)


def circle(t: np.ndarray = T) -> np.ndarray:
    """x' = y, y' = -x from (1, 0)."""
    return np.column_stack([np.cos(t), -np.sin(t)])


def linear_model(**kwargs) -> HybridModel:
    return NeuralODE(MLP((2, 2), "identity"), **kwargs)


def decoupled(coupling: float = 0.0) -> HybridModel:
    """x0' = -x0 + coupling x1, x1' = -x1."""
    return HybridModel(2, {}, lambda x, u, t, b, p: [-x[0] + coupling * x[1], -x[1]])


def gappy(seed: int = 0, fraction: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """Noisy circle samples and where 20 % of them are missing."""
    rng = np.random.default_rng(seed)
    x = circle() + 0.01 * rng.standard_normal((T.size, 2))
    gaps = rng.random(x.shape) < fraction
    gaps[0] = False
    return x, gaps


# ---- NaN and masks -----------------------------------------------------------------------------
def test_nan_with_mask_finite_is_the_placeholder_workaround():
    """NaN + mask="finite" and placeholders + an explicit mask pose the same NLP, so IPOPT
    takes the same iterates to the same solution."""
    x, gaps = gappy()
    common = dict(loss="samples", initial_state="data", state_guess="data")
    with_nan = TrainingProblem(
        linear_model(), Trajectory(T, np.where(gaps, np.nan, x)), mask="finite", **common
    )
    placeholder = TrainingProblem(
        linear_model(), Trajectory(T, np.where(gaps, 123.0, x)), mask=~gaps, **common
    )
    np.testing.assert_array_equal(with_nan.mask[0], ~gaps)
    np.testing.assert_array_equal(with_nan.nominal(), placeholder.nominal())
    alg = RadauIIA(10, 3, ipopt=QUIET)
    a, b = solve(with_nan, alg, seed=0), solve(placeholder, alg, seed=0)
    assert a.success and b.success and a.iterations == b.iterations
    np.testing.assert_array_equal(a.solution.p, b.solution.p)
    np.testing.assert_array_equal(a.solution.x_nodes, b.solution.x_nodes)
    # and the gaps cost little: the dynamics come back
    np.testing.assert_allclose(a.params["f"][:4].reshape(2, 2), [[0, 1], [-1, 0]], atol=0.1)


@pytest.mark.parametrize("mask", ["finite", "explicit"])
def test_a_problem_with_a_mask_can_be_replaced_field_by_field(mask):
    """dataclasses.replace re-validates the mask the problem stored (one array per trajectory),
    as the regularization path and Auto do when they set λ."""
    from dataclasses import replace

    x, gaps = gappy()
    data = Trajectory(T, np.where(gaps, np.nan, x) if mask == "finite" else x)
    given = "finite" if mask == "finite" else ~gaps
    problem = TrainingProblem(linear_model(), data, loss="samples", mask=given)
    again = replace(problem, regularization=1e-3)
    assert again.regularization == 1e-3
    np.testing.assert_array_equal(again.mask[0], ~gaps)


def test_the_guess_from_data_runs_through_the_measured_values_only():
    x, gaps = gappy()
    prob = TrainingProblem(
        linear_model(),
        Trajectory(T, np.where(gaps, np.nan, x)),
        loss="samples",
        mask="finite",
        state_guess="data",
    )
    guess = prob.to_dop(np.zeros(6)).state_guess(T)
    assert np.all(np.isfinite(guess))
    seen = ~gaps
    np.testing.assert_allclose(guess[seen], x[seen], rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(), r"^data\[0\]\.x\[5, 1\] is NaN \(a missing value\) in the fitted column 'x1'; "),
        (dict(loss="samples"), r"^data\[0\]\.x\[5, 1\] is NaN .* mask='finite'"),
        (
            dict(loss="samples", mask=np.ones((21, 2), bool)),
            r"^data\[0\]\.x\[5, 1\] is NaN, but mask\[5, 1\] marks the fitted column 'x1' "
            r"observed there$",
        ),
        (dict(mask="finite"), r"^mask needs loss='samples'"),
        (dict(loss="samples", mask="nan"), r"^unknown mask 'nan'; valid: finite"),
    ],
)
def test_nan_without_a_mask_that_allows_it_names_the_index(kwargs, match):
    x = circle()
    x[5, 1] = np.nan
    with pytest.raises(ValueError, match=match):
        TrainingProblem(linear_model(), Trajectory(T, x), **kwargs)


def test_nan_in_an_output_is_named_as_such():
    model = HybridModel(
        2,
        {},
        lambda x, u, t, b, p: [x[1], -x[0]],
        outputs=lambda x, u, t, b, p: [x[0]],
        n_outputs=1,
    )
    y = np.cos(T)
    y[3] = np.nan
    data = Trajectory(T, circle(), y=y)
    with pytest.raises(ValueError, match=r"^data\[0\]\.y\[3, 0\] is NaN .* column 'y0'"):
        TrainingProblem(model, data, fit="outputs")
    prob = TrainingProblem(model, data, fit="outputs", loss="samples", mask="finite")
    assert prob.samples().n == T.size - 1


# ---- hidden states: absent or NaN columns --------------------------------------------------------
def test_an_absent_named_column_is_a_hidden_state():
    model = decoupled(coupling=1.0)
    named = HybridModel(2, {}, model.rhs, state_names=("a", "b"))
    data = Trajectory(T, np.exp(-T), state_names=("a",))
    prob = TrainingProblem(named, data)
    full = prob.trajectories[0].x
    assert full.shape == (21, 2) and np.all(np.isnan(full[:, 1]))
    assert prob.columns == (("x", 0),)  # fit="states": the measured ones
    np.testing.assert_array_equal(prob.hidden_states(), [False, True])
    # the same as a column of NaN, and the same as naming the fitted column
    nan_column = Trajectory(T, np.c_[np.exp(-T), np.full(21, np.nan)])
    assert TrainingProblem(named, nan_column).columns == prob.columns
    assert TrainingProblem(named, data, fit=("a",)).columns == prob.columns
    # named columns in another order are put in the model's
    swapped = Trajectory(T, np.c_[np.full(21, 2.0), np.exp(-T)], state_names=("b", "a"))
    ordered = TrainingProblem(named, swapped).trajectories[0].x
    np.testing.assert_array_equal(ordered[:, 0], np.exp(-T))


def test_the_old_placeholder_workaround_still_works():
    """fit=("a",) with invented values for b: b is not fitted and its values still inform the
    scaling and the guess, as before."""
    named = HybridModel(2, {}, decoupled(1.0).rhs, state_names=("a", "b"))
    data = Trajectory(T, np.c_[np.exp(-T), 5 * np.cos(T)], state_names=("a", "b"))
    prob = TrainingProblem(named, data, fit=("a",))
    assert prob.columns == (("x", 0),) and not prob.hidden_states().any()
    assert prob.nominal()[1] == pytest.approx(np.std(5 * np.cos(T)))


@pytest.mark.parametrize(
    "data, model, match",
    [
        (
            Trajectory(T, np.exp(-T)),
            HybridModel(2, {}, decoupled().rhs, state_names=("a", "b")),
            r"^data\[0\] has 1 states, the model 2; name its columns \(state_names\) after the "
            r"model's states \(a, b\) so that the others count as hidden",
        ),
        (
            Trajectory(T, np.exp(-T), state_names=("a",)),
            decoupled(),
            r"^data\[0\] has 1 states, the model 2; .* \(give the model state_names\)",
        ),
        (
            Trajectory(T, np.exp(-T), state_names=("c",)),
            HybridModel(2, {}, decoupled().rhs, state_names=("a", "b")),
            r"^data\[0\]\.state_names names 'c', which is no state of the model \(a, b\)$",
        ),
        (
            Trajectory(T, np.c_[T, T, T]),
            decoupled(),
            r"^data\[0\] has 3 states, the model 2$",
        ),
    ],
)
def test_columns_that_cannot_be_matched_to_the_model_are_one_error(data, model, match):
    with pytest.raises(ValueError, match=match):
        TrainingProblem(model, data)


def test_outputs_alone_need_no_state_columns():
    model = HybridModel(
        2,
        {},
        lambda x, u, t, b, p: [x[1], -x[0]],
        outputs=lambda x, u, t, b, p: [x[0] + x[1]],
        n_outputs=1,
    )
    data = Trajectory(T, y=np.cos(T) - np.sin(T))
    prob = TrainingProblem(model, data, fit="outputs", loss="samples", initial_state=[1.0, 0.0])
    assert prob.hidden_states().all()
    with pytest.raises(ValueError, match=r"^the observation model observes nothing: fit='states'"):
        TrainingProblem(model, data)


@pytest.mark.parametrize(
    "x, kwargs, match",
    [
        (
            np.full((21, 2), np.nan),
            dict(),
            r"^the observation model observes nothing: fit='states', but no trajectory measures",
        ),
        (
            np.c_[np.exp(-T), np.full(21, np.nan)],
            dict(fit=("x1",), loss="samples", mask="finite"),
            r"^the observation model observes nothing in data\[0\]: no fitted column \('x1'\)",
        ),
    ],
)
def test_an_observation_model_that_observes_nothing_is_one_error(x, kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrainingProblem(decoupled(), Trajectory(T, x), **kwargs)


# ---- hidden states that nothing determines -------------------------------------------------------
def hidden_second(coupling: float = 0.0, **kwargs) -> TrainingProblem:
    data = Trajectory(T, np.c_[np.exp(-T), np.full(21, np.nan)])
    return TrainingProblem(decoupled(coupling), data, **kwargs)


def test_a_hidden_state_that_nothing_determines_is_warned_about_with_the_reason():
    with pytest.warns(UndeterminedStateWarning) as record:
        hidden_second()
    (message,) = [str(w.message) for w in record]
    assert message.startswith(
        "state 'x1' is not measured, no measured quantity depends on it through the model's "
        "equations or outputs, and its initial value is free: nothing in the training problem "
        "determines it"
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(coupling=1.0),  # x0, which is measured, depends on x1: the loss determines it
        dict(initial_state=[np.nan, 1.0]),  # fixed initial value: a simulation
    ],
)
def test_a_hidden_state_that_the_problem_determines_is_not_warned_about(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndeterminedStateWarning)
        hidden_second(**kwargs)


def test_a_fixed_hidden_state_that_reads_a_free_one_is_undetermined_too():
    # x0 measured alone; x1 free and unseen; x2 fixed but driven by x1
    model = HybridModel(
        3, {}, lambda x, u, t, b, p: [-x[0], -x[1], x[1] - x[2]], state_names=("a", "b", "c")
    )
    data = Trajectory(T, np.exp(-T), state_names=("a",))
    with pytest.warns(UndeterminedStateWarning, match=r"^states 'b', 'c' are not measured"):
        TrainingProblem(model, data, initial_state=[np.nan, np.nan, 0.0])


# ---- names flow from the data to the model -------------------------------------------------------
@pytest.mark.filterwarnings("ignore::collocnode.InconsistentModelWarning")  # 3 iterations
def test_names_flow_from_the_data_to_the_model_the_nlp_and_the_report():
    data = Trajectory(T, circle(), state_names=("prey", "predator"))
    model = linear_model()
    prob = TrainingProblem(model, data, initial_state="data")
    assert model.state_names == () and prob.model.state_names == ("prey", "predator")
    assert prob.model.recipe[1]["state_names"] == ["prey", "predator"]  # model files keep them
    assert prob.to_dop(np.zeros(6)).state_names == ("prey", "predator")
    sol = solve(prob, RadauIIA(5, 3, ipopt=IpoptOptions(print_level=0, max_iter=3)), seed=0)
    assert sol.consistency.state_names == ("prey", "predator")
    assert sol.consistency.worst_state in ("prey", "predator")
    assert sol.simulate(T[:3]).state_names == ("prey", "predator")
    # a model with names keeps its own
    named = linear_model(state_names=("a", "b"))
    assert TrainingProblem(named, Trajectory(T, circle())).model is named


def test_trajectories_whose_names_disagree_leave_the_model_unnamed_with_an_error():
    data = [
        Trajectory(T, circle(), state_names=("prey", "predator")),
        Trajectory(T, circle(), state_names=("x", "y")),
    ]
    with pytest.raises(ValueError, match=r"^data\[1\]\.state_names \('x', 'y'\) differ from "):
        TrainingProblem(linear_model(), data)


def test_the_dependency_structure_comes_from_the_casadi_expressions():
    from collocnode.training._observation import dependencies

    model = HybridModel(
        3,
        {"f": MLP((1, 3, 1), "tanh")},
        lambda x, u, t, b, p: [b["f"](x[1]), ca.sin(x[2]), -x[2]],
        outputs=lambda x, u, t, b, p: [x[0] * x[2]],
        n_outputs=1,
    )
    F, H = dependencies(model)
    np.testing.assert_array_equal(F, [[0, 1, 0], [0, 0, 1], [0, 0, 1]])
    np.testing.assert_array_equal(H, [[1, 0, 1]])


def test_a_nlp_of_the_hidden_problem_has_the_hidden_states_as_unknowns():
    prob = hidden_second(coupling=1.0, loss="samples")
    nlp = StructuredNLP(prob.to_dop(np.zeros(0)), Mesh.equidistant(0.0, 2.0, 4, 3))
    assert nlp.layout.n_z == 13 * 2  # every node holds both states
