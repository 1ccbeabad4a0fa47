"""PEtab v1 tables resolved against the model: estimated parameters, experiments, measurements.

The tables are read and linted by ``petab`` (libpetab); this module turns them into SymPy
expressions over the estimated parameters θ on their linear scale:

- each *experiment* (a simulation condition, with its pre-equilibration condition if any) gives
  every model constant and every overridden initial value as an expression (a number, or θ_j);
- each measurement row gives its observable and the values of the observable's placeholders
  (``observableParameter{k}_{id}``, ``noiseParameter{k}_{id}``) from its override columns.

An id in a table is resolved in PEtab's order: an estimated parameter is θ; a parameter-table
row that is not estimated is its nominal value; a model constant is its (resolved) SBML value.
A token that names nothing of these is one error naming the file, the row and the column.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from ._sbml import TIME, OdeModel

NOISE_MODELS = ("normal", "laplace")
TRANSFORMATIONS = ("lin", "log", "log10")
SCALES = ("lin", "log", "log10")
PRIORS = (
    "normal",
    "parameterScaleNormal",
    "laplace",
    "parameterScaleLaplace",
    "uniform",
    "parameterScaleUniform",
    "logNormal",
    "logLaplace",
)


class PetabError(ValueError):
    """A PEtab problem that cannot be read or uses what this importer does not support; the
    message names the file, and the row and column where there is one."""


def sym(name: str) -> sp.Symbol:
    return sp.Symbol(name, real=True)


@dataclass(frozen=True)
class EstimatedParameter:
    """One row of the parameter table with ``estimate = 1``; bounds and nominal value on the
    parameter's scale."""

    id: str
    scale: str
    lb: float
    ub: float
    nominal: float
    prior: tuple[str, tuple[float, ...]] | None = None

    def unscale(self, value: Any) -> Any:
        """The linear value of ``value`` on this parameter's scale (numbers or CasADi)."""
        if self.scale == "log10":
            return 10.0**value
        if self.scale == "log":
            return np.exp(value) if isinstance(value, (float, int, np.ndarray)) else _exp(value)
        return value

    def scaled(self, linear: float) -> float:
        if self.scale == "log10":
            return math.log10(linear)
        if self.scale == "log":
            return math.log(linear)
        return float(linear)


def _exp(value: Any) -> Any:
    import casadi as ca

    return ca.exp(value)


@dataclass(frozen=True)
class Observable:
    """One row of the observable table, its formulas in SymPy with placeholders kept."""

    id: str
    formula: sp.Expr
    noise: sp.Expr
    transformation: str
    distribution: str
    observable_placeholders: tuple[sp.Symbol, ...]
    noise_placeholders: tuple[sp.Symbol, ...]


@dataclass(frozen=True)
class Experiment:
    """A simulation condition (with its pre-equilibration condition) and its measurements.

    Attributes:
        key: ``(preequilibration condition id or "", simulation condition id)``.
        constants: model constant id -> value (SymPy, over θ) in the simulation condition.
        initial: per state, the overriding initial value (SymPy over θ) or None (the model's,
            or with pre-equilibration, the steady state's).
        preequilibration: for the pre-equilibration condition: (constants, initial) as above,
            or None.
        rows: indices of its measurement rows (into the problem's measurement table).
        tmax: the last finite measurement time [model time units] (0 if none); a time of
            ``inf`` is a measurement at the steady state the experiment settles to.
    """

    key: tuple[str, str]
    constants: dict[str, sp.Expr]
    initial: tuple[sp.Expr | None, ...]
    preequilibration: tuple[dict[str, sp.Expr], tuple[sp.Expr | None, ...]] | None
    rows: np.ndarray
    tmax: float


@dataclass(frozen=True)
class Measurement:
    """The measurement table as arrays (one entry per row)."""

    observable: tuple[str, ...]
    time: np.ndarray
    value: np.ndarray
    experiment: np.ndarray
    overrides: tuple[dict[sp.Symbol, sp.Expr], ...]


