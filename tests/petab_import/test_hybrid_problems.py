"""Hybrid PEtab v2 problems (PEtab SciML): a network in the right-hand side, before the ODE (a
parameter or an initial value, its inputs per condition) or in an observable.

Each problem is written here (SBML, v2 tables, network YAML, HDF5 parameters) and its
log-likelihood is compared with an independent one: scipy's LSODA/Radau at tight tolerances on
the same ODE with the network evaluated in numpy. Gradients are compared with central
differences of the PEtab objective.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

h5py = pytest.importorskip("h5py")
yaml = pytest.importorskip("yaml")
pytest.importorskip("petab")

from collocnode.petab import PetabError, import_petab  # noqa: E402

SBML = """<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level2/version4" level="2" version="4">
 <model id="lv">
  <listOfCompartments><compartment id="c" size="1" constant="true"/></listOfCompartments>
  <listOfSpecies>
   <species id="prey" compartment="c" initialConcentration="1.0" hasOnlySubstanceUnits="true"/>
   <species id="pred" compartment="c" initialConcentration="0.5" hasOnlySubstanceUnits="true"/>
  </listOfSpecies>
  <listOfParameters>
   <parameter id="alpha" value="1.1"/><parameter id="beta" value="0.8"/>
   <parameter id="gamma" value="0.6"/><parameter id="delta" value="0.9"/>
  </listOfParameters>
  <listOfReactions>
   <reaction id="birth" reversible="false"><listOfProducts>
    <speciesReference species="prey"/></listOfProducts>
    <kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML">
     <apply><times/><ci>alpha</ci><ci>prey</ci></apply></math></kineticLaw></reaction>
   <reaction id="eaten" reversible="false"><listOfReactants>
    <speciesReference species="prey"/></listOfReactants>
    <kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML">
     <apply><times/><ci>beta</ci><ci>prey</ci><ci>pred</ci></apply></math></kineticLaw></reaction>
   <reaction id="growth" reversible="false"><listOfProducts>
    <speciesReference species="pred"/></listOfProducts>
    <kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML">
     <apply><times/><ci>gamma</ci><ci>prey</ci><ci>pred</ci></apply></math></kineticLaw></reaction>
   <reaction id="death" reversible="false"><listOfReactants>
    <speciesReference species="pred"/></listOfReactants>
    <kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML">
     <apply><times/><ci>delta</ci><ci>pred</ci></apply></math></kineticLaw></reaction>
  </listOfReactions>
 </model>
