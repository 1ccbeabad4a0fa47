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
        "collocnode.strategies._admm",
        "collocnode.strategies._admm.consensus",
        "collocnode.strategies._admm.blocks",
        "collocnode.strategies._admm.split",
        "collocnode.strategies._admm.rounds",
    ),
    "collocnode.callbacks": ("collocnode.training._callbacks",),
    "collocnode.consistency": (
        "collocnode.training._consistency",
        "collocnode.strategies._until_consistent",
    ),
    "collocnode.control": ("collocnode.models._control",),
    "collocnode.simulate": ("collocnode.models._simulate",),
    "collocnode.warmstart": ("collocnode.training._warmstart",),
    "collocnode.derivatives": ("collocnode.tools._derivatives",),
    "collocnode.fixed_step": ("collocnode.tools._fixed_step",),
    "collocnode.compare.integrators": ("collocnode.tools._fixed_step",),
    "collocnode.io": ("collocnode.tools._io",),
    "collocnode.ivp": ("collocnode.tools._ivp",),
    "collocnode.machine": ("collocnode.tools._machine",),
    "collocnode.options": ("collocnode.tools._options",),
    "collocnode.plotting": ("collocnode.tools._plotting",),
    "collocnode.tasks": ("collocnode.tools.tasks",),
    "collocnode.threads": ("collocnode.tools._threads",),
    "collocnode.transcription.adaptive": (
        "collocnode.strategies._adaptive",
        "collocnode.transcription._refine",
    ),
    "collocnode.transcription.algorithm": ("collocnode.transcription._collocation",),
    "collocnode.transcription.driver": ("collocnode.transcription._collocation",),
    "collocnode.transcription.assembly": ("collocnode.transcription._nlp.assembly",),
    "collocnode.transcription.node_functions": ("collocnode.transcription._nlp.node_functions",),
    "collocnode.transcription.jit": ("collocnode.transcription._nlp.jit",),
    "collocnode.transcription.hessian": ("collocnode.transcription._nlp.hessian",),
    "collocnode.transcription.quasi_newton": ("collocnode.transcription._nlp.quasi_newton",),
    "collocnode.transcription.naive": ("collocnode.transcription._nlp.naive",),
    "collocnode.transcription.ipopt_options": ("collocnode.transcription._ipopt.options",),
    "collocnode.transcription.iteration": ("collocnode.transcription._ipopt.iteration",),
    "collocnode.cli.main": (
        "collocnode._cli",
        "collocnode._cli.parsing",
        "collocnode._cli.output",
        "collocnode._cli.exits",
        "collocnode._cli.signals",
        "collocnode._cli.summary",
        "collocnode._cli.train_command",
        "collocnode._cli.compare_command",
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
    "collocnode.compare.config": ("collocnode.compare._run.config",),
    "collocnode.compare.scenarios": ("collocnode.compare._run.scenarios",),
    "collocnode.compare.qvm": ("collocnode.compare._run.qvm",),
    "collocnode.compare.results": ("collocnode.compare._run.results",),
    "collocnode.compare.report": ("collocnode.compare._run.report",),
    "collocnode.compare.metrics": ("collocnode.compare._run.metrics",),
    "collocnode.compare.harness": (
        "collocnode.compare._run.harness",
        "collocnode.compare._run.one_method",
        "collocnode.compare._run.tasks",
        "collocnode.compare._run.config",
        "collocnode.compare._run.results",
        "collocnode.compare._run.report",
        "collocnode.compare._run.scenarios",
    ),
    # the modules of the layers' public packages that became private (an underscore, diffrax's
    # rule; docs/architecture.md lists the public ones)
    "collocnode.cli": ("collocnode._cli",),
    "collocnode.data": ("collocnode._data",),
    "collocnode.experiments": ("collocnode._experiments",),
    "collocnode.experiments.generic": ("collocnode._experiments.generic",),
    "collocnode.experiments.qvm": ("collocnode._experiments.qvm",),
    "collocnode.experiments.record": ("collocnode._experiments.record",),
    "collocnode.experiments.vdp": ("collocnode._experiments.vdp",),
    "collocnode.nn.activations": ("collocnode.nn._activations",),
    "collocnode.nn.base": ("collocnode.nn._base",),
    "collocnode.nn.mlp": ("collocnode.nn._mlp",),
    "collocnode.nn.rational": ("collocnode.nn._rational",),
    "collocnode.nn.torch": ("collocnode.nn._torch",),
    "collocnode.problems.base": ("collocnode.problems._base",),
    "collocnode.problems.cart_pole": ("collocnode.problems._cart_pole",),
    "collocnode.problems.dcdc": ("collocnode.problems._dcdc",),
    "collocnode.problems.layout": ("collocnode.problems._layout",),
    "collocnode.problems.lorenz": ("collocnode.problems._lorenz",),
    "collocnode.problems.mass_spring": ("collocnode.problems._mass_spring",),
    "collocnode.problems.partition": ("collocnode.problems._partition",),
    "collocnode.problems.pendulum": ("collocnode.problems._pendulum",),
    "collocnode.problems.qvm": ("collocnode.problems._qvm",),
    "collocnode.problems.rigid_body": ("collocnode.problems._rigid_body",),
    "collocnode.problems.road": ("collocnode.problems._road",),
    "collocnode.problems.robot_arm": ("collocnode.problems._robot_arm",),
    "collocnode.problems.slider_crank": ("collocnode.problems._slider_crank",),
    "collocnode.problems.two_body": ("collocnode.problems._two_body",),
    "collocnode.problems.vdp": ("collocnode.problems._vdp",),
    "collocnode.problems.vehicle": ("collocnode.problems._vehicle",),
    "collocnode.serialize.builders": ("collocnode.serialize._builders",),
    "collocnode.serialize.codec": ("collocnode.serialize._codec",),
    "collocnode.serialize.files": ("collocnode.serialize._files",),
    "collocnode.serialize.format": ("collocnode.serialize._format",),
    "collocnode.solve": ("collocnode._solve",),
    "collocnode.status": ("collocnode._status",),
    "collocnode.training.checks": ("collocnode.training._checks",),
    "collocnode.training.constraints": ("collocnode.training._constraints",),
    "collocnode.training.problem": ("collocnode.training._problem",),
    "collocnode.training.samples": ("collocnode.training._samples",),
    "collocnode.training.solution": ("collocnode.training._solution",),
    "collocnode.transcription.collocation": ("collocnode.transcription._collocation",),
    "collocnode.transcription.ipopt": ("collocnode.transcription._ipopt.backends",),
    "collocnode.transcription.mesh": ("collocnode.transcription._mesh",),
    "collocnode.transcription.nlp": (
        "collocnode.transcription._nlp.samples",
        "collocnode.transcription._nlp.quadratic",
        "collocnode.transcription._nlp.node_map",
        "collocnode.transcription._nlp.structured",
    ),
    "collocnode.transcription.problem": ("collocnode.transcription._problem",),
    "collocnode.transcription.radau": ("collocnode.transcription._radau",),
    "collocnode.transcription.refine": ("collocnode.transcription._refine",),
    "collocnode.transcription.solution": ("collocnode.transcription._solution",),
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
        # an old package (``collocnode.cli``) whose old submodules (``collocnode.cli.main``) are
        # served too needs a __path__, so that the import system asks for them
        package = any(other.startswith(fullname + ".") for other in MOVED_MODULES)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=package)

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