@dataclass(frozen=True)
class ResolvedProblem:
    """A PEtab problem in SymPy over the estimated parameters (on their linear scale)."""

    model: OdeModel
    parameters: tuple[EstimatedParameter, ...]
    observables: dict[str, Observable]
    experiments: tuple[Experiment, ...]
    measurements: Measurement
    files: dict[str, str] = field(default_factory=dict)
    fixed: dict[str, float] = field(default_factory=dict)
    #: PEtab SciML networks (``collocnode.petab._hybrid.NetworkUse``), their parameters
    #: the last entries of ``parameters``
    networks: tuple[Any, ...] = ()

    def settles(self, k: int) -> np.ndarray:
        """The rows of experiment ``k`` measured at its steady state (time ``inf``)."""
        rows = self.experiments[k].rows
        return rows[np.isinf(self.measurements.time[rows])]

    @property
    def theta(self) -> tuple[sp.Symbol, ...]:
        return tuple(sym(p.id) for p in self.parameters)


def resolve(
    problem: Any, files: dict[str, str], model: OdeModel, unbounded: bool = False
) -> ResolvedProblem:
    """Resolve a ``petab.v1.Problem`` (tables already linted) against ``model``;
    ``unbounded``: an estimated parameter on the linear scale may have infinite bounds (PEtab
    v2 allows them; v1 does not)."""
    r = _Resolver(problem, files, model, unbounded)
    parameters = r.parameters()
    observables = r.observables()
    experiments, measurements = r.experiments(observables)
    fixed = {
        str(pid): float(r.par.loc[pid, "nominalValue"])
        for pid in r.par.index
        if pid not in r.estimated
    }
    return ResolvedProblem(model, parameters, observables, experiments, measurements, files, fixed)


