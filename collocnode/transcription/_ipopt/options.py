"""IPOPT settings, checked against the options the bundled IPOPT itself registers.

Each backend bundles its own IPOPT build (CasADi's and cyipopt's; they differ, e.g. only CasADi's
has SPRAL). The list of options, their types, ranges and string values is read once per backend
and process from that build's own documentation (IPOPT's ``print_options_documentation``, written
to a temporary ``output_file``) and every option of [`IpoptOptions`][collocnode.IpoptOptions] --
``extra`` included -- is checked against it before a solve starts. IPOPT also lists linear solvers
(HSL, Pardiso) that it loads from a shared library at run time; ``linear_solver`` is checked to name
one whose library loads. When the list cannot be read, options are passed unchecked with a warning.
"""

from __future__ import annotations

import ctypes
import functools
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np

from ... import _validation as v

BACKENDS = ("casadi", "cyipopt")
# MUMPS fill-reducing orderings (IPOPT option mumps_pivot_order)
MUMPS_ORDERINGS = {"amd": 0, "amf": 2, "scotch": 3, "pord": 4, "metis": 5, "qamd": 6, "auto": 7}
#: ``mumps_ordering`` value that chooses among `OrderingTrial.orderings` per problem
TRIAL = "trial"
# IPOPT's file output level J_SUMMARY: errors, warnings and the final summary with its EXIT line
REASON_PRINT_LEVEL = 3


@dataclass(frozen=True)
class OrderingTrial:
    """MUMPS's ordering chosen per problem by a short timed trial (``IpoptOptions(mumps_ordering=
    OrderingTrial(...))``, or ``"trial"`` for these defaults).

    Before the solve, IPOPT runs ``iterations`` iterations from the initial guess once with each
    of ``orderings``, without the user's callback; the solve then starts again from the initial
    guess with the ordering of the least IPOPT time per iteration (the symbolic analysis, paid
    once per solve, included). The trial's wall time counts against ``max_wall_time`` and is
    reported in the solution's ``timings["ordering_trial"]``, the time per iteration of each
    ordering in ``Solution.ordering_trial``. No ordering wins everywhere on these arrowhead KKT
    systems (docs/performance.md); the first iterations are cheap where the problem is small,
    and where it is large a trial costs ``len(orderings) x iterations`` iterations.

    Args:
        orderings: the candidates, names of `MUMPS_ORDERINGS`, at least two, distinct.
        iterations: IPOPT iterations of each trial (>= 1).
    """

    orderings: tuple[str, ...] = ("auto", "metis")
    iterations: int = 2

    def __post_init__(self) -> None:
        if isinstance(self.orderings, str) or not isinstance(self.orderings, (tuple, list)):
            raise TypeError(f"orderings must be a tuple of names, got {self.orderings!r:.60}")
        for name in self.orderings:
            v.choice("orderings", name, MUMPS_ORDERINGS)
        if len(set(self.orderings)) < 2 or len(set(self.orderings)) != len(self.orderings):
            raise ValueError(
                f"orderings must name at least two distinct orderings, got {self.orderings!r}"
            )
        object.__setattr__(self, "orderings", tuple(self.orderings))
        v.positive_int("iterations", self.iterations)


