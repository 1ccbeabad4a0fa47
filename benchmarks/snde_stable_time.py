#!/usr/bin/env python
"""The SNDE stable-time experiment (White et al. 2023, App. D.3, Table 3): plain NODE vs SNODE.

``--models`` adds the paper's other baselines: ANODE, SANODE (``augment`` of Table 4), the
tangent projection operator TPO (App. D.2), each with the SNODE's options for the system, and the
HNN of App. D.1 (two-body problem), trained through the solver with the NODE's options, its field
Hamilton's equations of a scalar network: ``hnn`` a tanh network of the state (Greydanus et
al.'s), ``hnn_code`` the SNDE code's ReLU network of the squared state.

For each system (two_body, rigid_body, dcdc) a plain NODE and an SNODE are trained on the same
data with the existing trainers (``make_trainer("node")`` / ``make_trainer("snde")``, identical
options except the stabilization γ), then both are rolled out from independent test initial
conditions over the paper's trial length (200 s, 1600 s, 160 s; the training windows are 6.2 s,
15 s and 10 s) and the stable time of each trial is measured:

    T_stab = max{t | E(t) < E_stab},  E(t) = ‖u(t) − û(t)‖₂ / ‖u(t)‖₂,  E_stab = 10³

(SNDE paper eq. 32, App. D.3; E is the relative state error of App. F.) The paper's Table 3
numbers are printed next to ours.

    python benchmarks/snde_stable_time.py [--systems two_body,rigid_body,dcdc] [--trials 3]
        [--seeds 1] [--epochs 1000 | --epochs two_body=60,rigid_body=40,dcdc=8]
        [--batch-size 1] [--n-train 40] [--models node,snode] [--jobs 1] [--threads 1]
        [--out DIR]

Paper protocol (App. F, Table 4) and this script's defaults: 40 training trajectories with random
initial conditions (the systems' ``sample_x0``), multiple shooting on chunks of 3 steps, ReLU MLPs
with two hidden layers of the Table 4 widths, AdamW (weight decay 1e-6), learning rate decaying
exponentially from Max LR to Min LR over the epochs, dopri5 (Tsit5 in the paper) at 1e-6 for
training and 1e-9 for the test rollouts, γ of Table 4. Each "trial" is one test rollout from its
own initial condition, as in the paper (which has 100 of them per system and one trained model
per method); ``--seeds`` trains several model pairs and pools their trials.

The unit of work is one model of one system trained with one seed and rolled out over every
trial; ``--jobs`` runs units in parallel processes (one per core: a unit's training and rollouts
are serial), and with ``--out`` each unit is stored in ``DIR/units/`` as it finishes, its
trained weights already before its rollouts (``<unit>.trained``) and, while it trains, an epoch
checkpoint (``<unit>.epoch.pt``, saved at most a minute of training apart); the same command
again resumes a stopped run from there: a unit stopped in its rollouts is not trained again, one
stopped in its training goes on from its last saved epoch, bitwise as if it had not stopped
(other settings into the same folder are refused). ``--units-from`` takes the units of a stored
``stable_time.json`` into the store first: a run that adds a model to a stored one (``--models
node,snode`` after ``--models node``) trains only the new model's units.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
from reproduction.published import SNDE_TABLE3, SNDE_TABLE3_TRIALS

from collocnode.tools import _machine as machine

SYSTEMS = ("two_body", "rigid_body", "dcdc")

# --models: name -> the label of its rows (the JSON's model keys and the table's Model column)
MODELS = {
    "node": "NODE",
    "snode": "SNODE",
    "anode": "ANODE",
    "sanode": "SANODE",
    "tpo": "TPO",
    "hnn": "HNN",
    "hnn_code": "HNN (SNDE code)",
}
DEFAULT_MODELS = ("node", "snode")

# The stability threshold on the relative state error (SNDE paper App. D.3, below eq. 32).
E_STAB = 1e3

# SNDE paper, App. D.3, Table 3 (NODE stable times [s]; E_stab = 10³), kept with the other
# published tables
PAPER_TABLE3: dict[str, dict[str, float]] = {
    row.system: dict(row.published) for row in SNDE_TABLE3.rows
}
PAPER_TRIALS = SNDE_TABLE3_TRIALS


@dataclass(frozen=True)
class Config:
    """Settings of one run (see the module docstring for the paper's values)."""

    systems: tuple[str, ...] = SYSTEMS
    trials: int = 3
    seeds: int = 1
    epochs: tuple[tuple[str, int], ...] = ()  # per system; missing: 1000 (the paper)
    batch_size: int = 1
    n_train: int = 40
    horizon: float | None = None  # None: the paper's trial length
    e_stab: float = E_STAB
    activation: str = "relu"
    threads: int = 1
    jobs: int = 1
    budget_s: float | None = None
    models: tuple[str, ...] = DEFAULT_MODELS

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(MODELS[m] for m in self.models)

    def epochs_for(self, system: str) -> int:
        return dict(self.epochs).get(system, 1000)


# --- the metric --------------------------------------------------------------------------------
def relative_error(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """E(t) = ‖u − û‖₂ / ‖u‖₂ per sample (SNDE App. F); non-finite predictions give inf.

    ``pred`` may be shorter than ``truth`` (a rollout that stopped): missing samples give inf.
    """
    truth = np.asarray(truth, dtype=float)
    err = np.full(truth.shape[0], np.inf)
    k = min(len(pred), truth.shape[0])
    if k:
        p = np.asarray(pred, dtype=float)[:k]
        with np.errstate(all="ignore"):
            e = np.linalg.norm(p - truth[:k], axis=1) / np.linalg.norm(truth[:k], axis=1)
        err[:k] = np.where(np.isfinite(e), e, np.inf)
    return err


def stable_time(t: np.ndarray, err: np.ndarray, e_stab: float = E_STAB) -> float:
    """T_stab = max{t | E(t) < E_stab} over the sampled times, measured from t[0].

    SNDE paper eq. (32), App. D.3, taken literally: the last sample time at which the error is
    below the threshold (a trial that never exceeds it scores its full length). The prose of
    D.3 reads "the time elapsed until E(t) exceeds E_stab" (:func:`first_exceedance_time`); the
    two differ only when the error comes back below the threshold, which a diverged rollout
    (E = inf from its failure on) cannot do.
    """
    t = np.asarray(t, dtype=float)
    below = np.asarray(err, dtype=float) < e_stab
    if not below.any():
        return 0.0
    return float(t[np.flatnonzero(below)[-1]] - t[0])


def first_exceedance_time(t: np.ndarray, err: np.ndarray, e_stab: float = E_STAB) -> float:
    """The last sample time before E(t) first reaches ``e_stab`` (the full length if never)."""
    t = np.asarray(t, dtype=float)
    above = ~(np.asarray(err, dtype=float) < e_stab)
    if not above.any():
        return float(t[-1] - t[0])
    k = int(np.argmax(above))
    return float(t[max(k - 1, 0)] - t[0])


def summarize(values: list[float]) -> dict[str, float | int]:
    """Min, max, median, mean and sample standard deviation (Table 3's columns) and the count."""
    v = [float(x) for x in values]
    return {
        "n": len(v),
        "min": min(v),
        "max": max(v),
        "median": statistics.median(v),
        "mean": statistics.fmean(v),
        "std": statistics.stdev(v) if len(v) > 1 else 0.0,
    }


# --- data and models ---------------------------------------------------------------------------
def training_data(system: Any, n_traj: int, rng: np.random.Generator) -> list[Any]:
    """``n_traj`` exact trajectories of the paper's training window from random initial states."""
    t = system.time_grid(system.n_train)
    return [system.simulate(t, system.sample_x0(rng)) for _ in range(n_traj)]


def test_trials(
    system: Any, n: int, horizon: float | None, rng: np.random.Generator
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The test time grid (dt of the data, paper trial length unless ``horizon``) and ``n``
    ground-truth trajectories from independent random initial states."""
    length = PAPER_TABLE3[system.name]["trial_length"] if horizon is None else horizon
    t = system.time_grid(round(length / system.dt) + 1)
    return t, [system.simulate(t, system.sample_x0(rng)).x for _ in range(n)]


def make_models(system: str, cfg: Config, seed: int) -> dict[str, Any]:
    """The trainers of ``cfg.models`` by label: the SNODE with the paper's options for
    ``system``; a plain NODE with the same options (network, data handling, optimiser, schedule,
    solver) except the stabilization; an ANODE as that NODE with Table 4's augmented dimensions
    and the SNDE code's loss, which fits them to zero; a SANODE as the SNODE with them; a TPO
    as the SNODE with the tangent projection instead of the stabilization (γ = 0); an HNN as
    the NODE with the field of a Hamiltonian network: of the state with tanh (``hnn``), or of
    the squared state with the system's activation (``hnn_code``, the SNDE code's, App. D.1)."""
    from collocnode.compare import make_trainer
    from collocnode.compare.methods.node import NODEOptions

    common = {
        "epochs": cfg.epochs_for(system),
        "batch_size": cfg.batch_size,
        "activation": cfg.activation,
        "device": "cpu",
        "seed": seed,
    }
    snode = make_trainer("snde", problem=system, **common)
    shared = {f.name: getattr(snode.options, f.name) for f in fields(NODEOptions)}
    for name in ("augment", "augmented_loss"):
        shared.pop(name)  # the ANODE's come from its Table 4 settings and the SNDE code's loss
    build = {
        "node": lambda: make_trainer("node", **shared),
        "snode": lambda: snode,
        "anode": lambda: make_trainer("anode", problem=system, **shared),
        "sanode": lambda: make_trainer("sanode", problem=system, **common),
        "tpo": lambda: make_trainer("tpo", problem=system, **common),
        "hnn": lambda: make_trainer(
            "node", **{**shared, "hamiltonian": "state", "activation": "tanh"}
        ),
        "hnn_code": lambda: make_trainer("node", **{**shared, "hamiltonian": "squares"}),
    }
    return {MODELS[m]: build[m]() for m in cfg.models}


def make_pair(system: str, cfg: Config, seed: int) -> dict[str, Any]:
    """The NODE/SNODE pair of :func:`make_models`."""
    return make_models(system, replace(cfg, models=DEFAULT_MODELS), seed)


def rollout_error(trainer: Any, system: Any, t: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    """Roll ``trainer`` out from ``truth[0]`` over ``t`` and return E(t) (inf after a failure)."""
    from collocnode.compare import DivergenceError

    start = time.perf_counter()
    failed_t = None
    try:
        pred = trainer.predict(t, truth[0])
    except DivergenceError as exc:
        failed_t = exc.t
        part = exc.partial if exc.partial is not None else np.zeros((0, system.n_states))
        pred = part if part.shape[1] == system.n_states else part[:0]
    return {
        "error": relative_error(pred, truth),
        "pred": pred,
        "failed_t": failed_t,
        "time_s": time.perf_counter() - start,
    }


def constraint_error(system: Any, t: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """‖g(û(t)) − g(û(0))‖₂ per sample: the drift of the constraints or conserved quantities
    SNDE stabilizes (:func:`collocnode.compare.methods.snde.constraint_functions`), in their
    own units (SNDE Fig. 8(d) divides by |g(u0)|; the systems' constraints here are already
    differences to the initial state, whose value is 0); inf where the rollout is missing or
    non-finite."""
    from collocnode.compare.methods.snde import constraint_functions

    out = np.full(t.size, np.inf)
    k = min(len(pred), t.size)
    if k == 0:
        return out
    g_fn = constraint_functions(system)[0]
    with np.errstate(all="ignore"):
        g = g_fn(np.asarray(pred[:k], dtype=float), np.asarray(t[:k], dtype=float))
        e = np.linalg.norm(g - g[0], axis=1)
    out[:k] = np.where(np.isfinite(e), e, np.inf)
    return out


def evaluate(trainer: Any, system: Any, t: np.ndarray, truths: list[np.ndarray], e_stab: float):
    """Per-trial stable time (eq. 32) and diagnostics of one trained model."""
    rows = []
    for truth in truths:
        r = rollout_error(trainer, system, t, truth)
        err = r["error"]
        finite = err[np.isfinite(err)]
        cerr = constraint_error(system, t, r["pred"])
        rows.append(
            {
                "stable_time": stable_time(t, err, e_stab),
                "first_exceedance_time": first_exceedance_time(t, err, e_stab),
                "time_to_error_1": first_exceedance_time(t, err, 1.0),
                "error_end": float(err[-1]),
                "error_max_finite": float(finite.max()) if finite.size else None,
                "failed_t": r["failed_t"],
                "predict_time_s": r["time_s"],
                # SNDE Fig. 8(d): the constraint drift, at the end and its median over the trial
                "constraint_error_end": float(cerr[-1]),
                "constraint_error_median": float(np.median(cerr)),
            }
        )
    return rows


def run_unit(
    name: str,
    cfg: Config,
    seed: int,
    model: str,
    log: Any = print,
    checkpoints: Path | None = None,
) -> dict[str, Any]:
    """Train ``model`` (a key of :data:`MODELS`) on one system with one seed and evaluate every
    trial: the unit of work ``--jobs`` spreads over processes. Each trainer seeds itself at
    ``fit``, so a unit computes what it would beside the system's other models in one process.

    With ``checkpoints`` (a folder) the trained weights are stored there before the rollouts
    (:func:`save_trained`), and a unit whose weights are there is not trained again: a unit
    stopped during its rollouts (an hour for the DC-DC converter) keeps its training. While it
    trains, the unit keeps an epoch checkpoint there (:func:`epoch_checkpoint`, at most a minute
    of training apart and at every stop), from which a unit stopped in its training resumes,
    bitwise as if it had not stopped (a Ctrl-C in the training ends the unit with
    KeyboardInterrupt, unstored); it is deleted once the trained weights are stored."""
    import torch

    from collocnode import problems

    torch.set_num_threads(cfg.threads)
    system = problems.get(name)
    rng = np.random.default_rng([seed, 0])
    data = training_data(system, cfg.n_train, rng)
    t, truths = test_trials(system, cfg.trials, cfg.horizon, np.random.default_rng([seed, 1]))
    label = MODELS[model]
    trainer = make_models(name, replace(cfg, models=(model,)), seed)[label]
    settings = unit_settings(name, cfg, seed, model)
    key = unit_key(name, seed, model)
    tag = f"[{name} seed {seed}] {label}"
    fit = (
        None
        if checkpoints is None
        else load_trained(trainer, system, data, checkpoints, key, settings)
    )
    if fit is None:
        epoch_file = None if checkpoints is None else epoch_checkpoint(checkpoints, key)
        result = trainer.fit(system, data, budget_s=cfg.budget_s, checkpoint=epoch_file)
        if epoch_file is not None and result.status == "interrupted":
            # a Ctrl-C stops the unit unstored: the rerun goes on from the epoch checkpoint
            # instead of keeping the weights of an interrupted training as trained
            log(f"{tag}: {result.message}; the epoch checkpoint is {epoch_file}")
            raise KeyboardInterrupt
        fit = {
            "status": result.status.value,
            "epochs": result.epochs,
            "best_loss": result.best_loss,
            "train_time_s": result.train_time_s,
        }
        if checkpoints is not None:
            save_trained(trainer, checkpoints, key, settings, fit)
            epoch_checkpoint(checkpoints, key).unlink(missing_ok=True)  # the weights are kept
        log(f"{tag}: {fit['status']}, {result.message}, {fit['train_time_s']:.0f} s")
    else:
        log(f"{tag}: weights trained earlier ({fit['status']}, {fit['epochs']} epochs)")
    trials = evaluate(trainer, system, t, truths, cfg.e_stab)
    log(f"{tag} stable times: " + ", ".join(f"{r['stable_time']:.1f}" for r in trials))
    return {
        "seed": seed,
        "horizon_s": float(t[-1] - t[0]),
        "label": label,
        "fit": {
            **fit,
            # the machine of this unit: a resumed run's units may come from other machines
            "machine": machine.describe(),
            "options": asdict(trainer.options),
            "trials": trials,
        },
    }


def epoch_checkpoint(folder: Path, key: str) -> Path:
    """The epoch checkpoint of unit ``key`` in ``folder`` while it trains
    (``GradientTrainer.fit(..., checkpoint=...)``): ``<key>.epoch.pt``, the key made a safe
    file name."""
    return folder / f"{re.sub(r'[^A-Za-z0-9._-]', '_', key)}.epoch.pt"


def _trained_task(key: str, settings: dict[str, Any]) -> Any:
    """The task under which a unit's trained weights are kept in the unit store."""
    from collocnode.tools.tasks import Task

    return Task(f"{key}.trained", None, settings)


def save_trained(
    trainer: Any, folder: Path, key: str, settings: dict[str, Any], fit: dict[str, Any]
) -> None:
    """Store a unit's trained weights in the task store ``folder`` as ``<key>.trained``: the
    trainer's module state dicts as arrays named ``<module index>/<name>`` (``.npz``, data, no
    pickles) beside the unit's settings and fit record (``.json``, written last)."""
    from collocnode.tools.tasks import TaskStore

    arrays = {
        f"{k}/{name}": value.detach().cpu().numpy()
        for k, module in enumerate(trainer.modules())
        for name, value in module.state_dict().items()
    }
    folder.mkdir(parents=True, exist_ok=True)
    TaskStore(folder).save(_trained_task(key, settings), {"fit": fit, **arrays})


def load_trained(
    trainer: Any,
    system: Any,
    data: list[Any],
    folder: Path,
    key: str,
    settings: dict[str, Any],
) -> dict[str, Any] | None:
    """The fit record of the weights :func:`save_trained` stored for unit ``key``, loaded into
    ``trainer``; None when none are stored. The trainer is first fitted for one epoch on the
    unit's ``data`` (its setup from the data — state layout, inputs, normalisation — is the
    trained one's), then its modules take the stored weights. Raises
    :class:`~collocnode.tools.tasks.StoredTaskMismatch` for weights trained with other settings
    and ValueError for damaged files."""
    import torch

    from collocnode.tools.tasks import TaskStore

    stored = TaskStore(folder).load(_trained_task(key, settings))
    if stored is None:
        return None
    fit = stored.pop("fit")
    trainer.fit(system, data, callback=lambda progress: True)  # one epoch: the setup
    for k, module in enumerate(trainer.modules()):
        prefix = f"{k}/"
        state = {
            name[len(prefix) :]: torch.from_numpy(value)
            for name, value in stored.items()
            if name.startswith(prefix)
        }
        try:
            module.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            raise ValueError(f"stored weights of unit {key} do not fit the model: {exc}") from None
    return fit


def seed_entry(units: list[dict[str, Any]]) -> dict[str, Any]:
    """One seed's models (in ``--models`` order) from its units of :func:`run_unit`."""
    return {
        "seed": units[0]["seed"],
        "horizon_s": units[0]["horizon_s"],
        "models": {u["label"]: u["fit"] for u in units},
    }


def system_result(name: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """One system's seeds (in seed order) and the statistics pooled over them."""
    out: dict[str, Any] = {"system": name, "seeds": sorted(entries, key=lambda e: e["seed"])}
    out["summary"] = summary_of(out)
    return out


def summary_of(result: dict[str, Any]) -> dict[str, Any]:
    """Stable-time statistics per model over all trials of all seeds, plus the diverged count."""
    summary: dict[str, Any] = {}
    for label in result["seeds"][0]["models"]:
        rows = [r for s in result["seeds"] for r in s["models"][label]["trials"]]
        horizon = result["seeds"][0]["horizon_s"]
        summary[label] = {
            "stable_time": summarize([r["stable_time"] for r in rows]),
            "time_to_error_1": summarize([r["time_to_error_1"] for r in rows]),
            "diverged": sum(r["stable_time"] < horizon for r in rows),
            "trials": len(rows),
            "median_error_end": _median_of(rows, "error_end"),
            "median_constraint_error_end": _median_of(rows, "constraint_error_end"),
        }
    return summary


def _sci(x: float | None) -> str:
    return "—" if x is None else f"{x:.1e}"


def _median_of(rows: list[dict[str, Any]], key: str) -> float | None:
    """The median of ``key`` over the trials that have it (runs stored before it was measured
    have none). A stored unit's null is a non-finite value (strict JSON), counted as inf."""
    vals = [math.inf if r[key] is None else r[key] for r in rows if key in r]
    return statistics.median(vals) if vals else None


# --- reporting ---------------------------------------------------------------------------------
def markdown(results: list[dict[str, Any]], cfg: Config) -> str:
    """Our stable-time statistics next to the paper's Table 3."""

    def fmt(x: float) -> str:
        return f"{x:.1f}"

    lines = [
        "| System | Trial length [s] | Model | Trials | Min | Max | Median | Mean | Std | "
        "Diverged (E ≥ 10³) | Median time to E ≥ 1 [s] | Median constraint drift at the end |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        name, summ = res["system"], res["summary"]
        horizon = res["seeds"][0]["horizon_s"]
        p = PAPER_TABLE3[name]
        lines.append(
            f"| {name} | {fmt(p['trial_length'])} | NODE (paper, Table 3) | {PAPER_TRIALS} | "
            + " | ".join(fmt(p[k]) for k in ("min", "max", "median", "mean", "std"))
            + " | — | — | — |"
        )
        if "SNODE" in summ:
            lines.append(
                f"| {name} | {fmt(p['trial_length'])} | SNODE (paper) | {PAPER_TRIALS} | "
                "— | — | — | — | — | 0 | — | — |"
            )
        for label in summ:
            s = summ[label]
            st = s["stable_time"]
            lines.append(
                f"| {name} | {fmt(horizon)} | {label} (ours) | {s['trials']} | "
                + " | ".join(fmt(st[k]) for k in ("min", "max", "median", "mean", "std"))
                + f" | {s['diverged']} | {fmt(s['time_to_error_1']['median'])} | "
                + _sci(s.get("median_constraint_error_end"))
                + " |"
            )
    epochs = ", ".join(f"{n}: {cfg.epochs_for(n)}" for n in cfg.systems)
    lines += [
        "",
        f"Stable time T_stab = max{{t | E(t) < {cfg.e_stab:g}}} (SNDE eq. 32), seconds. "
        f"Ours: {cfg.trials} test trial(s) × {cfg.seeds} trained {_set_name(cfg)} per system; "
        "epochs "
        f"{epochs}; batch size {cfg.batch_size}; {cfg.n_train} training trajectories. "
        "The paper: 100 test trials, one model per method, 1000 epochs, batch size 1.",
    ]
    return "\n".join(lines) + "\n"


def _set_name(cfg: Config) -> str:
    return "pair(s)" if cfg.models == DEFAULT_MODELS else f"set(s) of {', '.join(cfg.labels)}"


def parse_models(text: str) -> tuple[str, ...]:
    """``"node,snode,tpo"`` -> the model names, in that order, each once."""
    names = tuple(dict.fromkeys(m.strip().lower() for m in text.split(",") if m.strip()))
    bad = [m for m in names if m not in MODELS]
    if bad or not names:
        raise ValueError(f"unknown or no model(s) {bad or text!r}; valid: {', '.join(MODELS)}")
    return names


# --- command line ------------------------------------------------------------------------------
def parse_epochs(text: str, systems: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """``"60"`` (every system) or ``"two_body=60,dcdc=8"``."""
    if "=" not in text:
        return tuple((s, int(text)) for s in systems)
    pairs = []
    for item in text.split(","):
        key, _, val = item.partition("=")
        if key.strip() not in SYSTEMS:
            raise ValueError(f"unknown system {key.strip()!r} in --epochs; valid: {SYSTEMS}")
        pairs.append((key.strip(), int(val)))
    return tuple(pairs)


def parse_args(argv: list[str] | None = None) -> tuple[Config, Path | None, tuple[Path, ...]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--trials", type=int, default=3, help="test rollouts per trained model")
    ap.add_argument("--seeds", type=int, default=1, help="independently trained NODE/SNODE pairs")
    ap.add_argument("--epochs", default="1000", help="N, or per system: two_body=60,dcdc=8")
    ap.add_argument("--batch-size", type=int, default=1, help="chunks per step (paper: 1)")
    ap.add_argument("--n-train", type=int, default=40, help="training trajectories (paper: 40)")
    ap.add_argument("--horizon", type=float, default=None, help="trial length [s] (paper's)")
    ap.add_argument("--e-stab", type=float, default=E_STAB)
    ap.add_argument("--activation", default="relu", help="hidden activation (paper: relu)")
    ap.add_argument(
        "--models",
        default=",".join(DEFAULT_MODELS),
        help=f"models to train, from {','.join(MODELS)} (default: the NODE/SNODE pair)",
    )
    ap.add_argument("--budget", type=float, default=None, help="training cap per model [s]")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per process")
    ap.add_argument(
        "--jobs", type=int, default=1, help="(system, seed, model) units run in parallel processes"
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="writes stable_time.json/.md here, each finished unit to units/",
    )
    ap.add_argument(
        "--units-from",
        type=Path,
        action="append",
        default=[],
        metavar="JSON",
        help="a stored stable_time.json whose units (made with this run's settings) are reused",
    )
    a = ap.parse_args(argv)
    if a.units_from and a.out is None:
        ap.error("--units-from needs --out (its units are copied into OUT/units/)")
    systems = tuple(s.strip() for s in a.systems.split(",") if s.strip())
    bad = [s for s in systems if s not in SYSTEMS]
    if bad:
        ap.error(f"unknown system(s) {bad}; valid: {', '.join(SYSTEMS)}")
    for name in ("trials", "seeds", "batch_size", "n_train", "threads", "jobs"):
        if getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1")
    try:
        epochs = parse_epochs(a.epochs, systems)
        models = parse_models(a.models)
    except ValueError as exc:
        ap.error(str(exc))
    cfg = Config(
        systems=systems,
        trials=a.trials,
        seeds=a.seeds,
        epochs=epochs,
        batch_size=a.batch_size,
        n_train=a.n_train,
        horizon=a.horizon,
        e_stab=a.e_stab,
        activation=a.activation,
        threads=a.threads,
        jobs=a.jobs,
        budget_s=a.budget,
        models=models,
    )
    return cfg, a.out, tuple(a.units_from)


def _run_unit(arg: tuple[str, Config, int, str, Path | None]) -> dict[str, Any]:
    """One (system, seed, model) unit in a task worker, logging as it goes."""
    name, cfg, seed, model, checkpoints = arg
    return run_unit(name, cfg, seed, model, log=_print_now, checkpoints=checkpoints)


def _print_now(message: str) -> None:
    print(message, flush=True)


def unit_settings(name: str, cfg: Config, seed: int, model: str) -> dict[str, Any]:
    """What one unit computes: a stored unit made with other settings is refused on a rerun."""
    own = {f.name: getattr(cfg, f.name) for f in fields(cfg)}
    for other in ("systems", "seeds", "epochs", "jobs", "models"):  # how the units are laid out
        del own[other]
    return {"system": name, "seed": seed, "model": model, "epochs": cfg.epochs_for(name), **own}


def unit_key(name: str, seed: int, model: str) -> str:
    """The name of a unit and of its file in the store."""
    return f"{name}-seed{seed}-{model}"


def stored_config(config: dict[str, Any]) -> Config:
    """The :class:`Config` of a stored run from its JSON ``config`` (lists back to tuples)."""
    own = {f.name for f in fields(Config)}
    if not isinstance(config, dict) or set(config) - own:
        raise ValueError(f"not a stable-time run's config: {str(config)[:80]!r}")
    values = dict(config)
    for name in ("systems", "models"):
        if name in values:
            values[name] = tuple(values[name])
    if "epochs" in values:
        values["epochs"] = tuple((str(k), int(n)) for k, n in values["epochs"])
    return Config(**values)


def import_units(path: Path, cfg: Config, store: Path) -> list[str]:
    """Write the units of the stored run ``path`` (a ``stable_time.json``) that this run lays out
    into the unit ``store``, where they are reused as if this run had made them; a unit already
    in the store is left alone. Raises :class:`~collocnode.tools.tasks.StoredTaskMismatch` when
    a unit of this run is in the stored run with other settings. Returns the keys written."""
    import json

    from collocnode.tools.tasks import StoredTaskMismatch, Task, TaskStore

    try:
        stored = json.loads(Path(path).read_text())
        stored_cfg = stored_config(stored["config"])
        results = {r["system"]: r["seeds"] for r in stored["results"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(
            f"--units-from {str(path)!r} is not a stored stable-time run: {exc}"
        ) from None
    model_of = {label: model for model, label in MODELS.items()}
    store.mkdir(parents=True, exist_ok=True)
    target, written = TaskStore(store), []
    for name, entries in results.items():
        for entry in entries:
            for label, fit in entry["models"].items():
                model, seed = model_of.get(label), entry["seed"]
                if name not in cfg.systems or model not in cfg.models or seed >= cfg.seeds:
                    continue  # not a unit of this run
                key = unit_key(name, seed, model)
                settings = unit_settings(name, stored_cfg, seed, model)
                current = unit_settings(name, cfg, seed, model)
                if settings != current:
                    raise StoredTaskMismatch(
                        f"unit {key} of {str(path)!r} was made with other settings: "
                        f"{settings} there, {current} here"
                    )
                if (store / f"{key}.json").exists():
                    continue
                unit = {"seed": seed, "horizon_s": entry["horizon_s"], "label": label, "fit": fit}
                target.save(Task(key, None, settings), unit)
                written.append(key)
    return written


def run_all(cfg: Config, store: Path | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Every (system, seed, model) unit, in ``cfg.jobs`` parallel processes (each with
    ``cfg.threads`` threads); the units are independent, so the result does not depend on
    ``cfg.jobs``.

    With a ``store`` each unit is written there as it finishes (``<system>-seed<K>-<model>.json``),
    and a rerun with the same settings reuses what is stored: a run stopped after some units
    resumes there. Returns the per-system results and the keys of the units reused."""
    from collocnode.tools.tasks import Task, run_tasks

    # a model's units one after another: on two cores the seeds of the costlier model (the
    # SNODE's) do not all wait for the end, and a stopped run has its first model's seeds
    layout = [
        (name, seed, model)
        for model in cfg.models
        for name in cfg.systems
        for seed in range(cfg.seeds)
    ]
    tasks = [
        Task(
            unit_key(name, seed, model),
            (name, cfg, seed, model, store),
            settings=unit_settings(name, cfg, seed, model),
        )
        for name, seed, model in layout
    ]
    outcomes = run_tasks(_run_unit, tasks, store=store, workers=cfg.jobs, threads=cfg.threads)
    failed = [o for o in outcomes if o.status != "finished"]
    if failed:
        raise RuntimeError(f"unit {failed[0].key} failed: {failed[0].error}")
    units = {o.key: o.result for o in outcomes}
    results = [
        system_result(
            name,
            [
                seed_entry([units[unit_key(name, seed, m)] for m in cfg.models])
                for seed in range(cfg.seeds)
            ],
        )
        for name in cfg.systems
    ]
    return results, [o.key for o in outcomes if o.reused]


def write(
    results: list[dict[str, Any]],
    cfg: Config,
    out: Path,
    wall_s: float,
    header: dict[str, Any],
    reused: Sequence[str] = (),
    units_from: Sequence[Path] = (),
) -> None:
    """``stable_time.json`` (strict JSON: a non-finite number is null; ``header`` first, the
    run's :func:`collocnode.tools._machine.run_record`; ``wall_time_s`` covers this run, not
    the units ``units_reused`` from the store, some of them taken from the stored runs
    ``units_from``) and ``stable_time.md``."""
    from collocnode.tools._io import write_json

    out.mkdir(parents=True, exist_ok=True)
    meta = {
        **header,
        "config": asdict(cfg),
        "wall_time_s": wall_s,
        "units_reused": list(reused),
        "units_from": [str(p) for p in units_from],
        "paper_table3": PAPER_TABLE3,
        "results": results,
    }
    write_json(out / "stable_time.json", meta)
    (out / "stable_time.md").write_text(markdown(results, cfg))


def main(argv: list[str] | None = None) -> int:
    cfg, out, units_from = parse_args(argv)
    header = machine.run_record("benchmarks/snde_stable_time.py", argv)
    for path in units_from:
        taken = import_units(path, cfg, out / "units")
        print(
            f"{len(taken)} unit(s) taken from {path}" + (f": {', '.join(taken)}" if taken else "")
        )
    start = time.perf_counter()
    results, reused = run_all(cfg, store=None if out is None else out / "units")
    wall = time.perf_counter() - start
    print(markdown(results, cfg))
    print(f"wall time {wall:.0f} s" + (f" ({', '.join(reused)} reused)" if reused else ""))
    if out is not None:
        write(results, cfg, out, wall, header, reused, units_from)
    return 0


if __name__ == "__main__":
    sys.exit(main())
