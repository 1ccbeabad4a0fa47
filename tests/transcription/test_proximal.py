"""A problem's NLP re-solved with new proximal values: the same optimum without a pull, warm
starts from the last iterate, and the objective reported without the proximal term."""

import casadi as ca
import numpy as np
import pytest

from collocnode import DynamicOptimizationProblem, IpoptOptions, RadauIIA, solve
from collocnode.transcription._proximal import ProximalBlock

ALG = RadauIIA(6, 3, ipopt=IpoptOptions(tol=1e-10, print_level=0))


def fit_problem() -> DynamicOptimizationProblem:
    """x' = -p0 x + p1 fitted to exp(-1.3 t) over [0, 2], with a small penalty on p."""
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -p[0] * x + p[1],
        n_states=1,
        n_params=2,
        tspan=(0.0, 2.0),
        lagrange=lambda x, p, u, t: (x[0] - ca.exp(-1.3 * t)) ** 2,
        mayer=lambda x0, xf, p: 0.01 * ca.sumsqr(p - 1),
        p_guess=[0.5, 0.0],
        x_guess=[1.0],
    )


@pytest.fixture
def block():
    dop = fit_problem()
    mesh = ALG.mesh_for(dop.tspan)
    return ProximalBlock(dop, ALG, [mesh], mesh.n_nodes + np.arange(dop.n_params))


def test_without_a_pull_it_is_the_plain_solve_and_warm_starts(block):
    plain = solve(fit_problem(), ALG)
    zero = np.zeros(2)
    first = block.solve(zero, zero)
    assert first["status"] == "success"
    assert first["objective"] == pytest.approx(plain.objective, rel=1e-9)
    np.testing.assert_allclose(first["shared"], plain.p, atol=1e-8)
    again = block.solve(zero, zero)  # from the optimum: nothing left to do
    assert again["iterations"] <= 2 < first["iterations"]
    states = block.states()
    np.testing.assert_allclose(states["segment_states"][0], plain.x_nodes, atol=1e-7)


def test_the_reported_objective_excludes_the_proximal_term(block):
    rho, center = np.full(2, 5.0), np.array([0.1, 0.2])
    res = block.solve(rho, center)
    full = float(block.nlp.fn_f(block.z))
    gap = res["shared"] - center
    assert res["objective"] == pytest.approx(full - 0.5 * np.sum(rho * gap**2), rel=1e-12)
    assert np.all(np.abs(gap) > 0)  # the pull is finite: the parameters sit between


def test_states_before_any_solve_is_an_error(block):
    with pytest.raises(RuntimeError, match="not been solved"):
        block.states()
