"""IPOPT options are checked against the option list of the backend's own IPOPT build; a failed
IPOPT run reports IPOPT's reason and a true iteration count."""

import ctypes
import warnings

import numpy as np
import pytest

from collocnode import DynamicOptimizationProblem, IpoptOptions, RadauIIA, SolverStatus, solve
from collocnode.transcription._ipopt import options as ipopt_options
from collocnode.transcription._ipopt.backends import BACKENDS
from collocnode.transcription._ipopt.options import OptionSpec, option_catalog, parse_documentation


def _loads(library: str) -> bool:
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


needs_no_hsl = pytest.mark.skipif(_loads("libhsl.so"), reason="this machine has the HSL library")


def decay() -> DynamicOptimizationProblem:
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -1.5 * x,
        n_states=1,
        n_params=0,
        tspan=(0.0, 2.0),
        lagrange=lambda x, p, u, t: x[0] ** 2,
        x0=[1.0],
        x_guess=[1.0],
    )


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@needs_no_hsl
def test_a_linear_solver_the_build_lacks_is_refused_with_the_available_ones(backend):
    with pytest.raises(ValueError, match=r"linear_solver 'ma57' is not available.*libhsl") as err:
        IpoptOptions(linear_solver="ma57", backend=backend)
    assert "available: " in str(err.value) and "mumps" in str(err.value).split("available: ")[1]
    with pytest.raises(ValueError, match="ma27"):
        IpoptOptions(extra={"linear_solver": "ma27"}, backend=backend)


@pytest.mark.parametrize(
    ("extra", "error", "match"),
    [
        ({"foo_bar": 1}, ValueError, r"extra\['foo_bar'\]: IPOPT has no option 'foo_bar'"),
        ({"tol": "abc"}, TypeError, r"extra\['tol'\] must be a real number, got 'abc'"),
        ({"max_iter": 2.5}, TypeError, r"extra\['max_iter'\] must be an integer, got 2.5"),
        ({"max_iter": True}, TypeError, r"extra\['max_iter'\] must be an integer, got True"),
        ({"mu_init": -1.0}, ValueError, r"extra\['mu_init'\] must be > 0, got -1.0"),
        ({"print_level": 13}, ValueError, r"extra\['print_level'\] must be <= 12, got 13"),
        ({"derivative_test": "yes"}, ValueError, r"extra\['derivative_test'\] must be one of"),
        ({"mu_strategy": 1}, TypeError, r"extra\['mu_strategy'\] must be one of"),
        ({3: 1}, TypeError, "option names must be strings"),
    ],
)
def test_extra_options_are_checked_against_ipopts_own_list(backend, extra, error, match):
    with pytest.raises(error, match=match):
        IpoptOptions(extra=extra, backend=backend)


def test_an_int_for_a_real_option_reaches_both_backends(backend):
    """cyipopt refuses a Python int for a real option ('Error while assigning an option')."""
    opts = IpoptOptions(print_level=0, backend=backend, extra={"acceptable_tol": 1})
    assert opts.extra == {"acceptable_tol": 1.0} and isinstance(opts.extra["acceptable_tol"], float)
    assert solve(decay(), RadauIIA(4, 2, ipopt=opts)).status == SolverStatus.SUCCESS


def test_each_backend_has_its_own_list():
    for backend in BACKENDS:
        catalog = option_catalog(backend)
        assert catalog is not None and len(catalog) > 200
        assert catalog["tol"] == OptionSpec("tol", "real", 0.0, True)
        assert catalog["max_iter"].kind == "integer"
        assert "mumps" in catalog["linear_solver"].values
    solvers = {b: set(option_catalog(b)["linear_solver"].values) for b in BACKENDS}
    for only in solvers["casadi"] - solvers["cyipopt"]:  # e.g. SPRAL in CasADi's build
        with pytest.raises(ValueError, match="cyipopt backend's IPOPT"):
            IpoptOptions(linear_solver=only, backend="cyipopt")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(mumps_scaling="no"), "mumps_scaling must be True or False, got 'no'"),
        (dict(mumps_scaling=1), "mumps_scaling must be True or False, got 1"),
        (dict(linear_solver=5), "linear_solver must be a string, got 5"),
    ],
)
def test_typed_fields_refuse_other_types(kwargs, match):
    with pytest.raises(TypeError, match=match):
        IpoptOptions(**kwargs)


def test_parse_documentation():
    text = (
        "\\anchor OPT_tol\n<strong>tol</strong>: x\n<blockquote>\n The valid range for this real "
        "option is 0 < tol and its default value is 10<sup>-08</sup>.\n</blockquote>\n\n"
        "\\anchor OPT_max_iter\n<strong>max_iter</strong>: y\n<blockquote>\n The valid range for "
        "this integer option is 0 &le; max_iter &le; 7 and its default value is 3.\n</blockquote>\n"
        "\\anchor OPT_nlp_lower_bound_inf\n<blockquote>\n The valid range for this real option "
        "is unrestricted and its default value is -10<sup>+19</sup>.\n</blockquote>\n"
        '\\anchor OPT_fixed\n<blockquote>\n The default value for this string option is "b".\n\n'
        "Possible values:\n - a: first\n - b: second\n</blockquote>\n"
        '\\anchor OPT_out\n<blockquote>\n The default value for this string option is "".\n\n'
        "Possible values:\n - *: Any file name\n</blockquote>\n"
    )
    specs = parse_documentation(text)
    assert specs["tol"] == OptionSpec("tol", "real", 0.0, True)
    assert specs["max_iter"] == OptionSpec("max_iter", "integer", 0.0, False, 7.0, False)
    assert specs["nlp_lower_bound_inf"] == OptionSpec("nlp_lower_bound_inf", "real")
    assert specs["fixed"] == OptionSpec("fixed", "string", values=("a", "b"), default="b")
    assert specs["out"] == OptionSpec("out", "string", default="")


@pytest.fixture
def unreadable_option_list(monkeypatch):
    def fail(backend, options):
        raise OSError("no IPOPT here")

    monkeypatch.setattr(ipopt_options, "_run_ipopt", fail)
    option_catalog.cache_clear()
    yield
    option_catalog.cache_clear()


@pytest.mark.usefixtures("unreadable_option_list")
def test_options_pass_unchecked_with_a_warning_when_the_list_cannot_be_read():
    with pytest.warns(RuntimeWarning, match="could not read the casadi backend's IPOPT option"):
        assert option_catalog("casadi") is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the warning is given once, not per IpoptOptions
        assert IpoptOptions(extra={"not_checked": 1}).extra == {"not_checked": 1}


@needs_no_hsl
def test_a_failed_ipopt_run_reports_its_reason_and_no_garbage_iteration_count(backend):
    opts = IpoptOptions(print_level=0, backend=backend)
    # an option that escaped the checks (as when IPOPT's list cannot be read)
    object.__setattr__(opts, "linear_solver", "ma57")
    sol = solve(decay(), RadauIIA(4, 2, ipopt=opts))
    assert sol.status == SolverStatus.FAILED and not sol.status.ok
    assert sol.iterations == 0
    assert "libhsl" in sol.message and sol.message.startswith("IPOPT: ")
    assert np.all(np.isfinite(sol.x_nodes))


def test_an_ipopt_failure_names_ipopts_exit_reason(backend):
    opts = IpoptOptions(print_level=0, backend=backend, max_iter=1, tol=1e-30)
    sol = solve(decay(), RadauIIA(4, 2, ipopt=opts))
    assert sol.status == SolverStatus.ITERATION_LIMIT
    assert sol.message == "IPOPT: Maximum Number of Iterations Exceeded."
