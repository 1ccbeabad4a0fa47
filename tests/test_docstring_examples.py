"""Every ``Examples:`` section of the public docstrings runs as written.

The API reference (docs/reference/*.md) renders the docstrings with mkdocstrings; a Google-style
``Examples:`` section holds prose and fenced ```python blocks, and griffe (mkdocstrings' parser)
reads it as an examples section. Each block runs here in a fresh namespace, from the repository
root (an example may read a vendored file by its path relative to the root), as a test named
after the object it documents. The public names are those of ``collocnode.__all__`` and of the
public modules below, with the methods and properties of their classes. Every main entry of the
reference has an example, and an example imports from public modules only.
"""

from __future__ import annotations

import importlib
import inspect
import re
import textwrap
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.test_docs_imports import imports, is_public

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("collocnode", "collocnode.nn", "collocnode.serialize", "collocnode.petab")
# the entries users meet first: each shows itself in use
MAIN = (
    "collocnode.solve",
    "collocnode.RadauIIA",
    "collocnode.TrainingProblem",
    "collocnode.Trajectory",
    "collocnode.NeuralODE",
    "collocnode.HybridModel",
    "collocnode.DynamicOptimizationProblem",
    "collocnode.UntilConsistent",
    "collocnode.WarmStarted",
    "collocnode.Multistart",
    "collocnode.TimeLimit",
    "collocnode.Auto",
    "collocnode.TrainingSolution",
    "collocnode.simulate",
    "collocnode.control_problem",
    "collocnode.nn.MLP",
    "collocnode.serialize.save_model",
    "collocnode.serialize.load_model",
    "collocnode.petab.import_petab",
)
# modules an example needs beyond the core install, by the name it documents
NEEDS = {"collocnode.petab.import_petab": ("petab", "libsbml")}
SECONDS = 20  # one example, on 2 cores shared with other work; most take a few
HEADER = re.compile(r"^Examples:\s*$")
FENCE = re.compile(r"^```+\s*(?P<lang>[\w+-]*)\s*$")


@dataclass(frozen=True)
class Example:
    name: str  # the documented object's public dotted name
    index: int  # which block of its Examples section
    code: str

    @property
    def id(self) -> str:
        return self.name if self.index == 0 else f"{self.name}[{self.index}]"


def _docstring(obj: object) -> str:
    """The object's own docstring (not one inherited through ``inspect.getdoc``), cleaned."""
    if isinstance(obj, (classmethod, staticmethod)):
        obj = obj.__func__
    doc = getattr(obj, "__doc__", None)
    return inspect.cleandoc(doc) if isinstance(doc, str) else ""


def public_objects() -> dict[str, object]:
    """Public dotted name -> object: the names of each module's ``__all__`` and the methods and
    properties the public classes define; an object reached twice keeps its first name."""
    out: dict[str, object] = {}
    seen: set[int] = set()

    def add(name: str, obj: object) -> None:
        if id(obj) not in seen:
            seen.add(id(obj))
            out[name] = obj

    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
                continue
            add(f"{module_name}.{attr}", obj)
            if inspect.isclass(obj):
                for member, value in vars(obj).items():
                    if not member.startswith("_") or member == "__call__":
                        add(f"{module_name}.{attr}.{member}", value)
    return out


def examples_of(doc: str) -> list[str]:
    """The python blocks of the ``Examples:`` section of a cleaned docstring."""
    lines = doc.splitlines()
    start = next((k for k, line in enumerate(lines) if HEADER.match(line)), None)
    if start is None:
        return []
    body = []
    for line in lines[start + 1 :]:
        if line.strip() and not line.startswith((" ", "\t")):
            break  # the next section
        body.append(line)
    lines = textwrap.dedent("\n".join(body)).splitlines()
    blocks, k = [], 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        end = next(j for j in range(k + 1, len(lines)) if FENCE.match(lines[j]))
        if m["lang"] in ("python", "py"):
            blocks.append("\n".join(lines[k + 1 : end]) + "\n")
        k = end + 1
    return blocks


PUBLIC = public_objects()
DOCS = {name: _docstring(obj) for name, obj in PUBLIC.items()}
EXAMPLES = [
    Example(name, k, code) for name, doc in DOCS.items() for k, code in enumerate(examples_of(doc))
]


def test_the_collection_reads_the_public_surface():
    assert "collocnode.solve" in PUBLIC and "collocnode.TrainingSolution.summary" in PUBLIC
    assert len(EXAMPLES) >= len(MAIN)


def test_every_main_entry_has_an_example():
    with_examples = {e.name for e in EXAMPLES}
    missing = [name for name in MAIN if name not in with_examples]
    assert not missing, f"main entries without an Examples section: {missing}"


def test_the_sections_parse_as_examples_in_the_reference():
    """griffe, as mkdocstrings runs it (Google style), reads each section as an examples
    section whose text holds the fenced code, so the reference renders it as code."""
    griffe = pytest.importorskip("griffe")
    wrong = []
    for name in sorted({e.name for e in EXAMPLES}):
        sections = griffe.Docstring(DOCS[name]).parse("google")
        kinds = [s for s in sections if s.kind is griffe.DocstringSectionKind.examples]
        text = "\n".join(part for s in kinds for _, part in s.value)
        if len(kinds) != 1 or "```python" not in text:
            wrong.append(name)
    assert not wrong, f"not parsed as one examples section with a python block: {wrong}"


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_an_example_imports_public_modules_only(example):
    for module, _ in imports(example.code):
        assert is_public(module), f"{example.id} imports from the private module {module}"


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_every_example_runs(example, monkeypatch):
    for module in NEEDS.get(example.name, ()):
        pytest.importorskip(module)
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "__example__"}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        try:
            exec(compile(example.code, f"<{example.id} example>", "exec"), namespace)
        except Exception as exc:
            tb = "".join(traceback.format_exception(exc))
            pytest.fail(f"the example of {example.id} fails as written:\n{tb}", pytrace=False)
    seconds = time.perf_counter() - start
    assert seconds < SECONDS, f"the example of {example.id} took {seconds:.0f} s: make it smaller"