@dataclass(frozen=True)
class IpoptOptions:
    """IPOPT settings (see the IPOPT options reference); ``extra`` passes any other option.

    Args:
        tol: convergence tolerance (IPOPT ``tol``).
        max_iter: iteration limit.
        mu_strategy: barrier update, "adaptive" (default; ~10 % fewer iterations on the Van der
            Pol benchmark) or "monotone".
        linear_solver: IPOPT's sparse symmetric solver ("mumps" ships with both backends; others
            are checked to be available in the backend's IPOPT build).
        mumps_ordering: MUMPS's fill-reducing ordering ("auto", "metis", "amd", "amf", "scotch",
            "pord", "qamd"), or an [`OrderingTrial`][collocnode.OrderingTrial] ("trial": its
            defaults) that picks one per problem; it decides the cost of every KKT factorization on
            these arrowhead systems, and no choice wins everywhere: METIS was 2x faster than "auto"
            on the global Van der Pol variant but slower on the quarter-vehicle strategy II problems
            (docs/performance.md).
        mumps_scaling: let MUMPS scale the KKT matrix (its default). Off here: the NLP is
            already scaled by nominal state values, and on the quarter-vehicle problem MUMPS's
            scaling led to exploding delayed pivots (workspace reallocation, a first iteration
            taking minutes); on Van der Pol turning it off saved 25 % of IPOPT's time.
        print_level: 0 (silent) .. 12; 5 prints one line per iteration.
        max_wall_time: wall-clock limit in seconds, or None.
        backend: "casadi" (``nlpsol`` with custom derivative Functions) or "cyipopt".
        extra: further IPOPT options by name; each is checked against the options the
            backend's IPOPT registers (name, type, range, string values).
    """

    tol: float = 1e-8
    max_iter: int = 3000
    mu_strategy: str = "adaptive"
    linear_solver: str = "mumps"
    mumps_ordering: str | OrderingTrial = "auto"
    mumps_scaling: bool = False
    print_level: int = 5
    max_wall_time: float | None = None
    backend: str = "casadi"
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        v.positive_float("tol", self.tol)
        v.positive_int("max_iter", self.max_iter)
        v.choice("mu_strategy", self.mu_strategy, ("adaptive", "monotone"))
        v.choice("backend", self.backend, BACKENDS)
        if self.mumps_ordering == TRIAL:
            object.__setattr__(self, "mumps_ordering", OrderingTrial())
        elif not isinstance(self.mumps_ordering, OrderingTrial):
            v.choice("mumps_ordering", self.mumps_ordering, (*MUMPS_ORDERINGS, TRIAL))
        if not isinstance(self.mumps_scaling, (bool, np.bool_)):
            raise TypeError(f"mumps_scaling must be True or False, got {self.mumps_scaling!r}")
        object.__setattr__(self, "mumps_scaling", bool(self.mumps_scaling))
        if v.nonnegative_int("print_level", self.print_level) > 12:
            raise ValueError(f"print_level must be in 0..12, got {self.print_level}")
        if self.max_wall_time is not None:
            v.positive_float("max_wall_time", self.max_wall_time)
        if not isinstance(self.linear_solver, str):
            raise TypeError(f"linear_solver must be a string, got {self.linear_solver!r}")
        if not isinstance(self.extra, dict):
            raise TypeError(f"extra must be a dict of IPOPT options, got {self.extra!r}")
        if self.extra or self.linear_solver != "mumps":
            catalog = option_catalog(self.backend)
            if catalog is not None:
                extra = {
                    name: check_option(catalog, name, value, f"extra[{name!r}]")
                    for name, value in self.extra.items()
                }
                object.__setattr__(self, "extra", extra)
            solver = self.extra.get("linear_solver", self.linear_solver)
            check_linear_solver(self.backend, solver, self.extra)

    def ipopt_dict(self) -> dict[str, Any]:
        """The options as IPOPT takes them (name -> value), ``extra`` last. An ordering trial
        must have been resolved to one ordering first (``solve_ipopt`` does)."""
        if isinstance(self.mumps_ordering, OrderingTrial):
            raise ValueError("an ordering trial has no single mumps_pivot_order; run its trial")
        opts: dict[str, Any] = {
            "tol": self.tol,
            "max_iter": self.max_iter,
            "mu_strategy": self.mu_strategy,
            "linear_solver": self.linear_solver,
            "print_level": self.print_level,
            "hessian_approximation": "exact",
            "mumps_pivot_order": MUMPS_ORDERINGS[self.mumps_ordering],
            **({} if self.mumps_scaling else {"mumps_scaling": 0, "mumps_permuting_scaling": 0}),
            "sb": "yes",  # no IPOPT banner
        }
        if self.max_wall_time is not None:
            opts["max_wall_time"] = self.max_wall_time
        opts.update(self.extra)
        return opts


# ---- IPOPT's own list of options ------------------------------------------------------------


@dataclass(frozen=True)
class OptionSpec:
    """One registered IPOPT option: its type ("integer", "real", "string"), numeric range (None:
    unbounded; ``*_strict`` for < rather than <=) and string values (None: any string)."""

    name: str
    kind: str
    lower: float | None = None
    lower_strict: bool = False
    upper: float | None = None
    upper_strict: bool = False
    values: tuple[str, ...] | None = None
    default: str | None = None  # of a string option


