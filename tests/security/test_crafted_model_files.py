"""Crafted model files: each is refused with one clear ValueError, imports nothing and writes
nothing.

Every case starts from a model file written by collocnode 0.1.0 (``tests/data/legacy``) and
changes one thing. The checks around each load:

* the error is a ValueError whose message is one line naming the file;
* ``sys.modules`` gains no module (the library's own modules are imported beforehand by loading
  the legacy files, so a new module can only be one the file named);
* no file appears or changes under the test's temporary directory, which is also the CWD and
  on ``sys.path`` (as in a notebook), and which holds a module that writes a marker file when
  imported;
* the load allocates less than :data:`MEMORY_LIMIT` bytes (tracemalloc sees numpy's buffers).
"""

from __future__ import annotations

import copy
import json
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from collocnode import problems
from collocnode.serialize import load_model

LEGACY = Path(__file__).parents[1] / "data" / "legacy"
MEMORY_LIMIT = 16 * 2**20  # bytes; loading a legitimate small model takes well under 1 MiB
PLANTED = "collocnode_planted_module"  # a module in the CWD that a file must never import


@pytest.fixture(scope="module", autouse=True)
def library_imported() -> None:
    """Import every module a legitimate load imports, so later imports stand out."""
    for path in sorted(LEGACY.glob("*.json")):
        load_model(path)
    for name in problems.available():
        problems.presets(name)  # imports the system's module


def legacy(name: str) -> dict[str, Any]:
    return json.loads((LEGACY / f"{name}_v0.1.0.json").read_text())


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
    }


