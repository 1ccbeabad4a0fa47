"""Saved models: bit-for-bit round trips, both sides, and clear errors for broken files."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np
import pytest

from collocnode import HybridModel, NeuralODE, Parameter, SolverStatus, problems, simulate
from collocnode.nn import MLP, Block, RationalChebyshev
from collocnode.recipes import qvm
from collocnode.serialize import (
    SUPPORTED_VERSIONS,
    LoadedModel,
    load_model,
    register_builder,
    save_model,
)

OSCILLATOR = f"{__name__}:damped_oscillator"


def damped_oscillator(stiffness: Block, damping: Parameter) -> HybridModel:
    """A hand-written hybrid model with a fitted physical parameter: q'' = -c q' + k_NN(q)."""

    def rhs(x, u, t, nets, params):
        return ca.vertcat(x[1], -params["c"] * x[1] + nets["k"](x[0]))

    return HybridModel(
        n_states=2,
        blocks={"k": stiffness},
        rhs=rhs,
        parameters={"c": damping},
        state_names=("q", "v"),
        recipe=(OSCILLATOR, {"stiffness": stiffness, "damping": damping}),
    )


def qvm_model(rational: bool = False) -> tuple[HybridModel, Any]:
    system = problems.get("qvm")
    if rational:
        friction = RationalChebyshev(3, 2, input_scale=0.5, output_scale=120.0)
        spring = RationalChebyshev(3, 2, input_scale=0.02, output_scale=60.0)
    else:
        friction = MLP((1, 5, 5, 1), "squareplus", input_scale=(0.12,), output_scale=(100.0,))
        spring = MLP((1, 5, 5, 1), "squareplus", input_scale=(0.005,), output_scale=(50.0,))
    model = qvm.hybrid_model(system, friction, spring)
    if model.recipe is None:
        # hybrid_model does not set its recipe yet; attach the one it should set
        model = dataclasses.replace(
            model,
            recipe=(
                "collocnode.experiments.qvm:hybrid_model",
                {"system": system, "friction": friction, "spring": spring},
            ),
        )
    return model, qvm.road_inputs(system.road)


@dataclasses.dataclass
class Case:
    model: HybridModel
    x0: np.ndarray
    t: np.ndarray
    inputs: Callable[[np.ndarray], np.ndarray] | None = None
    method: str = "DOP853"
    builders: dict[str, Callable[..., HybridModel]] | None = None


def make_case(name: str) -> Case:
    if name == "neural_ode":
        nets = [MLP((2, 5, 5, 1), "sigmoid") for _ in range(2)]
        model = NeuralODE(nets, state_names=("x", "y"))
        return Case(model, np.array([2.0, 0.0]), np.linspace(0.0, 3.0, 61))
    if name == "neural_ode_second_order_inputs":
        net = MLP((4, 4, 1), "tanh", input_shift=(0.1, 0, 0, 0), output_scale=(3.0,))
        model = NeuralODE(net, n_inputs=1, time_input=True, second_order=True)
        return Case(
            model,
            np.array([0.5, -0.1]),
            np.linspace(0.0, 2.0, 41),
            inputs=lambda t: np.sin(np.asarray(t))[..., None],
        )
    if name in ("qvm_mlp", "qvm_rational"):
        model, inputs = qvm_model(rational=name == "qvm_rational")
        return Case(model, np.zeros(5), np.linspace(0.0, 0.2, 201), inputs, method="rk4")
    if name == "custom_hybrid":
        model = damped_oscillator(
            MLP((1, 4, 1), "softplus"), Parameter(0.3, fit=True, lb=0.0, ub=np.inf)
        )
        builders = {OSCILLATOR: damped_oscillator}
        return Case(model, np.array([1.0, 0.0]), np.linspace(0.0, 2.0, 41), builders=builders)
    raise AssertionError(name)


CASES = ["neural_ode", "neural_ode_second_order_inputs", "qvm_mlp", "qvm_rational", "custom_hybrid"]


@pytest.fixture(params=CASES)
def case(request) -> Case:
    return make_case(request.param)


def roundtrip(case: Case, tmp_path: Path, p: np.ndarray, **kwargs: Any) -> LoadedModel:
    path = save_model(tmp_path / "model.json", case.model, p, builders=case.builders, **kwargs)
    return load_model(path, builders=case.builders)