_ENTRY = re.compile(r"\\anchor OPT_(\w+)\n(.*?)</blockquote>", re.S)
_KIND = re.compile(r"for this (integer|real|string) option")
_BOUND = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_OP = r"(&le;|<)"


def parse_documentation(text: str) -> dict[str, OptionSpec]:
    """The options in IPOPT's documentation printed with ``print_options_mode doxygen``."""
    specs: dict[str, OptionSpec] = {}
    for name, body in _ENTRY.findall(text):
        kind = _KIND.search(body)
        if kind is None:
            continue
        spec = OptionSpec(name, kind.group(1))
        if spec.kind == "string":
            values = re.findall(r"^ - (.+?): ", body.split("Possible values:", 1)[-1], re.M)
            default = re.search(r'default value for this string option is "([^"]*)"', body)
            spec = OptionSpec(
                name,
                "string",
                values=tuple(values) if values and "*" not in values else None,
                default=default.group(1) if default else None,
            )
        else:
            rng = re.search(
                rf"option is (?:{_BOUND} {_OP} )?{re.escape(name)}(?: {_OP} {_BOUND})?", body
            )
            if rng:
                lo, lo_op, hi_op, hi = rng.groups()
                spec = OptionSpec(
                    name,
                    spec.kind,
                    float(lo) if lo else None,
                    lo_op == "<",
                    float(hi) if hi else None,
                    hi_op == "<",
                )
        specs[name] = spec
    return specs


def _run_ipopt(backend: str, options: dict[str, Any]) -> str:
    """Solve min (x - 1)² s.t. 0 <= x <= 2 with ``options`` and IPOPT's file output written to
    a temporary file; returns the file's text. Console output is off (print_level 0)."""
    with tempfile.TemporaryDirectory(prefix="collocnode_ipopt_") as tmp:
        out = Path(tmp) / "ipopt.out"
        opts = {"print_level": 0, "sb": "yes", "output_file": str(out), **options}
        if backend == "casadi":
            import casadi as ca

            x = ca.SX.sym("x")
            solver = ca.nlpsol(
                "ipopt_probe",
                "ipopt",
                {"x": x, "f": (x - 1) ** 2, "g": x},
                {"ipopt": opts, "print_time": False, "error_on_fail": False},
            )
            solver(x0=0.5, lbg=0.0, ubg=2.0)
        else:
            import cyipopt

            class Probe:
                def objective(self, x: np.ndarray) -> float:
                    return float((x[0] - 1.0) ** 2)

                def gradient(self, x: np.ndarray) -> np.ndarray:
                    return 2.0 * (x - 1.0)

                def constraints(self, x: np.ndarray) -> np.ndarray:
                    return np.asarray(x, dtype=float)

                def jacobian(self, x: np.ndarray) -> np.ndarray:
                    return np.ones(1)

                def hessian(self, x: np.ndarray, lam: np.ndarray, sigma: float) -> np.ndarray:
                    return np.array([2.0 * sigma])

            problem = cyipopt.Problem(
                n=1, m=1, problem_obj=Probe(), lb=[-1e19], ub=[1e19], cl=[0.0], cu=[2.0]
            )
            for key, value in opts.items():
                problem.add_option(key, value)
            problem.solve(np.array([0.5]))
        return out.read_text() if out.exists() else ""


