"""The settings of one comparison run and the method list of the command line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ... import _validation as v
from ..methods.device import check_device_name
from ..methods.registry import available
from .scenarios import Scenario, ScenarioData, scenario_for


@dataclass(frozen=True)
class CompareConfig:
    """One comparison run.

    Attributes:
        problem: registered system name; ``preset`` one of its presets (None: the default).
        methods: registered method names, run in this order.
        quick: smoke-test settings (few epochs, small nets, at most 200 training and 100
            extrapolation samples) so the whole run takes about a minute on two CPU cores.
        epochs: override every method's epochs.
        budget_s: wall-time budget per method [s].
        device, seed: passed to every trainer.
        noise: std of Gaussian noise on the training and test states (None: the problem's
            default, no noise for most; for the quarter vehicle a fraction of each signal's σ,
            by default its preset's 2 %).
        eval_every_s: if set, evaluate the test error during training at most this often and
            store the ``curve`` of (train time, test error) per method (default when
            collocation runs beside other methods, as ``time_to_target_s`` needs the curves:
            1 s, or the scenario's cadence, e.g. 5 s / 60 s for a quick / full QVM run).
        eval_at_s: training times [s] at which to evaluate the test error as well (each at
            the first epoch or iteration that ends at or after it; e.g. 1× and 20× another
            method's training time); a curve is stored when this or ``eval_every_s`` is set.
        threads: torch CPU threads (None: torch's default; a scenario may set it, e.g. 1 for
            a quick QVM run).
        options: extra option overrides per method name.
        command: the command line that started the run, recorded in ``compare.json``'s meta
            (None when the library is called directly).
    """

    problem: str
    methods: tuple[str, ...]
    preset: str | None = None
    quick: bool = False
    epochs: int | None = None
    budget_s: float | None = None
    device: str = "auto"
    seed: int = 0
    noise: float | None = None
    eval_every_s: float | None = None
    eval_at_s: tuple[float, ...] = ()
    threads: int | None = None
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    command: str | None = None

    def __post_init__(self) -> None:
        from ... import problems

        v.choice("problem", self.problem, problems.available())
        if self.preset is not None:
            v.choice(f"preset of {self.problem}", self.preset, problems.presets(self.problem))
        methods = (self.methods,) if isinstance(self.methods, str) else tuple(self.methods)
        if not methods:
            raise ValueError("methods must name at least one method")
        for m in methods:
            v.choice("method", m, available())
        object.__setattr__(self, "methods", methods)
        if self.epochs is not None:
            v.positive_int("epochs", self.epochs)
        if self.budget_s is not None:
            v.positive_float("budget_s", self.budget_s)
        check_device_name(self.device)
        v.nonnegative_int("seed", self.seed)
        if self.noise is not None:
            v.nonnegative_float("noise", self.noise)
        at = (self.eval_at_s,) if isinstance(self.eval_at_s, (int, float)) else self.eval_at_s
        at = tuple(v.positive_float("eval_at_s", t) for t in at)
        object.__setattr__(self, "eval_at_s", tuple(sorted(at)))
        if self.eval_every_s is not None:
            v.positive_float("eval_every_s", self.eval_every_s)
        elif not at and "collocation" in methods and len(methods) > 1:
            # the time-to-target column needs every other method's error-vs-time curve
            every = scenario_for(self.problem).curve_every(self.quick)
            object.__setattr__(self, "eval_every_s", every)
        if self.threads is not None:
            v.positive_int("threads", self.threads)

    @property
    def scenario(self) -> Scenario:
        """The problem's scenario: where its data come from and how a model is scored."""
        return scenario_for(self.problem)

    def load(self) -> ScenarioData:
        """The scenario's system, data and evaluation for these settings (shrunk when
        ``quick``): the same for every method, as they depend on these settings only."""
        return self.scenario.load(self.problem, self.preset, self.quick, self.seed, self.noise)

    @property
    def records_curve(self) -> bool:
        """Whether the test error is evaluated during training (a cadence or set times)."""
        return self.eval_every_s is not None or bool(self.eval_at_s)

    def method_options(self, name: str) -> dict[str, Any]:
        """The option overrides of method ``name``: device, seed and epochs of the run, then
        ``options[name]``."""
        overrides: dict[str, Any] = {"device": self.device, "seed": self.seed}
        if self.epochs is not None:
            overrides["epochs"] = self.epochs
        overrides.update(self.options.get(name, {}))
        return overrides


def default_methods(problem: str) -> tuple[str, ...]:
    """The methods a comparison of ``problem`` runs unless told otherwise."""
    return tuple(scenario_for(problem).methods)


def parse_methods(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"fnode,mbdnode"`` -> ("fnode", "mbdnode"), each checked against the registry."""
    names = [s.strip() for s in text.split(",")] if isinstance(text, str) else list(text)
    names = [n for n in names if n]
    if not names:
        raise ValueError("methods must name at least one method")
    for n in names:
        v.choice("method", n, available())
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"methods names {', '.join(map(repr, twice))} more than once")
    return tuple(names)
