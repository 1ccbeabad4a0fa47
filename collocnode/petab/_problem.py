"""A PEtab problem imported: its parameters, its PEtab-way objective, its collocation fit."""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._status import SolverStatus
from ..transcription import IpoptOptions
from ._numeric import NumericModel
from ._sbml import SbmlError, ode_from_document
from ._simulate import Simulation, SimulationFailed, Simulator
from ._tables import PetabError, ResolvedProblem, file_names, resolve
from ._v2 import import_v2


def import_petab(path: str | Path) -> PetabProblem:
    """Read the PEtab problem whose YAML file is ``path``: v1, or v2 with or without the
    PEtab SciML extension (networks; `collocnode.petab._v2`).

    v1 tables are read and linted by ``petab``, v2 tables read by pandas and checked here;
    the SBML model is read by ``python-libsbml`` and turned into an ODE
    (`collocnode.petab._sbml` lists what is supported); formulas go to CasADi through SymPy.

    Raises:
        PetabError: a missing or malformed file, a failed lint, an unsupported construct;
            the message names the file (and the row and column where there is one). Nothing is
            written.

    Examples:
        Case 0001 of the PEtab test suite (a conversion reaction), vendored in this repository under
        `tests/petab_import/data/`: the path is relative to the repository's root, so run it from
        there. Needs the `petab` extra:

        ```python
        from collocnode.petab import import_petab

        problem = import_petab("tests/petab_import/data/petab_test_suite/0001/_0001.yaml")
        print(problem)
        print(problem.parameter_ids, problem.score())  # the PEtab-way score at the nominal values
        fit = problem.fit()  # one collocation NLP over θ and the states
        print(fit.summary())
        assert fit.objective <= problem.objective()
        ```
    """
    import petab.v1 as petab
    import yaml

    path = Path(path)
    if not path.is_file():
        raise PetabError(f"{path}: no such PEtab problem file")
    try:
        config = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise PetabError(f"{path}: not YAML: {exc}") from None
    version = str(config.get("format_version", "")) if isinstance(config, dict) else ""
    if version.startswith("2"):
        tables, resolved = import_v2(path, config)
        return PetabProblem(path, tables, resolved)
    if not isinstance(config, dict) or "problems" not in config:
        raise PetabError(f"{path}: not a PEtab problem file (no 'problems' entry)")
    if not version.startswith("1"):
        raise PetabError(f"{path}: PEtab format_version {version!r}; this importer reads 1 and 2")
    if len(config["problems"]) != 1:
        raise PetabError(f"{path}: {len(config['problems'])} problems; one is supported")
    files = file_names(config)
    for kind, name in files.items():
        if not (path.parent / name).is_file():
            raise PetabError(f"{path}: the {kind} file {name!r} does not exist")
    try:
        with warnings.catch_warnings():
            # libpetab 0.8's table readers use pandas options that pandas 3 deprecates
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"petab\.")
            problem = petab.Problem.from_yaml(str(path))
    except Exception as exc:  # petab raises what pandas and libsbml raise
        raise PetabError(f"{path}: petab could not read the problem: {exc}") from None
    try:
        model = ode_from_document(problem.sbml_document, files.get("sbml", "the SBML model"))
    except SbmlError as exc:
        raise PetabError(str(exc)) from None
    # our own reading first: its errors name the file, the row and the column; then the lint
    # for everything else (and in place of an error of ours that a malformed table caused)
    try:
        resolved = resolve(problem, files, model)
    except PetabError:
        raise
    except Exception:
        _lint(problem, path)
        raise
    _lint(problem, path)
    return PetabProblem(path, problem, resolved)


