"""Discovery: a block's inputs and outputs at the collocation nodes, the sparse regression on a
pysindy library, the closed form in numpy and CasADi, the model it goes into, and every refusal.

The blocks here are affine networks (no hidden layer), so their outputs are exact polynomials of
their inputs and every recovered coefficient has an exact value to meet; the forms with a known
nonlinearity are checked on exact tanh and rational samples."""

from __future__ import annotations

import dataclasses
import math

import casadi as ca
import numpy as np
import pytest
from helpers import pendulum_model, pendulum_swings
from scipy.integrate import solve_ivp

from collocnode import (
    HybridModel,
    IpoptOptions,
    RadauIIA,
    TrainingProblem,
    TrainingSolution,
    Trajectory,
    solve,
)
from collocnode.nn import MLP
from collocnode.training._discovery import (
    BlockSamples,
    DiscoveryError,
    SparseRegression,
    block_samples,
    discover,
    regress,
)

ps = pytest.importorskip("pysindy")

ALPHA, BETA, GAMMA, DELTA = 1.3, 0.9, 0.8, 1.8
X0 = np.array([3.0, 1.5])
T = np.linspace(0.0, 5.0, 21)
QUIET = IpoptOptions(tol=1e-10, print_level=0)


def lotka_volterra(t: np.ndarray) -> np.ndarray:
    """The true trajectory from X0 at t = 0, sampled at t (n,) >= 0; shape (n, 2)."""

    def rhs(_, z):
        x, y = z
        return [ALPHA * x - BETA * x * y, GAMMA * x * y - DELTA * y]

    sol = solve_ivp(rhs, (0.0, t[-1]), X0, t_eval=t, method="DOP853", rtol=1e-12, atol=1e-12)
    return sol.y.T


def physics(x, u, t, blocks, params):
    """Known linear terms; the block sees (x·y, y) and gives the interaction."""
    f = blocks["interaction"](ca.vertcat(x[0] * x[1], x[1]))
    return [ALPHA * x[0] + f[0], -DELTA * x[1] + f[1]]


def make_model() -> HybridModel:
    return HybridModel(
        n_states=2,
        blocks={"interaction": MLP((2, 2))},  # affine: W z + b
        rhs=physics,
        state_names=("prey", "predator"),
    )


def make_problem() -> TrainingProblem:
    data = Trajectory(T, lotka_volterra(T), state_names=("prey", "predator"))
    return TrainingProblem(make_model(), data, initial_state="data", state_guess="data")


def trained_with(W: np.ndarray, b: np.ndarray) -> TrainingSolution:
    """A TrainingSolution whose block weights are (W, b) and whose node states are the true
    trajectory (what a perfect training would give), on a 20 x 3 mesh."""
    problem = make_problem()
    sol = solve(
        problem, RadauIIA(20, 3, ipopt=IpoptOptions(max_iter=1, print_level=0)), check=False
    )
    nodes = lotka_volterra(sol.solution.mesh.node_times)
    p = np.concatenate([np.asarray(W).ravel(), b])
    inner = dataclasses.replace(sol.solution, p=p, x_nodes=nodes, segment_states=[nodes])
    return TrainingSolution(inner, problem)


W_TEST = np.array([[-0.9, 0.0], [0.8, 0.25]])
B_TEST = np.array([0.0, -0.1])


@pytest.fixture(scope="module")
def trained():
    return trained_with(W_TEST, B_TEST)


# ---- samples ---------------------------------------------------------------------------------
def test_block_samples_are_the_block_at_the_collocation_nodes(trained):
    s = block_samples(trained, "interaction")
    mesh = trained.solution.mesh
    x = lotka_volterra(mesh.node_times[1:])
    z = np.column_stack([x[:, 0] * x[:, 1], x[:, 1]])
    # inputs traced through the physics: a product keeps a generic name, a state its own
    assert s.input_names == ("z0", "predator") and s.output_names == (
        "interaction[0]",
        "interaction[1]",
    )
    np.testing.assert_allclose(s.inputs, z, rtol=1e-12)
    np.testing.assert_allclose(s.outputs, z @ W_TEST.T + B_TEST, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s.times, mesh.node_times[1:])
    # the Radau weights integrate over the horizon; the initial node is no collocation node
    assert s.n_samples == mesh.n_collocation and s.weights.sum() == pytest.approx(5.0)
    assert s.n_measured == 21 and s.calls == 1


