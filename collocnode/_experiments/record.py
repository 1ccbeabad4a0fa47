"""What an experiment has produced so far, so that an interrupted or failing run keeps it.

An experiment writes into a `RunRecord`: the phase it is in, the result fields it has, the
trained model as soon as there is one. The command line writes the record's ``result.json`` again
when the run stops early, with the status and the phase it stopped in; every file carries the
record's ``run_id``. Units of work that a resumed run reuses (a study's seeds) go to
`RunRecord.units`, which the command line points at the run folder itself: they are
durable the moment they are written, while the rest of the output is staged.
"""

from __future__ import annotations

import time
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..serialize import save_model
from ..tools import _progress as progress
from ..tools._io import save_figure, write_json
from ..training import TrainingSolution
from ..training._uncertainty import Uncertainty, UncertaintyWarning


def new_run_id() -> str:
    """A short random identifier that names one run in every file it writes."""
    return uuid.uuid4().hex[:12]


@dataclass
class RunRecord:
    """The output directory of one run and what the run has produced so far.

    Attributes:
        out_dir: where the run's files go.
        run_id: written into every file of the run.
        phase: what the run is doing now ("data", "training", "evaluation", "plots", "done").
        result: the fields of ``result.json`` so far.
        units_dir: where finished units of work go (None: ``out_dir``).
        phase_seconds: wall time [s] spent in each phase so far, the current one up to its
            last change ("setup": from the record's creation to the first phase).
    """

    out_dir: Path
    run_id: str = field(default_factory=new_run_id)
    phase: str = "setup"
    result: dict[str, Any] = field(default_factory=dict)
    units_dir: Path | None = None
    phase_seconds: dict[str, float] = field(default_factory=dict)
    _entered: float = field(default_factory=time.perf_counter, repr=False)

    def enter(self, phase: str) -> None:
        """Enter ``phase`` and tell the run's watcher (`collocnode.tools._progress`), but
        for "training", whose own phases (build, compile, solve, check) the solve tells."""
        self.close_phase()
        self.phase = phase
        if phase != "training":
            progress.phase(phase)

    def close_phase(self) -> dict[str, float]:
        """Add the time since the current phase began to `phase_seconds` (a phase entered
        twice adds up) and start counting anew; the seconds per phase so far."""
        now = time.perf_counter()
        self.phase_seconds[self.phase] = self.phase_seconds.get(self.phase, 0.0) + (
            now - self._entered
        )
        self._entered = now
        return dict(self.phase_seconds)

    def units(self, name: str) -> Path:
        """The folder of the units of work ``name`` (e.g. "seeds"): stored as each finishes,
        reused by a resumed run."""
        return (self.units_dir if self.units_dir is not None else self.out_dir) / name

    def update(self, **fields: Any) -> None:
        self.result.update(fields)

    def write(self, **extra: Any) -> Path:
        """Write ``result.json``: the fields so far, ``extra`` and the run id."""
        return write_json(
            self.out_dir / "result.json", {**self.result, **extra, "run_id": self.run_id}
        )

    def warn(self, text: str) -> None:
        """Add a line to the result's ``warnings`` (printed with the run's summary)."""
        self.result.setdefault("warnings", []).append(text)

    def against_trivial(
        self, name: str, model_error: float | None, baselines: dict[str, float]
    ) -> None:
        """Record the errors ``baselines`` of trivial predictors on the window the model's
        ``name`` error covers (``<name>_baselines``), and warn when the model does no better
        than the best of them: a converged, consistent model can still be useless past the
        data."""
        self.update(**{f"{name}_baselines": baselines})
        best = min(baselines, key=lambda k: baselines[k])
        if model_error is None or not model_error < baselines[best]:
            shown = (
                "unknown (the re-simulation failed)"
                if model_error is None
                else f"{model_error:.4g}"
            )
            self.warn(
                f"the model's {name} {shown} is no better than predicting the training data's "
                f"{best} value ({baselines[best]:.4g})"
            )

    def trained(self, sol: TrainingSolution, **fields: Any) -> None:
        """Record a training solution: its solver figures, its consistency check (when it ran)
        and ``fields``."""
        self.update(**sol.solution.to_dict(), n_params=sol.model.n_params, **fields)
        if sol.consistency is not None:
            self.update(consistency=sol.consistency.to_dict())

    def save_trained(self, sol: TrainingSolution, uncertainty: Uncertainty | None = None) -> None:
        """Write ``model.json`` (with the model's ``uncertainty`` when given) and a first
        ``result.json`` (``"evaluation": "pending"``) as soon as training ends, so an
        interrupted or failing evaluation never loses the trained model."""
        save_model(
            self.out_dir / "model.json",
            sol,
            metadata={
                "problem": self.result.get("problem"),
                "settings": self.result.get("settings"),
                "run_id": self.run_id,
            },
            uncertainty=uncertainty,
        )
        self.write(evaluation="pending")

    def uncertainty(self, sol: TrainingSolution) -> Uncertainty | None:
        """The trained model's uncertainty (``sol.uncertainty()``, the noise estimated from the
        residuals), recorded under ``"uncertainty"`` with the warnings it gave (they are shown
        too); None, with the reason recorded, when it cannot be computed (e.g. residuals that
        cannot estimate the noise). The model file is written again with it."""
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UncertaintyWarning)
                unc = sol.uncertainty()
        except ValueError as exc:
            self.update(uncertainty={"error": str(exc)})
            return None
        messages = []
        for w in caught:
            if issubclass(w.category, UncertaintyWarning):
                messages.append(str(w.message))
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        self.update(uncertainty={**unc.to_dict(), "warnings": messages})
        self.save_trained(sol, unc)
        return unc

    def regularization_path(self, path: Any) -> None:
        """Record the regularization path that chose λ (a
        [`RegularizationPathRecord`][collocnode.strategies.RegularizationPathRecord]):
        ``regularization_path`` in ``result.json`` (its points, the chosen λ and the table), its
        time in ``wall_time_s`` (``regularization_path``, added to ``total`` unless there already),
        a warning where no point was verified, and ``regularization_path.png``."""
        self.update(regularization_path={**path.to_dict(), "table": path.table()})
        wall = self.result.get("wall_time_s")
        if isinstance(wall, dict) and "regularization_path" not in wall:
            wall["regularization_path"] = path.times["path"]
            wall["total"] = wall.get("total", 0.0) + path.times["path"]
        if not path.verified:
            self.warn(
                f"no λ of the regularization path both converged and gave a consistent model; "
                f"λ = {path.chosen:g} (the least held-out error) was kept"
            )
        self.figure(path.figure(), "regularization_path.png")

    def figure(self, fig: Any, name: str) -> Path:
        """Save a matplotlib figure as ``name`` with the run id in its metadata."""
        return save_figure(fig, self.out_dir / name, metadata={"run_id": self.run_id})
