"""Any registered benchmark system trained by collocation with its recipe (the suitable neural ODE:
full state, second order, or partitioned coordinates for mechanisms), scored on its
extrapolation window."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as v
from .. import problems
from ..models._simulate import SimulationError
from ..recipes.generic import SystemRecipe
from ..tools._options import flat_dict
from .record import RunRecord


@dataclass(frozen=True)
class SystemOptions:
    """Settings of a collocation run on a benchmark system: the data (problem, preset, noise,
    seed) and the recipe (`SystemRecipe`, whose fields are
    reached by their own names: ``--hidden``, ``--intervals`` (default: one mesh interval per
    sample interval of the training window), ``--max-iter``, ...). ``uncertainty`` computes the
    trained model's error bars on noisy data (``sol.uncertainty()``) into ``result.json`` and
    ``model.json``.

    Attributes:
        problem: the registered benchmark system.
        preset: the system's preset (empty: its first).
        noise: standard deviation of the Gaussian noise added to the observed states.
        seed: seed of the data and the initial weights.
        uncertainty: compute the trained model's error bars on noisy data.
    """

    problem: str = ""
    preset: str = ""
    noise: float = 0.0
    seed: int = 0
    uncertainty: bool = True
    recipe: SystemRecipe = field(default_factory=SystemRecipe)

    def __post_init__(self) -> None:
        v.choice("problem", self.problem, problems.available())
        if self.preset:
            v.choice(f"preset of {self.problem}", self.preset, problems.presets(self.problem))
        v.nonnegative_float("noise", self.noise)
        v.nonnegative_int("seed", self.seed)
        if not isinstance(self.uncertainty, (bool, np.bool_)):
            raise TypeError(f"uncertainty must be True or False, got {self.uncertainty!r}")
        if not isinstance(self.recipe, SystemRecipe):
            raise TypeError(f"recipe must be a SystemRecipe, got {self.recipe!r}")


def run(opts: SystemOptions, record: RunRecord) -> dict[str, Any]:
    """Train, roll out over train + extrapolation windows, write result.json, model.json and
    a plot."""
    from ..tools import _plotting as plotting

    record.enter("data")
    system = problems.get(opts.problem, opts.preset or None)
    split = system.generate(noise=opts.noise, seed=opts.seed)
    truth = system.simulate(split.full.t) if opts.noise > 0 else split.full
    n_train = split.train.n_samples
    record.update(problem=opts.problem, preset=system.preset, settings=flat_dict(opts))
    record.enter("training")
    trained = opts.recipe.train(system, split.train, seed=opts.seed)
    sol = trained.solution
    record.trained(sol, n_train=n_train, n_test=split.full.n_samples - n_train)
    if trained.path is not None:
        record.regularization_path(trained.path)
    record.save_trained(sol)
    if opts.uncertainty and opts.noise > 0:
        record.enter("uncertainty")
        record.uncertainty(sol)
    elif opts.uncertainty:
        record.update(uncertainty={"skipped": "noise-free data: no measurement noise"})
    record.enter("evaluation")
    try:
        x = trained.predict(split.full.t, truth.x[0], rtol=1e-9, atol=1e-9)
        err = (x - truth.x) ** 2
        record.update(
            train_mse=float(err[:n_train].mean()),
            test_mse=float(err[n_train:].mean()) if n_train < err.shape[0] else None,
        )
        if n_train < err.shape[0]:
            record.against_trivial("test_mse", record.result["test_mse"], trivial(split, truth))
        if system.n_constraints:
            record.update(max_constraint_residual=float(np.max(np.abs(system.constraints(x)))))
    except SimulationError as exc:
        x = None
        record.update(train_mse=None, test_mse=None, simulation_error=str(exc))
        if n_train < truth.x.shape[0]:
            record.against_trivial("test_mse", None, trivial(split, truth))
    record.write()
    record.enter("plots")
    k = min(4, system.n_states)
    record.figure(
        plotting.trajectories(
            truth.t,
            truth.x[:, :k],
            truth.t if x is not None else None,
            None if x is None else x[:, :k],
            split.train.t,
            split.train.x[:, :k],
            names=system.state_names[:4],
            train_end=float(split.train.t[-1]),
            title=f"{opts.problem}: collocation-trained model",
        ),
        "trajectories.png",
    )
    record.enter("done")
    return record.result


def trivial(split: Any, truth: Any) -> dict[str, float]:
    """The MSE over the extrapolation window of two predictions that need no model: the
    training data's mean and its last sample, held constant."""
    n_train = split.train.n_samples
    target = truth.x[n_train:]
    return {
        which: float(np.mean((target - value) ** 2))
        for which, value in (("mean", split.train.x.mean(axis=0)), ("last", split.train.x[-1]))
    }