def test_rhs_samples_are_the_states_and_the_derivatives(trained):
    s = block_samples(trained, None)
    assert s.input_names == ("prey", "predator") and s.output_names == ("prey'", "predator'")
    f = trained.model.function
    expected = np.column_stack(
        [np.asarray(f(xk, trained.p, [], 0.0)[0]).ravel() for xk in s.inputs]
    ).T
    np.testing.assert_allclose(s.outputs, expected, rtol=1e-12)


def test_every_call_of_a_block_is_a_sample():
    """A block called twice per node (one shared law at two places) gives two samples per
    node, each with the node's weight."""

    def twice(x, u, t, blocks, params):
        return [blocks["g"](x[0:1])[0], blocks["g"](x[1:2])[0]]

    model = HybridModel(n_states=2, blocks={"g": MLP((1, 1))}, rhs=twice)
    data = Trajectory(T, np.column_stack([np.exp(-T), np.exp(-2 * T)]))
    sol = solve(
        TrainingProblem(model, data, state_guess="data"),
        RadauIIA(10, 2, ipopt=IpoptOptions(max_iter=1, print_level=0)),
        check=False,
    )
    s = block_samples(sol, "g")
    nodes = sol.solution.x_nodes[1:]
    assert s.calls == 2 and s.n_samples == 2 * nodes.shape[0]
    np.testing.assert_allclose(s.inputs[0::2, 0], nodes[:, 0])
    np.testing.assert_allclose(s.inputs[1::2, 0], nodes[:, 1])
    assert s.weights.sum() == pytest.approx(2 * 5.0)


# ---- the regression ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"criterion": "bic"},
        {"criterion": "aic"},
        {"optimizer": "FROLS"},
        {"optimizer": "STLSQ"},
        {"weights": "uniform"},
    ],
    ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "default",
)
def test_an_affine_block_is_recovered_exactly(trained, settings):
    settings = dict(settings)
    if "optimizer" in settings:
        settings["optimizer"] = getattr(ps, settings["optimizer"])()
    found = discover(trained, "interaction", SparseRegression(ps.PolynomialLibrary(2), **settings))
    names = found.terms.names
    assert names == ("1", "z0", "predator", "z0^2", "z0 predator", "predator^2")
    assert found.coefficient_table() == {
        "interaction[0]": {"z0": pytest.approx(-0.9, rel=1e-8)},
        "interaction[1]": {
            "1": pytest.approx(-0.1, rel=1e-8),
            "z0": pytest.approx(0.8, rel=1e-8),
            "predator": pytest.approx(0.25, rel=1e-8),
        },
    }
    assert found.equations() == [
        "interaction[0] = -0.9 z0",
        "interaction[1] = -0.1 + 0.8 z0 + 0.25 predator",
    ]
    assert found.wall_time_s > 0 and found.n_terms == 4
    chosen = [[p for p in path if p.chosen] for path in found.paths]
    assert [len(c) for c in chosen] == [1, 1] and [c[0].n_terms for c in chosen] == [1, 3]


def test_the_rhs_of_lotka_volterra_is_recovered_exactly():
    found = discover(trained_with([[-BETA, 0], [GAMMA, 0]], [0, 0]), None)
    assert found.coefficient_table() == {
        "prey'": {"prey": pytest.approx(ALPHA), "prey predator": pytest.approx(-BETA)},
        "predator'": {"predator": pytest.approx(-DELTA), "prey predator": pytest.approx(GAMMA)},
    }
    errors = found.coefficient_errors(
        {
            "prey'": {"prey": ALPHA, "prey predator": -BETA},
            "predator'": {"predator": -DELTA, "prey predator": GAMMA},
        }
    )
    assert errors["exact_support"] and errors["max_relative_error"] < 1e-8


def test_numpy_casadi_and_the_closed_form_agree(trained):
    found = discover(trained, "interaction", SparseRegression(ps.PolynomialLibrary(2)))
    z = np.array([[1.0, 2.0], [-0.5, 0.3]])
    expected = z @ W_TEST.T + B_TEST
    np.testing.assert_allclose(found(z), expected, rtol=1e-8)
    sym = ca.SX.sym("z", 2)
    fn = ca.Function("f", [sym], [found.casadi(sym)])
    np.testing.assert_allclose(np.asarray(fn(z[0])).ravel(), expected[0], rtol=1e-8)