class _Resolver:
    def __init__(
        self, problem: Any, files: dict[str, str], model: OdeModel, unbounded: bool = False
    ) -> None:
        self.p, self.files, self.model, self.unbounded = problem, files, model, unbounded
        self.par = problem.parameter_df
        self.estimated = {pid for pid in self.par.index if int(self.par.loc[pid, "estimate"]) == 1}

    # ---- errors ---------------------------------------------------------------------------
    def error(self, table: str, row: Any, column: str, what: str) -> PetabError:
        where = self.files.get(table, table)
        # rows counted as in the file: line 1 is the header
        return PetabError(f"{where}, row {row}, column {column!r}: {what}")

    # ---- parameters -----------------------------------------------------------------------
    def parameters(self) -> tuple[EstimatedParameter, ...]:
        out = []
        for line, (pid, row) in enumerate(self.par.iterrows(), start=2):
            if pid not in self.estimated:
                continue
            scale = str(row.get("parameterScale", "lin"))
            if scale not in SCALES:
                raise self.error("parameter", line, "parameterScale", f"unknown scale {scale!r}")
            lin = {}
            for col in ("lowerBound", "upperBound", "nominalValue"):
                value = row.get(col, np.nan)
                try:
                    lin[col] = float(value)
                except (TypeError, ValueError):
                    raise self.error("parameter", line, col, f"not a number: {value!r}") from None
            est = EstimatedParameter(pid, scale, 0.0, 0.0, 0.0)
            for col in ("lowerBound", "upperBound"):
                value = lin[col]
                if self.unbounded and scale == "lin" and np.isinf(value):
                    continue
                if not np.isfinite(value) or (scale != "lin" and value <= 0):
                    raise self.error(
                        "parameter",
                        line,
                        col,
                        f"{value!r} is no finite bound on the {scale} scale",
                    )
            lb, ub = est.scaled(lin["lowerBound"]), est.scaled(lin["upperBound"])
            nominal = lin["nominalValue"]
            nominal = (
                est.scaled(nominal)
                if np.isfinite(nominal) and (scale == "lin" or nominal > 0)
                else 0.5 * (lb + ub)
            )
            out.append(EstimatedParameter(pid, scale, lb, ub, nominal, self.prior(line, row)))
        return tuple(out)

    def prior(self, line: int, row: Any) -> tuple[str, tuple[float, ...]] | None:
        kind = row.get("objectivePriorType", np.nan)
        if not isinstance(kind, str) or not kind:
            return None
        if kind not in PRIORS:
            raise self.error(
                "parameter", line, "objectivePriorType", f"prior {kind!r} is not supported"
            )
        raw = str(row.get("objectivePriorParameters", ""))
        try:
            values = tuple(float(x) for x in raw.split(";"))
        except ValueError:
            raise self.error(
                "parameter", line, "objectivePriorParameters", f"not two numbers: {raw!r}"
            ) from None
        if len(values) != 2:
            raise self.error(
                "parameter", line, "objectivePriorParameters", f"not two numbers: {raw!r}"
            )
        return kind, values

    def token(self, value: Any, table: str, line: int, column: str) -> sp.Expr:
        """A table entry (number or id) as an expression over θ."""
        if isinstance(value, (int, float, np.integer, np.floating)):
            return sp.Float(float(value))
        text = str(value).strip()
        try:
            return sp.Float(float(text))
        except ValueError:
            pass
        if text in self.estimated:
            return sym(text)
        if text in self.par.index:
            return sp.Float(float(self.par.loc[text, "nominalValue"]))
        if text in self.model.constants:
            return self.constant_default(text, {})
        raise self.error(table, line, column, f"{text!r} is no parameter of the problem")

    def constant_default(self, cid: str, overrides: dict[str, sp.Expr]) -> sp.Expr:
        """Model constant ``cid`` resolved: condition override, parameter table, SBML value."""
        if cid in overrides:
            return overrides[cid]
        if cid in self.estimated:
            return sym(cid)
        if cid in self.par.index:
            return sp.Float(float(self.par.loc[cid, "nominalValue"]))
        default = self.model.constants[cid]
        deps = {
            s: self.constant_default(s.name, overrides)
            for s in default.free_symbols
            if s.name in self.model.constants and s.name != cid
        }
        return default.xreplace(deps) if deps else default

    # ---- observables ----------------------------------------------------------------------
    def observables(self) -> dict[str, Observable]:
        from petab.v1.math import sympify_petab

        out = {}
        df = self.p.observable_df
        for line, (oid, row) in enumerate(df.iterrows(), start=2):
            formulas = {}
            for col in ("observableFormula", "noiseFormula"):
                try:
                    formulas[col] = _real(sympify_petab(row[col]))
                except Exception as exc:  # petab's parser raises several kinds
                    raise self.error("observable", line, col, f"cannot parse: {exc}") from None
            transformation = str(row.get("observableTransformation", "lin") or "lin")
            if transformation == "nan":
                transformation = "lin"
            if transformation not in TRANSFORMATIONS:
                raise self.error(
                    "observable",
                    line,
                    "observableTransformation",
                    f"unknown transformation {transformation!r}",
                )
            distribution = str(row.get("noiseDistribution", "normal") or "normal")
            if distribution == "nan":
                distribution = "normal"
            if distribution not in NOISE_MODELS:
                raise self.error(
                    "observable",
                    line,
                    "noiseDistribution",
                    f"unknown noise distribution {distribution!r}",
                )
            out[oid] = Observable(
                oid,
                formulas["observableFormula"],
                formulas["noiseFormula"],
                transformation,
                distribution,
                _placeholders(formulas["observableFormula"], "observableParameter", oid),
                _placeholders(formulas["noiseFormula"], "noiseParameter", oid),
            )
        return out

    # ---- conditions and measurements ------------------------------------------------------
    def condition(self, cid: str) -> tuple[dict[str, sp.Expr], tuple[sp.Expr | None, ...]]:
        """(constants, initial overrides) of condition ``cid``."""
        df = self.p.condition_df
        if cid not in df.index:
            raise PetabError(
                f"{self.files.get('condition', 'condition table')}: no condition {cid!r}"
            )
        line = list(df.index).index(cid) + 2
        row = df.loc[cid]
        overrides: dict[str, sp.Expr] = {}
        initial: list[sp.Expr | None] = [None] * self.model.n_states
        for column, value in row.items():
            if column == "conditionName":
                continue
            if _is_nan(value):
                continue
            expr = self.token(value, "condition", line, column)
            if column in self.model.states:
                initial[self.model.states.index(column)] = expr
            elif column in self.model.constants:
                overrides[column] = expr
            else:
                raise self.error(
                    "condition", 1, column, f"{column!r} is no species, compartment or parameter"
                )
        constants = {c: self.constant_default(c, overrides) for c in self.model.constants}
        return constants, tuple(initial)

    def experiments(
        self, observables: dict[str, Observable]
    ) -> tuple[tuple[Experiment, ...], Measurement]:
        df = self.p.measurement_df
        preeq = (
            df["preequilibrationConditionId"].fillna("").astype(str)
            if "preequilibrationConditionId" in df
            else ["" for _ in range(len(df))]
        )
        keys = list(
            zip((str(x) for x in preeq), df["simulationConditionId"].astype(str), strict=True)
        )
        order: dict[tuple[str, str], int] = {}
        for key in keys:
            order.setdefault(key, len(order))
        experiment = np.array([order[k] for k in keys], dtype=int)
        times = np.array(df["time"], dtype=float)
        for i, t in enumerate(times):
            if np.isnan(t) or t == -np.inf:
                raise self.error("measurement", i + 2, "time", f"{t!r} is no time")
        values = np.array(df["measurement"], dtype=float)
        overrides = []
        for i, (_, row) in enumerate(df.iterrows()):
            oid = str(row["observableId"])
            if oid not in observables:
                raise self.error("measurement", i + 2, "observableId", f"unknown {oid!r}")
            obs = observables[oid]
            mapping: dict[sp.Symbol, sp.Expr] = {}
            for column, names in (
                ("observableParameters", obs.observable_placeholders),
                ("noiseParameters", obs.noise_placeholders),
            ):
                tokens = _split(row.get(column, np.nan))
                if len(tokens) == 1 and len(names) > 1:
                    tokens = tokens * len(names)
                if len(tokens) != len(names):
                    raise self.error(
                        "measurement",
                        i + 2,
                        column,
                        f"{len(tokens)} values for the {len(names)} placeholders of {oid!r}",
                    )
                for name, token in zip(names, tokens, strict=True):
                    mapping[name] = self.token(token, "measurement", i + 2, column)
            overrides.append(mapping)
        experiments = []
        for (pre, sim_id), k in order.items():
            rows = np.flatnonzero(experiment == k)
            constants, initial = self.condition(sim_id)
            pre_part = self.condition(pre) if pre else None
            experiments.append(
                Experiment(
                    (pre, sim_id), constants, initial, pre_part, rows, _last_finite(times[rows])
                )
            )
        measurement = Measurement(
            tuple(str(o) for o in df["observableId"]), times, values, experiment, tuple(overrides)
        )
        return tuple(experiments), measurement