def _lint(problem: Any, path: Path) -> None:
    """``petab``'s lint; its first error message becomes a
    [`PetabError`][collocnode.petab.PetabError]."""
    import petab.v1 as petab

    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.ERROR:
                messages.append(record.getMessage())

    handler = Collect()
    logger = logging.getLogger("petab")
    level, propagate = logger.level, logger.propagate
    # the lint's notes ("Visualization table not available") are not the user's concern; its
    # errors become the PetabError below
    logger.addHandler(handler)
    logger.setLevel(logging.ERROR)
    logger.propagate = False
    try:
        failed = petab.lint_problem(problem)
    except Exception as exc:  # a table so malformed that the lint itself fails
        raise PetabError(f"{path}: {exc}") from None
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
    if failed:
        first = messages[0] if messages else "the PEtab lint failed"
        raise PetabError(f"{path}: {first}")


_TRANSFORMS = {"lin": lambda v: v, "log": np.log, "log10": np.log10}


@dataclass(frozen=True)
class Score:
    """An imported problem scored the PEtab way at θ: the CVODES simulation through
    ``petab``'s per-measurement log-likelihood, and the prior.

    Attributes:
        llh: the log-likelihood.
        chi2: the sum of squared weighted residuals.
        log_prior: log prior density of θ (0 without priors).
        objective: ``-(llh + log_prior)``, the negative log-posterior PEtab tools minimise.
    """

    llh: float
    chi2: float
    log_prior: float

    @property
    def objective(self) -> float:
        return -(self.llh + self.log_prior)