@pytest.mark.parametrize("form", ["tanh", "rational"])
def test_a_known_outer_nonlinearity_is_recovered_exactly(form):
    """tanh(p(z)) and p(z) / (1 + q(z)) on exact samples: the linearised regressions are exact,
    and the criterion keeps only the true terms."""
    g = np.linspace(-1.5, 1.5, 15)
    z = np.array([(a, b) for a in g for b in g])
    p = np.column_stack([-0.1 * z[:, 0] + 2.0 * z[:, 1], -2.0 * z[:, 0] - 0.1 * z[:, 1]])
    if form == "tanh":
        y = np.tanh(0.5 * p)
        truth = [{"x": -0.05, "y": 1.0}, {"x": -1.0, "y": -0.05}]
    else:
        q = 1.0 + 0.5 * z[:, 0] ** 2
        y = p / q[:, None]
        truth = [
            {"x": -0.1, "y": 2.0, "den:x^2": 0.5},
            {"x": -2.0, "y": -0.1, "den:x^2": 0.5},
        ]
    samples = BlockSamples(
        block="f",
        inputs=z,
        outputs=y,
        weights=np.ones(z.shape[0]),
        times=np.arange(z.shape[0], dtype=float),
        input_names=("x", "y"),
        output_names=("x'", "y'"),
        n_measured=50,
    )
    found = regress(samples, SparseRegression(ps.PolynomialLibrary(2), form=form))
    table = found.coefficient_table()
    for j, name in enumerate(("x'", "y'")):
        assert table[name] == {k: pytest.approx(val, rel=1e-7) for k, val in truth[j].items()}
    np.testing.assert_allclose(found(z), y, rtol=1e-7, atol=1e-9)
    expression = str(found)
    assert ("tanh(" in expression) == (form == "tanh")
    assert ("/ (1 + 0.5 x^2)" in expression) == (form == "rational")


# ---- the closed form in the model --------------------------------------------------------------
def test_the_closed_form_replaces_the_block_in_the_model(trained):
    found = discover(trained, "interaction", SparseRegression(ps.PolynomialLibrary(2)))
    closed = found.model(trained.model)
    assert closed.blocks == {} and closed.fitted == found.parameter_names()
    assert closed.fitted == [
        "interaction[0]:z0",
        "interaction[1]:1",
        "interaction[1]:z0",
        "interaction[1]:predator",
    ]
    p = np.array([closed.parameters[n].value for n in closed.fitted])
    for x in ([1.0, 2.0], [3.0, 0.5]):
        old = trained.model.function(x, trained.p, [], 0.0)[0]
        new = closed.function(x, p, [], 0.0)[0]
        np.testing.assert_allclose(np.asarray(new), np.asarray(old), rtol=1e-8)


def test_the_refit_moves_the_coefficients_to_the_truth():
    """Discovered from a block with wrong weights, the coefficients re-fitted by collocation on
    noise-free Lotka-Volterra data are -β and γ."""
    start = trained_with([[-1.0, 0.0], [0.7, 0.0]], [0.0, 0.0])
    found = discover(start, "interaction", SparseRegression(ps.PolynomialLibrary(1)))
    assert found.coefficient_table() == {
        "interaction[0]": {"z0": pytest.approx(-1.0)},
        "interaction[1]": {"z0": pytest.approx(0.7)},
    }
    problem = found.refit_problem(start)
    assert problem.data is start.problem.data and problem.params_guess.tolist() == pytest.approx(
        [-1.0, 0.7]
    )
    refit = solve(problem, RadauIIA(40, 3, ipopt=QUIET))
    assert refit.status.ok and refit.consistency.consistent
    refitted = found.with_parameters(refit.model, refit.p)
    assert refitted.coefficient_table() == {
        "interaction[0]": {"z0": pytest.approx(-BETA, rel=1e-4)},
        "interaction[1]": {"z0": pytest.approx(GAMMA, rel=1e-4)},
    }


def test_pruning_drops_terms_below_their_share(trained):
    found = discover(trained, "interaction", SparseRegression(ps.PolynomialLibrary(2)))
    s = found.samples
    share = np.sqrt(np.average((0.1 * np.ones(s.n_samples)) ** 2, weights=s.weights))
    ref = np.sqrt(np.average(s.outputs[:, 1] ** 2, weights=s.weights))
    kept = found.pruned(0.9 * share / ref)
    dropped = found.pruned(1.1 * share / ref)
    assert kept.coefficient_table() == found.coefficient_table()
    assert "1" not in dropped.coefficient_table()["interaction[1]"]
    assert (
        dropped.coefficient_table()["interaction[0]"] == found.coefficient_table()["interaction[0]"]
    )
    with pytest.raises(ValueError, match="tol must be a positive number"):
        found.pruned(0.0)


