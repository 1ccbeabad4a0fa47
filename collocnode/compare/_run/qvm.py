"""The quarter-vehicle comparison: the QVM experiment's data and its unseen-road test.

The generic comparison scores a state rollout on an extrapolation window of one trajectory. The
quarter vehicle is judged as its paper judges it instead (Langenkamp et al. §4.1; Kamp et al.):

* every method trains on the same samples: the preset's training road (the paper-calibrated
  class D road), the preset's horizon (42 s at 1 kHz; `QVMSettings.quick_duration_s` in a
  quick run) and its noise (σ = 2 % of each signal's σ on all states and outputs; the road
  velocity u = ż_r is a known input, given exactly at the samples);
* each trained model is rolled out from rest (x0 = 0, the data's static equilibrium) on the
  *unseen* class-C road, driven by that road's sampled velocity (linearly interpolated between
  samples, for every method alike), and its body and wheel accelerations a_b, a_w are compared
  with the noise-free truth: the **test-road acceleration RMSE** (``test_road_rmse``); the same
  on the training road is ``train_rmse``.

Where the accelerations come from (the honest reading of each model, no post-hoc smoothing):

* the hybrid collocation model outputs y = [a_b, a_w] (its x'[2:4]);
* a black-box state model x' = F(x, u) (FNODE, MBD-NODE, the sequential NODE) has no output
  equation, but a_b = v_b' and a_w = v_w' are derivatives of two of its states: they are its
  field F evaluated at its own rolled-out states, i.e. what the model itself predicts;
* MNN has no field: its relaxed solver computes every state's derivative with the state at each
  window point, and those derivatives are used;
* a model with neither (LSTM, FCNN) gets central differences of its rolled-out velocities,
  and its row says so (``acceleration_source``).

Hybrid models also get their friction and spring characteristics scored against the true ones
(RMSE over ±2σ of the training inputs, `collocnode._experiments.qvm.characteristic_errors`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ... import _validation as v
from ..._data import Trajectory
from ...tools._fixed_step import DivergenceError
from .results import Divergence, Score
from .scenarios import Scenario, ScenarioData

# what `compare.py qvm` runs by default: every method that learns dynamics from states
METHODS = ("collocation", "node", "fnode", "mbdnode", "mnn", "snde")
METRIC = "test_road_rmse"  # the row column that time_to_target_s compares
# (row key, Markdown header) of the table
COLUMNS = (
    ("method", "method"),
    ("status", "status"),
    ("train_time_s", "train time [s]"),
    ("epochs", "trained for"),
    ("limit", "budget"),
    ("ended", "training ended"),
    ("train_rmse", "train-road a RMSE [m/s²]"),
    ("test_road_rmse", "test-road a RMSE [m/s²]"),
    ("n_params", "params"),
    ("friction_rmse", "friction RMSE [N]"),
    ("spring_rmse", "spring RMSE [N]"),
    ("time_to_target_s", "time to collocation's test-road RMSE [s]"),
)
SOURCES = {
    "output": "model output (x'[2:4] of the hybrid model)",
    "field": "the learned field F(x, u) at the rolled-out states (v_b', v_w')",
    "solver": "the relaxed solver's derivatives of v_b, v_w at the window points",
    "differences": "central differences of the rolled-out v_b, v_w (no derivative output)",
}


@dataclass(frozen=True)
class QVMSettings:
    """Horizons and curve cadence of the quarter-vehicle comparison.

    Attributes:
        duration_s: training horizon of a full run (the preset's 42 s, the paper's).
        quick_duration_s: training horizon of a quick run (CI-sized; the mesh, the windows and
            the epochs shrink with it).
        curve_every_s: default cadence of the error-vs-time curve [s]: each point is a rollout
            on the test road (~20 s for 42 s at 1 kHz), so a 1 s cadence would spend most of the
            wall time evaluating.
        quick_curve_every_s: the same for a quick run (a 3 s rollout takes ~1-3 s).
        quick_threads: torch CPU threads of a quick run unless ``--threads`` says otherwise:
            its networks are so small that a second thread costs more than it saves, and on a
            shared 2-core machine contended threads slowed MNN's quick training ~9x (measured).
    """

    duration_s: float = 42.0
    quick_duration_s: float = 3.0
    curve_every_s: float = 60.0
    quick_curve_every_s: float = 5.0
    quick_threads: int | None = 1

    def __post_init__(self) -> None:
        for name in ("duration_s", "quick_duration_s", "curve_every_s", "quick_curve_every_s"):
            v.positive_float(name, getattr(self, name))

    def duration(self, quick: bool) -> float:
        return self.quick_duration_s if quick else self.duration_s

    def curve_every(self, quick: bool) -> float:
        return self.quick_curve_every_s if quick else self.curve_every_s

    def threads(self, quick: bool) -> int | None:
        return self.quick_threads if quick else None


SETTINGS = QVMSettings()


@dataclass(frozen=True)
class RoadData:
    """The comparison's data: ``split.train`` (= ``split.full``) the noisy training-road
    trajectory, ``split.test`` the noisy unseen-road one on the same grid, and the noise-free
    truths on both roads (the references of the RMSEs)."""

    system: Any
    split: Any
    truth_train: Trajectory
    truth_test: Trajectory
    noise: float


def load(
    preset: str | None,
    quick: bool,
    seed: int,
    noise: float | None,
    settings: QVMSettings = SETTINGS,
) -> RoadData:
    """Generate the training- and test-road data of the preset (``noise`` as a fraction of each
    signal's σ; None: the preset's 2 %)."""
    from ... import problems
    from ...problems._qvm import NOISE_BASELINE

    system = problems.get("qvm", preset)
    level = NOISE_BASELINE if noise is None else noise
    split = system.generate(noise=level, seed=seed, duration=settings.duration(quick))
    t = split.train.t
    truth_train = system.simulate(t, system.x0, road=system.road)
    truth_test = system.simulate(t, system.x0, road=system.test_road)
    return RoadData(system, split, truth_train, truth_test, level)


def rollout(trainer: Any, t: np.ndarray, x0: np.ndarray, u: np.ndarray) -> tuple[Any, Any, str]:
    """States ``(n, 5)``, their derivatives ``(n, 5)`` and where the derivatives come from
    (a key of `SOURCES`, the trainer's ``derivative_source``, or central differences of
    the rollout where the trainer has none); raises ``DivergenceError`` like ``predict``."""
    source = getattr(trainer, "derivative_source", None)
    if source is not None:
        x, dx = trainer.predict_with_derivatives(t, x0, u)
        return x, dx, source
    x = trainer.predict(t, x0, u)
    return x, np.gradient(x, t, axis=0), "differences"


def acceleration_columns(system: Any) -> list[int]:
    """State columns whose derivatives are the outputs a_b, a_w (v_b, v_w)."""
    return [system.state_names.index(name) for name in ("v_b", "v_w")]


def _rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


class RoadEvaluation:
    """Scores a trained model on both roads; the harness's evaluation for the quarter vehicle."""

    metric = METRIC

    def __init__(self, data: RoadData) -> None:
        self.data = data
        self.acc = acceleration_columns(data.system)

    def _road(self, trainer: Any, which: str) -> dict[str, Any]:
        d = self.data
        obs, truth = (
            (d.split.train, d.truth_train) if which == "train" else (d.split.test, d.truth_test)
        )
        x, dx, source = rollout(trainer, obs.t, d.system.x0, obs.u)
        a = dx[:, self.acc]
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(a))):
            bad = ~(np.all(np.isfinite(x), axis=1) & np.all(np.isfinite(a), axis=1))
            k = int(np.argmax(bad))
            raise DivergenceError(k, float(obs.t[k]), x[:k], "non-finite state or acceleration")
        return {
            "x": x,
            "a": a,
            "source": source,
            "rmse": _rmse(a, truth.y),
            "rmse_observed": _rmse(a, obs.y),
            "state_mse": float(np.mean((x - truth.x) ** 2)),
        }

    def curve_value(self, trainer: Any) -> float | None:
        """The test-road acceleration RMSE (None if the rollout diverges)."""
        try:
            return self._road(trainer, "test")["rmse"]
        except DivergenceError:
            return None

    def score(self, trainer: Any) -> Score:
        """The row columns and the arrays for ``<method>.npz`` (the test-road rollout)."""
        d = self.data
        start = time.perf_counter()
        fields: dict[str, Any] = {
            "train_rmse": None,
            "test_road_rmse": None,
            "friction_rmse": None,
            "spring_rmse": None,
        }
        arrays: dict[str, np.ndarray] = {"t": d.split.test.t, "x_data": d.truth_test.x}
        try:
            train = self._road(trainer, "train")
            test = self._road(trainer, "test")
        except DivergenceError as exc:
            fields["predict_time_s"] = time.perf_counter() - start
            why = f"{exc} (roll-out from rest on the training or test road)"
            return Score(fields, arrays, Divergence(exc.step, exc.t, why))
        fields.update(
            train_rmse=train["rmse"],
            test_road_rmse=test["rmse"],
            test_road_rmse_observed=test["rmse_observed"],
            test_road_rmse_ratio=test["rmse_observed"] / self.noise_floor,
            train_mse=train["state_mse"],
            test_mse=test["state_mse"],
            acceleration_source=SOURCES[test["source"]],
            predict_time_s=time.perf_counter() - start,
        )
        # the learned characteristics of a hybrid model (None: a model without them)
        char = (
            trainer.characteristic_errors() if hasattr(trainer, "characteristic_errors") else None
        )
        if char is not None:
            fields.update(
                characteristic=char,
                friction_rmse=char["friction"]["rmse"],
                spring_rmse=char["spring"]["rmse"],
            )
        arrays.update(x_pred=test["x"], a_data=d.truth_test.y, a_pred=test["a"])
        return Score(fields, arrays)

    @property
    def noise_floor(self) -> float:
        """RMSE of the true accelerations against the noisy test-road observations."""
        return _rmse(self.data.truth_test.y, self.data.split.test.y)

    def meta(self) -> dict[str, Any]:
        d = self.data
        t = d.split.train.t
        return {
            "duration_s": float(t[-1] - t[0]),
            "noise": d.noise,
            "noise_kind": "fraction of each state's and output's standard deviation",
            "train_road": repr(d.system.road),
            "test_road": repr(d.system.test_road),
            "test_road_noise_floor": self.noise_floor,
            "target_metric": METRIC,
            "mse": "train/test RMSE: accelerations a_b, a_w of a roll-out from rest on the "
            "training road / the unseen class-C road against the noise-free truth (RMS over "
            "samples and both outputs); train_mse/test_mse: the state MSE of the same roll-outs",
        }


class QVMScenario(Scenario):
    """The quarter-vehicle comparison as a scenario of the harness (see the module docstring)."""

    methods: ClassVar[tuple[str, ...]] = METHODS
    columns: ClassVar[tuple[tuple[str, str], ...]] = COLUMNS

    def __init__(self, settings: QVMSettings = SETTINGS) -> None:
        self.settings = settings

    def load(
        self, problem: str, preset: str | None, quick: bool, seed: int, noise: float | None
    ) -> ScenarioData:
        data = load(preset, quick, seed, noise, self.settings)
        return ScenarioData(data.system, data.split, RoadEvaluation(data))

    def curve_every(self, quick: bool) -> float:
        return self.settings.curve_every(quick)

    def threads(self, quick: bool) -> int | None:
        return self.settings.threads(quick)