class PetabProblem:
    """An imported PEtab problem ([`import_petab`][collocnode.petab.import_petab]).

    Attributes:
        path: the YAML file.
        petab: the tables as pandas DataFrames: the ``petab.v1.Problem``, or for a v2 problem
            its tables in v1 shape with the measurement table as given.
        parameter_ids: the estimated parameters, in the order of every θ vector.
        scales: their scales ("lin", "log", "log10").
        lb, ub, nominal: bounds and nominal values on the estimation scale, (n_theta,).
    """

    def __init__(self, path: Path, petab_problem: Any, resolved: ResolvedProblem) -> None:
        self.path = path
        self.petab = petab_problem
        self.resolved = resolved
        self.numeric = NumericModel(resolved)
        self.simulator = Simulator(self.numeric)
        self._sensitivities: Simulator | None = None
        params = resolved.parameters
        self.parameter_ids = tuple(p.id for p in params)
        self.scales = tuple(p.scale for p in params)
        self.lb = np.array([p.lb for p in params])
        self.ub = np.array([p.ub for p in params])
        self.nominal = np.array([p.nominal for p in params])

    def __repr__(self) -> str:
        r = self.resolved
        return (
            f"PetabProblem({self.path.name!r}: {r.model.n_states} states, "
            f"{len(self.parameter_ids)} estimated parameters, {len(r.experiments)} experiments, "
            f"{len(r.measurements.time)} measurements)"
        )

    @property
    def n_theta(self) -> int:
        return len(self.parameter_ids)

    def theta(self, values: Any = None) -> np.ndarray:
        """θ on the estimation scale: ``values`` checked, or the nominal values."""
        if values is None:
            return self.nominal.copy()
        theta = np.asarray(values, dtype=float).ravel()
        if theta.size != self.n_theta:
            raise ValueError(f"theta must hold {self.n_theta} values, got {theta.size}")
        if not np.all(np.isfinite(theta)):
            raise ValueError(f"theta must be finite, got {theta}")
        return theta

    def simulate(self, theta: Any = None, dense: int = 0) -> Simulation:
        """CVODES simulation of every experiment at θ (estimation scale; default nominal)."""
        return self.simulator.run(self.theta(theta), dense)

    def simulation_table(self, theta: Any = None) -> Any:
        """The PEtab simulation table at θ: the measurement table with ``simulation`` in place
        of ``measurement``."""
        values = self.simulate(theta).values
        table = self.petab.measurement_df.copy()
        table = table.rename(columns={"measurement": "simulation"})
        table["simulation"] = values
        return table

    def parameter_table(self, theta: Any = None) -> Any:
        """The parameter table with θ (linear scale) as the nominal values."""
        theta = self.theta(theta)
        table = self.petab.parameter_df.copy()
        for p, value in zip(self.resolved.parameters, theta, strict=True):
            if p.id in table.index:  # a network's parameters are no rows of their own
                table.loc[p.id, "nominalValue"] = float(p.unscale(value))
        return table

    def score(self, theta: Any = None) -> Score:
        """The PEtab-way score at θ ([`Score`][collocnode.petab.Score]): each measurement's
        log-likelihood by ``petab.calculate_single_llh`` from the CVODES simulation and the noise
        formula's σ evaluated on it (so σ may depend on states, which ``petab.calculate_llh`` does
        not evaluate); a failed simulation scores -inf."""
        from petab.v1 import calculate_single_llh

        theta = self.theta(theta)
        log_prior = -float(self.numeric.prior(theta))
        try:
            simulation = self.simulate(theta)
        except SimulationFailed:
            return Score(-np.inf, np.inf, log_prior)
        m = self.resolved.measurements
        observables = self.resolved.observables
        llh = chi2 = 0.0
        for i, oid in enumerate(m.observable):
            obs = observables[oid]
            y, sigma, value = simulation.values[i], simulation.sigmas[i], m.value[i]
            llh += calculate_single_llh(value, y, obs.transformation, obs.distribution, sigma)
            transform = _TRANSFORMS[obs.transformation]
            with np.errstate(all="ignore"):
                chi2 += ((transform(value) - transform(y)) / sigma) ** 2
        if not np.isfinite(llh):
            llh = -np.inf
        return Score(float(llh), float(chi2), log_prior)

    def objective(self, theta: Any = None) -> float:
        """The negative log-posterior at θ, scored the PEtab way
        ([`score`][collocnode.petab.PetabProblem.score])."""
        return self.score(theta).objective

    def gradient(self, theta: Any = None) -> np.ndarray:
        """The gradient of the negative log-posterior
        ([`objective`][collocnode.petab.PetabProblem.objective]) at θ (estimation scale;
        default nominal) by CVODES forward sensitivities, (n_theta,).

        Raises:
            ValueError: the problem pre-equilibrates or measures a steady state.
            SimulationFailed: CVODES fails at θ.
        """
        if self._sensitivities is None:
            # sensitivities need tighter tolerances than values: at the simulator's 1e-10 a
            # network weight's derivative on the PEtab SciML suite is off by 1e-5 relative
            self._sensitivities = Simulator(self.numeric, rtol=1e-12, atol=1e-14)
        return self._sensitivities.objective_gradient(self.theta(theta))[1]

    def sample_starts(self, n: int, seed: int = 0) -> np.ndarray:
        """``n`` starts uniform on the estimation scale within the bounds (the community's
        multistart protocol), (n, n_theta); an unbounded entry (a network parameter) starts
        at its nominal value (the parameter file's)."""
        rng = np.random.default_rng(seed)
        bounded = np.isfinite(self.lb) & np.isfinite(self.ub)
        starts = np.tile(self.nominal, (n, 1))
        starts[:, bounded] = rng.uniform(
            self.lb[bounded], self.ub[bounded], size=(n, bounded.sum())
        )
        return starts

    def fit(
        self,
        start: Any = None,
        intervals: int = 30,
        stages: int = 3,
        ipopt: IpoptOptions | None = None,
        refinements: int = 2,
        agreement: float = 1e-3,
        hessian: Any = "exact",
    ) -> PetabFit:
        """Fit θ by collocation: one NLP over θ and the states of every experiment, solved by
        IPOPT with exact Hessians; the result scored the PEtab way.

        The NLP's objective (on the collocation trajectory) is compared with the PEtab-way
        objective of the CVODES simulation at the fitted θ; where they differ by more than
        ``agreement`` (relative, at least 1e-3 absolute) the mesh was too coarse for this θ:
        the fit is repeated on the mesh with every interval halved, warm-started from the
        collocation solution, at most ``refinements`` times.

        Args:
            start: θ to start from (estimation scale; default: the nominal values), clipped into
                the bounds. The states start from a CVODES simulation at ``start``.
            intervals, stages: the first mesh of each experiment: ``intervals`` Radau IIA
                intervals of ``stages`` nodes, placed where the start's simulated states change,
                with a boundary wherever the right-hand side switches in time.
            ipopt: IPOPT settings (default: tol 1e-8, no output); ``max_wall_time`` caps the
                whole fit, refinements included. IPOPT's ``bound_push`` and ``bound_frac`` are
                1e-8 unless ``ipopt.extra`` sets them (`START_AS_GIVEN`): the start is not
                pushed away from the bounds it lies near.
            refinements: how often the mesh may be refined (0: never).
            agreement: the relative difference of the two objectives that is accepted.
            hessian: the NLP's Hessian, as for [`RadauIIA`][collocnode.RadauIIA]: "exact",
                "limited-memory", or a [`PartialQuasiNewton`][collocnode.PartialQuasiNewton]
                (for networks with thousands of parameters, whose exact Hessian block is dense).

        Raises:
            SimulationFailed: CVODES cannot simulate the start (no state guess).
        """
        from ..transcription import IpoptOptions as Options

        t0 = time.perf_counter()
        theta = np.clip(self.theta(start), self.lb, self.ub)
        options = ipopt if ipopt is not None else Options(print_level=0)
        seconds = dict.fromkeys(("guess", "build", "ipopt", "score"), 0.0)
        iterations = 0
        rounds: list[tuple[Any, np.ndarray, Score]] = []
        for round_ in range(refinements + 1):
            if options.max_wall_time is not None and round_:
                left = options.max_wall_time - (time.perf_counter() - t0)
                if left <= 0:
                    break
                options = replace(options, max_wall_time=left)
            previous = rounds[-1][0] if rounds else None
            solution, theta, score = self._fit_once(
                theta, intervals, stages, options, seconds, previous, hessian
            )
            iterations += int(solution.iterations)
            rounds.append((solution, theta, score))
            if _agrees(solution, score, agreement) or solution.status is not SolverStatus.SUCCESS:
                break
        # a refinement that ends worse (scored the PEtab way) than the round before is not kept
        solution, theta, score = min(
            rounds, key=lambda r: r[2].objective if np.isfinite(r[2].objective) else np.inf
        )
        seconds["total"] = time.perf_counter() - t0
        return PetabFit(
            theta=theta,
            start=np.clip(self.theta(start), self.lb, self.ub),
            status=solution.status,
            collocation_objective=float(solution.objective),
            score=score,
            iterations=iterations,
            seconds=seconds,
            solution=solution,
            agrees=_agrees(solution, score, agreement),
            intervals=int(solution.meshes[0].n_intervals),
        )

    def _fit_once(
        self,
        theta0: np.ndarray,
        intervals: int,
        stages: int,
        options: IpoptOptions,
        seconds: dict[str, float],
        previous: Any = None,
        hessian: Any = "exact",
    ) -> tuple[Any, np.ndarray, Score]:
        """One collocation solve: from θ0, its states from the simulation at θ0 on a mesh placed
        by it; or, with a ``previous`` solution, on its meshes with every interval halved,
        warm-started from it. Its times are added to ``seconds``."""
        from ..transcription import RadauIIA
        from ..transcription._collocation import solve_collocation
        from ._collocation import build_dop, halved, meshes, warm_started

        t0 = time.perf_counter()
        simulation = self.simulate(theta0, dense=200)
        seconds["guess"] += time.perf_counter() - t0
        dop = build_dop(self.numeric, theta0, simulation, self.lb, self.ub)
        options = replace(options, extra={**START_AS_GIVEN, **options.extra})
        alg = RadauIIA(intervals=intervals, stages=stages, ipopt=options, hessian=hessian)
        if previous is None:
            mesh = meshes(self.numeric, simulation, intervals, stages, theta0)
        else:
            mesh = [halved(m) for m in previous.meshes]
            dop = warm_started(dop, previous)
            # an interior point method leaves a good start unless its barrier starts small
            alg = replace(alg, ipopt=replace(options, extra={"mu_init": 1e-6, **options.extra}))
        solution = solve_collocation(dop, alg, mesh)
        seconds["build"] += float(solution.timings.get("build", 0.0))
        seconds["ipopt"] += float(solution.timings.get("ipopt", 0.0))
        # IPOPT relaxes bounds by ~1e-8 (bound_relax_factor); θ is reported inside them
        theta = np.clip(np.asarray(solution.p[: self.n_theta], dtype=float), self.lb, self.ub)
        t1 = time.perf_counter()
        score = self.score(theta)
        seconds["score"] += time.perf_counter() - t1
        return solution, theta, score


