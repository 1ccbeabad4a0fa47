"""PEtab v2 problems, with the PEtab SciML extension, read into the terms of the v1 importer.

A v2 problem differs from a v1 one in its tables, not in what it means for an ODE: an
experiments table names, per experiment, the condition it starts in (and one at time ``-inf``
to pre-equilibrate in); the condition table is long (``conditionId``, ``targetId``,
``targetValue``); the parameter table says ``true``/``false``, has no scale (linear) and names
priors ``priorDistribution``/``priorParameters``; noise distributions are ``normal``,
``laplace``, ``log-normal``, ``log-laplace``. This module turns the tables into the v1 shapes
that [`resolve`][collocnode.petab._tables.resolve] reads, each v2 experiment becoming one
v1 simulation condition, so that every check and error of the v1 path applies.

The SciML extension adds networks (``extensions.sciml.neural_nets``), their parameters and
inputs in HDF5 array files, a mapping table from PEtab ids to ``net.inputs[i][j]``,
``net.outputs[i][j]`` and ``net.parameters[layer].array``, and a hybridization table that
assigns network inputs (expressions of the model) and sends network outputs to model
parameters or initial values. A network input that does not depend on the states becomes a
model constant (so a condition may set it); an output becomes a function application
(`collocnode.petab._hybrid`) in the right-hand side, a constant, an initial value or an
observable. Files are data: tables are read with pandas, formulas parsed by ``petab``'s
parser, networks by [`read_network`][collocnode.petab.sciml.read_network].
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp

from ._hybrid import NetworkArrays, NetworkUse
from ._sbml import TIME, OdeModel, SbmlError, read_sbml
from ._tables import PetabError, ResolvedProblem, resolve, sym

_DISTRIBUTIONS = {
    "normal": ("lin", "normal"),
    "laplace": ("lin", "laplace"),
    "log-normal": ("log", "normal"),
    "log-laplace": ("log", "laplace"),
}
_PRIORS = {
    "normal": "normal",
    "laplace": "laplace",
    "uniform": "uniform",
    "log-normal": "logNormal",
    "log-laplace": "logLaplace",
}
_INPUT = re.compile(r"^(\w+)\.inputs\[(\d+)\](?:\[(\d+)\])?$")
_OUTPUT = re.compile(r"^(\w+)\.outputs\[(\d+)\](?:\[(\d+)\])?$")
_PARAMETERS = re.compile(r"^(\w+)\.parameters(?:\[(\w+)\](?:\.(\w+))?)?$")
_DEFAULT_EXPERIMENT = "(no experiment)"


@dataclass(frozen=True)
class Tables:
    """The tables in v1 shape (what ``resolve`` reads) and the measurement table as given."""

    parameter_df: Any
    observable_df: Any
    condition_df: Any
    measurement_df: Any


def import_v2(path: Path, config: dict[str, Any]) -> tuple[Tables, ResolvedProblem]:
    """Read the v2 problem whose YAML file is ``path`` (already parsed: ``config``)."""
    reader = _Reader(path, config)
    return reader.read()


def _network_quantity(target: str) -> tuple[str, re.Match[str]] | None:
    """``("input" | "output" | "ps", match)`` of a mapping's ``modelEntityId``, or None."""
    for pattern, kind in ((_INPUT, "input"), (_OUTPUT, "output"), (_PARAMETERS, "ps")):
        m = pattern.match(target)
        if m:
            return kind, m
    return None


def _truth(value: str, where: str) -> int:
    text = value.strip().lower()
    if text in ("1", "true", "1.0"):
        return 1
    if text in ("0", "false", "0.0", ""):
        return 0
    raise PetabError(f"{where}: {value!r} is neither true nor false")


