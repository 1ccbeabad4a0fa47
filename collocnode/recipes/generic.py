"""The suitable neural ODE for any registered system, trained by collocation.

A neural ODE on the full state for first-order systems, a second-order model q'' = NN(q, q', u)
for mechanical ones, and for mechanisms with holonomic constraints the same on the independent
coordinates only (coordinate partitioning, as FNODE and MBD-NODE do: the dependent coordinates are
recovered by Newton on Φ(q) = 0 in every rollout, so rollouts satisfy the position constraints to
Newton's tolerance).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from .._data import Trajectory
from .._solve import solve
from ..models._hybrid import NeuralODE
from ..nn import MLP
from ..nn._activations import require_c2
from ..nn._mlp import INITS
from ..problems import System
from ..problems._layout import StateLayout
from ..strategies import RegularizationPath, WarmStarted
from ..training import TrainingProblem
from .base import TrainedModel, widths
from .settings import CollocationSettings

#: the default mesh's largest number of intervals: one per sample interval up to the presets'
#: longest training windows (slider_crank, vehicle4dof: 1,500 samples). The lorenz data set's
#: 10,000 samples as 9,999 intervals of 3 stages and 387 weights did not fit in 24 GB (the
#: process passed 17 GB inside IPOPT's solve and kept growing).
MAX_DEFAULT_INTERVALS = 1_500


def system_checked(system: object) -> System:
    """``system`` if it is a `System`; otherwise a TypeError."""
    if not isinstance(system, System):
        raise TypeError(
            f"system must be a collocnode.problems.System (problems.get(name)), got {system!r:.80}"
        )
    return system


def trajectories_of(system: System, data: object) -> list[Trajectory]:
    """``data`` (one Trajectory or a non-empty sequence of them) as a list, each with the
    system's ``n_states`` state columns and every value present (the recipes reduce and scale
    the states of every sample); otherwise one error naming ``data``."""
    trajs = [data] if isinstance(data, Trajectory) else data
    if isinstance(trajs, (str, bytes)) or not isinstance(trajs, Sequence) or not trajs:
        raise TypeError(
            f"data must be a Trajectory or a non-empty sequence of Trajectories, got {data!r:.80}"
        )
    for k, tr in enumerate(trajs):
        if not isinstance(tr, Trajectory):
            raise TypeError(f"data[{k}] must be a Trajectory, got {tr!r:.80}")
        if tr.x.shape[1] != system.n_states:
            raise ValueError(
                f"data[{k}] has {tr.x.shape[1]} state columns, but {system.name} has "
                f"{system.n_states} ({', '.join(system.state_names)})"
            )
        tr.require_complete(f"data[{k}]")
    return list(trajs)


def data_scales(trajs: Sequence[Trajectory], n_out: int, second_order: bool) -> dict[str, Any]:
    """Input shift/scale (mean/std of the network inputs) and output scale (std of the
    finite-difference derivatives the network must produce) of the training data."""
    inputs = np.vstack([np.column_stack([tr.x, tr.u]) for tr in trajs])
    derivs = np.vstack([np.gradient(tr.x, tr.t, axis=0) for tr in trajs])
    if second_order:
        derivs = derivs[:, n_out:]
    std = inputs.std(axis=0)
    out = derivs.std(axis=0)
    return {
        "input_shift": tuple(inputs.mean(axis=0)),
        "input_scale": tuple(np.where(std > 0, std, 1.0)),
        "output_scale": tuple(np.where(out > 0, out, 1.0)),
    }


def _one_output(scales: dict[str, Any], k: int) -> dict[str, Any]:
    """The scales of a one-output network for output k."""
    if not scales:
        return {}
    return {**scales, "output_scale": (scales["output_scale"][k],)}


@dataclass(frozen=True)
class SystemRecipe:
    """A neural ODE for any registered system (see the module docstring).

    Attributes:
        hidden: hidden-layer widths (an int ``h``: two layers of ``h``).
        activation: hidden-layer activation (C², for IPOPT's exact Hessians).
        init: weight initialisation of the networks.
        normalize: shift/scale the network inputs by the training data's mean/std and its
            outputs by the std of finite-difference derivatives (constants, not weights).
        per_state_nets: one network per derivative instead of one with several outputs.
        initial_state: "data" fixes x(t0) to each trajectory's first sample, "system" to the
            system's own x0 (known initial conditions, paper eqs. 21d-e); None leaves it free.
        state_guess: "data" (the interpolated samples) or "constant" (x(t0) at every node, the
            paper's trivial guess).
        warm_start: start from the smoothed data and weights regressed on its derivative
            estimates (`collocnode.training._warmstart`) instead of ``state_guess`` and random
            weights; its time is counted in `TrainedModel.total_s`.
        collocation: mesh and solver settings; ``intervals=None`` puts one mesh interval on
            each sample interval, at most `MAX_DEFAULT_INTERVALS` (longer data sets are
            interpolated onto that mesh), ``regularization=None`` means λ = 1e-4;
            ``regularization_path=True`` chooses λ on held-out data instead
            ([`RegularizationPath`][collocnode.RegularizationPath], the whole problem refitted at
            the chosen λ; the path is `TrainedModel.path`).
    """

    QUICK: ClassVar[dict[str, Any]] = {"max_iter": 100, "stages": 3, "jit": False}

    hidden: int | tuple[int, ...] = (16, 16)
    activation: str = "tanh"
    init: str = "xavier_normal"
    normalize: bool = True
    per_state_nets: bool = False
    initial_state: str | None = "data"
    state_guess: str = "data"
    warm_start: bool = False
    collocation: CollocationSettings = field(default_factory=CollocationSettings)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", widths("hidden", self.hidden))
        require_c2(self.activation)
        v.choice("init", self.init, INITS)
        for name in ("normalize", "per_state_nets", "warm_start"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if self.initial_state is not None:
            v.choice("initial_state", self.initial_state, ("data", "system"))
        v.choice("state_guess", self.state_guess, ("data", "constant"))
        if not isinstance(self.collocation, CollocationSettings):
            raise TypeError(f"collocation must be a CollocationSettings, got {self.collocation!r}")

    @property
    def regularization(self) -> float:
        return self.collocation.lam(1e-4)

    def model(self, system: Any, layout: StateLayout, trajs: Sequence[Trajectory]) -> Any:
        """The neural ODE of ``system`` in the coordinates of ``layout``, with data-derived
        scalings from ``trajs`` (model coordinates)."""
        names = tuple(system.state_names[i] for i in layout.state_index)
        n_in = layout.n_model + layout.n_inputs
        # Data-derived constant scalings keep the network's inputs and outputs O(1) whatever
        # the system's units; they are fixed before training, not weights.
        scales = data_scales(trajs, layout.n_out, layout.second_order) if self.normalize else {}
        hidden = self.hidden
        if self.per_state_nets:
            nets: Any = [
                MLP((n_in, *hidden, 1), self.activation, init=self.init, **_one_output(scales, k))
                for k in range(layout.n_out)
            ]
        else:
            nets = MLP((n_in, *hidden, layout.n_out), self.activation, init=self.init, **scales)
        return NeuralODE(
            nets, n_inputs=layout.n_inputs, second_order=layout.second_order, state_names=names
        )

    def train(
        self,
        system: Any,
        data: Trajectory | Sequence[Trajectory],
        *,
        seed: int = 0,
        max_wall_time: float | None = None,
        callback: Callable[[Any], Any] | None = None,
    ) -> TrainedModel:
        """Train on ``data`` (system coordinates; several trajectories share the weights).
        ``callback`` is the IPOPT iteration callback of
        [`collocnode.solve`][collocnode.solve]."""
        layout = StateLayout.for_system(system_checked(system))
        trajs = [
            Trajectory(tr.t, layout.reduce(tr.x), tr.u if system.n_inputs else None)
            for tr in trajectories_of(system, data)
        ]
        initial_state: Any = self.initial_state
        if initial_state == "system":
            initial_state = layout.reduce(system.x0)
        problem = TrainingProblem(
            self.model(system, layout, trajs),
            trajs if len(trajs) > 1 else trajs[0],
            regularization=self.regularization,
            initial_state=initial_state,
            state_guess=self.state_guess,
        )
        settings = self.collocation
        if settings.intervals is None:
            intervals = min(trajs[0].n_samples - 1, MAX_DEFAULT_INTERVALS)
            settings = replace(settings, intervals=max(1, intervals))
        alg = settings.solver(max_wall_time=max_wall_time)
        if self.warm_start:
            alg = WarmStarted(alg, jit=settings.jit)
        if not settings.regularization_path:
            return TrainedModel.of(
                system, solve(problem, alg, seed=seed, callback=callback), layout
            )
        solution = solve(problem, RegularizationPath(alg), seed=seed, callback=callback)
        chosen = solution.record(RegularizationPath)
        trained = TrainedModel.of(system, solution, layout)
        trained.times["regularization_path"] = chosen.times["path"]
        trained.path = chosen
        return trained