def test_roundtrip_is_bitwise(case, tmp_path):
    p = case.model.init_params(np.random.default_rng(7))
    p[0] = -0.0  # signed zero and a subnormal must survive too
    p[-1] = 5e-324 if not case.model.fitted else p[-1]
    loaded = roundtrip(case, tmp_path, p)
    assert loaded.p.tobytes() == p.tobytes()
    kw = dict(inputs=case.inputs, method=case.method)
    ref = simulate(case.model, p, case.t, case.x0, **kw)
    got = loaded.simulate(case.t, case.x0, **kw)
    assert np.array_equal(got.x, ref.x)
    assert np.array_equal(got.y, ref.y)
    assert np.all(np.isfinite(ref.x))


def test_layout_and_specs_survive(case, tmp_path):
    p = case.model.init_params(1)
    loaded = roundtrip(case, tmp_path, p)
    m, lm = case.model, loaded.model
    assert lm.blocks == m.blocks  # frozen dataclasses: equal specs, scales included
    assert lm.slices == m.slices
    assert lm.parameters == m.parameters
    assert (lm.n_states, lm.n_inputs, lm.n_outputs) == (m.n_states, m.n_inputs, m.n_outputs)
    assert (lm.state_names, lm.input_names, lm.output_names) == (
        m.state_names,
        m.input_names,
        m.output_names,
    )
    for name, value in loaded.params.items():
        assert np.array_equal(value, m.split_params(p)[name])
    doc = json.loads((tmp_path / "model.json").read_text())
    assert doc["format"] == "collocnode-model"
    assert doc["library_version"] == __import__("collocnode").__version__
    assert doc["model"]["slices"] == {k: [s.start, s.stop] for k, s in m.slices.items()}
    assert set(doc["model"]["blocks"]) == set(m.blocks)


def test_torch_modules_compute_the_casadi_blocks(case, tmp_path, rng):
    torch = pytest.importorskip("torch")
    p = case.model.init_params(3)
    loaded = roundtrip(case, tmp_path, p)
    modules = loaded.torch_modules()
    assert set(modules) == set(case.model.blocks)
    for name, block in case.model.blocks.items():
        lo, hi = block.domain
        x = rng.uniform(max(lo, -2.0), min(hi, 2.0), size=(25, block.n_in))
        # the reference: the CasADi block of the ORIGINAL model with the original weights
        f = block.casadi_function().map(x.shape[0])
        ref = np.asarray(f(x.T, p[case.model.slices[name]])).T
        with torch.no_grad():
            got = modules[name](torch.as_tensor(x, dtype=torch.float64)).numpy()
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
        assert np.array_equal(modules[name].get_flat(), p[case.model.slices[name]])


def test_metadata_roundtrip(tmp_path):
    case = make_case("neural_ode")
    meta = {
        "problem": problems.get("vdp", mu=1.5),
        "settings": {"intervals": np.int64(20), "tol": np.float32(0.5), "tags": ("a", "b")},
        "status": SolverStatus.ITERATION_LIMIT,
        "bounds": [-np.inf, np.inf],
        "grid": np.arange(6.0).reshape(2, 3),
    }
    loaded = roundtrip(case, tmp_path, case.model.init_params(0), metadata=meta)
    md = loaded.metadata
    assert md["problem"].name == "vdp" and md["problem"].params["mu"] == 1.5
    assert md["settings"] == {"intervals": 20, "tol": 0.5, "tags": ["a", "b"]}
    assert md["status"] == "iteration_limit"
    assert md["bounds"] == [-np.inf, np.inf]
    assert np.array_equal(md["grid"], meta["grid"]) and md["grid"].shape == (2, 3)
    # strict JSON: no NaN/Infinity tokens
    json.loads((tmp_path / "model.json").read_text(), parse_constant=pytest.fail)


def test_training_solution_keeps_its_honest_status(tmp_path):
    from collocnode import IpoptOptions, RadauIIA, TrainingProblem, solve

    data = problems.get("vdp").generate(n_steps=30, n_train=30).train
    model = NeuralODE([MLP((2, 3, 1), "tanh") for _ in range(2)])
    alg = RadauIIA(6, 2, ipopt=IpoptOptions(max_iter=3, print_level=0))
    sol = solve(TrainingProblem(model, data), alg, seed=0)
    assert sol.status == SolverStatus.ITERATION_LIMIT
    loaded = load_model(save_model(tmp_path / "m.json", sol, metadata={"note": "quick"}))
    assert loaded.metadata["status"] == "iteration_limit"
    assert loaded.metadata["iterations"] == sol.iterations
    assert loaded.metadata["note"] == "quick"
    assert np.array_equal(loaded.p, sol.p)


# ---- broken files ---------------------------------------------------------------------------


def edit(fn: Callable[[dict], Any]) -> Callable[[dict], dict]:
    def apply(doc: dict) -> dict:
        fn(doc)
        return doc

    return apply


