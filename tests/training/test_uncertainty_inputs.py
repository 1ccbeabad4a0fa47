"""Bad input to the uncertainty of a trained model: one clear error, or numbers with a clear
warning; and the bands by sampling beside the delta method."""

import warnings

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    HybridModel,
    IpoptOptions,
    Parameter,
    Proximal,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.training._uncertainty import UncertaintyWarning

ALG = RadauIIA(20, 3, ipopt=IpoptOptions(tol=1e-10, print_level=0))


def oscillator(n_trajectories=1, **fields):
    """x'' = -k x - c x' with k and c fitted, noisy positions and velocities."""
    t = np.linspace(0.0, 4.0, 41)
    rng = np.random.default_rng(0)
    data = []
    for x0 in np.linspace(1.0, 2.0, n_trajectories):
        w = np.sqrt(4.0 - 0.01)
        x = x0 * np.exp(-0.1 * t) * np.cos(w * t)
        v = np.gradient(x, t)
        data.append(
            Trajectory(
                t=t,
                x=np.column_stack([x, v]) + 0.01 * rng.standard_normal((t.size, 2)),
                state_names=("x", "v"),
            )
        )
    model = HybridModel(
        n_states=2,
        blocks={},
        rhs=lambda s, u, tt, b, p: ca.vertcat(s[1], -p["k"] * s[0] - p["c"] * s[1]),
        parameters={"k": Parameter(3.5, fit=True), "c": Parameter(0.1, fit=True)},
        state_names=("x", "v"),
    )
    return TrainingProblem(model, data if n_trajectories > 1 else data[0], **fields)


@pytest.fixture(scope="module")
def trained():
    return solve(oscillator(initial_state="data"), ALG, seed=0)


@pytest.mark.parametrize(
    "noise, match",
    [
        (0.0, r"noise must be > 0 .* got 0.0 for column 'x'"),
        (-0.1, r"noise must be > 0 .* got -0.1 for column 'x'"),
        ([0.1, 0.0], r"noise must be > 0 .* got 0.0 for column 'v'"),
        ([0.1, 0.1, 0.1], r"noise must be one number or one per fitted column \(x, v\)"),
        (np.nan, "noise must be finite"),
    ],
)
def test_a_noise_level_that_is_not_positive_is_one_clear_error(trained, noise, match):
    with pytest.raises(ValueError, match=match):
        trained.uncertainty(noise=noise)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"noise": True}, TypeError, "noise must be a number"),
        ({"hessian": "bfgs"}, ValueError, "unknown hessian .bfgs.; valid: gauss-newton, exact"),
        ({"level": 1.0}, ValueError, r"level must be in \(0, 1\)"),
        ({"rcond": 0.0}, ValueError, "rcond"),
    ],
)
def test_other_bad_arguments(trained, kwargs, error, match):
    with pytest.raises(error, match=match):
        trained.uncertainty(**kwargs)


def test_a_solve_that_did_not_converge_gives_numbers_with_a_warning():
    alg = RadauIIA(20, 3, ipopt=IpoptOptions(max_iter=2, print_level=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solve(oscillator(initial_state="data"), alg, seed=0)
    assert not sol.status.ok
    with pytest.warns(UncertaintyWarning, match="did not converge .status iteration_limit"):
        unc = sol.uncertainty(noise=0.01)
    assert not unc.converged and unc.to_dict()["converged"] is False
    assert np.all(np.isfinite(unc.std()))
    assert "did not converge" in unc.summary()


def test_a_proximal_problem_is_refused():
    problem = oscillator(initial_state="data", proximal=Proximal(rho=1.0, params=np.zeros(2)))
    sol = solve(problem, ALG, seed=0)
    with pytest.raises(ValueError, match="proximal term"):
        sol.uncertainty()


def test_bands_of_the_trajectory(trained):
    unc = trained.uncertainty()
    t = np.linspace(0.0, 4.0, 9)
    colloc = unc.trajectory_band(t, method="collocation")
    assert colloc.value.shape == (9, 2) and colloc.bounded.all()
    np.testing.assert_allclose(colloc.value, trained(t))
    # the initial state is fixed: no spread at t0
    assert colloc.std[0].max() == 0.0
    with pytest.raises(ValueError, match="method='delta' re-simulates beyond it"):
        unc.trajectory_band(np.linspace(0.0, 6.0, 5), method="collocation")
    # the forward sensitivities of the re-simulation agree with the collocation ones (to the
    # collocation's discretisation error on 20 intervals of 3 stages)
    delta = unc.trajectory_band(t)
    np.testing.assert_allclose(delta.value, colloc.value, atol=1e-4)
    np.testing.assert_allclose(delta.std, colloc.std, rtol=1e-3, atol=1e-9)
    # sampling re-simulates, also beyond the horizon; close to the delta method inside it
    sampled = unc.trajectory_band(t, method="sampling", samples=400, seed=1)
    assert sampled.samples == 400 and sampled.failed == 0
    np.testing.assert_allclose(sampled.std[1:], delta.std[1:], rtol=0.15)
    later = np.linspace(3.0, 6.0, 4)
    beyond = unc.trajectory_band(later, method="sampling", samples=400, seed=2)
    np.testing.assert_allclose(beyond.std, unc.trajectory_band(later).std, rtol=0.15)
    with pytest.raises(ValueError, match="segment must be < 1"):
        unc.trajectory_band(t, segment=1)
    with pytest.raises(ValueError, match="the model has no outputs"):
        unc.trajectory_band(t, outputs=True)


def test_free_initial_states_of_several_trajectories_are_named_and_sampled():
    sol = solve(oscillator(n_trajectories=2), ALG, seed=0)
    unc = sol.uncertainty()
    q = unc.quantities
    names = [q.names[i] for i in q.of_kind("initial_state")]
    assert names == ["x0[0].x", "x0[0].v", "x0[1].x", "x0[1].v"]
    table = unc.parameters()
    assert set(table) == {"k", "c", *names}
    band = unc.trajectory_band(np.linspace(0.0, 4.0, 5), segment=1)
    assert band.std[0].min() > 0  # the initial state is uncertain when fitted
    colloc = unc.trajectory_band(np.linspace(0.0, 4.0, 5), segment=1, method="collocation")
    np.testing.assert_allclose(band.std, colloc.std, rtol=1e-3)
    sampled = unc.trajectory_band(np.array([0.0, 2.0]), segment=1, method="sampling", samples=300)
    np.testing.assert_allclose(sampled.std, band.std[[0, 2]], rtol=0.2)


def test_a_solution_without_its_nlp_gets_it_rebuilt(trained):
    """A copied (or unpickled) solution has lost its NLP: it is built again from the problem,
    with the same numbers."""
    import copy

    copied = copy.deepcopy(trained)
    assert copied.solution.nlp is None and trained.solution.nlp is not None
    for hessian in ("gauss-newton", "exact"):
        np.testing.assert_allclose(
            copied.uncertainty(hessian=hessian).covariance(),
            trained.uncertainty(hessian=hessian).covariance(),
            rtol=1e-9,
        )