class _Reader:
    def __init__(self, path: Path, config: dict[str, Any]) -> None:
        self.path, self.config, self.folder = path, config, path.parent
        self.files: dict[str, str] = {}

    # ---- files ------------------------------------------------------------------------------
    def file(self, kind: str, key: str, required: bool = True) -> Path | None:
        names = self.config.get(key) or []
        if isinstance(names, str):
            names = [names]
        if len(names) > 1:
            raise PetabError(f"{self.path}: {len(names)} {key}; one is supported")
        if not names:
            if required:
                raise PetabError(f"{self.path}: no {key}")
            return None
        name = str(names[0])
        self.files[kind] = name
        where = self.folder / name
        if not where.is_file():
            raise PetabError(f"{self.path}: the {kind} file {name!r} does not exist")
        return where

    def table(self, kind: str, key: str, required: bool = True) -> Any:
        import pandas as pd

        where = self.file(kind, key, required)
        if where is None:
            return None
        try:
            df = pd.read_csv(where, sep="\t", dtype=str, keep_default_na=False)
        except Exception as exc:  # pandas raises several kinds on a malformed file
            raise PetabError(f"{where}: not a tab-separated table: {exc}") from None
        return df.apply(lambda col: col.str.strip())

    def need(self, df: Any, kind: str, columns: tuple[str, ...]) -> None:
        for column in columns:
            if column not in df.columns:
                raise PetabError(f"{self.files[kind]}: no column {column!r}")

    def error(self, kind: str, row: int, column: str, what: str) -> PetabError:
        return PetabError(f"{self.files.get(kind, kind)}, row {row + 2}, column {column!r}: {what}")

    # ---- the whole problem ------------------------------------------------------------------
    def read(self) -> tuple[Tables, ResolvedProblem]:
        models = self.config.get("model_files") or {}
        if not isinstance(models, dict) or len(models) != 1:
            raise PetabError(f"{self.path}: model_files must name one model")
        (entry,) = models.values()
        language = str(entry.get("language", "sbml")).lower()
        if language != "sbml":
            raise PetabError(f"{self.path}: model language {language!r}; this importer reads SBML")
        self.files["sbml"] = str(entry.get("location"))
        try:
            model = read_sbml(self.folder / self.files["sbml"])
        except SbmlError as exc:
            raise PetabError(str(exc)) from None
        parameters = self.table("parameter", "parameter_files")
        observables = self.table("observable", "observable_files")
        measurements = self.table("measurement", "measurement_files")
        conditions = self.table("condition", "condition_files", required=False)
        experiments = self.table("experiment", "experiment_files", required=False)
        mapping = self.table("mapping", "mapping_files", required=False)
        self.need(parameters, "parameter", ("parameterId", "nominalValue", "estimate"))
        self.need(observables, "observable", ("observableId", "observableFormula", "noiseFormula"))
        self.need(measurements, "measurement", ("observableId", "time", "measurement"))
        sciml = (self.config.get("extensions") or {}).get("sciml")
        hybrid = _Hybrid(self, model, sciml, mapping, parameters) if sciml else None
        if hybrid is None and mapping is not None and len(mapping):
            raise PetabError(f"{self.files['mapping']}: a mapping table without networks")
        if hybrid is not None:
            model = hybrid.rewrite_model()
        tables = Tables(
            self.parameters_v1(parameters, hybrid),
            self.observables_v1(observables),
            None,
            None,
        )
        condition_df, measurement_df = self.experiments_v1(
            experiments, conditions, measurements, model, hybrid
        )
        tables = replace(tables, condition_df=condition_df, measurement_df=measurement_df)
        resolved = resolve(tables, self.files, model, unbounded=True)
        if hybrid is not None:
            resolved = hybrid.finish(resolved)
        return replace(tables, measurement_df=measurements), resolved

    # ---- parameters -------------------------------------------------------------------------
    def parameters_v1(self, df: Any, hybrid: _Hybrid | None) -> Any:
        import pandas as pd

        rows = []
        for i, row in df.iterrows():
            pid = row["parameterId"]
            if hybrid is not None and pid in hybrid.parameter_rows:
                continue
            estimate = _truth(row["estimate"], f"{self.files['parameter']}, row {i + 2}")
            out = {
                "parameterId": pid,
                "parameterScale": row.get("parameterScale", "") or "lin",
                "lowerBound": self.number(row.get("lowerBound", ""), "lowerBound", i),
                "upperBound": self.number(row.get("upperBound", ""), "upperBound", i),
                "nominalValue": self.number(row["nominalValue"], "nominalValue", i),
                "estimate": estimate,
            }
            prior = self.prior(row, i)
            if prior is not None:
                out["objectivePriorType"], out["objectivePriorParameters"] = prior
            rows.append(out)
        table = pd.DataFrame(rows)
        if not len(table):
            table = pd.DataFrame(columns=["parameterId", "nominalValue", "estimate"])
        return table.set_index("parameterId")

    def number(self, text: str, column: str, row: int, kind: str = "parameter") -> float:
        if text == "":
            return float("nan")
        try:
            return float(text)
        except ValueError:
            raise self.error(kind, row, column, f"not a number: {text!r}") from None

    def prior(self, row: Any, i: int) -> tuple[str, str] | None:
        kind = row.get("priorDistribution", "") or row.get("objectivePriorType", "")
        if not kind:
            return None
        name = _PRIORS.get(kind, kind if kind in _PRIORS.values() else None)
        if name is None:
            raise self.error(
                "parameter", i, "priorDistribution", f"prior {kind!r} is not supported"
            )
        raw = row.get("priorParameters", "") or row.get("objectivePriorParameters", "")
        return name, raw

    # ---- observables ------------------------------------------------------------------------
    def observables_v1(self, df: Any) -> Any:
        table = df.copy()
        for column in ("observablePlaceholders", "noisePlaceholders"):
            if column in table.columns and (table[column] != "").any():
                raise PetabError(
                    f"{self.files['observable']}: column {column!r}: v2 placeholders are not "
                    "supported; name them observableParameter<k>_<id> / noiseParameter<k>_<id>"
                )
        transformation = []
        distribution = []
        for i, row in table.iterrows():
            given = row.get("noiseDistribution", "") or "normal"
            if given not in _DISTRIBUTIONS:
                raise self.error(
                    "observable", i, "noiseDistribution", f"unknown noise distribution {given!r}"
                )
            scale, kind = _DISTRIBUTIONS[given]
            explicit = row.get("observableTransformation", "")
            if explicit and scale != "lin":
                raise self.error(
                    "observable",
                    i,
                    "observableTransformation",
                    f"{explicit!r} beside the noise distribution {given!r}",
                )
            transformation.append(explicit or scale)
            distribution.append(kind)
        table["observableTransformation"] = transformation
        table["noiseDistribution"] = distribution
        return table.set_index("observableId")

    # ---- experiments and conditions ---------------------------------------------------------
    def experiments_v1(
        self,
        experiments: Any,
        conditions: Any,
        measurements: Any,
        model: OdeModel,
        hybrid: _Hybrid | None,
    ) -> tuple[Any, Any]:
        """The v1 condition table (one row per experiment, one per pre-equilibration
        condition) and the v1 measurement table."""
        import pandas as pd

        targets = self.conditions(conditions)
        per_condition = hybrid.condition_arrays() if hybrid is not None else {}
        for cid in per_condition:
            if cid != "0":
                targets.setdefault(cid, {})  # a condition that only an array file names
        starts = self.experiment_starts(experiments, targets)
        rows: dict[str, dict[str, Any]] = {}

        def condition_row(cid: str) -> dict[str, Any]:
            values: dict[str, Any] = dict(per_condition.get("0", {}))
            values.update(per_condition.get(cid, {}))
            values.update(targets.get(cid, {}))
            return values

        measurement_rows = []
        for i, row in measurements.iterrows():
            eid = row.get("experimentId", "")
            if eid and eid not in starts:
                raise self.error("measurement", i, "experimentId", f"unknown experiment {eid!r}")
            pre, cid = starts.get(eid, ("", ""))
            sim_id = eid or _DEFAULT_EXPERIMENT
            if sim_id not in rows:
                rows[sim_id] = condition_row(cid)
            pre_id = ""
            if pre:
                pre_id = f"{pre} (pre-equilibration)"
                rows.setdefault(pre_id, condition_row(pre))
            measurement_rows.append(
                {
                    "observableId": row["observableId"],
                    "preequilibrationConditionId": pre_id,
                    "simulationConditionId": sim_id,
                    "time": self.number(row["time"], "time", i, "measurement"),
                    "measurement": self.number(row["measurement"], "measurement", i, "measurement"),
                    "observableParameters": row.get("observableParameters", ""),
                    "noiseParameters": row.get("noiseParameters", ""),
                }
            )
        condition_df = pd.DataFrame.from_dict(rows, orient="index")
        condition_df.index.name = "conditionId"
        for column in condition_df.columns:
            if column not in model.states and column not in model.constants:
                raise PetabError(
                    f"{self.files.get('condition', 'condition table')}: target {column!r} is no "
                    "species, compartment, parameter or network input of the model"
                )
        measurement_df = pd.DataFrame(measurement_rows)
        measurement_df["preequilibrationConditionId"] = measurement_df[
            "preequilibrationConditionId"
        ].replace("", np.nan)
        return condition_df, measurement_df

    def experiment_starts(
        self, experiments: Any, targets: dict[str, dict[str, Any]]
    ) -> dict[str, tuple[str, str]]:
        """experiment id -> (pre-equilibration condition or "", the condition it starts in)."""
        starts: dict[str, tuple[str, str]] = {}
        if experiments is not None:
            self.need(experiments, "experiment", ("experimentId", "time", "conditionId"))
            periods: dict[str, list[tuple[float, str, int]]] = {}
            for i, row in experiments.iterrows():
                t = self.number(row["time"], "time", i, "experiment")
                cid = row["conditionId"]
                if cid and cid not in targets:
                    raise self.error("experiment", i, "conditionId", f"unknown condition {cid!r}")
                periods.setdefault(row["experimentId"], []).append((t, cid, i))
            for eid, items in periods.items():
                pre = [c for t, c, _ in items if t == -np.inf]
                main = sorted((t, c, i) for t, c, i in items if t != -np.inf)
                if len(pre) > 1 or len(main) != 1:
                    raise PetabError(
                        f"{self.files['experiment']}: experiment {eid!r} has "
                        f"{len(main)} periods after pre-equilibration; one is supported"
                    )
                t0, cid, i = main[0]
                if t0 != 0.0:
                    raise self.error(
                        "experiment", i, "time", f"experiment {eid!r} starts at {t0}, not 0"
                    )
                starts[eid] = (pre[0] if pre else "", cid)
        return starts

    def conditions(self, df: Any) -> dict[str, dict[str, Any]]:
        """condition id -> {target: value (a number or an id)}."""
        out: dict[str, dict[str, Any]] = {}
        if df is None:
            return out
        self.need(df, "condition", ("conditionId", "targetId", "targetValue"))
        for i, row in df.iterrows():
            value: Any = row["targetValue"]
            try:
                value = float(value)
            except ValueError:
                if not re.fullmatch(r"[A-Za-z_]\w*", value):
                    raise self.error(
                        "condition", i, "targetValue", f"{value!r}: only numbers and ids"
                    ) from None
            out.setdefault(row["conditionId"], {})[row["targetId"]] = value
        return out