</sbml>
"""

RNG = np.random.default_rng(3)
WEIGHTS = {
    "layer1": {"weight": 0.5 * RNG.standard_normal((4, 2)), "bias": 0.1 * RNG.standard_normal(4)},
    "layer2": {"weight": 0.3 * RNG.standard_normal((1, 4)), "bias": np.array([0.6])},
}
TIMES = np.linspace(0.5, 6.0, 12)
SIGMA = 0.05
MECHANISTIC = {"alpha": 1.1, "beta": 0.8, "delta": 0.9}
#: per condition the two pre-ODE inputs (cond2's second: the estimated parameter ``u2``)
INPUTS = {"cond1": (1.0, 0.5), "cond2": (0.2, 0.7)}


def net(x: np.ndarray) -> float:
    h = np.tanh(WEIGHTS["layer1"]["weight"] @ x + WEIGHTS["layer1"]["bias"])
    return float((WEIGHTS["layer2"]["weight"] @ h + WEIGHTS["layer2"]["bias"])[0])


#: placement -> (hybridization rows, mapping of the inputs, observable formula of prey)
PLACEMENTS = {
    "rhs": ([("net1_input1", "prey"), ("net1_input2", "pred"), ("gamma", "net1_output1")], "prey"),
    "parameter": ([("gamma", "net1_output1")], "prey"),
    "initial": ([("prey", "net1_output1")], "prey"),
    "observable": ([("net1_input1", "prey"), ("net1_input2", "pred")], "net1_output1"),
}


def reference(placement: str, condition: str) -> tuple[np.ndarray, np.ndarray]:
    """(prey observable, pred) at TIMES by scipy, the network in numpy."""
    a, b, d = MECHANISTIC["alpha"], MECHANISTIC["beta"], MECHANISTIC["delta"]
    u = np.array(INPUTS[condition])
    gamma = net(u) if placement == "parameter" else 0.6
    x0 = [net(u) if placement == "initial" else 1.0, 0.5]

    def f(t: float, x: np.ndarray) -> list[float]:
        g = net(x) if placement == "rhs" else gamma
        return [a * x[0] - b * x[0] * x[1], g * x[0] * x[1] - d * x[1]]

    sol = solve_ivp(f, (0.0, TIMES[-1]), x0, t_eval=TIMES, method="Radau", rtol=1e-11, atol=1e-13)
    prey = sol.y[0] if placement != "observable" else np.array([net(x) for x in sol.y.T])
    return prey, sol.y[1]


def tsv(path: Path, header: list[str], rows: list[list]) -> None:
    lines = ["\t".join(header)] + ["\t".join(str(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")


def write_problem(folder: Path, placement: str, frozen_layer: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lv.xml").write_text(SBML)
    layers = [
        {
            "layer_id": "layer1",
            "layer_type": "Linear",
            "args": {"in_features": 2, "out_features": 4},
        },
        {
            "layer_id": "layer2",
            "layer_type": "Linear",
            "args": {"in_features": 4, "out_features": 1},
        },
    ]
    forward = [
        {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
        {"name": "layer1", "op": "call_module", "target": "layer1", "args": ["x"], "kwargs": {}},
        {"name": "tanh", "op": "call_method", "target": "tanh", "args": ["layer1"], "kwargs": {}},
        {"name": "layer2", "op": "call_module", "target": "layer2", "args": ["tanh"], "kwargs": {}},
        {"name": "output", "op": "output", "target": "output", "args": ["layer2"], "kwargs": {}},
    ]
    network = {"nn_model_id": "net1", "inputs": [{"input_id": "x"}], "layers": layers}
    (folder / "net1.yaml").write_text(yaml.safe_dump({**network, "forward": forward}))
    with h5py.File(folder / "net1_ps.hdf5", "w") as f:
        f.create_dataset("metadata/pytorch_format", data=np.uint8(1))
        for layer, arrays in WEIGHTS.items():
            for name, value in arrays.items():
                f.create_dataset(f"parameters/net1/{layer}/{name}", data=value)
    hybridization, prey_formula = PLACEMENTS[placement]
    pre_ode = placement in ("parameter", "initial")
    tsv(folder / "hybridization.tsv", ["targetId", "targetValue"], hybridization)
    mapping = [
        ["net1_input1", "net1.inputs[0][0]"],
        ["net1_input2", "net1.inputs[0][1]"],
        ["net1_output1", "net1.outputs[0][0]"],
        ["net1_ps", "net1.parameters"],
    ]
    if frozen_layer:
        mapping.append(["net1_layer1", "net1.parameters[layer1]"])
    tsv(folder / "mapping.tsv", ["petabEntityId", "modelEntityId"], mapping)
    parameters = [[k, "lin", 0.0, 5.0, v, 1] for k, v in MECHANISTIC.items()]
    parameters.append(["net1_ps", "lin", "-inf", "inf", "array", 1])
    if frozen_layer:
        parameters.append(["net1_layer1", "lin", "-inf", "inf", "array", 0])
    if pre_ode:
        parameters.append(["u2", "lin", 0.0, 5.0, INPUTS["cond2"][1], 1])
    header = ["parameterId", "parameterScale", "lowerBound", "upperBound", "nominalValue"]
    tsv(folder / "parameters.tsv", [*header, "estimate"], parameters)
    conditions = []
    if pre_ode:
        conditions = [
            ["cond1", "net1_input1", INPUTS["cond1"][0]],
            ["cond1", "net1_input2", INPUTS["cond1"][1]],
            ["cond2", "net1_input1", INPUTS["cond2"][0]],
            ["cond2", "net1_input2", "u2"],
        ]
    tsv(folder / "conditions.tsv", ["conditionId", "targetId", "targetValue"], conditions)
    # without conditions the two experiments are the same: one reference, two copies of data
    starts = [["e1", 0.0, "cond1" if pre_ode else ""], ["e2", 0.0, "cond2" if pre_ode else ""]]
    tsv(folder / "experiments.tsv", ["experimentId", "time", "conditionId"], starts)
    observables = [["prey_o", prey_formula, SIGMA, "normal"], ["pred_o", "pred", SIGMA, "normal"]]
    tsv(
        folder / "observables.tsv",
        ["observableId", "observableFormula", "noiseFormula", "noiseDistribution"],
        observables,
    )
    noise = np.random.default_rng(0)
    rows = []
    for experiment, condition in (("e1", "cond1"), ("e2", "cond2")):
        prey, pred = reference(placement, condition)
        for oid, values in (("prey_o", prey), ("pred_o", pred)):
            for t, y in zip(TIMES, values, strict=True):
                rows.append([oid, experiment, y + SIGMA * noise.standard_normal(), t])
    tsv(folder / "measurements.tsv", ["observableId", "experimentId", "measurement", "time"], rows)
    files = {
        "format_version": 2,
        "model_files": {"lv": {"location": "lv.xml", "language": "sbml"}},
        "parameter_files": ["parameters.tsv"],
        "observable_files": ["observables.tsv"],
        "measurement_files": ["measurements.tsv"],
        "condition_files": ["conditions.tsv"],
        "experiment_files": ["experiments.tsv"],
        "mapping_files": ["mapping.tsv"],
        "extensions": {
            "sciml": {
                "array_files": ["net1_ps.hdf5"],
                "hybridization_files": ["hybridization.tsv"],
                "neural_nets": {"net1": {"location": "net1.yaml", "format": "YAML"}},
            }
        },
    }
    (folder / "problem.yaml").write_text(yaml.safe_dump(files))
    return folder / "problem.yaml"


def reference_llh(folder: Path, placement: str) -> float:
    import pandas as pd

    table = pd.read_csv(folder / "measurements.tsv", sep="\t")
    llh = 0.0
    for experiment, condition in (("e1", "cond1"), ("e2", "cond2")):
        prey, pred = reference(placement, condition)
        for oid, values in (("prey_o", prey), ("pred_o", pred)):
            rows = table[(table.experimentId == experiment) & (table.observableId == oid)]
            r = (rows["measurement"].to_numpy() - values) / SIGMA
            llh += float(np.sum(-0.5 * np.log(2 * np.pi * SIGMA**2) - 0.5 * r**2))
    return llh


@pytest.mark.parametrize("placement", list(PLACEMENTS))
def test_likelihood_matches_an_independent_simulation(tmp_path, placement):
    problem = import_petab(write_problem(tmp_path, placement))
    n_weights = 4 * 2 + 4 + 4 + 1
    assert problem.n_theta == 3 + n_weights + (placement in ("parameter", "initial"))
    assert problem.score().llh == pytest.approx(reference_llh(tmp_path, placement), abs=1e-5)


@pytest.mark.parametrize("placement", ["rhs", "parameter"])
def test_gradient_matches_central_differences(tmp_path, placement):
    problem = import_petab(write_problem(tmp_path, placement))
    theta = problem.nominal
    gradient = problem.gradient(theta)
    h = 1e-6
    for j in (0, 3, problem.n_theta - 1):
        step = np.zeros_like(theta)
        step[j] = h
        fd = (problem.objective(theta + step) - problem.objective(theta - step)) / (2 * h)
        assert gradient[j] == pytest.approx(fd, rel=1e-4, abs=1e-3)


def test_a_frozen_layer_leaves_theta_and_keeps_its_values(tmp_path):
    problem = import_petab(write_problem(tmp_path, "rhs", frozen_layer=True))
    assert problem.n_theta == 3 + 4 + 1  # layer2's weight and bias only
    assert all(p.startswith("net1.layer2.") for p in problem.parameter_ids[3:])
    assert problem.score().llh == pytest.approx(reference_llh(tmp_path, "rhs"), abs=1e-5)


def test_a_pre_ode_network_is_fitted_by_collocation(tmp_path):
    problem = import_petab(write_problem(tmp_path, "parameter"))
    start = problem.nominal.copy()
    start[:3] *= 1.2  # the mechanistic parameters off by 20 %
    fit = problem.fit(start, intervals=20)
    assert fit.agrees
    assert fit.objective < problem.objective(start) - 100.0
    assert fit.objective <= problem.objective() + 1e-3  # at least as good as the truth


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("mapping.tsv", "net1.parameters", "net9.parameters"), "mapping.tsv, row 5"),
        (("hybridization.tsv", "gamma\t", "kappa\t"), "target 'kappa' is no model quantity"),
        (("parameters.tsv", "array\t1", "array\tmaybe"), "'maybe' is neither true nor false"),
        (("problem.yaml", "net1_ps.hdf5", "missing.hdf5"), "array file 'missing.hdf5'"),
    ],
)
def test_bad_input_names_the_file_and_the_place(tmp_path, edit, message):
    path = write_problem(tmp_path, "rhs")
    name, old, new = edit
    text = (tmp_path / name).read_text()
    assert old in text
    (tmp_path / name).write_text(text.replace(old, new))
    with pytest.raises(PetabError, match=message.replace("(", r"\(").replace("[", r"\[")):
        import_petab(path)