#: IPOPT options of every fit unless ``ipopt.extra`` sets them: IPOPT moves a start closer to
#: a bound than ``bound_push`` (relative; its default 1e-2) into the interior, and the start's
#: θ and states, which a CVODES simulation made consistent, no longer are. From the nominal
#: parameters (`benchmarks/petab_collection.py`'s fits, 60 s each, one core) the fits of
#: Fiedler_BMCSystBiol2016 and Raia_CancerResearch2011 then left the optimum (time limit,
#: objectives -17.7 and 441 against the best known -58.58 and 346.1); with 1e-8 both ended
#: with SUCCESS at -58.58 and 345.3 within 5 s.
START_AS_GIVEN = {"bound_push": 1e-8, "bound_frac": 1e-8}


def _agrees(solution: Any, score: Score, tolerance: float) -> bool:
    """Whether the NLP's objective and the PEtab-way objective of the simulation agree."""
    if not np.isfinite(score.objective):
        return False
    gap = abs(float(solution.objective) - score.objective)
    return bool(gap <= tolerance * max(1.0, abs(score.objective)))


@dataclass(frozen=True)
class PetabFit:
    """A collocation fit of an imported PEtab problem.

    Attributes:
        theta: the fitted θ on the estimation scale, (n_theta,).
        start: the θ it started from.
        status: IPOPT's outcome ([`SolverStatus`][collocnode.SolverStatus]).
        collocation_objective: the NLP's objective (negative log-likelihood on the collocation
            trajectory, plus the negative log prior).
        score: the PEtab-way score of ``theta`` (CVODES simulation;
            [`Score`][collocnode.petab.Score]).
        iterations: IPOPT iterations.
        seconds: wall times [s], summed over the rounds: ``guess`` (the CVODES run of each
            round's start), ``build``, ``ipopt``, ``score``, ``total``.
        solution: the collocation [`Solution`][collocnode.Solution] of the last round (segments:
            the experiments; its states are offsets from each experiment's initial state).
        intervals: the intervals of the first experiment's mesh in the kept round.
        agrees: whether ``collocation_objective`` and the PEtab-way objective agree within the
            fit's ``agreement``: False says the mesh was too coarse for θ (or θ moves a
            switching time that the mesh holds fixed), and the collocation objective is not to
            be trusted; ``objective`` always is.
    """

    theta: np.ndarray
    start: np.ndarray
    status: Any
    collocation_objective: float
    score: Score
    iterations: int
    seconds: dict[str, float]
    solution: Any
    intervals: int = 0
    agrees: bool = True

    @property
    def objective(self) -> float:
        return self.score.objective

    def summary(self) -> str:
        agreement = "" if self.agrees else " (they disagree: the mesh is too coarse)"
        return (
            f"{self.status.name}: objective {self.objective:.6g} (PEtab, CVODES), "
            f"{self.collocation_objective:.6g} on the collocation trajectory{agreement}, "
            f"{self.iterations} iterations, {self.seconds['total']:.2f} s"
        )