CORRUPTIONS = {
    "other_format": (edit(lambda d: d.update(format="something-else")), "not a collocnode model"),
    "no_format": (edit(lambda d: d.pop("format")), "not a collocnode model"),
    "future_version": (
        edit(lambda d: d.update(format_version=99)),
        r"format_version 99 .*not supported.*reads format versions 1",
    ),
    "version_missing": (edit(lambda d: d.pop("format_version")), "missing field format_version"),
    "p_missing": (edit(lambda d: d.pop("p")), "missing field p"),
    "recipe_missing": (edit(lambda d: d["model"].pop("recipe")), "missing field model.recipe"),
    "kwargs_missing": (
        edit(lambda d: d["model"]["recipe"].pop("kwargs")),
        "missing field model.recipe.kwargs",
    ),
    "unknown_block": (
        edit(lambda d: d["model"]["blocks"]["f0"].update(type="Transformer")),
        "unknown block type 'Transformer'",
    ),
    "unknown_block_in_recipe": (
        edit(lambda d: d["model"]["recipe"]["kwargs"]["blocks"]["f0"].update({"$block": "KAN"})),
        "unknown block type 'KAN'",
    ),
    "p_too_short": (edit(lambda d: d.update(p=d["p"][:-1])), r"p must have shape \(102,?\)"),
    "p_not_numbers": (edit(lambda d: d["p"].__setitem__(3, "x")), "p must be an array of real"),
    "p_edited": (edit(lambda d: d["p"].__setitem__(0, 0.125)), "p does not match p_sha256"),
    "layout_changed": (edit(lambda d: d["model"].update(n_params=7)), "model.n_params"),
    "untrusted_recipe": (
        edit(lambda d: d["model"].update(recipe={"function": "os:getcwd", "kwargs": {}})),
        "not a registered model builder",
    ),
    "missing_recipe_function": (
        edit(lambda d: d["model"]["recipe"].update(function="collocnode.models:NoSuchThing")),
        "not a registered model builder",
    ),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corrupted_files_raise_naming_the_problem(name, tmp_path):
    case = make_case("neural_ode")
    path = save_model(tmp_path / "m.json", case.model, case.model.init_params(0))
    mutate, message = CORRUPTIONS[name]
    path.write_text(json.dumps(mutate(json.loads(path.read_text()))))
    with pytest.raises(ValueError, match=message):
        load_model(path)


@pytest.mark.parametrize(
    "content", [b"\x89PNG\r\n\x1a\n\x00", b"{not json", b"[1, 2, 3]", b'"collocnode-model"']
)
def test_non_model_files_are_rejected(content, tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not a collocnode model file"):
        load_model(path)


def test_untrusted_recipe_is_not_run(tmp_path):
    """A file cannot make load_model call an arbitrary function."""
    marker = tmp_path / "ran"
    case = make_case("neural_ode")
    path = save_model(tmp_path / "m.json", case.model, case.model.init_params(0))
    doc = json.loads(path.read_text())
    doc["model"]["recipe"] = {"function": "pathlib:Path.touch", "kwargs": {"self": str(marker)}}
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="not a registered model builder"):
        load_model(path)
    assert not marker.exists()


def test_custom_recipe_needs_its_builder_registered(tmp_path):
    case = make_case("custom_hybrid")
    path = save_model(
        tmp_path / "m.json", case.model, case.model.init_params(0), builders=case.builders
    )
    with pytest.raises(ValueError, match=rf"register_builder\('{OSCILLATOR}'\)"):
        load_model(path)
    assert load_model(path, builders=case.builders).model.fitted == ["c"]


def _no_recipe_model() -> HybridModel:
    return HybridModel(
        n_states=1, blocks={"f": MLP((1, 2, 1))}, rhs=lambda x, u, t, nets, params: nets["f"](x)
    )


def _main_recipe_model() -> HybridModel:
    net = MLP((1, 2, 1))
    return dataclasses.replace(NeuralODE(net), recipe=("__main__:build", {"net": net}))


def _wrong_recipe_model() -> HybridModel:
    # the recipe rebuilds a different network than the one being saved
    model = NeuralODE(MLP((1, 3, 1)))
    return dataclasses.replace(
        model, recipe=("collocnode.models:NeuralODE", {"blocks": MLP((1, 2, 1))})
    )


def _unregistered_builder_model() -> HybridModel:
    return make_case("custom_hybrid").model


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


_LOOP: dict[str, Any] = {}
_LOOP["self"] = _LOOP

SAVE_ERRORS = {
    "no_recipe": (_no_recipe_model, None, None, ValueError, "model has no recipe"),
    "unregistered_builder": (
        _unregistered_builder_model,
        None,
        None,
        ValueError,
        rf"'{OSCILLATOR}' is not a registered model builder.*register_builder\('{OSCILLATOR}'\)",
    ),
    "self_referencing_metadata": (None, None, {"loop": _LOOP}, ValueError, "contains itself"),
    "deep_metadata": (None, None, {"deep": _nested(70)}, ValueError, "nested more than 64"),
    "complex_array": (None, None, {"z": np.array([1j])}, TypeError, "dtype complex128"),
    "main_recipe": (_main_recipe_model, None, None, ValueError, "defined in __main__"),
    "wrong_recipe": (_wrong_recipe_model, None, None, ValueError, "different layout"),
    "nan_p": (None, "nan", None, ValueError, r"p must be finite, found nan at index \(4,\)"),
    "short_p": (None, "short", None, ValueError, r"p must have shape \(102,?\)"),
    "bad_metadata": (None, None, {"fn": print}, TypeError, r"metadata\['fn'\]"),
    "dollar_key": (None, None, {"$block": 1}, TypeError, "may not start with"),
}


@pytest.mark.parametrize("name", sorted(SAVE_ERRORS))
def test_bad_saves_raise_and_leave_the_old_file(name, tmp_path):
    build, p_kind, metadata, exc, message = SAVE_ERRORS[name]
    model = build() if build else make_case("neural_ode").model
    p = model.init_params(0)
    if p_kind == "nan":
        p[4] = np.nan
    elif p_kind == "short":
        p = p[:-1]
    path = tmp_path / "m.json"
    path.write_text("previous content")
    with pytest.raises(exc, match=message):
        save_model(path, model, p, metadata=metadata)
    assert path.read_text() == "previous content"
    assert [f.name for f in tmp_path.iterdir()] == ["m.json"], "no temporary file left behind"


def test_supported_versions_include_the_current_one():
    from collocnode.serialize import FORMAT_VERSION

    assert FORMAT_VERSION in SUPPORTED_VERSIONS


# ---- files of earlier releases, builders, arguments ------------------------------------------

LEGACY = Path(__file__).parent / "data" / "legacy"


@pytest.mark.parametrize(
    "name, sizes, builder",
    [
        ("neural_ode", (2, 0, 0, 102), "collocnode.models:NeuralODE"),
        # written as collocnode.experiments.qvm:hybrid_model, the builder's name in 0.1.0
        ("qvm_hybrid", (5, 1, 2, 92), "collocnode.recipes.qvm:hybrid_model"),
    ],
)
def test_files_of_release_0_1_0_load(name, sizes, builder):
    path = LEGACY / f"{name}_v0.1.0.json"
    doc = json.loads(path.read_text())
    loaded = load_model(path)
    m = loaded.model
    assert (m.n_states, m.n_inputs, m.n_outputs, m.n_params) == sizes
    assert hashlib.sha256(loaded.p.astype("<f8").tobytes()).hexdigest() == doc["p_sha256"]
    assert m.recipe is not None and m.recipe[0] == builder
    assert loaded.library_version == "0.1.0"
    assert loaded.metadata == doc["metadata"]


@pytest.fixture
def no_registered_builders(monkeypatch):
    """Registrations made by a test stay in that test."""
    from collocnode import serialize

    monkeypatch.setattr(serialize._builders, "BUILDERS", serialize._builders.new_registry())


def test_registered_builder_round_trips_by_its_name(tmp_path, no_registered_builders):
    calls = []

    @register_builder("my_models:oscillator")
    def oscillator(stiffness: Block, damping: Parameter) -> HybridModel:
        calls.append(1)
        model = damped_oscillator(stiffness, damping)
        return dataclasses.replace(
            model, recipe=("my_models:oscillator", {"stiffness": stiffness, "damping": damping})
        )

    model = oscillator(MLP((1, 3, 1), "tanh"), Parameter(0.2, fit=True, lb=0.0))
    p = model.init_params(4)
    path = save_model(tmp_path / "m.json", model, p)
    assert json.loads(path.read_text())["model"]["recipe"]["function"] == "my_models:oscillator"
    loaded = load_model(path)
    assert loaded.model.blocks == model.blocks and loaded.model.parameters == model.parameters
    assert np.array_equal(loaded.p, p)
    assert len(calls) == 3  # built here, rebuilt by the check in save_model, and by load_model


def test_recipe_may_give_the_registered_function_itself(tmp_path):
    stiffness, damping = MLP((1, 2, 1), "tanh"), Parameter(1.0)
    model = dataclasses.replace(
        damped_oscillator(stiffness, damping),
        recipe=(damped_oscillator, {"stiffness": stiffness, "damping": damping}),
    )
    builders = {OSCILLATOR: damped_oscillator}
    path = save_model(tmp_path / "m.json", model, model.init_params(0), builders=builders)
    assert json.loads(path.read_text())["model"]["recipe"]["function"] == OSCILLATOR
    assert load_model(path, builders=builders).model.blocks == model.blocks


def test_builder_arguments_are_checked_before_the_call(tmp_path):
    calls = []

    def counted(stiffness: Block, damping: Parameter) -> HybridModel:
        calls.append(1)
        return damped_oscillator(stiffness, damping)

    case = make_case("custom_hybrid")
    path = save_model(
        tmp_path / "m.json", case.model, case.model.init_params(0), builders=case.builders
    )
    doc = json.loads(path.read_text())
    doc["model"]["recipe"]["kwargs"]["damping"] = 0.5  # a number where a Parameter is due
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"kwargs\['damping'\] must be Parameter, got float 0.5"):
        load_model(path, builders={OSCILLATOR: counted})
    doc["model"]["recipe"]["kwargs"].pop("damping")
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="missing argument 'damping'"):
        load_model(path, builders={OSCILLATOR: counted})
    assert calls == []