# ---- refusals ----------------------------------------------------------------------------------
def test_an_unknown_block_is_named(trained):
    with pytest.raises(DiscoveryError, match=r"unknown block 'friction'; the model's blocks: "):
        discover(trained, "friction")


def test_a_library_fitted_to_other_inputs_is_refused(trained):
    lib = ps.PolynomialLibrary(2).fit(np.zeros((4, 3)))
    with pytest.raises(DiscoveryError, match=r"fitted to 3 inputs, but block 'interaction' has 2"):
        discover(trained, "interaction", SparseRegression(lib))
    with pytest.raises(DiscoveryError, match="input_names has 3 labels"):
        discover(trained, "interaction", SparseRegression(input_names=("a", "b", "c")))


def test_a_term_that_is_not_finite_on_the_inputs_is_named(trained):
    lib = ps.CustomLibrary([lambda a: np.log(a - 1.0)], [lambda a: f"log({a} - 1)"])
    with np.errstate(invalid="ignore", divide="ignore"):
        with pytest.raises(
            DiscoveryError, match=r"library term 'log\(predator - 1\)' is not finite"
        ):
            discover(trained, "interaction", SparseRegression(lib))


def test_a_library_whose_functions_want_more_inputs_says_why_it_has_no_terms(trained):
    # the block has 2 inputs; each function asks for 3 distinct ones
    lib = ps.CustomLibrary([lambda a, b, c: a * b * c], [lambda a, b, c: f"{a} {b} {c}"])
    with pytest.raises(
        DiscoveryError,
        match=r"no terms for the 2 inputs of block 'interaction': its functions take up to 3 "
        r"positional arguments",
    ):
        discover(trained, "interaction", SparseRegression(lib))


@pytest.mark.parametrize(
    "make_library",
    [
        # too wide for the block's 2 inputs: pysindy would give no terms at all
        lambda: ps.CustomLibrary([lambda a, b, k=2: a * b**k], [lambda a, b: f"{a} {b}^2"]),
        # as wide as the inputs: pysindy would silently fill k with the second input (a**b)
        lambda: ps.CustomLibrary([lambda a, k=2: a**k], [lambda a: f"{a}^2"]),
        # inside a sum of libraries, and in a name function
        lambda: (
            ps.PolynomialLibrary(degree=1)
            + ps.CustomLibrary([lambda a: np.sin(a)], [lambda a, suffix="": f"sin({a}){suffix}"])
        ),
    ],
    ids=["too-wide", "silently-filled", "in-a-sum"],
)
def test_a_custom_function_with_a_default_argument_is_refused(trained, make_library):
    with pytest.raises(
        DiscoveryError,
        match=r"CustomLibrary (functions|function_names)\[0\] of the library for block "
        r"'interaction' has positional arguments with defaults \((k|suffix)\).*closure",
    ):
        discover(trained, "interaction", SparseRegression(make_library()))


def test_a_term_without_a_casadi_form_is_named(trained):
    lib = ps.CustomLibrary([lambda a: np.where(a > 1.0, a, 0.0)], [lambda a: f"cut({a})"])
    with pytest.raises(DiscoveryError, match="no CasADi form"):
        discover(trained, "interaction", SparseRegression(lib))


def test_a_threshold_that_removes_every_term_is_named(trained):
    settings = SparseRegression(
        ps.PolynomialLibrary(2), optimizer=ps.STLSQ(threshold=50.0), criterion="none"
    )
    with pytest.raises(
        DiscoveryError,
        match=r"threshold removes every term of output 'interaction\[0\]' .* \(term 'z0'\)",
    ):
        discover(trained, "interaction", settings)