def _last_finite(times: np.ndarray) -> float:
    finite = times[np.isfinite(times)]
    return float(finite.max()) if finite.size else 0.0


def _real(expr: sp.Expr) -> sp.Expr:
    subs = {s: sym(s.name) for s in expr.free_symbols if isinstance(s, sp.Symbol)}
    if any(s.name == "time" for s in subs):
        subs[next(s for s in expr.free_symbols if s.name == "time")] = TIME
    return expr.xreplace(subs)


def _placeholders(expr: sp.Expr, kind: str, oid: str) -> tuple[sp.Symbol, ...]:
    pattern = re.compile(rf"^{kind}(\d+)_{re.escape(oid)}$")
    found = sorted((int(m.group(1)), s) for s in expr.free_symbols if (m := pattern.match(s.name)))
    return tuple(s for _, s in found)


def _split(value: Any) -> list[Any]:
    if _is_nan(value):
        return []
    if isinstance(value, (int, float, np.integer, np.floating)):
        return [value]
    return [t.strip() for t in str(value).split(";") if t.strip()]


def _is_nan(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip() == "" or value.strip().lower() == "nan"
    try:
        return bool(np.isnan(value))
    except TypeError:
        return value is None


def file_names(config: dict[str, Any]) -> dict[str, str]:
    """Table kind -> file name (relative to the YAML's folder), for error messages."""
    problem = config["problems"][0]
    names = {
        "parameter": config.get("parameter_file"),
        "condition": (problem.get("condition_files") or [None])[0],
        "measurement": (problem.get("measurement_files") or [None])[0],
        "observable": (problem.get("observable_files") or [None])[0],
        "sbml": (problem.get("sbml_files") or [None])[0],
    }
    return {k: str(v) for k, v in names.items() if v}