def test_trusted_modules_is_gone_with_a_pointer_to_builders(tmp_path):
    path = LEGACY / "neural_ode_v0.1.0.json"
    with pytest.raises(TypeError, match=r"trusted_modules.*removed.*builders="):
        load_model(path, trusted_modules=("tests",))
    with pytest.raises(TypeError, match=r"builders must be a dict.*replaces trusted_modules"):
        load_model(path, ("tests",))  # the old positional form
    with pytest.raises(TypeError, match="unexpected keyword argument 'trusted'"):
        load_model(path, trusted=True)


def test_library_builder_names_cannot_be_taken(no_registered_builders):
    for name in ("collocnode.models:NeuralODE", "collocnode.experiments.qvm:hybrid_model"):
        with pytest.raises(ValueError, match="reserved for the library"):
            register_builder(name, damped_oscillator)
        with pytest.raises(ValueError, match="reserved for the library"):
            load_model(LEGACY / "neural_ode_v0.1.0.json", builders={name: damped_oscillator})


def test_register_builder_refuses_bad_registrations(no_registered_builders):
    register_builder("my_models:oscillator", damped_oscillator)
    register_builder("my_models:oscillator", damped_oscillator)  # the same again is fine
    with pytest.raises(ValueError, match=r"registered to test_serialize\.damped_oscillator"):
        register_builder("my_models:oscillator", _no_recipe_model)
    with pytest.raises(TypeError, match="must be callable"):
        register_builder("my_models:other", 5)
    for name in ("", " padded", 7):
        with pytest.raises(ValueError, match="non-empty printable string"):
            register_builder(name, damped_oscillator)


