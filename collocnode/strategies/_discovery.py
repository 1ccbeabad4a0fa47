"""Learn, discover, re-fit: a network for the unknown term, its closed form, the closed form
re-fitted by collocation -- as one algorithm that wraps the one training the network.

The universal-differential-equation workflow (Rackauckas et al. 2020, the Lotka-Volterra
"missing physics" example) in three solves' worth of work:

1. ``inner`` trains the model (network blocks and physics) on the problem;
2. [`discover`][collocnode.discover] finds the closed form of a block (or of the
   whole right-hand side) from its inputs and outputs at the collocation nodes;
3. the block is replaced by the closed form, its coefficients become fitted parameters, and
   ``inner`` solves the same training problem again from the network's node states; with
   ``prune``, terms whose share of their output falls below it are dropped and the problem is
   solved once more.

A discovery that fails (a library that does not fit the inputs, a threshold that removes every
term, a singular closed form, a training that failed) gives a
[`DiscoveryWarning`][collocnode.DiscoveryWarning] naming the cause, and the trained network is the
result; an unknown block is refused before any work. A training stopped by an iteration or time
limit or a stopping rule is discovered from.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar

from .. import _validation as v
from .._status import SolverStatus
from ..algorithm import Algorithm, SolveContext, Wrapper, check_inner, final
from ..training._discovery import (
    ClosedForm,
    DiscoveryError,
    DiscoveryWarning,
    SparseRegression,
    discover,
)
from ..training._discovery.closed_form import check_singular_free
from ..transcription._collocation import RadauIIA

#: the ends of a training whose model is worth a discovery: converged, or stopped by a limit or
#: a stopping rule (the model is an iterate the user asked for; its consistency check says how
#: good its ODE is)
DISCOVERABLE = frozenset(
    {
        SolverStatus.SUCCESS,
        SolverStatus.ACCEPTABLE,
        SolverStatus.ITERATION_LIMIT,
        SolverStatus.TIME_LIMIT,
        SolverStatus.STOPPED,
    }
)


@dataclass
class DiscoveredRecord:
    """The result of [`Discovered`][collocnode.Discovered].

    Attributes:
        solution: the last re-fit's result (its model the closed form), or the network's where
            discovery failed.
        network: the inner algorithm's result on the network model.
        found: the closed form as discovered from the network (None where discovery failed).
        refitted: the closed form with the re-fitted coefficients (after pruning), or None.
        refits: the results of the re-fit solves, in order (a second one after pruning).
        times: wall times [s]: ``train`` (the network), ``discover``, ``refit`` (all re-fits).
        error: why there is no closed-form model ("" where there is one).
    """

    wraps: ClassVar[bool] = True

    solution: Any
    network: Any
    found: ClosedForm | None = None
    refitted: ClosedForm | None = None
    refits: list[Any] = field(default_factory=list)
    times: dict[str, float] = field(default_factory=dict)
    error: str = ""

    @property
    def status(self) -> SolverStatus:
        return final(self).status

    @property
    def trained(self) -> Any:
        """The network's trained solution (the end of ``network``'s chain, a
        [`TrainingSolution`][collocnode.TrainingSolution])."""
        return final(self.network)

    @property
    def iterations(self) -> int:
        """IPOPT iterations of the network's training and of every re-fit."""
        return int(final(self.network).iterations) + sum(
            int(final(r).iterations) for r in self.refits
        )

    def describe(self) -> str:
        """What was discovered, in one line."""
        if self.refitted is None:
            return f"Discovered: no closed form ({self.error or 'discovery failed'})"
        return f"Discovered: closed form re-fitted {len(self.refits)} times"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly summary: the closed forms, the times, the consistency before and
        after the re-fit."""

        def consistency(result: Any) -> Any:
            report = getattr(final(result), "consistency", None)
            return None if report is None else report.to_dict()

        return {
            "status": self.status.value,
            "error": self.error,
            "found": None if self.found is None else self.found.to_dict(),
            "refitted": None if self.refitted is None else self.refitted.to_dict(),
            "wall_time_s": dict(self.times),
            "network": {
                "status": final(self.network).status.value,
                "iterations": int(final(self.network).iterations),
                "consistency": consistency(self.network),
            },
            "refits": [
                {
                    "status": final(r).status.value,
                    "iterations": int(final(r).iterations),
                    "consistency": consistency(r),
                }
                for r in self.refits
            ],
        }


@dataclass(frozen=True)
class Discovered(Wrapper):
    """Train the model with ``inner``, discover a block's closed form, re-fit it by collocation.

    Args:
        inner: the algorithm of the network's training and of the re-fits (default
            ``RadauIIA()``).
        block: the block to replace (None: the model's whole right-hand side).
        regression: the discovery's settings ([`SparseRegression`][collocnode.SparseRegression]).
        refit: re-fit the closed form's coefficients by collocation (False: discover only; the
            result's solution is the network's).
        prune: after the re-fit, drop the terms whose share of their output (RMS of the term
            over RMS of the output at the nodes) is below this, and re-fit again (None: no
            pruning pass).
        refit_changes: fields of the training problem that differ in the re-fit, e.g.
            ``{"initial_state": None}``: a closed form with a few coefficients can estimate
            the initial state too, where the network's training pinned it to a noisy first
            sample.
    """

    record_type: ClassVar[type] = DiscoveredRecord
    keeps_model: ClassVar[bool] = False

    problem_kinds: ClassVar[frozenset[str]] = frozenset({"training"})

    inner: Algorithm = field(default_factory=RadauIIA)
    block: str | None = None
    regression: SparseRegression = field(default_factory=SparseRegression)
    refit: bool = True
    prune: float | None = None
    refit_changes: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        check_inner(self, self.inner)
        if self.block is not None and not isinstance(self.block, str):
            raise TypeError(f"block must be a block name or None, got {self.block!r:.60}")
        if not isinstance(self.regression, SparseRegression):
            raise TypeError(f"regression must be a SparseRegression, got {self.regression!r:.80}")
        if not isinstance(self.refit, bool):
            raise TypeError(f"refit must be True or False, got {self.refit!r}")
        if self.prune is not None:
            v.positive_float("prune", self.prune)
        if not isinstance(self.refit_changes, Mapping):
            raise TypeError(
                f"refit_changes must be a mapping of problem fields, got {self.refit_changes!r:.80}"
            )
        changes = dict(self.refit_changes)
        taken = {"model", "params_guess"} & set(changes)
        if taken:
            raise ValueError(
                f"refit_changes may not set {sorted(taken)[0]!r}: the re-fit builds it from the "
                f"closed form"
            )
        object.__setattr__(self, "refit_changes", MappingProxyType(changes))

    def validate(self, problem: Any, context: SolveContext) -> None:
        super().validate(problem, context)
        self.needs_the_model_kept()  # it discovers from the problem's own blocks
        try:  # one error, before any work, for a field the problem does not have or refuses
            replace(problem, **self.refit_changes)
        except TypeError as exc:
            raise ValueError(f"refit_changes: {exc}") from None
        blocks = problem.model.blocks
        if self.block is not None and self.block not in blocks:
            known = ", ".join(repr(b) for b in blocks) or "none"
            raise ValueError(
                f"block {self.block!r} is not a block of the model (its blocks: {known}; None "
                f"for the whole right-hand side)"
            )

    def solve_problem(self, problem: Any, context: SolveContext) -> DiscoveredRecord:
        start = time.perf_counter()
        network = self.inner.solve_problem(problem, context)
        trained = final(network)
        times = {"train": time.perf_counter() - start}
        if context.check is not None and trained.consistency is None:
            trained.consistency = trained.check_consistency(context.check)
        result = DiscoveredRecord(solution=network, network=network, times=times)
        if trained.status == SolverStatus.INTERRUPTED:
            result.error = "interrupted (Ctrl-C) while the network trained"
            return result
        if trained.status not in DISCOVERABLE:
            return _failed(
                result,
                f"the network's training failed with status {trained.status.value!r}; no "
                f"discovery on it",
            )
        start = time.perf_counter()
        try:
            found = discover(trained, self.block, self.regression)
        except DiscoveryError as exc:
            times["discover"] = time.perf_counter() - start
            return _failed(result, str(exc))
        times["discover"] = time.perf_counter() - start
        result.found = found
        if not self.refit:
            return result
        start = time.perf_counter()
        current, earlier = found, None
        while True:
            refit = self.inner.solve_problem(
                current.refit_problem(trained, start=earlier, **self.refit_changes),
                context.but(warm=None),
            )
            result.refits.append(refit)
            solved = final(refit)
            current = current.with_parameters(solved.model, solved.p)
            if self.prune is None or len(result.refits) > 1:
                break
            pruned = current.pruned(self.prune)
            if pruned.n_terms == current.n_terms:
                break
            current, earlier = pruned, solved
        times["refit"] = time.perf_counter() - start
        result.refitted = current
        try:
            check_singular_free(current)
        except DiscoveryError as exc:
            return _failed(result, str(exc))
        result.solution = refit
        return result


def _failed(result: DiscoveredRecord, why: str) -> DiscoveredRecord:
    warnings.warn(f"{why}; the trained network is kept", DiscoveryWarning, stacklevel=4)
    result.error = why
    result.solution = result.network
    return result
