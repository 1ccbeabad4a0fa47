"""Any registered benchmark system trained by collocation (the suitable neural ODE: full state,
second order, or partitioned coordinates for mechanisms), scored on its extrapolation window."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validation as v
from .. import problems
from ..compare import make_trainer
from ..compare.integrators import DivergenceError
from ..io import save_figure, write_json


@dataclass(frozen=True)
class SystemOptions:
    """Settings of a collocation run on a benchmark system (see ``compare/collocation.py``).

    ``intervals`` defaults to one mesh interval per sample interval of the training window.
    """

    problem: str = ""
    preset: str = ""
    noise: float = 0.0
    seed: int = 0
    intervals: int = 0
    stages: int = 3
    hidden: int = 16
    layers: int = 2
    activation: str = "tanh"
    regularization: float = 1e-4
    tol: float = 1e-7
    max_iter: int = 300
    jit: bool = False
    print_level: int = 0

    def __post_init__(self) -> None:
        v.choice("problem", self.problem, problems.available())
        if self.preset:
            v.choice(f"preset of {self.problem}", self.preset, problems.presets(self.problem))
        v.nonnegative_float("noise", self.noise)
        v.nonnegative_int("seed", self.seed)
        v.nonnegative_int("intervals", self.intervals)
        v.positive_int("stages", self.stages)
        v.positive_int("hidden", self.hidden)
        v.positive_int("layers", self.layers)
        v.positive_int("max_iter", self.max_iter)
        self.trainer()  # validates the remaining options before any work

    def trainer(self) -> Any:
        return make_trainer(
            "collocation",
            self.problem,
            hidden=(self.hidden,) * self.layers,
            activation=self.activation,
            stages=self.stages,
            regularization=self.regularization,
            tol=self.tol,
            epochs=self.max_iter,
            jit=self.jit,
            seed=self.seed,
            intervals=self.intervals or None,
        )


def run(opts: SystemOptions, out_dir: str | Path) -> dict[str, Any]:
    """Train, roll out over train + extrapolation windows, write result.json and a plot."""
    from .. import plotting

    out_dir = Path(out_dir)
    system = problems.get(opts.problem, opts.preset or None)
    split = system.generate(noise=opts.noise, seed=opts.seed)
    truth = system.simulate(split.full.t) if opts.noise > 0 else split.full
    trainer = opts.trainer()
    fit = trainer.fit(system, split.train)
    sol = trainer.solution
    n_train = split.train.n_samples
    result: dict[str, Any] = {
        "problem": opts.problem,
        "preset": system.preset,
        "settings": asdict(opts),
        **sol.solution.to_dict(),
        "status": sol.status.value,
        "n_params": fit.n_params,
        "n_train": n_train,
        "n_test": split.full.n_samples - n_train,
    }
    try:
        x = trainer.predict(split.full.t, truth.x[0])
        err = (x - truth.x) ** 2
        result["train_mse"] = float(err[:n_train].mean())
        result["test_mse"] = float(err[n_train:].mean()) if n_train < err.shape[0] else None
        if system.n_constraints:
            result["max_constraint_residual"] = float(np.max(np.abs(system.constraints(x))))
    except DivergenceError as exc:
        x = None
        result.update(
            train_mse=None,
            test_mse=None,
            message=f"rollout diverged at step {exc.step} (t = {exc.t:.4g})",
        )
    write_json(out_dir / "result.json", result)
    save_figure(
        plotting.trajectories(
            truth.t,
            truth.x[:, : min(4, system.n_states)],
            truth.t if x is not None else None,
            None if x is None else x[:, : min(4, system.n_states)],
            split.train.t,
            split.train.x[:, : min(4, system.n_states)],
            names=system.state_names[:4],
            train_end=float(split.train.t[-1]),
            title=f"{opts.problem}: collocation-trained model",
        ),
        out_dir / "trajectories.png",
    )
    return result