def test_a_singular_rational_form_is_named():
    """A denominator that crosses zero on the samples: the form is refused, naming it."""
    z = np.linspace(-2.0, 2.0, 81)[:, None]
    samples = BlockSamples(
        "f", z, (1.0 - 0.5 * z) / 3.0, np.ones(z.size), z[:, 0], ("x",), ("y",), 50
    )
    settings = SparseRegression(
        ps.PolynomialLibrary(1),
        form="rational",
        optimizer=ps.STLSQ(threshold=0.0),
        criterion="none",
    )
    bad = dataclasses.replace(samples, outputs=1.0 / (1.0 - 0.8 * z + 1e-3 * z**3))
    with pytest.raises(DiscoveryError, match=r"singular on the data range: its denominator 1 - "):
        regress(bad, settings)
    # the same samples without the pole are fine
    assert regress(samples, settings).n_terms >= 1


def test_tanh_needs_outputs_inside_the_unit_interval(trained):
    with pytest.raises(DiscoveryError, match=r"tanh form needs outputs in \(−1, 1\)"):
        discover(trained, "interaction", SparseRegression(form="tanh"))


@pytest.mark.parametrize(
    ("settings", "error", "match"),
    [
        ({"library": "poly"}, TypeError, "library must be a pysindy feature library"),
        ({"optimizer": object()}, TypeError, "optimizer must be a pysindy optimizer"),
        ({"form": "cubic"}, ValueError, "unknown form 'cubic'"),
        ({"criterion": "r2"}, ValueError, "unknown criterion 'r2'"),
        ({"weights": "even"}, ValueError, "unknown weights 'even'"),
        ({"thresholds": ()}, ValueError, "thresholds must hold at least one value"),
        ({"thresholds": (0.1, -1.0)}, ValueError, r"thresholds\[1\]"),
        ({"n_thresholds": 0}, ValueError, "n_thresholds"),
        ({"denominator": "poly", "form": "linear"}, ValueError, "denominator is the library"),
    ],
)
def test_bad_settings_are_named(settings, error, match):
    with pytest.raises(error, match=match):
        SparseRegression(**settings)


def test_an_optimizer_without_a_path_needs_criterion_none():
    with pytest.raises(ValueError, match="has no sparsity path"):
        SparseRegression(optimizer=ps.SR3(regularizer="L2"))
    assert SparseRegression(optimizer=ps.SR3(regularizer="L2"), criterion="none")


def test_a_sr3_path_is_swept(trained):
    found = discover(
        trained, "interaction", SparseRegression(ps.PolynomialLibrary(2), optimizer=ps.SR3())
    )
    assert found.coefficient_table()["interaction[0]"] == {"z0": pytest.approx(-0.9)}
    assert all(math.isfinite(p.threshold) for p in found.paths[0])


def test_tanh_samples_at_the_saturation_carry_no_weight():
    """A network that overshoots a saturated tanh slightly (|y| >= 1 at a few samples) still
    gives the exact argument from the other samples; an output of 5 is refused."""
    z = np.linspace(-3.0, 3.0, 301)[:, None]
    y = np.tanh(1.5 * z)
    y[[0, -1]] = np.sign(y[[0, -1]]) * 1.002
    samples = BlockSamples("f", z, y, np.ones(z.size), z[:, 0], ("x",), ("y",), 50)
    found = regress(samples, SparseRegression(ps.PolynomialLibrary(2), form="tanh"))
    assert found.coefficient_table() == {"y": {"x": pytest.approx(1.5, rel=1e-7)}}
    with pytest.raises(DiscoveryError, match=r"reaches 5 \(100% of its samples outside\)"):
        regress(
            dataclasses.replace(samples, outputs=np.full_like(y, 5.0)),
            SparseRegression(form="tanh"),
        )


def test_a_block_the_library_cannot_express_is_warned_of():
    """Quadratic drag 0.3ω + 0.1ω|ω| learned by a network and regressed on the default cubic
    polynomials: the closed form misses part of the network's shape (|ω| is no polynomial),
    and discovery says so instead of returning a confident law."""
    from collocnode import BlockConstraint
    from collocnode.training._discovery import DiscoveryWarning

    data, model = pendulum_swings(0), pendulum_model()
    problem = TrainingProblem(
        model,
        data,
        regularization=1e-5,
        state_guess="data",
        block_constraints=(BlockConstraint("d", 0.0),),
    )
    sol = solve(problem, RadauIIA(60, 3, ipopt=IpoptOptions(max_iter=300, print_level=0)), seed=0)
    with pytest.warns(DiscoveryWarning, match="the library does not express this block"):
        found = discover(sol, "d")
    assert found.explained[0] == pytest.approx(0.9928, abs=5e-4)  # quoted in docs/discovery.md
