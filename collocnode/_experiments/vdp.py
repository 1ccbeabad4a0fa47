"""Van der Pol neural ODE trained by collocation (Langenkamp et al. §4.2, eq. 21): data, the
paper's recipe (`collocnode.recipes.vdp.VDP`), evaluation, files and plots."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validation as v
from .. import problems
from .._data import Trajectory
from .._status import SolverStatus
from ..models._simulate import SimulationError
from ..problems._base import Split
from ..recipes.base import TrainedModel
from ..recipes.generic import SystemRecipe
from ..recipes.vdp import VDP, paper_regularization
from ..tools._io import StorageError
from ..tools._options import flat_dict, replace_flat
from ..tools.tasks import ExecutorLost, Task, TaskOutcome, dask_executor, run_tasks
from ..training import TrainingSolution
from .record import RunRecord

T_TRAIN = 7.0  # training horizon [s] (paper: "a little over one period")
T_EXTRAPOLATE = 20.0  # end of the extrapolation window [s]
T_ROBUST = 32.0  # horizon of the robustness check (paper Fig. 10)


@dataclass(frozen=True)
class VdPOptions:
    """Settings of the paper's Van der Pol experiment: §4.2's data, model and mesh.

    ``recipe`` holds the model and collocation settings (`VDP`,
    printing one line per IPOPT iteration); its fields are reached by their own names
    (``--stages``, ``--hidden``, ...). The run starts from the warm start (``warm_start``:
    weights regressed on the smoothed data's derivatives, `collocnode.training._warmstart`),
    which reached the cold start's error in 8 instead of 47 iterations (docs/performance.md);
    ``--no-warm-start`` gives the paper's own start (constant states, random weights).
    ``regularization=None`` (a field of the recipe's settings) picks the paper's λ: 1e-4, or
    1e-3 for σ >= 0.5.
    ``seeds`` > 1 runs the robustness study of the paper's appendix (Fig. 10): runs ``seed``,
    ``seed + 1``, ... each with its own noise realisation and initial weights, in ``workers``
    processes (0: one per core) or on the Dask cluster whose scheduler is at ``scheduler``
    (e.g. ``tcp://host:8786``; empty: local). Each finished seed is stored in the output's
    ``seeds/`` directory as it completes, and ``--resume`` reuses those of an earlier run of the
    same settings. A run succeeds when its re-simulation from x(0) stays within
    ``success_tol`` RMSE of the truth over [0, 32]. ``uncertainty`` computes the trained model's
    error bars on noisy data (``sol.uncertainty()``): in ``result.json``, in ``model.json`` and
    as the 95 % band of the re-simulation (the linearised predictive, by forward sensitivities)
    in the trajectory figure.

    Attributes:
        noise: standard deviation of the Gaussian noise added to the observed states.
        seed: seed of the noise and the initial weights (the first seed when ``seeds`` > 1).
        seeds: number of runs of the robustness study (1: one run).
        workers: processes of the robustness study (0: one per core).
        scheduler: address of a Dask scheduler to run the robustness study on (empty: local).
        success_tol: largest RMSE of the re-simulation over [0, 32] s that counts as a success.
        uncertainty: compute the trained model's error bars on noisy data.
    """

    noise: float = 0.0
    seed: int = 0
    seeds: int = 1
    workers: int = 0
    scheduler: str = ""
    success_tol: float = 0.1
    uncertainty: bool = True
    recipe: SystemRecipe = field(
        default_factory=lambda: replace_flat(VDP, print_level=5, warm_start=True)
    )

    def __post_init__(self) -> None:
        v.nonnegative_float("noise", self.noise)
        v.nonnegative_int("seed", self.seed)
        v.positive_int("seeds", self.seeds)
        v.nonnegative_int("workers", self.workers)
        if not isinstance(self.scheduler, str):
            raise TypeError(f"scheduler must be an address string, got {self.scheduler!r}")
        v.positive_float("success_tol", self.success_tol)
        if not isinstance(self.uncertainty, (bool, np.bool_)):
            raise TypeError(f"uncertainty must be True or False, got {self.uncertainty!r}")
        if not isinstance(self.recipe, SystemRecipe):
            raise TypeError(f"recipe must be a SystemRecipe, got {self.recipe!r}")

    @property
    def lam(self) -> float:
        return self.recipe.collocation.lam(paper_regularization(self.noise))

    @property
    def settings(self) -> dict[str, Any]:
        """Every setting by its flat name, as ``result.json`` records them."""
        return flat_dict(self) | {"regularization": self.lam}


def seeds(seed: int) -> tuple[int, int]:
    """Independent seeds for the data noise and the initial weights of run ``seed``."""
    a, b = np.random.SeedSequence(seed).spawn(2)
    return int(a.generate_state(1)[0]), int(b.generate_state(1)[0])


def train(opts: VdPOptions) -> tuple[TrainingSolution, Split]:
    """Generate the noisy data of the paper and train by the recipe (eq. 21). A warm start's
    time (and a regularization path's) is counted in the solution's ``timings``
    (``warm_start``, ``regularization_path`` and ``total``)."""
    trained, split = train_recipe(opts)
    return trained.solution, split


def train_recipe(opts: VdPOptions) -> tuple[TrainedModel, Split]:
    """`train` with the recipe's whole outcome (its regularization path, if any)."""
    system = problems.get("vdp")
    noise_seed, weight_seed = seeds(opts.seed)
    split = system.generate(noise=opts.noise, seed=noise_seed)
    recipe = replace_flat(opts.recipe, regularization=opts.lam)
    trained = recipe.train(system, split.train, seed=weight_seed)
    sol = trained.solution
    for name, seconds in trained.times.items():
        sol.solution.timings[name] = seconds
        sol.solution.timings["total"] += seconds
    return trained, split


@dataclass
class Evaluation:
    """The learned ODE re-simulated from x(0) on [0, 20] against the noise-free truth.

    ``train_rmse`` covers [0, 7] and ``extrapolation_rmse`` (7, 20] (same simulation; None if
    it failed, with ``simulation_error``); ``vector_field_rmse`` is the RMS of
    ‖f_learned − f_true‖₂ on a grid over the box [-2.5, 2.5] x [-3, 3] that holds the limit
    cycle. The arrays are for the plots.
    """

    train_rmse: float | None
    extrapolation_rmse: float | None
    vector_field_rmse: float
    simulation_error: str | None
    t: np.ndarray
    truth: np.ndarray
    learned: np.ndarray | None
    xs: np.ndarray
    ys: np.ndarray
    field_error: np.ndarray

    def metrics(self) -> dict[str, Any]:
        return {
            "simulation_error": self.simulation_error,
            "train_rmse": self.train_rmse,
            "extrapolation_rmse": self.extrapolation_rmse,
            "vector_field_rmse": self.vector_field_rmse,
        }


def evaluate(sol: TrainingSolution, grid: int = 61) -> Evaluation:
    """See `Evaluation`."""
    system = problems.get("vdp")
    t = np.linspace(0.0, T_EXTRAPOLATE, 2001)
    truth = system.simulate(t)
    train_rmse = extrapolation_rmse = error = None
    try:
        learned = sol.simulate(t, system.x0, rtol=1e-10, atol=1e-10).x
        err = learned - truth.x
        tr = t <= T_TRAIN
        train_rmse = float(np.sqrt(np.mean(err[tr] ** 2)))
        extrapolation_rmse = float(np.sqrt(np.mean(err[~tr] ** 2)))
    except SimulationError as exc:
        learned, error = None, str(exc)
    xs, ys = np.linspace(-2.5, 2.5, grid), np.linspace(-3.0, 3.0, grid)
    X, Y = np.meshgrid(xs, ys)
    pts = np.column_stack([X.ravel(), Y.ravel()])
    fmodel = sol.model.function
    f_learned = np.asarray(
        fmodel.map(pts.shape[0])(
            pts.T, sol.p, np.zeros((0, pts.shape[0])), np.zeros((1, pts.shape[0]))
        )[0]
    ).T
    f_true = system.rhs(0.0, pts)
    field_err = np.linalg.norm(f_learned - f_true, axis=1).reshape(X.shape)
    return Evaluation(
        train_rmse=train_rmse,
        extrapolation_rmse=extrapolation_rmse,
        vector_field_rmse=float(np.sqrt(np.mean(field_err**2))),
        simulation_error=error,
        t=t,
        truth=truth.x,
        learned=learned,
        xs=xs,
        ys=ys,
        field_error=field_err,
    )


def trivial(train: Trajectory, ev: Evaluation) -> dict[str, float]:
    """The RMSE over the extrapolation window of two predictions that need no model: the
    training data's mean and its last sample, held constant."""
    window = ev.t > T_TRAIN
    truth = ev.truth[window]
    return {
        which: float(np.sqrt(np.mean((truth - value) ** 2)))
        for which, value in (("mean", train.x.mean(axis=0)), ("last", train.x[-1]))
    }


@dataclass
class RobustnessRun:
    """One seed of the robustness study: its row of ``result.json`` and its rollout on
    [0, 32] (NaN where the simulation failed)."""

    row: dict[str, Any]
    x: np.ndarray


def robustness_run(opts: VdPOptions) -> RobustnessRun:
    """One run of the robustness study: train, then re-simulate on [0, 32]."""
    system = problems.get("vdp")
    t = np.linspace(0.0, T_ROBUST, 1601)
    truth = system.simulate(t).x
    sol, _ = train(opts)
    row: dict[str, Any] = {
        "seed": opts.seed,
        "status": sol.status.value,
        "iterations": sol.iterations,
        "total_s": sol.timings["total"],
        "consistent": None if sol.consistency is None else sol.consistency.consistent,
    }
    try:
        x = sol.simulate(t, system.x0, rtol=1e-9, atol=1e-9).x
        row["rmse_0_32"] = float(np.sqrt(np.mean((x - truth) ** 2)))
    except SimulationError as exc:
        x = np.full_like(truth, np.nan)
        row["rmse_0_32"] = None
        row["simulation_error"] = str(exc)
    row["success"] = bool(row["rmse_0_32"] is not None and row["rmse_0_32"] <= opts.success_tol)
    return RobustnessRun(row, x)


def robustness_task(opts: VdPOptions) -> dict[str, Any]:
    """`robustness_run` as a task of `collocnode.tools.tasks.run_tasks`: the row and the
    rollout ``x`` (1601, 2). A run stopped by Ctrl-C raises KeyboardInterrupt, so that it is
    neither stored nor counted: a rerun of the study runs it again."""
    run = robustness_run(opts)
    if run.row["status"] == SolverStatus.INTERRUPTED.value:
        raise KeyboardInterrupt
    return {**run.row, "x": run.x}


def _task_settings(run: VdPOptions) -> dict[str, Any]:
    """What decides a run's result (not where or how many at once it runs)."""
    return {k: val for k, val in run.settings.items() if k not in ("workers", "scheduler", "seeds")}


#: what stops a study before every seed has run: Ctrl-C (or SIGTERM), a store that cannot be
#: written, a lost Dask scheduler
Stop = KeyboardInterrupt | StorageError | ExecutorLost


def _run_all(
    runs: list[VdPOptions], opts: VdPOptions, store: Path, executor: Any = None
) -> tuple[dict[int, TaskOutcome], Stop | None]:
    """Every run on ``executor`` (None: a Dask client for ``opts.scheduler``, closed at the
    end, else ``workers`` local processes), each stored in ``store`` as it finishes and taken
    from there on a rerun. Returns the outcomes by seed and what stopped the study early, if
    anything (Ctrl-C: queued runs are dropped, running ones stop at their next IPOPT iteration;
    a storage error or a lost scheduler: nothing more runs); what finished is kept."""
    own = dask_executor(opts.scheduler) if executor is None and opts.scheduler else None
    tasks = [Task(f"seed-{r.seed}", r, settings=_task_settings(r)) for r in runs]
    done: dict[int, TaskOutcome] = {}
    seed_of = {t.key: r.seed for t, r in zip(tasks, runs, strict=True)}

    def keep(outcome: TaskOutcome) -> None:
        done[seed_of[outcome.key]] = outcome

    try:
        run_tasks(
            robustness_task,
            tasks,
            store=store,
            executor=executor if own is None else own,
            workers=opts.workers or None,
            on_outcome=keep,
        )
    except (KeyboardInterrupt, StorageError, ExecutorLost) as stop:
        return done, stop
    finally:
        if own is not None:
            own.shutdown()
    return done, None


def run_robustness(opts: VdPOptions, record: RunRecord, executor: Any = None) -> dict[str, Any]:
    """The paper's appendix study: many seeds, success rate and percentile bands, the seeds on
    ``executor`` (see `_run_all`) and stored in ``record.units("seeds")``.

    The study's status is "success" once every seed has run, whatever the seeds' own outcomes;
    "interrupted" after Ctrl-C and "failed" when a seed could not be stored or the scheduler
    was lost. Seeds interrupted or never run are counted apart from failures, and a seed lost
    to a storage error counts as nothing (the study stops with phase "storage"). A study that
    stopped early raises what stopped it, after recording its counts."""
    from ..tools import _plotting as plotting

    runs = [replace(opts, seed=opts.seed + k, seeds=1) for k in range(opts.seeds)]
    runs = [replace_flat(r, print_level=0) for r in runs]
    record.enter("training")
    done, stop = _run_all(runs, opts, record.units("seeds"), executor)
    finished = {seed: o.result for seed, o in done.items() if o.result is not None}
    rows = [
        {k: val for k, val in finished[r.seed].items() if k != "x"}
        for r in runs
        if r.seed in finished
    ]
    errors = [
        {"seed": seed, "error": o.error} for seed, o in sorted(done.items()) if o.result is None
    ]
    ran = len(rows) + len(errors)  # a seed whose run raised counts as a failure
    rate = sum(r["success"] for r in rows) / ran if ran else None
    status = "success" if stop is None else "failed"
    if isinstance(stop, KeyboardInterrupt):
        status = "interrupted"
    record.update(
        problem="vdp",
        study="robustness",
        status=status,
        settings=opts.settings,
        success_rate=rate,
        success_definition=f"RMSE of the re-simulation from x(0) against the noise-free "
        f"truth over [0, {T_ROBUST:g}] <= {opts.success_tol:g}, over the seeds that ran to the "
        "end; a seed whose run raised an error counts as a failure (a storage error stops the "
        "study and counts as nothing)",
        seeds_completed=len(rows),
        seeds_reused=sum(o.reused for o in done.values()),
        seeds_not_run=opts.seeds - len(done),
        seeds_failed=sum(not r["success"] for r in rows) + len(errors),
        seeds_with_errors=errors,
        status_counts={
            s: sum(r["status"] == s for r in rows) for s in sorted({r["status"] for r in rows})
        },
        median_total_s=float(np.median([r["total_s"] for r in rows])) if rows else None,
        median_iterations=float(np.median([r["iterations"] for r in rows])) if rows else None,
        runs=rows,
    )
    if isinstance(stop, StorageError):  # the command line records it, if the disk lets it
        raise stop
    record.write()
    if rows:
        record.enter("plots")
        xs = np.stack([finished[r.seed]["x"] for r in runs if r.seed in finished])
        t = np.linspace(0.0, T_ROBUST, xs.shape[1])
        truth = problems.get("vdp").simulate(t).x
        record.figure(
            plotting.percentile_bands(
                t,
                xs,
                truth,
                names=("x", "y"),
                title=f"{len(rows)} runs, σ = {opts.noise}: success rate {100 * rate:.0f} %",
            ),
            "percentile_bands.png",
        )
    if stop is not None:
        record.enter("training")  # where the study stopped, not the plots made after
        raise stop
    return record.result


def run(opts: VdPOptions, record: RunRecord, executor: Any = None) -> dict[str, Any]:
    """Train, evaluate, and write ``result.json`` and the plots into ``record.out_dir``; a
    robustness study (``opts.seeds > 1``) runs its seeds on ``executor`` when given (see
    `run_robustness`)."""
    from ..tools import _plotting as plotting

    if opts.seeds > 1:
        return run_robustness(opts, record, executor)
    record.update(problem="vdp", settings=opts.settings)
    record.enter("training")
    trained, split = train_recipe(opts)
    sol = trained.solution
    record.trained(sol)
    if trained.path is not None:
        record.regularization_path(trained.path)
    record.save_trained(sol)  # the trained model is safe before the evaluation starts
    unc = None
    if opts.uncertainty and opts.noise > 0:
        record.enter("uncertainty")
        unc = record.uncertainty(sol)
    elif opts.uncertainty:
        record.update(uncertainty={"skipped": "noise-free data: no measurement noise"})
    record.enter("evaluation")
    ev = evaluate(sol)
    record.update(**ev.metrics())
    record.against_trivial("extrapolation_rmse", ev.extrapolation_rmse, trivial(split.train, ev))
    band = None
    if unc is not None:
        band = unc.trajectory_band(ev.t, rtol=1e-10, atol=1e-10)
        inside = band.contains(ev.truth)
        record.update(
            trajectory_band={
                "level": band.level,
                "method": band.method,
                "truth_inside_share_train": float(inside[ev.t <= T_TRAIN].mean()),
                "truth_inside_share_extrapolation": float(inside[ev.t > T_TRAIN].mean()),
            }
        )
    record.write()
    record.enter("plots")
    record.figure(
        plotting.trajectories(
            ev.t,
            ev.truth,
            ev.t if ev.learned is not None else None,
            ev.learned,
            split.train.t,
            split.train.x,
            names=("x", "y"),
            train_end=T_TRAIN,
            title=f"Van der Pol, σ = {opts.noise}: data, truth, learned neural ODE",
            band=None if band is None else (band.x, band.lower, band.upper),
        ),
        "trajectories.png",
    )
    record.figure(
        plotting.vector_field_error(
            ev.xs,
            ev.ys,
            ev.field_error,
            path=ev.truth,
            title=f"error of the learned vector field, σ = {opts.noise}",
            path_label=f"true trajectory, t = 0–{T_EXTRAPOLATE:g} s",
        ),
        "vector_field_error.png",
    )
    # the objective the solve minimised: the fit at the nodes and the fixed weight penalty
    record.figure(
        plotting.iteration_history(
            np.array(sol.history),
            objective_label=f"objective: ∫ fit² dt + λ‖w‖²\n(λ = {sol.problem.lam:g})",
            title="IPOPT iterations of the training solve",
            violation_label="collocation residual\n(inf_pr)",
        ),
        "objective.png",
    )
    record.enter("done")
    return record.result