class Sandbox:
    """A temporary directory that is the CWD and importable, with a planted module in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.marker = root / "planted_module_ran"
        (root / f"{PLANTED}.py").write_text(
            f"from pathlib import Path\nPath({str(self.marker)!r}).write_text('ran')\n"
        )

    def refuse(self, content: dict[str, Any] | bytes, match: str, **kwargs: Any) -> ValueError:
        """Load ``content`` (a document or raw bytes) and check that nothing happened."""
        path = self.root / "crafted.json"
        path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
        before_files = snapshot(self.root)
        before_modules = set(sys.modules)
        tracemalloc.start()
        try:
            with pytest.raises(ValueError, match=match) as info:
                load_model(path, **kwargs)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert set(sys.modules) - before_modules == set(), "the file made load_model import"
        assert not self.marker.exists(), "the planted module ran"
        assert snapshot(self.root) == before_files, "the file made load_model write a file"
        assert peak < MEMORY_LIMIT, f"the file made load_model allocate {peak / 2**20:.0f} MiB"
        message = str(info.value)
        assert "\n" not in message and str(path) in message
        return info.value


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return Sandbox(tmp_path)


def with_recipe(function: Any, kwargs: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        doc["model"]["recipe"] = {"function": function, "kwargs": kwargs}

    return mutate


def recipe_kwargs(**changes: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        doc["model"]["recipe"]["kwargs"].update(changes)

    return mutate


def in_metadata(value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        doc["metadata"]["crafted"] = value

    return mutate


def array(dtype: Any, shape: Any, data: Any) -> dict[str, Any]:
    return {"$array": {"dtype": dtype, "shape": shape, "data": data}}


def nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def mlp_fields(doc: dict[str, Any], where: str) -> dict[str, Any]:
    if where == "blocks":
        return doc["model"]["blocks"]["f0"]["fields"]
    return doc["model"]["recipe"]["kwargs"]["blocks"]["f0"]["fields"]


def wide_mlp(where: str, sizes: list[int], **fields: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        spec = mlp_fields(doc, where)
        spec.update(sizes=sizes, input_shift=None, input_scale=None, output_scale=None)
        spec.update(fields)

    return mutate


def qvm_system(**changes: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        doc["model"]["recipe"]["kwargs"]["system"]["$system"].update(changes)

    return mutate


def state_name(text: str) -> Callable[[dict[str, Any]], None]:
    """The first state name, in the recipe and in the readable description alike."""

    def mutate(doc: dict[str, Any]) -> None:
        doc["model"]["recipe"]["kwargs"]["state_names"][0] = text
        doc["model"]["state_names"][0] = text

    return mutate


NOT_BUILDER = "not a registered model builder"
WRITE_PTH = {"path": "collocnode_crafted.pth", "text": "import os; os.system('true')\n"}

# name -> (base file, change, message)
CASES: dict[str, tuple[str, Callable[[dict[str, Any]], None], str]] = {
    # ---- the file names a function: only registered builders, by exact name ----
    "os_system": ("neural_ode", with_recipe("os:system", {"command": "touch x"}), NOT_BUILDER),
    "builtins_exec": ("neural_ode", with_recipe("builtins:exec", {"source": "1"}), NOT_BUILDER),
    "importlib_import_module": (
        "neural_ode",
        with_recipe("importlib:import_module", {"name": PLANTED}),
        NOT_BUILDER,
    ),
    "reexported_import_module_problems": (
        "neural_ode",
        with_recipe("collocnode.problems:import_module", {"name": PLANTED}),
        NOT_BUILDER,
    ),
    "reexported_import_module_serialize": (
        "neural_ode",
        with_recipe("collocnode.serialize:import_module", {"name": PLANTED}),
        NOT_BUILDER,
    ),
    "library_file_writer": (
        "neural_ode",
        with_recipe("collocnode.tools._io:atomic_write_text", WRITE_PTH),
        NOT_BUILDER,
    ),
    "library_json_writer_in_legacy_module": (
        "neural_ode",
        with_recipe("collocnode._experiments.qvm:write_json", {"path": "x.json", "obj": 1}),
        NOT_BUILDER,
    ),
    "planted_module": ("neural_ode", with_recipe(f"{PLANTED}:f", {}), NOT_BUILDER),
    "library_class_not_builder": (
        "neural_ode",
        with_recipe("collocnode.models:HybridModel", {"n_states": 1}),
        NOT_BUILDER,
    ),
    "module_attribute": (
        "neural_ode",
        with_recipe("collocnode.transcription._nlp.jit:subprocess", {}),
        NOT_BUILDER,
    ),
    "near_miss_space": (
        "neural_ode",
        lambda d: d["model"]["recipe"].update(function="collocnode.models:NeuralODE "),
        NOT_BUILDER,
    ),
    "near_miss_case": (
        "neural_ode",
        lambda d: d["model"]["recipe"].update(function="collocnode.Models:NeuralODE"),
        NOT_BUILDER,
    ),
    "function_not_a_string": (
        "neural_ode",
        lambda d: d["model"]["recipe"].update(function=["collocnode.models", "NeuralODE"]),
        r"model\.recipe\.function must be a string",
    ),
    # ---- a builder's arguments are checked against its signature before the call ----
    "unknown_argument": ("neural_ode", recipe_kwargs(rhs="x"), "unknown argument 'rhs'"),
    "missing_argument": (
        "neural_ode",
        lambda d: d["model"]["recipe"]["kwargs"].pop("blocks"),
        "missing argument 'blocks'",
    ),
    "string_for_int": ("neural_ode", recipe_kwargs(n_inputs="3"), r"n_inputs.*must be int"),
    "int_for_bool": ("neural_ode", recipe_kwargs(time_input=1), r"time_input.*must be bool"),
    "kwargs_not_object": (
        "neural_ode",
        lambda d: d["model"]["recipe"].update(kwargs=[1, 2]),
        r"model\.recipe\.kwargs must be an object",
    ),
    "system_not_a_system": (
        "qvm_hybrid",
        recipe_kwargs(system=5),
        r"system.*must be System, got int",
    ),
    "block_not_a_block": (
        "qvm_hybrid",
        recipe_kwargs(friction={"sizes": [1, 5, 1]}),
        r"friction.*must be Block, got dict",
    ),
    # ---- systems rebuild through the registry with typed parameters only ----
    "system_constructor_option": (
        "qvm_hybrid",
        qvm_system(params={"model": "linear"}),
        "unknown parameter 'model' of qvm",
    ),
    "system_road_option": (
        "qvm_hybrid",
        qvm_system(params={"road": 1}),
        "unknown parameter 'road' of qvm",
    ),
    "system_preset_in_sampling": (
        "qvm_hybrid",
        qvm_system(sampling={"preset": "efmi2025"}),
        "unknown sampling field 'preset'",
    ),
    "system_sampling_string": (
        "qvm_hybrid",
        qvm_system(sampling={"dt": "0.001"}),
        r"dt must be a positive number",
    ),
    "system_unknown_name": (
        "neural_ode",
        in_metadata({"$system": {"name": "os", "preset": "default", "params": {}}}),
        "unknown problem 'os'",
    ),
    "system_extra_key": (
        "qvm_hybrid",
        qvm_system(module="os"),
        r"unexpected field 'module'",
    ),
    # ---- arrays: float64 / int64 only, shapes checked before allocating ----
    "subarray_dtype": (
        "neural_ode",
        in_metadata(array("(4000000,)<f8", [1], [1])),
        "dtype '\\(4000000,\\)<f8' is not allowed",
    ),
    "object_dtype": ("neural_ode", in_metadata(array("|O", [2], [[1], "x"])), "dtype '|O'"),
    "void_dtype": ("neural_ode", in_metadata(array("|V8", [1], [0])), "dtype '|V8'"),
    "unicode_dtype": ("neural_ode", in_metadata(array("<U1000000", [1], ["a"])), "dtype '<U"),
    "bytes_dtype": ("neural_ode", in_metadata(array("|S5", [1], ["abc"])), "dtype '|S5'"),
    "complex_dtype": ("neural_ode", in_metadata(array("<c16", [1], [0])), "dtype '<c16'"),
    "datetime_dtype": ("neural_ode", in_metadata(array("<M8[s]", [1], [0])), "dtype '<M8"),
    "bool_dtype": ("neural_ode", in_metadata(array("|b1", [1], [True])), "dtype '|b1'"),
    "float32_dtype": ("neural_ode", in_metadata(array("<f4", [1], [0.5])), "dtype '<f4'"),
    "big_endian_dtype": ("neural_ode", in_metadata(array(">f8", [1], [0.5])), "dtype '>f8'"),
    "dtype_not_string": (
        "neural_ode",
        in_metadata(array({"names": ["a"], "formats": ["O"]}, [1], [0])),
        "dtype",
    ),
    "negative_shape": ("neural_ode", in_metadata(array("<f8", [-1], [1.0, 2.0])), "shape"),
    "shape_data_mismatch": (
        "neural_ode",
        in_metadata(array("<f8", [2, 3], [1.0] * 5)),
        r"shape \[2, 3\] needs 6 values, got 5",
    ),
    "huge_shape": (
        "neural_ode",
        in_metadata(array("<f8", [2**32, 2**32], [])),
        "too many elements",
    ),
    "shape_not_list": ("neural_ode", in_metadata(array("<f8", "3", [1.0] * 3)), "shape"),
    "shape_float": ("neural_ode", in_metadata(array("<f8", [1.5], [1.0])), "shape"),
    "many_dimensions": ("neural_ode", in_metadata(array("<f8", [1] * 40, [1.0])), "dimensions"),
    "strings_as_floats": (
        "neural_ode",
        in_metadata(array("<f8", [1], ["1.5"])),
        "must be numbers",
    ),
    "booleans_as_floats": ("neural_ode", in_metadata(array("<f8", [1], [True])), "numbers"),
    "nested_data": (
        "neural_ode",
        in_metadata(array("<f8", [2, 2], [[1.0, 2.0], [3.0, 4.0], 5.0, 6.0])),
        "numbers",
    ),
    "int64_overflow": ("neural_ode", in_metadata(array("<i8", [1], [2**70])), "int64"),
    "float_in_int_array": ("neural_ode", in_metadata(array("<i8", [1], [0.5])), "integers"),
    # ---- block specs are bounded before the block is built ----
    "wide_input_in_readable_blocks": (
        "neural_ode",
        wide_mlp("blocks", [2_000_000, 1]),
        r"input_shift must list",
    ),
    "wide_input_in_recipe": (
        "neural_ode",
        wide_mlp("recipe", [2_000_000, 1]),
        r"input_shift must list",
    ),
    "wide_output_broadcast_scale": (
        "neural_ode",
        wide_mlp(
            "recipe", [2, 2_000_000], input_shift=[0, 0], input_scale=[1, 1], output_scale=[2.0]
        ),
        r"output_scale must list 2000000",
    ),
    "wide_output_in_metadata": (
        "neural_ode",
        in_metadata(
            {
                "$block": "MLP",
                "fields": {
                    "sizes": [1, 2_000_000],
                    "input_shift": [0.0],
                    "input_scale": [1.0],
                    "output_scale": [2.0],
                },
            }
        ),
        r"output_scale must list 2000000",
    ),
    "hidden_layer_beyond_p": (
        "neural_ode",
        wide_mlp("recipe", [2, 10**9, 1], input_shift=[0, 0], input_scale=[1, 1], output_scale=[1]),
        r"4000000001 weights.*\(102\)",
    ),
    "rational_degree": (
        "neural_ode",
        in_metadata({"$block": "RationalChebyshev", "fields": {"num_degree": 10**12}}),
        "weights",
    ),
    "layer_size_bool": (
        "neural_ode",
        wide_mlp("recipe", [True, 1], input_shift=[0], input_scale=[1], output_scale=[1]),
        "sizes",
    ),
    "block_extra_key": (
        "neural_ode",
        lambda d: d["model"]["recipe"]["kwargs"]["blocks"]["f0"].update(extra=1),
        "unexpected field 'extra'",
    ),
    "block_unknown_field": (
        "neural_ode",
        lambda d: mlp_fields(d, "recipe").update(__class__="x"),
        "unknown field '__class__'",
    ),
    "parameter_fit_string": (
        "neural_ode",
        in_metadata({"$parameter": {"value": 1.0, "fit": "yes", "lb": 0.0, "ub": 2.0}}),
        r"fit.*must be bool",
    ),
    # ---- tags: only the library's own ----
    "unknown_tag": ("neural_ode", in_metadata({"$eval": "1"}), r"unknown tag '\$eval'"),
    "float_tag_text": ("neural_ode", in_metadata({"$float": "1e999"}), "invalid non-finite"),
    # ---- nesting depth ----
    "deep_nesting_beyond_json_limit": (
        "neural_ode",
        in_metadata(None),  # replaced by raw text below
        "nested too deeply",
    ),
    "deep_nesting_in_metadata": ("neural_ode", in_metadata(nested(200)), "nested too deeply"),
    "deep_nesting_in_recipe": (
        "neural_ode",
        recipe_kwargs(state_names=nested(200)),
        "nested too deeply",
    ),
    # ---- numbers ----
    "nan_token_in_p": (
        "neural_ode",
        lambda d: d["p"].__setitem__(0, float("nan")),
        "NaN",
    ),
    "infinity_token_in_metadata": ("neural_ode", in_metadata(float("inf")), "Infinity"),
    "p_non_finite_tag": (
        "neural_ode",
        lambda d: d["p"].__setitem__(0, {"$float": "nan"}),
        "p must be an array of real numbers",
    ),
    "huge_integer": ("neural_ode", in_metadata(None), "not JSON"),
    # ---- what a reader and the library could see differently ----
    "duplicate_key": ("neural_ode", lambda d: None, "duplicate key 'format_version'"),
    "no_checksum": ("neural_ode", lambda d: d.pop("p_sha256"), "missing field p_sha256"),
    "state_name_newline": ("neural_ode", state_name("x\ny"), r"state_names\[0\].*U\+000A"),
    "state_name_nul": ("neural_ode", state_name("x\x00"), r"state_names\[0\].*U\+0000"),
    "state_name_bidi_override": (
        "neural_ode",
        state_name("\u202eevil"),
        r"state_names\[0\].*bidirectional.*U\+202E",
    ),
    "state_name_megabyte": (
        "neural_ode",
        state_name("x" * 2**20),
        r"state_names\[0\] must have at most 256 characters, got 1048576",
    ),
}

RAW_TEXT = {
    # json.dumps cannot write these; the document text is spliced in after dumping
    "deep_nesting_beyond_json_limit": "[" * 100_000 + "]" * 100_000,
    "huge_integer": "1" * 5000,
}
SPLICED = {
    # nor these: (text of the dumped document, what replaces it)
    "duplicate_key": ('"format_version": 1', '"format_version": 1, "format_version": 1'),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_crafted_file_is_refused(name: str, sandbox: Sandbox) -> None:
    base, mutate, message = CASES[name]
    doc = copy.deepcopy(legacy(base))
    mutate(doc)
    content: dict[str, Any] | bytes = doc
    if name in RAW_TEXT:
        content = json.dumps(doc).replace('"crafted": null', f'"crafted": {RAW_TEXT[name]}')
        content = content.encode()
    if name in SPLICED:
        text, spliced = SPLICED[name]
        assert text in json.dumps(doc)
        content = json.dumps(doc).replace(text, spliced, 1).encode()
    sandbox.refuse(content, message)


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_special_file_is_refused_before_it_is_opened(kind: str, sandbox: Sandbox) -> None:
    """A FIFO with no writer would block a plain open() forever: the load must neither block
    nor read."""
    import os
    import threading

    path = sandbox.root / "model.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    outcome: dict[str, BaseException] = {}

    def load() -> None:
        try:
            load_model(path)
        except BaseException as exc:
            outcome["error"] = exc

    loader = threading.Thread(target=load, daemon=True)
    loader.start()
    loader.join(10)
    if loader.is_alive():  # unblock the reader before failing
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("load_model blocked on the special file")
    error = outcome["error"]
    assert isinstance(error, ValueError)
    what = "a FIFO (named pipe)" if kind == "fifo" else "a directory"
    assert str(error) == f"{str(path)!r} is {what}, not a model file (a regular file)"


def test_oversized_file_is_refused_before_reading(sandbox: Sandbox) -> None:
    path = sandbox.root / "big.json"
    with path.open("wb") as fh:  # sparse: 65 MiB of zero bytes on disk costs nothing
        fh.truncate(65 * 2**20)
    before = snapshot(sandbox.root)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"68157440 bytes.*max_bytes = 67108864"):
            load_model(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_LIMIT
    assert snapshot(sandbox.root) == before


def test_max_bytes_lowers_the_cap(sandbox: Sandbox) -> None:
    doc = legacy("neural_ode")
    size = len(json.dumps(doc).encode())
    sandbox.refuse(doc, f"{size} bytes.*max_bytes = 1000", max_bytes=1000)


def test_legitimate_file_passes_the_same_checks(sandbox: Sandbox) -> None:
    """The checks above are not vacuous: the untouched file loads, within the same limits."""
    path = sandbox.root / "model.json"
    path.write_text(json.dumps(legacy("qvm_hybrid")))
    before_modules = set(sys.modules)
    tracemalloc.start()
    try:
        loaded = load_model(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert loaded.model.n_params == 92
    assert set(sys.modules) == before_modules
    assert peak < MEMORY_LIMIT