def test_save_into_a_directory_names_the_path(tmp_path):
    case = make_case("neural_ode")
    with pytest.raises(ValueError, match=f"path '{tmp_path}' is a directory"):
        save_model(tmp_path, case.model, case.model.init_params(0))
    assert list(tmp_path.iterdir()) == []


def test_arrays_are_stored_as_float64_or_int64(tmp_path):
    case = make_case("neural_ode")
    meta = {
        "f32": np.array([0.5, 1.5], dtype=np.float32),
        "i32": np.arange(3, dtype=np.int32),
        "flags": np.array([True, False]),
        "bounds": np.array([-np.inf, np.nan, 1.0]),
        "empty": np.zeros((0, 3)),
    }
    loaded = roundtrip(case, tmp_path, case.model.init_params(0), metadata=meta)
    md = loaded.metadata
    assert md["f32"].dtype == np.float64 and np.array_equal(md["f32"], [0.5, 1.5])
    assert md["i32"].dtype == np.int64 and np.array_equal(md["i32"], [0, 1, 2])
    assert md["flags"].dtype == np.int64 and np.array_equal(md["flags"], [1, 0])
    assert np.array_equal(md["bounds"], meta["bounds"], equal_nan=True)
    assert md["empty"].shape == (0, 3)


@pytest.mark.parametrize("max_bytes", [0, -1, 1.5, True])
def test_max_bytes_must_be_a_positive_integer(max_bytes):
    with pytest.raises((TypeError, ValueError), match="max_bytes must be a positive integer"):
        load_model(LEGACY / "neural_ode_v0.1.0.json", max_bytes=max_bytes)