class _Hybrid:
    """The SciML extension of one problem: networks, mapping, hybridization."""

    def __init__(
        self, reader: _Reader, model: OdeModel, sciml: dict, mapping: Any, parameters: Any
    ) -> None:
        from .sciml import read_network

        self.reader, self.model, self.parameters = reader, model, parameters
        nets = sciml.get("neural_nets") or {}
        if not isinstance(nets, dict) or not nets:
            raise PetabError(f"{reader.path}: extensions.sciml names no neural_nets")
        self.networks: dict[str, Any] = {}
        for net_id, entry in nets.items():
            location = (entry or {}).get("location", f"{net_id}.yaml")
            network = read_network(reader.folder / str(location))
            self.networks[net_id] = network
        self.inputs: dict[str, tuple[str, int, int | None]] = {}
        self.outputs: dict[str, tuple[str, int]] = {}
        self.parameter_rows: dict[str, tuple[str, str | None, str | None]] = {}
        self.read_mapping(mapping)
        self.hybridization = self.read_hybridization(sciml.get("hybridization_files") or [])
        self.arrays = self.read_array_files(sciml.get("array_files") or [])

    # ---- tables and files -------------------------------------------------------------------
    def read_mapping(self, df: Any) -> None:
        if df is None:
            raise PetabError(f"{self.reader.path}: a SciML problem needs a mapping table")
        self.reader.need(df, "mapping", ("petabEntityId", "modelEntityId"))
        for i, row in df.iterrows():
            entity, target = row["petabEntityId"], row["modelEntityId"]
            found = _network_quantity(target)
            if found is None:
                raise self.reader.error(
                    "mapping", i, "modelEntityId", f"{target!r} names no network quantity"
                )
            kind, m = found
            net_id = m.group(1)
            if net_id not in self.networks:
                raise self.reader.error(
                    "mapping", i, "modelEntityId", f"unknown network {net_id!r}"
                )
            if kind == "input":
                j = None if m.group(3) is None else int(m.group(3))
                self.inputs[entity] = (net_id, int(m.group(2)), j)
            elif kind == "output":
                if int(m.group(2)) != 0 or m.group(3) is None:
                    raise self.reader.error(
                        "mapping", i, "modelEntityId", f"{target!r}: one element of output 0"
                    )
                self.outputs[entity] = (net_id, int(m.group(3)))
            else:
                self.parameter_rows[entity] = (net_id, m.group(2), m.group(3))

    def read_hybridization(self, names: list[str]) -> dict[str, str]:
        import pandas as pd

        out: dict[str, str] = {}
        for name in names:
            where = self.reader.folder / str(name)
            if not where.is_file():
                raise PetabError(
                    f"{self.reader.path}: the hybridization file {name!r} does not exist"
                )
            df = pd.read_csv(where, sep="\t", dtype=str, keep_default_na=False)
            self.reader.files["hybridization"] = str(name)
            self.reader.need(df, "hybridization", ("targetId", "targetValue"))
            for _, row in df.iterrows():
                out[row["targetId"].strip()] = row["targetValue"].strip()
        return out

    def read_array_files(self, names: list[str]) -> dict[str, Any]:
        """``{"parameters": {net_id: vector}, "inputs": {entity: {condition: array}}}``."""
        from .sciml._hdf5 import load_h5py

        h5py = load_h5py()
        out: dict[str, Any] = {"parameters": {}, "inputs": {}}
        for name in names:
            where = self.reader.folder / str(name)
            if not where.is_file():
                raise PetabError(f"{self.reader.path}: the array file {name!r} does not exist")
            with h5py.File(where, "r") as f:
                nets = list(f["parameters"].keys()) if "parameters" in f else []
                for entity in f["inputs"] if "inputs" in f else []:
                    group = f["inputs"][entity]
                    if not isinstance(group, h5py.Group):
                        raise PetabError(f"{where}: inputs/{entity} is no group")
                    out["inputs"][entity] = {
                        str(c): np.asarray(group[c][()], dtype=float) for c in group
                    }
            # the parameters through the network's own reader (it checks every array's shape)
            for net_id in nets:
                if net_id not in self.networks:
                    raise PetabError(f"{where}: parameters of unknown network {net_id!r}")
                network = self.networks[net_id]
                params = network.parameters_from_hdf5(where)
                out["parameters"][net_id] = network.parameters_to_vector(params)
        return out

    # ---- the model ---------------------------------------------------------------------------
    def parse(self, text: str, where: str) -> sp.Expr:
        from petab.v1.math import sympify_petab

        try:
            expr = sympify_petab(text)
        except Exception as exc:  # petab's parser raises several kinds
            raise PetabError(f"{where}: cannot parse {text!r}: {exc}") from None
        subs = {s: sym(s.name) for s in expr.free_symbols if isinstance(s, sp.Symbol)}
        out = expr.xreplace(subs)
        return out.xreplace({sym("time"): TIME}) if out.has(sym("time")) else out

    def state_dependent(self, expr: sp.Expr) -> bool:
        states = {sym(s) for s in self.model.states}
        return bool(expr.free_symbols & states) or expr.has(TIME)

    def rewrite_model(self) -> OdeModel:
        """The model with network inputs as constants and network outputs in place."""
        constants = dict(self.model.constants)
        args, shapes = self.input_entries(constants)
        self.uses: dict[str, NetworkUse] = {}
        self.flat_inputs: dict[str, list[sp.Expr]] = {}
        for net_id, network in self.networks.items():
            flat: list[sp.Expr] = []
            arg_shapes = []
            for i in range(len(network.input_ids)):
                entries = args[net_id].get(i)
                if not entries:
                    raise PetabError(f"{self.where}: input {i} of {net_id!r} is not assigned")
                n = max(entries) + 1
                if sorted(entries) != list(range(n)):
                    raise PetabError(f"{self.where}: input {i} of {net_id!r} is assigned in part")
                flat.extend(entries[k] for k in range(n))
                arg_shapes.append(shapes[net_id].get(i, (n,)))
            outputs = {e: k for e, (nid, k) in self.outputs.items() if nid == net_id}
            self.uses[net_id] = NetworkUse(
                net_id, network, self.network_arrays(net_id), tuple(arg_shapes), outputs
            )
            self.flat_inputs[net_id] = flat
        self.output_values = {
            e: self.uses[nid].application(e, self.flat_inputs[nid])
            for e, (nid, _) in self.outputs.items()
        }
        return self.place_outputs(constants)

    @property
    def where(self) -> str:
        return self.reader.files.get("hybridization", "hybridization table")

    def input_entries(self, constants: dict[str, sp.Expr]) -> tuple[dict, dict]:
        """Per network and forward-pass argument, its entries (an expression of the states,
        or the symbol of a new model constant that conditions may set), and the shapes of
        arguments read whole from array files; ``constants`` gains the new constants."""
        args: dict[str, dict[int, dict[int, sp.Expr]]] = {n: {} for n in self.networks}
        shapes: dict[str, dict[int, tuple[int, ...]]] = {n: {} for n in self.networks}
        for entity, (net_id, i, j) in self.inputs.items():
            given = self.hybridization.get(entity)
            if j is None:  # a whole array, from an array file, per condition
                data = self.arrays["inputs"].get(entity)
                if given not in (None, "array") or data is None:
                    raise PetabError(f"{self.where}: input {entity!r} of {net_id} has no array")
                shape = next(iter(data.values())).shape
                shapes[net_id][i] = tuple(int(s) for s in shape)
                for k in range(int(np.prod(shape))):
                    name = f"{entity}[{k}]"
                    default = float(data["0"].ravel()[k]) if "0" in data else np.nan
                    constants[name] = sp.Float(default) if np.isfinite(default) else sp.nan
                    args[net_id].setdefault(i, {})[k] = sym(name)
                continue
            if given is not None:
                value = self.parse(given, f"{self.where}, target {entity!r}")
                if self.state_dependent(value):
                    args[net_id].setdefault(i, {})[j] = value
                    continue
                constants[entity] = value
            elif entity not in constants:
                constants[entity] = sp.nan  # set by the parameter table or a condition
            args[net_id].setdefault(i, {})[j] = sym(entity)
        return args, shapes

    def place_outputs(self, constants: dict[str, sp.Expr]) -> OdeModel:
        """The hybridization table's other targets: a species' initial value, or a model
        parameter (in the right-hand side where its value depends on the states, else a
        constant of every condition)."""
        model = self.model
        initial = list(model.initial)
        rhs_subs: dict[sp.Symbol, sp.Expr] = {}
        listed = set(self.parameters["parameterId"])
        for target, text in self.hybridization.items():
            if target in self.inputs:
                continue
            value = self.parse(text, f"{self.where}, target {target!r}").xreplace(
                {sym(e): v for e, v in self.output_values.items()}
            )
            if target in model.states:
                if self.state_dependent(value):
                    raise PetabError(
                        f"{self.where}: the initial value of {target!r} depends on states"
                    )
                initial[model.states.index(target)] = value
            elif target in model.constants:
                if target in listed:
                    raise PetabError(
                        f"{self.where}: {target!r} is set by the hybridization table and "
                        "listed in the parameter table"
                    )
                if self.state_dependent(value):
                    rhs_subs[sym(target)] = value
                    constants.pop(target)
                else:
                    constants[target] = value
            else:
                raise PetabError(f"{self.where}: target {target!r} is no model quantity")
        return replace(
            model,
            rhs=tuple(f.xreplace(rhs_subs) for f in model.rhs),
            initial=tuple(initial),
            constants=constants,
            assignments={k: v.xreplace(rhs_subs) for k, v in model.assignments.items()},
        )

    def condition_arrays(self) -> dict[str, dict[str, float]]:
        """condition id (``"0"``: every condition) -> {array input entry: value}."""
        out: dict[str, dict[str, float]] = {}
        for entity, (_, _, j) in self.inputs.items():
            if j is not None:
                continue
            for condition, array in self.arrays["inputs"].get(entity, {}).items():
                values = out.setdefault(condition, {})
                for k, v in enumerate(array.ravel()):
                    values[f"{entity}[{k}]"] = float(v)
        return out

    # ---- network parameters -----------------------------------------------------------------
    def network_arrays(self, net_id: str) -> NetworkArrays:
        """The network's parameter vector: the array file's values, then every parameter-table
        row mapped to the network (the whole network, a layer, one array; the more specific
        the later) setting values (a number), estimation and prior."""
        network = self.networks[net_id]
        slices: dict[tuple[str | None, str | None], slice] = {}
        names: list[str] = []
        start = 0
        for layer, arrays in network.parameter_shapes().items():
            layer_start = start
            for array, shape in arrays.items():
                n = int(np.prod(shape))
                slices[(layer, array)] = slice(start, start + n)
                names.extend(f"{net_id}.{layer}.{array}[{k}]" for k in range(n))
                start += n
            slices[(layer, None)] = slice(layer_start, start)
        slices[(None, None)] = slice(0, start)
        values = np.full(start, np.nan)
        if net_id in self.arrays["parameters"]:
            values[:] = self.arrays["parameters"][net_id]
        estimated = np.zeros(start, dtype=bool)
        priors: list[Any] = [None] * start
        rows = [
            (pid, key)
            for pid, (nid, layer, array) in self.parameter_rows.items()
            if nid == net_id
            for key in [(layer, array)]
        ]
        if not any(key == (None, None) for _, key in rows):
            raise PetabError(
                f"{self.reader.files['parameter']}: no row for the parameters of {net_id!r}"
            )
        table = self.parameters.set_index("parameterId")
        reader = self.reader
        for pid, key in sorted(rows, key=lambda r: sum(k is not None for k in r[1])):
            if key not in slices:
                raise PetabError(
                    f"{reader.files['mapping']}: {pid!r} names no parameters of {net_id!r}"
                )
            row = table.loc[pid]
            i = list(table.index).index(pid)
            part = slices[key]
            nominal = row["nominalValue"]
            from_file = net_id in self.arrays["parameters"]
            if nominal != "array" and not (key == (None, None) and from_file):
                # a number on a layer's or an array's row sets it (the suite's initialization
                # cases); on the whole network's row it yields to an array file holding the
                # network (the benchmark collection's expected values are computed so)
                values[part] = reader.number(nominal, "nominalValue", i)
            elif not from_file:
                raise reader.error("parameter", i, "nominalValue", f"no array file holds {pid!r}")
            estimated[part] = bool(_truth(row["estimate"], f"{reader.files['parameter']}"))
            prior = reader.prior(row, i)
            if prior is not None:
                kind, raw = prior
                try:
                    numbers = tuple(float(x) for x in str(raw).split(";"))
                except ValueError:
                    raise reader.error("parameter", i, "priorParameters", f"{raw!r}") from None
                priors[part] = [(kind, numbers)] * (part.stop - part.start)
        if np.isnan(values).any():
            raise PetabError(f"{self.reader.path}: the parameters of {net_id!r} have no values")
        return NetworkArrays(values, estimated, tuple(priors), tuple(names))

    def finish(self, resolved: ResolvedProblem) -> ResolvedProblem:
        """Network outputs into the observables, network parameters into θ."""
        from ._tables import Observable

        subs = {sym(e): v for e, v in self.output_values.items()}
        observables = {
            oid: Observable(
                o.id,
                o.formula.xreplace(subs),
                o.noise.xreplace(subs),
                o.transformation,
                o.distribution,
                o.observable_placeholders,
                o.noise_placeholders,
            )
            for oid, o in resolved.observables.items()
        }
        uses = tuple(self.uses.values())
        weights = tuple(p for use in uses for p in use.estimated_parameters())
        return replace(
            resolved,
            observables=observables,
            parameters=resolved.parameters + weights,
            networks=uses,
        )
