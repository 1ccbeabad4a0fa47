"""MUMPS's ordering chosen per problem by a short timed trial (``OrderingTrial``)."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    DynamicOptimizationProblem,
    IpoptOptions,
    OrderingTrial,
    RadauIIA,
    SolverStatus,
    solve,
)
from collocnode.transcription._ipopt.backends import BACKENDS


def estimation() -> DynamicOptimizationProblem:
    """x' = -p0 x + p1 sin(3t) fitted to the trajectory of p = (1.3, 0.7): a few IPOPT
    iterations, so the trial's two iterations are a part of the solve, not all of it."""
    ref_t = np.linspace(0.0, 4.0, 401)
    ref_x = np.zeros_like(ref_t)
    for k in range(1, ref_t.size):  # explicit Euler: a smooth target, exactness is not needed
        h = ref_t[k] - ref_t[k - 1]
        ref_x[k] = ref_x[k - 1] + h * (-1.3 * ref_x[k - 1] + 0.7 * np.sin(3 * ref_t[k - 1]))

    lut = ca.interpolant("ref", "linear", [ref_t], ref_x)
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -p[0] * x + p[1] * ca.sin(3 * t),
        n_states=1,
        n_params=2,
        tspan=(0.0, 4.0),
        lagrange=lambda x, p, u, t: (x[0] - lut(t)) ** 2,
        x0=[0.0],
        p_guess=[0.2, 0.1],
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_trial_times_each_ordering_and_solves_like_the_fastest(backend):
    ipopt = IpoptOptions(mumps_ordering="trial", print_level=0, backend=backend)
    sol = solve(estimation(), RadauIIA(40, 3, ipopt=ipopt))
    assert sol.status == SolverStatus.SUCCESS
    assert set(sol.ordering_trial) == {"auto", "metis"}
    assert all(np.isfinite(s) and s > 0 for s in sol.ordering_trial.values())
    assert sol.timings["ordering_trial"] > 0
    chosen = min(sol.ordering_trial, key=sol.ordering_trial.__getitem__)
    # the solve after the trial is the plain solve with the chosen ordering, from the same start
    plain = solve(
        estimation(),
        RadauIIA(40, 3, ipopt=IpoptOptions(mumps_ordering=chosen, print_level=0, backend=backend)),
    )
    assert sol.iterations == plain.iterations
    np.testing.assert_allclose(sol.p, plain.p, rtol=1e-10)
    assert sol.to_dict()["ordering_trial_s_per_iteration"] == sol.ordering_trial
    assert f"MUMPS ordering  {chosen} (IPOPT s per iteration" in sol.summary()
    assert "+ ordering trial" in sol.summary() and "ordering trial" not in plain.summary()
    assert "ordering_trial" not in plain.timings and plain.ordering_trial == {}


def test_the_users_callback_sees_the_solve_only():
    seen = []
    ipopt = IpoptOptions(mumps_ordering=OrderingTrial(("metis", "amd"), 3), print_level=0)
    sol = solve(
        estimation(), RadauIIA(40, 3, ipopt=ipopt), callback=lambda s: seen.append(s.iteration)
    )
    assert set(sol.ordering_trial) == {"metis", "amd"}
    assert seen == list(range(sol.iterations + 1))


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: OrderingTrial(("metis",)), ValueError, r"at least two distinct.*\('metis',\)"),
        (lambda: OrderingTrial(("metis", "metis")), ValueError, "at least two distinct"),
        (lambda: OrderingTrial(("metis", "nd")), ValueError, r"unknown orderings 'nd'"),
        (lambda: OrderingTrial("metis"), TypeError, r"orderings must be a tuple.*'metis'"),
        (lambda: OrderingTrial(iterations=0), ValueError, r"iterations must be a positive"),
        (lambda: IpoptOptions(mumps_ordering="trials"), ValueError, r"'trials'; valid: .*trial"),
    ],
)
def test_bad_trials_name_the_field_and_value(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_a_trial_has_no_single_ipopt_option():
    with pytest.raises(ValueError, match="ordering trial"):
        IpoptOptions(mumps_ordering="trial").ipopt_dict()


def test_extra_options_do_not_lift_the_trials_iteration_limit(monkeypatch):
    """``extra`` comes last in IPOPT's options; an iteration limit there still leaves the trial
    runs at the trial's own."""
    import importlib

    ipopt_module = importlib.import_module("collocnode.transcription._ipopt.backends")
    limits = []
    real = ipopt_module.solve_ipopt

    def spy(nlp, z0, options, *args, **kwargs):
        if isinstance(options.mumps_ordering, str):
            limits.append(options.ipopt_dict()["max_iter"])
        return real(nlp, z0, options, *args, **kwargs)

    monkeypatch.setattr(ipopt_module, "solve_ipopt", spy)
    ipopt = IpoptOptions(mumps_ordering="trial", print_level=0, extra={"max_iter": 50})
    spy(*_nlp_and_guess(), ipopt)
    assert limits == [2, 2, 50]  # two trial runs, then the solve


def _nlp_and_guess():
    from collocnode.transcription._collocation import build_nlp

    return build_nlp(estimation(), RadauIIA(40, 3))
