"""Import paths of the previous release, kept working for one release with a DeprecationWarning.

The modules of 0.2 that moved into the folders of the layers (``collocnode.admm`` ->
``collocnode.strategies.admm``, ``collocnode.io`` -> ``collocnode.tools.io``, ...) are served by
a meta-path finder: ``import collocnode.admm`` (or ``from collocnode.consistency import
UntilConsistent``) gives a module that looks each name up in the new homes, in order, and warns
once. Names that moved out of a package that still exists (``collocnode.transcription.
AdaptiveRefinement``) are served by that package's ``__getattr__`` through `moved_name`.

This module imports nothing of collocnode: the new homes are named as strings and imported
only when an old path is used.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any

#: old module -> its new homes, searched in order for each name
MOVED_MODULES: dict[str, tuple[str, ...]] = {
    "collocnode.admm": (
        "collocnode.strategies.admm",
        "collocnode.strategies.admm.consensus",
        "collocnode.strategies.admm.blocks",
        "collocnode.strategies.admm.split",
        "collocnode.strategies.admm.rounds",
    ),
    "collocnode.callbacks": ("collocnode.training.callbacks",),
    "collocnode.consistency": (
        "collocnode.training.consistency",
        "collocnode.strategies.until_consistent",
    ),
    "collocnode.control": ("collocnode.models.control",),
    "collocnode.simulate": ("collocnode.models.simulate",),
    "collocnode.warmstart": ("collocnode.training.warmstart",),
    "collocnode.derivatives": ("collocnode.tools.derivatives",),
    "collocnode.fixed_step": ("collocnode.tools.fixed_step",),
    "collocnode.io": ("collocnode.tools.io",),
    "collocnode.ivp": ("collocnode.tools.ivp",),
    "collocnode.machine": ("collocnode.tools.machine",),
    "collocnode.options": ("collocnode.tools.options",),
    "collocnode.plotting": ("collocnode.tools.plotting",),
    "collocnode.tasks": ("collocnode.tools.tasks",),
    "collocnode.threads": ("collocnode.tools.threads",),
    "collocnode.transcription.adaptive": (
        "collocnode.strategies.adaptive",
        "collocnode.transcription.refine",
    ),
    "collocnode.transcription.algorithm": ("collocnode.transcription.collocation",),
    "collocnode.transcription.driver": ("collocnode.transcription.collocation",),
    "collocnode.transcription.assembly": ("collocnode.transcription.nlp.assembly",),
    "collocnode.transcription.node_functions": ("collocnode.transcription.nlp.node_functions",),
    "collocnode.transcription.jit": ("collocnode.transcription.nlp.jit",),
    "collocnode.transcription.hessian": ("collocnode.transcription.nlp.hessian",),
    "collocnode.transcription.quasi_newton": ("collocnode.transcription.nlp.quasi_newton",),
    "collocnode.transcription.naive": ("collocnode.transcription.nlp.naive",),
    "collocnode.transcription.ipopt_options": ("collocnode.transcription.ipopt.options",),
    "collocnode.transcription.iteration": ("collocnode.transcription.ipopt.iteration",),
    "collocnode.cli.main": (
        "collocnode.cli",
        "collocnode.cli.parsing",
        "collocnode.cli.output",
        "collocnode.cli.exits",
        "collocnode.cli.signals",
        "collocnode.cli.summary",
        "collocnode.cli.train_command",
        "collocnode.cli.compare_command",
    ),
    # the comparison, split into its methods and its run
    "collocnode.compare.base": ("collocnode.compare.methods.base",),
    "collocnode.compare.options": ("collocnode.compare.methods.options",),
    "collocnode.compare.device": ("collocnode.compare.methods.device",),
    "collocnode.compare.gradient": ("collocnode.compare.methods.gradient",),
    "collocnode.compare.field": ("collocnode.compare.methods.field",),
    "collocnode.compare.inputs": ("collocnode.compare.methods.inputs",),
    "collocnode.compare.labels": ("collocnode.compare.methods.labels",),
    "collocnode.compare.fnode": ("collocnode.compare.methods.fnode",),
    "collocnode.compare.mbdnode": ("collocnode.compare.methods.mbdnode",),
    "collocnode.compare.node": ("collocnode.compare.methods.node",),
    "collocnode.compare.snde": ("collocnode.compare.methods.snde",),
    "collocnode.compare.mnn": ("collocnode.compare.methods.mnn",),
    "collocnode.compare.mnn_solver": ("collocnode.compare.methods.mnn_solver",),
    "collocnode.compare.baselines": ("collocnode.compare.methods.baselines",),
    "collocnode.compare.energy": ("collocnode.compare.methods.energy",),
    "collocnode.compare.hnn": ("collocnode.compare.methods.hnn",),
    "collocnode.compare.lnn": ("collocnode.compare.methods.lnn",),
    "collocnode.compare.collocation": ("collocnode.compare.methods.collocation",),
    "collocnode.compare.qvm_collocation": (
        "collocnode.compare.methods.collocation",
        "collocnode.compare.methods.readouts",
    ),
    "collocnode.compare.registry": ("collocnode.compare.methods.registry",),
    "collocnode.compare.config": ("collocnode.compare.run.config",),
    "collocnode.compare.scenarios": ("collocnode.compare.run.scenarios",),
    "collocnode.compare.qvm": ("collocnode.compare.run.qvm",),
    "collocnode.compare.results": ("collocnode.compare.run.results",),
    "collocnode.compare.report": ("collocnode.compare.run.report",),
    "collocnode.compare.metrics": ("collocnode.compare.run.metrics",),
    "collocnode.compare.harness": (
        "collocnode.compare.run.harness",
        "collocnode.compare.run.one_method",
        "collocnode.compare.run.tasks",
        "collocnode.compare.run.config",
        "collocnode.compare.run.results",
        "collocnode.compare.run.report",
        "collocnode.compare.run.scenarios",
    ),
}


def _warn(old: str, new: str, stacklevel: int) -> None:
    warnings.warn(
        f"{old} moved to {new}; the old path goes in the next release",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


class _MovedModule(types.ModuleType):
    """An old module path: each name is looked up in the new homes (imported on first use)."""

    def __init__(self, name: str, homes: tuple[str, ...]) -> None:
        super().__init__(name, f"Moved: see {', '.join(homes)}.")
        self.__homes = homes

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        for home in self.__homes:
            module = importlib.import_module(home)
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(
            f"module {self.__name__!r} (moved to {self.__homes[0]}) has no {attr!r}"
        )

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for home in self.__homes:
            names.update(dir(importlib.import_module(home)))
        return sorted(names)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # ``collocnode.simulate`` is also the function of that name: importing the old module
        # rebinds the package attribute to this module, which then still calls the function
        return getattr(self, self.__name__.rsplit(".", 1)[1])(*args, **kwargs)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in MOVED_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: Any) -> types.ModuleType:
        homes = MOVED_MODULES[spec.name]
        _warn(spec.name, homes[0], stacklevel=6)
        return _MovedModule(spec.name, homes)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


_FINDER = _Finder()


def install() -> None:
    """Serve the old module paths (once per interpreter)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)


def moved_name(package: str, name: str, moved: dict[str, str]) -> Any:
    """For a package's ``__getattr__``: the attribute ``name`` that moved to the module
    ``moved[name]``, with a DeprecationWarning; AttributeError for any other name."""
    home = moved.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    _warn(f"{package}.{name}", f"{home}.{name}", stacklevel=3)
    return getattr(importlib.import_module(home), name)