@functools.cache
def option_catalog(backend: str) -> dict[str, OptionSpec] | None:
    """The options the ``backend``'s IPOPT registers (read once per process), or None with a
    warning when its documentation cannot be read."""
    v.choice("backend", backend, BACKENDS)
    try:
        text = _run_ipopt(
            backend,
            {
                "print_options_documentation": "yes",
                "print_options_mode": "doxygen",
                "print_advanced_options": "yes",
                "file_print_level": 3,  # the documentation is printed at J_SUMMARY
                "max_iter": 0,
            },
        )
        catalog = parse_documentation(text)
    except Exception as err:
        catalog, text = {}, f"{type(err).__name__}: {err}"
    if "tol" not in catalog or "linear_solver" not in catalog:
        warnings.warn(
            f"could not read the {backend} backend's IPOPT option list ({text[:200]!r}); "
            "IPOPT options are passed on unchecked",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    return catalog


def check_option(catalog: dict[str, OptionSpec], name: object, value: object, field: str) -> Any:
    """``value`` converted to the type IPOPT registers for option ``name`` (an int for a real
    option becomes a float), or one ValueError/TypeError naming ``field`` and the value."""
    if not isinstance(name, str):
        raise TypeError(f"IPOPT option names must be strings, got {name!r} in extra")
    spec = catalog.get(name)
    if spec is None:
        close = sorted(k for k in catalog if k.startswith(name[:4]))[:8]
        hint = f"; similar: {', '.join(close)}" if close else ""
        raise ValueError(f"{field}: IPOPT has no option {name!r}{hint}")
    if spec.kind == "string":
        if not isinstance(value, str):
            want = f"one of {', '.join(spec.values)}" if spec.values else "a string"
            raise TypeError(f"{field} must be {want}, got {value!r}")
        if spec.values is not None and value.lower() not in spec.values:
            raise ValueError(f"{field} must be one of {', '.join(spec.values)}, got {value!r}")
        return value
    if spec.kind == "integer":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
            raise TypeError(f"{field} must be an integer, got {value!r}")
        number: float = int(value)
    else:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
            raise TypeError(f"{field} must be a real number, got {value!r}")
        number = float(value)
        if np.isnan(number):
            raise ValueError(f"{field} must be a number, got {value!r}")
    if spec.lower is not None and (
        number < spec.lower or (spec.lower_strict and number == spec.lower)
    ):
        raise ValueError(
            f"{field} must be {'>' if spec.lower_strict else '>='} {spec.lower:g}, got {value!r}"
        )
    if spec.upper is not None and (
        number > spec.upper or (spec.upper_strict and number == spec.upper)
    ):
        raise ValueError(
            f"{field} must be {'<' if spec.upper_strict else '<='} {spec.upper:g}, got {value!r}"
        )
    return number


HSL_SOLVERS = ("ma27", "ma57", "ma77", "ma86", "ma97")


def linear_solver_problem(backend: str, solver: str, extra: dict[str, Any] | None = None) -> str:
    """Why ``solver`` cannot work in the ``backend``'s IPOPT build ("" if it can).

    MUMPS and SPRAL are compiled in (when the build lists them); the HSL solvers and Pardiso are
    loaded by IPOPT from a shared library at run time (options ``hsllib``, ``pardisolib``), so
    that library must load; a "custom" solver needs an object collocnode does not pass. IPOPT is
    not run to find out: with its library missing, IPOPT crashes the process on "ma97".
    """
    extra = extra or {}
    catalog = option_catalog(backend) or {}
    spec = catalog.get("linear_solver")
    if spec is not None and spec.values is not None and solver not in spec.values:
        return "this build does not have it"
    if solver == "custom":
        return "a custom solver must be handed to IPOPT in C++"
    if solver in HSL_SOLVERS or solver == "pardiso":
        option = "hsllib" if solver in HSL_SOLVERS else "pardisolib"
        spec = catalog.get(option)
        default = spec.default if spec is not None and spec.default else f"lib{option[:-3]}.so"
        return _library_problem(str(extra.get(option, default)))
    return ""


@functools.cache
def _library_problem(name: str) -> str:
    try:
        ctypes.CDLL(name)
    except OSError as err:
        return str(err)
    return ""


def check_linear_solver(backend: str, solver: str, extra: dict[str, Any] | None = None) -> None:
    """A ValueError unless ``solver`` can work in the ``backend``'s IPOPT build."""
    problem = linear_solver_problem(backend, solver.lower(), extra)
    if problem:
        catalog = option_catalog(backend)
        spec = catalog.get("linear_solver") if catalog else None
        candidates = spec.values if spec and spec.values else ("mumps",)
        working = [s for s in candidates if not linear_solver_problem(backend, s, extra)]
        raise ValueError(
            f"linear_solver {solver!r} is not available in the {backend} backend's IPOPT "
            f"({problem}); available: {', '.join(working)}"
        )


def failure_reason(text: str) -> str:
    """IPOPT's reason for a failure from its file output: the exception messages and the EXIT
    line, joined on one line."""
    lines = [ln.strip() for ln in text.splitlines()]
    reasons = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("Exception message:")]
    reasons += [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith(("EXIT:", "ERROR:"))]
    return "; ".join(dict.fromkeys(r for r in reasons if r))
