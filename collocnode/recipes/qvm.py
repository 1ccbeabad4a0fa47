"""The quarter vehicle's hybrid PeN-ODE trained by collocation (Langenkamp et al. §4.1,
eqs. 14-19).

The friction F_fr(Δv_s) and the progressive spring F_pr(Δz_s) of the data-generating model are
replaced by two surrogate blocks inside the known linear physics; the loss is the integral of the
σ-normalised squared acceleration errors (eq. 16), with F(0) = 0 imposed as NLP constraints
(eq. 17). Strategies (§4.1.2):

* I:   random weights, node states from a simulation of the linear model (eq. 14);
* II:  train on the first eighth of the data (same strategy as I), simulate the trained hybrid
       model over the full horizon, and use its states and weights as the initial guess of the
       full problem;
* III: rational Chebyshev surrogates (eq. 19) instead of networks, initialised as in I; by
       default in a pole-free form (θ_0 = 1, squared denominator), with
       ``rational_form="paper"`` as eq. 19 writes it (θ_0 free, 32 parameters).
* W:   warm-started (ours, not the paper's): smooth the noisy observed states, regress the blocks
       on the observed accelerations at them through the known physics (eq. 15, with the
       F(0) = 0 constraints of eq. 17; `collocnode.training._warmstart.fit_initial_guess`),
       then polish weights and states with the full problem, started from the smoothed states.
* III-W: strategy III's rational surrogates (eq. 19, in ``rational_form``) started as W starts
       its networks: a least-squares fit of the rational functions to the observed accelerations
       through the physics, then the full problem (the paper does not give its initialisation of
       eq. 19).

Formulation: by default the road height z_r is a fifth state (z_r' = u, the road velocity); with
``road_as_input=True`` the model has the paper's four states [z_b, z_w, v_b, v_w] (eq. 14) and the
road height and velocity are both known inputs, u = [z_r, ż_r]. Same data, same loss (eq. 16);
the four-state NLP drops one state per node and its couplings to the weights.

Block scaling (our choice; the paper does not say): each block sees its input divided by the
standard deviation of that input in the (noisy) training states and its output is multiplied by
the force of the corresponding linear element at one standard deviation (c_s·σ_Δz, d_s·σ_Δv), so
weights of order one describe forces of the right size. The vehicle starts at rest in its static
equilibrium, as in the data generator, so x(0) = 0 is imposed (absolute heights are otherwise
unobservable from accelerations).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from .._data import Trajectory
from .._solve import solve
from ..algorithm import Algorithm
from ..models._hybrid import HybridModel
from ..nn import MLP, Block, RationalChebyshev, require_c2
from ..problems._layout import StateLayout
from ..strategies import Pretrained, StopWhenSettled
from ..training import BlockConstraint, TrainingProblem, TrainingSolution
from ..training._callbacks import BlockOutputs
from .base import TrainedModel, widths
from .settings import CollocationSettings, RegressionSettings

STRATEGIES = ("I", "II", "III", "W", "III-W")
# the strategies with rational surrogates, and those started by the regression
_RATIONAL, _REGRESSED = ("III", "III-W"), ("W", "III-W")
#: strategy III's blocks: "pole-free" (θ_0 = 1, denominator θ_0² + q²) or "paper" (eq. 19 as
#: written: θ_0 free, denominator θ_0 + q); see `collocnode.nn.RationalChebyshev`
RATIONAL_FORMS = ("pole-free", "paper")
HORIZON_S = 42.0  # the paper's road length; ``intervals`` count per 42 s


@dataclass(frozen=True)
class QVMRecipe:
    """The paper's quarter-vehicle training (§4.1.2); the defaults are its settings.

    Attributes:
        strategy: "I" (random weights), "II" (pre-trained on the first part of the data), "III"
            (rational Chebyshev blocks), "W" (warm-started by a regression) or "III-W" (rational
            blocks started by strategy W's regression); see the module docstring.
        pretrain_fraction: share of the data of strategy II's first phase.
        hidden: hidden-layer widths of each network (an int ``h``: two layers of ``h``).
        activation: the networks' activation (C²).
        rational_degree: degree of numerator and denominator of strategy III's blocks.
        rational_form: strategy III's form of eq. 19, "pole-free" or "paper".
        regression: strategy W's regression (smoother, sample stride, Hessian, stop).
        road_as_input: the paper's four states, road height and velocity as known inputs (off:
            the road height is a fifth state).
        settle_rtol: > 0 stops the full problem once the learned friction and spring over ±2σ
            of their training inputs change by less than this between two iterations, twice in
            a row, relative to each block's output scale (status "settled",
            [`StopWhenSettled`][collocnode.StopWhenSettled]); 0: off.
        collocation: mesh and solver settings; ``intervals`` count per 42 s of data and are
            scaled to the data's horizon, ``max_iter`` limits each phase, ``max_wall_time`` the
            whole strategy (the phases share it), ``regularization=None`` means λ = 0.
    """

    # CI-sized: 3 stages (the mesh is scaled to the short quick horizon), few iterations, no gcc
    QUICK: ClassVar[dict[str, Any]] = {"max_iter": 30, "stages": 3, "jit": False}

    strategy: str = "II"
    pretrain_fraction: float = 0.125
    hidden: int | tuple[int, ...] = 5
    activation: str = "squareplus"
    rational_degree: int = 7
    rational_form: str = "pole-free"
    regression: RegressionSettings = field(default_factory=RegressionSettings)
    road_as_input: bool = False
    settle_rtol: float = 0.0
    collocation: CollocationSettings = field(
        default_factory=lambda: CollocationSettings(
            intervals=2500, stages=5, tol=1e-7, max_iter=150, jit=True
        )
    )

    def __post_init__(self) -> None:
        v.choice("strategy", self.strategy, STRATEGIES)
        f = v.positive_float("pretrain_fraction", self.pretrain_fraction)
        if f >= 1:
            raise ValueError(f"pretrain_fraction must be < 1, got {f}")
        object.__setattr__(self, "hidden", widths("hidden", self.hidden))
        require_c2(self.activation)
        v.nonnegative_int("rational_degree", self.rational_degree)
        v.choice("rational_form", self.rational_form, RATIONAL_FORMS)
        if not isinstance(self.collocation, CollocationSettings):
            raise TypeError(f"collocation must be a CollocationSettings, got {self.collocation!r}")
        if not isinstance(self.road_as_input, (bool, np.bool_)):
            raise TypeError(f"road_as_input must be True or False, got {self.road_as_input!r}")
        v.nonnegative_float("settle_rtol", self.settle_rtol)
        if not isinstance(self.regression, RegressionSettings):
            raise TypeError(f"regression must be a RegressionSettings, got {self.regression!r}")
        if self.collocation.intervals is None:
            raise ValueError("collocation.intervals must be given for the quarter vehicle")

    @property
    def regularization(self) -> float:
        return self.collocation.lam(0.0)

    def blocks(self, system: Any, data: Trajectory) -> tuple[Block, Block]:
        """The friction and spring surrogates, scaled by the training data (module docstring)."""
        s_dv, s_dz = input_spread(data)
        f_dv, f_dz = system.params["d_s"] * s_dv, system.params["c_s"] * s_dz
        if self.strategy in _RATIONAL:
            d = self.rational_degree
            paper = self.rational_form == "paper"
            form = {"fixed_theta0": not paper, "positive_denominator": not paper}
            # Chebyshev polynomials live on [-1, 1]: cover ±4σ of the training inputs
            return (
                RationalChebyshev(d, d, input_scale=4 * s_dv, output_scale=f_dv, **form),
                RationalChebyshev(d, d, input_scale=4 * s_dz, output_scale=f_dz, **form),
            )
        h = self.hidden
        return (
            MLP((1, *h, 1), self.activation, input_scale=(s_dv,), output_scale=(f_dv,)),
            MLP((1, *h, 1), self.activation, input_scale=(s_dz,), output_scale=(f_dz,)),
        )

    def problem(
        self,
        model: HybridModel,
        data: Trajectory | Sequence[Trajectory],
        road: Any,
        state_guess: Any,
        params_guess: np.ndarray | None,
    ) -> TrainingProblem:
        """The training problem of eq. 16-17 on ``data`` (the system's five states; the
        model's own are taken from them) with the given initial guess. ``data`` may be several
        trajectories, each from rest on its own road: ``road`` is then a sequence of as many
        roads (one problem over a fleet of drives)."""
        if isinstance(state_guess, Trajectory):
            state_guess = model_trajectory(model, state_guess)
        if isinstance(data, Trajectory):
            fitted: Any = model_trajectory(model, data)
            inputs: Any = road_inputs(road, model)
        else:
            roads = list(road) if isinstance(road, Sequence) else [road]
            if len(roads) != len(data):
                raise ValueError(
                    f"road: one road per trajectory, got {len(roads)} roads for {len(data)} "
                    "trajectories"
                )
            fitted = [model_trajectory(model, d) for d in data]
            inputs = [road_inputs(r, model) for r in roads]
        return TrainingProblem(
            model,
            fitted,
            fit="outputs",
            scale="std",
            regularization=self.regularization,
            initial_state=np.zeros(model.n_states),
            inputs=inputs,
            block_constraints=(BlockConstraint("friction", 0.0), BlockConstraint("spring", 0.0)),
            state_guess=state_guess,
            params_guess=params_guess,
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
        """Train with the chosen strategy on one trajectory sampled from x(0) = 0 on
        ``system.road``; the mesh is scaled to its horizon. ``max_wall_time`` [s] caps the
        whole strategy (default: the settings' own). ``callback`` is the IPOPT iteration
        callback of [`collocnode.solve`][collocnode.solve], passed to every phase (each phase
        is a solve of its own: ``on_start`` and ``on_end`` run once per phase); the settings'
        stagnation rule, when on, runs beside it in every phase, and a pre-training it stops goes on
        to the full problem (a stop by ``callback`` ends the strategy)."""
        if not isinstance(data, Trajectory):
            if len(data) != 1:
                raise ValueError(f"the quarter vehicle trains on one trajectory, got {len(data)}")
            data = data[0]
        friction, spring = self.blocks(system, data)
        model = hybrid_model(system, friction, spring, self.road_as_input)
        road = system.road
        p0 = model.init_params(np.random.default_rng(seed))
        if self.strategy in _REGRESSED:
            problem = self.problem(model, data, road, "data", p0)
        else:
            # strategies I-III start the node states from the linear model (eq. 14)
            zero = lambda d: 0.0 * np.asarray(d)  # noqa: E731
            linear = system.simulate(data.t, np.zeros(5), road=road, friction=zero, spring=zero)
            problem = self.problem(model, data, road, linear, p0)
        result = solve(problem, self.algorithm(data, max_wall_time), seed=seed, callback=callback)
        return TrainedModel.of(system, result, StateLayout.for_system(system))

    def algorithm(self, data: Trajectory, max_wall_time: float | None = None) -> Algorithm:
        """The strategy as an algorithm: the collocation of the full problem (the mesh scaled
        to ``data``'s horizon, the stagnation rule in every solve when on) after the
        regression (W) or a pre-training on the first ``pretrain_fraction`` of the data (II),
        all under one wall-time cap (``max_wall_time``, default the settings' own)."""
        settings = self.collocation
        horizon = float(data.t[-1] - data.t[0])
        intervals = max(1, round(settings.intervals * horizon / HORIZON_S))
        # the phases share one cap (TimeLimit below); each IPOPT run gets what is left of it
        uncapped = replace(settings, max_wall_time=None)
        full = uncapped.solver(intervals)
        if self.settle_rtol:
            full = StopWhenSettled(
                full, Characteristics(data), rtol=self.settle_rtol, patience=2, floor=1.0
            )
        if self.strategy in _REGRESSED:
            alg: Algorithm = self.regression.warm_started(full, jit=settings.jit)
        elif self.strategy == "II":
            pre = uncapped.solver(max(1, round(intervals * self.pretrain_fraction)))
            alg = Pretrained(full, pretrain=pre, fraction=self.pretrain_fraction)
        else:
            alg = full
        return settings.capped(alg, max_wall_time)


class Characteristics:
    """The measure of ``settle_rtol``: the learned friction and spring on 41 points over ±2σ of
    their inputs in ``data`` (`input_spread`), each divided by its block's output scale
    (so a change is relative to the characteristic's size), concatenated (82,)."""

    def __init__(self, data: Trajectory, points: int = 41) -> None:
        s_dv, s_dz = input_spread(data)
        unit = np.linspace(-2.0, 2.0, points)
        self.grids = {"friction": s_dv * unit[:, None], "spring": s_dz * unit[:, None]}
        self.outputs = [BlockOutputs(name, grid) for name, grid in self.grids.items()]

    def __call__(self, state: Any) -> np.ndarray:
        parts = []
        for outputs in self.outputs:
            scale = state.model.blocks[outputs.block].output_scale or 1.0
            parts.append(outputs(state) / np.abs(np.asarray(scale, dtype=float)))
        return np.concatenate(parts)


def hybrid_model(
    system: Any, friction: Block, spring: Block, road_as_input: bool = False
) -> HybridModel:
    """The neural QVM: eq. 15 with F_fr = friction(Δv_s) and F_pr = spring(Δz_s); five states
    with input ż_r, or (``road_as_input``) four states with inputs [z_r, ż_r]."""
    import casadi as ca

    def physics(x, u, nets):
        # the five states of the system's eq. 15, the road height from the state or the input
        full = ca.vertcat(x, u[0]) if road_as_input else x
        dz, dv = system.relative_motion(full)
        return system.physics_rhs(full, u[-1], nets["friction"](dv), nets["spring"](dz))

    def rhs(x, u, t, nets, params):
        xdot = physics(x, u, nets)[0]
        return xdot[:4] if road_as_input else xdot

    def outputs(x, u, t, nets, params):
        return physics(x, u, nets)[1]

    kwargs: dict[str, Any] = {"system": system, "friction": friction, "spring": spring}
    if road_as_input:  # recorded only when set: files of the five-state model stay as they were
        kwargs["road_as_input"] = True
    return HybridModel(
        n_states=4 if road_as_input else 5,
        blocks={"friction": friction, "spring": spring},
        rhs=rhs,
        outputs=outputs,
        n_outputs=2,
        n_inputs=2 if road_as_input else 1,
        state_names=system.state_names[:4] if road_as_input else system.state_names,
        input_names=("z_r", *system.input_names) if road_as_input else system.input_names,
        output_names=("a_b", "a_w"),
        recipe=("collocnode.recipes.qvm:hybrid_model", kwargs),
    )


def model_trajectory(model: HybridModel, data: Trajectory) -> Trajectory:
    """``data`` (the system's five states) in the model's states: without the road height
    for the four-state model (it is an input there)."""
    if model.n_states == data.x.shape[1]:
        return data
    return replace(
        data,
        x=data.x[:, : model.n_states],
        state_names=data.state_names[: model.n_states],
        u=None,
        input_names=(),
    )


def input_spread(data: Trajectory) -> tuple[float, float]:
    """σ of Δv_s and Δz_s in the training states."""
    dz = data.x[:, 1] - data.x[:, 0]
    dv = data.x[:, 3] - data.x[:, 2]
    return float(np.std(dv)), float(np.std(dz))


def road_inputs(road: Any, model: HybridModel | None = None) -> RoadInputs:
    """The known inputs of ``model`` on ``road`` as ``u(t: (n,)) -> (n, n_inputs)``: the road
    velocity [m/s], with the road height [m] before it for the four-state model (relative to
    its height at t = 0, as the system's state z_r). See `RoadInputs`."""
    return RoadInputs(road, model is not None and model.n_inputs == 2)


class RoadInputs:
    """A road's known inputs as a function of time (`road_inputs`).

    Times go through the road's piecewise Chebyshev re-expansion
    (`ISO8608Road.scalar_evaluator`, built at the first call; equal to the exact sums over
    ~10³ harmonics to round-off): one time at a time (an adaptive integrator's right-hand side,
    ~10⁵ calls) at a few µs, arrays by vectorised Clenshaw sums. A plain object, so that a problem
    driven by it can be pickled and sent to other processes (the blocks of
    [`ConsensusADMM`][collocnode.ConsensusADMM]); the re-expansion is not sent, each process builds
    its own."""

    def __init__(self, road: Any, with_height: bool) -> None:
        self.road = road
        self.with_height = with_height
        self._z0 = float(road.elevation(0.0)) if with_height else 0.0
        self._evaluators: tuple[Any, ...] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_evaluators": None}

    def __call__(self, t: Any) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        if not hasattr(self.road, "scalar_evaluator"):
            return self._exact(t)
        if self._evaluators is None:
            orders = (0, 1) if self.with_height else (1,)
            self._evaluators = tuple(self.road.scalar_evaluator(d) for d in orders)
        if t.size == 1:
            tt = float(t.reshape(-1)[0])
            row = [e(tt) for e in self._evaluators]
            if self.with_height:
                row[0] -= self._z0
            return np.array(row).reshape((*t.shape, len(row)))
        # an array: the re-expansion's vectorised Clenshaw sums (equal to the exact sums to
        # round-off, and ~100x cheaper than one sine per harmonic and time on 42 s at 1 kHz)
        t = self.road.check_times(t)
        cols = [e.evaluate(t) for e in self._evaluators]
        if self.with_height:
            cols[0] = cols[0] - self._z0
        return np.stack(cols, axis=-1)

    def _exact(self, t: np.ndarray) -> np.ndarray:
        if self.with_height:
            return np.stack([self.road.elevation(t) - self._z0, self.road.velocity(t)], axis=-1)
        return self.road.velocity(t)[..., None]


def characteristic_errors(
    sol: TrainingSolution, system: Any, data: Trajectory, points: int = 401
) -> dict[str, Any]:
    """Learned vs true characteristic on a grid over ±2σ of the training inputs.

    ``rmse`` in N, and ``max_rel_range``: the largest error divided by the range of the true
    characteristic over the grid (the issue's 5 % criterion).
    """
    s_dv, s_dz = input_spread(data)
    out: dict[str, Any] = {}
    for name, sigma, true in (("friction", s_dv, system.friction), ("spring", s_dz, system.spring)):
        x = np.linspace(-2 * sigma, 2 * sigma, points)
        block = sol.model.blocks[name]
        learned = block.numpy(x[:, None], sol.params[name])[:, 0]
        ref = np.asarray(true(x), dtype=float)
        err = learned - ref
        out[name] = {
            "rmse": float(np.sqrt(np.mean(err**2))),
            "max_abs": float(np.max(np.abs(err))),
            "max_rel_range": float(np.max(np.abs(err)) / (np.ptp(ref) or 1.0)),
            "sigma": sigma,
        }
    return out
