"""The training problem (Langenkamp et al. eqs. 6 and 21) and its transcription into a DOP."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from .._data import Trajectory
from .._status import SolveInterrupted
from ..algorithm import Lowered
from ..models._hybrid import HybridModel
from ..transcription._problem import (
    DynamicOptimizationProblem,
    Inputs,
    Proximal,
    Samples,
    Segment,
)
from . import _guess as guesses
from ._checks import (
    LOSSES,
    SAMPLE_WEIGHTS,
    check_block_constraints,
    check_data,
    check_data_matches_model,
    check_fit,
    check_initial_state,
    check_inputs,
    check_interpolation,
    check_path_constraints,
    check_scale,
    check_state_bounds,
    check_state_guess,
    check_tspan,
    check_within_bounds,
    check_x_nominal,
    column_label,
    mentions_data,
)
from ._constraints import BlockConstraint, PathConstraint
from ._dop_terms import FitTerms, block_constraint, path_constraint
from ._layout import Layout, check_trajectory_params
from ._normalization import normalize_inputs
from ._observation import (
    align_to_model,
    column_values,
    measured,
    observed_masks,
    undetermined_states,
    warn_undetermined,
)
from ._samples import cell_weights, check_mask


@dataclass(frozen=True)
class TrainingProblem:
    """Fit a model's parameters to one trajectory or to several (sharing the parameters).

    Args:
        model: the (hybrid) neural ODE. Where it has no column names, it takes the data's
            (``problem.model`` is then a copy with them).
        data: the training trajectory (states, inputs, outputs at the sample times), or a
            sequence of trajectories (different initial conditions, inputs, experimental
            conditions ``Trajectory.params``, ...): each becomes its own set of node states in
            the NLP, all sharing the weights, so the cost grows linearly with the number of
            trajectories. NaN marks a missing value; a state that is not measured is a column
            of NaN, or absent from a trajectory whose ``state_names`` name the measured states
            (a *hidden* state: see `collocnode.training._observation`).
        fit: which measured quantities enter the loss: "states" (every state that some
            trajectory measures), "outputs" (the model's outputs y = h(x, u, t, blocks,
            params) against ``data.y``), or a sequence of state/output names.
        scale: per fitted column divisor s_c: "none", "std" (the data's standard deviation,
            paper eq. 16) or an array.
        regularization: λ of the weight penalty λ‖w‖² on the block weights (paper eq. 21a), or
            None (the default): not chosen by the user -- 0 in a plain collocation solve, and
            chosen on held-out data by [`RegularizationPath`][collocnode.RegularizationPath] (which
            the default algorithm of ``solve`` uses for such a problem).
            [`lam`][collocnode.TrainingProblem.lam] is the value in use.
        initial_state: fixed x(t0) (paper eqs. 21d-e): an array (n_states,) for every
            trajectory or one row per trajectory (n_trajectories, n_states), NaN entries free;
            "data" (each state's first sample where the trajectory measures it there, free
            elsewhere); or None for free initial states.
        block_constraints: constraints on blocks at given inputs.
        tspan: training horizon of a single trajectory; default: the data's time span.
        interpolation: "cubic" or "linear" interpolation of the data at the collocation nodes.
        inputs: exact known inputs ``u(t: (n,)) -> (n, n_inputs)`` (one callable per trajectory
            for several); default: interpolate data.u.
        state_guess: initial guess of the node states: "constant" (x(t0) everywhere, as in the
            paper), "data" (the interpolated data; states a trajectory does not measure
            integrated by the model with the measured ones held on the data), "simulate" (the
            model integrated from x(t0)), a callable ``t -> (n, n_states)``, or a
            [`Trajectory`][collocnode.Trajectory] to interpolate (one per trajectory for several).
            See `collocnode.training._guess`; every guess is projected into the state bounds.
        params_guess: initial parameter vector; default: the blocks' random initialisation
            (seeded by ``solve(..., seed=...)``).
        x_nominal: typical state magnitudes for the NLP's scaling: "auto" (the standard deviation
            of each state's measured values; 1 where they are constant; for a hidden state the
            spread of its initial guess), None (no scaling) or an array (n_states,).
        loss: "nodes" (the interpolated data at the collocation nodes, Radau quadrature) or
            "samples" (at the measurement times; see the module docstring). The samples of a
            trajectory must lie inside its horizon (``tspan`` keeps only the samples inside it).
        sample_weights: how ``loss="samples"`` weighs the samples of each fitted column:
            "least_squares" (every observed sample alike, the maximum-likelihood fit for
            independent noise of one size per column) or "cells" (each by the length of its
            cell between its neighbours: the trapezoid rule, so the loss approximates the
            integral of the node loss; on irregular samples it weighs a sample after a long gap
            more, which biases the fit where the noise is the same everywhere). Both sum to the
            horizons' total length per column, so λ means the same with either.
        mask: missing values (``loss="samples"`` only): "finite" (a fitted value is observed
            where the data hold one, missing where NaN), or a boolean array (n_samples, n_fit),
            True where fitted column c (in the order of
            [`columns`][collocnode.TrainingProblem.columns]) is observed, for one trajectory; for
            several, a sequence with one such array (or None: all observed) per trajectory. A
            missing value contributes nothing (its entry in the data, NaN or a number, is ignored);
            every trajectory needs an observed value in its horizon. A fitted column that a
            trajectory never observes is hidden there.
        proximal: a [`Proximal`][collocnode.Proximal] term pulling the parameters
            (and, for one trajectory, the states at the horizon's ends, in the NLP's scaled
            units) toward a centre: the pull of consensus ADMM on a block. None: none.
        x_lb, x_ub: state bounds, hard constraints at every node of every trajectory (e.g.
            ``x_lb=0`` for concentrations): a number for every state, one per state, or a
            mapping of state names to numbers (None: unbounded). Measured and fixed initial
            values must lie inside them.
        path: path constraints ``lb <= g(x, u, t, blocks, params) <= ub`` at every collocation
            node ([`PathConstraint`][collocnode.PathConstraint], or a sequence of them), or None.

    Per-trajectory parameters of the model (``Parameter(..., per_trajectory=True)``) take each
    trajectory's value from its ``params`` (or are fitted per trajectory); the solution's
    [`TrainingSolution.trajectory_params`][collocnode.TrainingSolution.trajectory_params] gives them
    back.

    ``problem_kind`` is "training" (the trait the algorithms of `collocnode.algorithm`
    read); [`subset`][collocnode.TrainingProblem.subset] and
    [`window`][collocnode.TrainingProblem.window] give the parts of the problem that consensus ADMM
    and pre-training solve.

    Examples:
        Two experiments from different initial states, one set of weights (the initial states fixed
        to each trajectory's first sample):

        ```python
        from collocnode import IpoptOptions, NeuralODE, RadauIIA, TrainingProblem, problems, solve
        from collocnode.nn import MLP

        system = problems.get("vdp")
        runs = [  # two experiments from different initial states
            system.generate(noise=0.05, seed=1).train,
            system.generate(noise=0.05, seed=2, x0=[1.0, 1.0]).train,
        ]
        model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
        problem = TrainingProblem(model, runs, regularization=1e-4, initial_state="data")
        print(problem.columns, problem.lam)  # the fitted columns, λ
        sol = solve(problem, RadauIIA(intervals=30, ipopt=IpoptOptions(print_level=0)), seed=0)
        assert sol.n_segments == 2  # one set of node states per trajectory, one set of weights
        print(sol.status, f"objective {sol.objective:.4f}")
        ```
    """

    problem_kind: ClassVar[str] = "training"

    model: HybridModel
    data: Trajectory | Sequence[Trajectory]
    fit: str | Sequence[str] = "states"
    scale: str | Sequence[float] = "none"
    regularization: float | None = None
    initial_state: Any = None
    block_constraints: Sequence[BlockConstraint] = ()
    tspan: tuple[float, float] | None = None
    interpolation: str = "cubic"
    inputs: Any = None
    state_guess: Any = "constant"
    params_guess: Any = None
    x_nominal: Any = "auto"
    loss: str = "nodes"
    sample_weights: str = "least_squares"
    mask: Any = None
    proximal: Proximal | None = None
    x_lb: Any = None
    x_ub: Any = None
    path: PathConstraint | Sequence[PathConstraint] | None = None
    _columns: tuple[tuple[str, int], ...] = field(default=(), init=False, repr=False)
    # values derived from the fields on first use (the hidden states' guesses and scaling)
    _cache: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the one validation point: each check below owns one field or one concern
        if not isinstance(self.model, HybridModel):
            raise TypeError(f"model must be a HybridModel, got {self.model!r:.80}")
        data = check_data(self.data)
        model, data = align_to_model(self.model, data)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "data", data[0] if len(data) == 1 else data)
        self.model.check_smooth()
        check_inputs(self.inputs, len(data))
        check_data_matches_model(self.model, data, self.inputs)
        check_trajectory_params(self.model, data)
        object.__setattr__(self, "_columns", check_fit(self.fit, self.model, data))
        if self.regularization is not None:
            v.nonnegative_float("regularization", self.regularization)
        v.choice("loss", self.loss, LOSSES)
        v.choice("sample_weights", self.sample_weights, SAMPLE_WEIGHTS)
        if self.loss != "samples" and self.sample_weights != "least_squares":
            raise ValueError(
                f"sample_weights={self.sample_weights!r} needs loss='samples' (the loss at the "
                f"nodes weighs the nodes by the Radau quadrature), got loss={self.loss!r}"
            )
        interpolated = (
            self.loss == "nodes"
            or (self.model.n_inputs > 0 and self.inputs is None)
            or mentions_data(self.state_guess)
        )
        check_interpolation(self.interpolation, data, interpolated)
        object.__setattr__(
            self, "initial_state", check_initial_state(self.initial_state, self.model, len(data))
        )
        check_scale(self.scale, len(self._columns))
        if self.tspan is not None:
            object.__setattr__(self, "tspan", check_tspan(self.tspan, data))
        object.__setattr__(
            self,
            "block_constraints",
            check_block_constraints(self.block_constraints, self.model),
        )
        check_state_guess(self.state_guess, self.model, len(data))
        check_x_nominal(self.x_nominal, self.model.n_states)
        if self.params_guess is not None:
            guess = v.finite_array("params_guess", self.params_guess, shape=(self.model.n_params,))
            object.__setattr__(self, "params_guess", guess)
        mask = check_mask(self.mask, self.loss, data, len(self._columns))
        mask = observed_masks(mask, data, self._columns, self._label)
        object.__setattr__(self, "mask", mask)
        self._check_observed()
        for name, default in (("x_lb", -np.inf), ("x_ub", np.inf)):
            bound = check_state_bounds(name, getattr(self, name), self.model, default)
            object.__setattr__(self, name, None if np.all(bound == default) else bound)
        lb, ub = self.state_bounds()
        bounded = np.isfinite(lb).any() or np.isfinite(ub).any()
        measured_values = tuple(
            replace(d, x=np.where(self.measured(k), d.x, np.nan)) if bounded else d
            for k, d in enumerate(data)
        )
        check_within_bounds(lb, ub, measured_values, self.initial_states(), self.model)
        object.__setattr__(self, "path", check_path_constraints(self.path, self.model))
        self._check_proximal()
        self._warn_undetermined()
        normalize_inputs(self)

    def _check_proximal(self) -> None:
        prox = self.proximal
        if prox is None:
            return
        if not isinstance(prox, Proximal):
            raise TypeError(f"proximal must be a Proximal or None, got {prox!r:.80}")
        m = self.model
        if prox.params is not None and prox.params.shape != (m.n_params,):
            raise ValueError(
                f"proximal.params must have shape ({m.n_params},), got {prox.params.shape}"
            )
        for name in ("initial", "final"):
            centre = getattr(prox, name)
            if centre is None:
                continue
            if self.n_trajectories != 1:
                raise ValueError(
                    f"proximal.{name} pulls the state of one trajectory, the problem has "
                    f"{self.n_trajectories}"
                )
            if centre.shape != (m.n_states,):
                raise ValueError(
                    f"proximal.{name} must have shape ({m.n_states},), got {centre.shape}"
                )

    def _label(self, kind: str, i: int) -> str:
        return column_label(kind, i, self.model, self.trajectories[0])

    def _check_observed(self) -> None:
        """Every trajectory observes some fitted value in its horizon (a fitted column that a
        trajectory never observes is hidden there)."""
        for k in range(self.n_trajectories):
            if self.observed(k)[self._inside(k)].any():
                continue
            t0, tf = self.horizon_of(k)
            fitted = ", ".join(repr(self._label(kind, i)) for kind, i in self.columns)
            by = f" (mask{'' if self.n_trajectories == 1 else f'[{k}]'})"
            raise ValueError(
                f"the observation model observes nothing in data[{k}]: no fitted column "
                f"({fitted}) has an observed value in the horizon [{t0!r}, {tf!r}]"
                + (by if self.mask is not None else "")
            )

    def _warn_undetermined(self) -> None:
        """An [`UndeterminedStateWarning`][collocnode.UndeterminedStateWarning] for hidden
        states that nothing determines."""
        hidden = self.hidden_states()
        if not hidden.any():
            return
        observed = np.any(
            [self.observed(k)[self._inside(k)].any(axis=0) for k in range(self.n_trajectories)],
            axis=0,
        )
        fixed = np.all(
            [
                np.zeros(self.model.n_states, bool) if x0 is None else np.isfinite(x0)
                for x0 in self.initial_states()
            ],
            axis=0,
        )
        lost = undetermined_states(self.model, self.columns, observed, fixed)
        warn_undetermined([self._label("x", i) for i in lost if hidden[i]], stacklevel=5)

    @property
    def lam(self) -> float:
        """λ of the weight penalty in use: ``regularization``, 0 where it is None."""
        return 0.0 if self.regularization is None else float(self.regularization)

    # ---- the data ----------------------------------------------------------------------------
    @property
    def trajectories(self) -> tuple[Trajectory, ...]:
        return (self.data,) if isinstance(self.data, Trajectory) else tuple(self.data)

    @property
    def n_trajectories(self) -> int:
        return len(self.trajectories)

    @property
    def columns(self) -> tuple[tuple[str, int], ...]:
        """The fitted columns, in the order of the loss terms: ``("x", i)`` for state i,
        ``("y", j)`` for model output j (resolved from ``fit``)."""
        return self._columns

    @property
    def horizon(self) -> tuple[float, float]:
        """The training horizon of the first trajectory."""
        d = self.trajectories[0]
        return self.tspan if self.tspan is not None else (d.t0, d.tf)

    def horizon_of(self, k: int) -> tuple[float, float]:
        """The training horizon of trajectory k (``tspan`` applies to the first only)."""
        d = self.trajectories[k]
        return self.horizon if k == 0 else (d.t0, d.tf)

    def horizons(self) -> list[tuple[float, float]]:
        """The training horizon of every trajectory, in order."""
        return [self.horizon_of(k) for k in range(self.n_trajectories)]

    def mesh_data(self, k: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """What a mesh chosen from the data sees of trajectory k: its sample times (n,) and
        fitted columns (n, n_fit), NaN where a value is missing."""
        values = np.where(self.observed(k), self.targets(k), np.nan)
        return self.trajectories[k].t, values

    def _inside(self, k: int) -> np.ndarray:
        """Which samples of trajectory k lie in its horizon, (n_samples,) booleans."""
        t0, tf = self.horizon_of(k)
        t = self.trajectories[k].t
        tol = 1e-9 * max(1.0, tf - t0)
        return (t >= t0 - tol) & (t <= tf + tol)

    def observed(self, k: int = 0) -> np.ndarray:
        """Which fitted values of trajectory k are observed, (n_samples, n_fit) booleans (all
        True without a ``mask``)."""
        masks = self.mask
        if masks is None or masks[k] is None:
            return np.ones((self.trajectories[k].n_samples, len(self.columns)), dtype=bool)
        return masks[k]

    def targets(self, k: int = 0) -> np.ndarray:
        """The fitted data columns of trajectory k, shape (n_samples, n_fit) (NaN where a value
        is missing)."""
        return column_values(self.trajectories[k], self.columns)

    def measured(self, k: int = 0) -> np.ndarray:
        """Where trajectory k measures each state, (n_samples, n_states) booleans: its value is
        not NaN and, for a fitted state, observed
        ([`observed`][collocnode.TrainingProblem.observed])."""
        return measured(self.trajectories[k], self.columns, self.observed(k))

    def hidden_states(self) -> np.ndarray:
        """Which states no trajectory measures, (n_states,) booleans: their scaling and guess
        come from the model (`collocnode.training._guess`), the consistency check's scale
        from the collocated trajectory."""
        return ~np.any([self.measured(k).any(axis=0) for k in range(self.n_trajectories)], axis=0)

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The state bounds (x_lb, x_ub), each (n_states,) (±inf where unbounded)."""
        n = self.model.n_states
        lb = np.full(n, -np.inf) if self.x_lb is None else np.asarray(self.x_lb, dtype=float)
        ub = np.full(n, np.inf) if self.x_ub is None else np.asarray(self.x_ub, dtype=float)
        return lb, ub

    @property
    def layout(self) -> Layout:
        """Where the known inputs, per-trajectory parameters and fit targets sit in the DOP's
        input and parameter vectors (`collocnode.training._layout`)."""
        n_targets = len(self.columns) if self.loss == "nodes" else 0
        return Layout(self.model, self.n_trajectories, n_targets)

    def trajectory_params_of(self, k: int = 0) -> dict[str, float]:
        """The values of the model's per-trajectory parameters for trajectory k: the data's
        (for a fitted one, its starting value), else the parameter's value."""
        m, d = self.model, self.trajectories[k]
        return {n: float(d.params.get(n, m.parameters[n].value)) for n in m.per_trajectory}

    def scales(self) -> np.ndarray:
        """The divisor s_c of every fitted column (n_fit,); "std" is the standard deviation of
        the column's observed values over all trajectories."""
        if isinstance(self.scale, str):
            if self.scale == "none":
                return np.ones(len(self._columns))
            values = np.vstack([self.targets(k) for k in range(self.n_trajectories)])
            observed = np.vstack([self.observed(k) for k in range(self.n_trajectories)])
            s = np.array(
                [
                    values[observed[:, c], c].std() if observed[:, c].any() else 0.0
                    for c in range(values.shape[1])
                ]
            )
            if np.any(s <= 0):
                c = int(np.flatnonzero(s <= 0)[0])
                raise ValueError(
                    f"scale='std' needs non-constant fitted data columns; "
                    f"{self._label(*self.columns[c])!r} has no spread"
                )
            return s
        return np.asarray(self.scale, dtype=float)

    def nominal(self) -> np.ndarray | None:
        """The state scaling handed to the NLP (see ``x_nominal``)."""
        if isinstance(self.x_nominal, str):
            if "nominal" not in self._cache:
                self._cache["nominal"] = self._auto_nominal()
            return self._cache["nominal"].copy()
        return None if self.x_nominal is None else np.asarray(self.x_nominal, dtype=float)

    def measured_spread(self) -> np.ndarray:
        """The standard deviation of each state's measured values over all trajectories, shape
        (n_states,); 1 where they are constant, NaN for a hidden state."""
        s = np.full(self.model.n_states, np.nan)
        seen = [self.measured(k) for k in range(self.n_trajectories)]
        for i in np.flatnonzero(~self.hidden_states()):
            values = np.concatenate(
                [d.x[m[:, i], i] for d, m in zip(self.trajectories, seen, strict=True)]
            )
            s[i] = values.std() if values.std() > 0 else 1.0
        return s

    def _auto_nominal(self) -> np.ndarray:
        """[`measured_spread`][collocnode.TrainingProblem.measured_spread], and for a hidden state
        the spread of its guess."""
        s = self.measured_spread()
        hidden = self.hidden_states()
        if hidden.any():
            values = []
            for k, d in enumerate(self.trajectories):
                guess = self._state_guess(k)
                t = guesses.guess_grid(*self.horizon_of(k), d.t)
                values.append(guess(t) if callable(guess) else np.atleast_2d(guess))
            for i in np.flatnonzero(hidden):
                s[i] = guesses.spread(np.concatenate([g[:, i] for g in values]))
        return s

    def input_function(self, k: int = 0) -> Callable[[np.ndarray], np.ndarray] | None:
        """Known inputs of trajectory k (exact if given, else interpolated data.u)."""
        m = self.model
        if not m.n_inputs:
            return None
        if self.inputs is not None:
            return self.inputs if callable(self.inputs) else list(self.inputs)[k]
        d = self.trajectories[k]
        return Inputs.from_samples(d.t, d.u, self.interpolation)

    def initial_states(self) -> list[np.ndarray | None]:
        """The fixed initial state of every trajectory, (n_states,) with NaN where free, or
        None where every entry is free."""
        n, ist = self.n_trajectories, self.initial_state
        if ist is None:
            return [None] * n
        if isinstance(ist, str):
            rows = [
                np.where(self.measured(k)[0], d.x[0], np.nan)
                for k, d in enumerate(self.trajectories)
            ]
        else:
            arr = np.asarray(ist, dtype=float)
            rows = [arr.copy() for _ in range(n)] if arr.ndim == 1 else [r.copy() for r in arr]
        return [None if np.all(np.isnan(r)) else r for r in rows]

    # ---- parts of the problem ------------------------------------------------------------------
    def subset(self, trajectories: Sequence[int]) -> TrainingProblem:
        """The problem on the trajectories ``trajectories`` (indices, in the order given) only.

        The per-trajectory fields (initial states, inputs, state guesses, masks) follow their
        trajectories; the scaling of the fitted columns (``scale``) and of the states
        (``x_nominal``) stay those of the whole problem, so that the parts' NLPs work in the
        same units (a part's objective is then its share of the whole's, apart from the weight
        penalty, which every part keeps).
        """
        rows = [v.nonnegative_int("trajectories[]", k) for k in trajectories]
        if not rows:
            raise ValueError("trajectories must name at least one trajectory, got none")
        bad = [k for k in rows if k >= self.n_trajectories]
        if bad:
            raise ValueError(
                f"trajectories: index {bad[0]} is out of range for a problem with "
                f"{self.n_trajectories} trajectories"
            )
        data = [self.trajectories[k] for k in rows]
        return replace(
            self,
            data=data if len(data) > 1 else data[0],
            initial_state=_pick(self.initial_state, rows),
            inputs=_pick(self.inputs, rows),
            state_guess=_pick(self.state_guess, rows),
            mask=None if self.mask is None else [self.mask[k] for k in rows],
            tspan=self.tspan if rows[0] == 0 else None,
            **self._frozen_scaling(),
        )

    def window(self, t0: float, tf: float, *, cut: bool = False) -> TrainingProblem:
        """The problem of a single trajectory on the window [t0, tf] of its horizon.

        Args:
            t0, tf: the window [s], inside the horizon.
            cut: False (a piece of the whole problem): the data stay whole (the fit targets at
                the window's nodes are those of the whole data), the scaling stays the whole
                problem's, and a "constant" state guess starts from the data at ``t0``. True
                (the problem as if only the window had been measured): the data are cut to the
                samples in the window, and the scaling is derived from them.

        The initial state stays fixed only when the window starts where the horizon does.
        """
        if self.n_trajectories != 1:
            raise ValueError(
                f"window cuts one trajectory, the problem has {self.n_trajectories}; take "
                "subset([k]) first"
            )
        h0, hf = self.horizon
        t0, tf = v.finite_float("t0", t0), v.finite_float("tf", tf)
        tol = 1e-9 * max(1.0, hf - h0)
        if not (h0 - tol <= t0 < tf <= hf + tol):
            raise ValueError(
                f"window [{t0!r}, {tf!r}] must be a non-empty part of the horizon [{h0!r}, {hf!r}]"
            )
        starts = abs(t0 - h0) <= tol
        changes: dict[str, Any] = {"initial_state": self.initial_state if starts else None}
        if cut:
            data = self.trajectories[0].window(t0, tf)
            changes |= {
                "data": data,
                "tspan": None if data.t0 == t0 and data.tf == tf else (t0, tf),
            }
            if self.mask is not None and self.mask[0] is not None:
                inside = (self.trajectories[0].t >= data.t0) & (self.trajectories[0].t <= data.tf)
                changes["mask"] = self.mask[0][inside]
            return replace(self, **changes)
        changes["tspan"] = (t0, tf)
        guess = self.state_guess
        if not starts and isinstance(guess, str) and guess == "constant":
            # the measured states interpolated at t0, the others from the whole problem's guess
            start = self._measured_states(0, linear=True)(np.array([t0]))[0]
            whole = self._state_guess(0)
            at_t0 = whole(np.array([t0]))[0] if callable(whole) else np.asarray(whole)
            changes["state_guess"] = _Constant(np.where(np.isnan(start), at_t0, start))
        return replace(self, **changes, **self._frozen_scaling())

    def _frozen_scaling(self) -> dict[str, Any]:
        return {"scale": self.scales(), "x_nominal": self.nominal()}

    # ---- the algorithm protocol (collocnode.algorithm) -----------------------------------------
    def lower(self, context: Any) -> Lowered:
        """The dynamic optimization problem of this training problem, started from
        ``params_guess`` or from the model's random initial weights drawn with
        ``context.seed``; the user's callback receives training iteration states, and the
        collocation solution comes back as a [`TrainingSolution`][collocnode.TrainingSolution].

        Raises:
            SolveInterrupted: Ctrl-C while the problem is transcribed ("build").
        """
        from ._callbacks import for_training
        from ._solution import TrainingSolution

        try:
            p0 = self.params_guess
            if p0 is None:
                p0 = self.model.init_params(np.random.default_rng(context.seed))
            dop = self.to_dop(params_guess=p0)
        except SolveInterrupted:
            raise
        except KeyboardInterrupt as interrupt:
            raise SolveInterrupted("build") from interrupt
        return Lowered(
            dop,
            for_training(self, context.callback),
            lambda solution: TrainingSolution(solution, self),
        )

    # ---- the dynamic optimization problem ------------------------------------------------------
    def to_dop(self, params_guess: np.ndarray | None = None) -> DynamicOptimizationProblem:
        """The dynamic optimization problem (paper eq. 6/21) of this training problem: one
        segment per trajectory, the fit at the nodes or at the samples
        (`collocnode.training._dop_terms`).

        Its parameter vector is the model's (n_params,) followed by the fitted per-trajectory
        parameters, and its input vector stacks the known inputs, the given per-trajectory
        parameters and the fit targets (`collocnode.training._layout`)."""
        m = self.model
        layout = self.layout
        terms = FitTerms(m, layout, self.columns, self.scales(), self.lam)
        at_samples = self.loss == "samples"
        boundary = block_constraint(m, self.block_constraints)
        path = path_constraint(m, layout, self.path or ())
        segments = [
            Segment(
                self.horizon_of(k),
                self._segment_inputs(k),
                x0,
                self._state_guess(k),
                self.samples(k) if at_samples else None,
            )
            for k, x0 in enumerate(self.initial_states())
        ]
        p_lb, p_ub = layout.bounds()
        p_guess = params_guess
        if layout.fitted:
            p_model = np.zeros(m.n_params) if params_guess is None else params_guess
            p_guess = np.concatenate([p_model, layout.guesses(self.trajectories)])
        return DynamicOptimizationProblem(
            dynamics=terms.dynamics,
            n_states=m.n_states,
            n_params=layout.n_params,
            tspan=segments[0].tspan,
            lagrange=None if at_samples else terms.lagrange,
            mayer=terms.weight_penalty if self.lam > 0 else None,
            path=path,
            boundary=boundary,
            inputs=segments[0].inputs,
            x_lb=self.x_lb,
            x_ub=self.x_ub,
            p_lb=p_lb,
            p_ub=p_ub,
            x_guess=segments[0].x_guess,
            p_guess=p_guess,
            x0=segments[0].x0,
            x_nominal=self.nominal(),
            segments=tuple(segments) if len(segments) > 1 else (),
            state_names=m.state_names,
            sample_loss=terms.sample_loss if at_samples else None,
            samples=segments[0].samples,
            proximal=self.proximal,
        )

    def samples(self, k: int = 0) -> Samples:
        """The data terms of trajectory k for ``loss="samples"``: its samples inside the horizon
        with at least one observed fitted value; data ``[q̂ (n_fit), w_c / s_c² (n_fit)]`` with
        w_c the weights of ``sample_weights`` (0 where missing): one per column for every
        observed sample of every trajectory ("least_squares", `sample_weight`), or the cell
        weights of `cell_weights` ("cells")."""
        t0, tf = self.horizon_of(k)
        inside = self._inside(k)
        t = np.clip(self.trajectories[k].t[inside], t0, tf)
        observed = self.observed(k)[inside]
        if self.sample_weights == "cells":
            cells = [cell_weights(t, observed[:, c], t0, tf) for c in range(observed.shape[1])]
            weights = np.column_stack(cells)
        else:
            weights = observed * self.sample_weight()[None, :]
        weights = weights / self.scales() ** 2
        targets = np.where(observed, self.targets(k)[inside], 0.0)
        keep = observed.any(axis=1)
        return Samples(t[keep], np.column_stack([targets, weights])[keep])

    def sample_weight(self) -> np.ndarray:
        """The least-squares weight of an observed sample of each fitted column, (n_fit,) [s]:
        the horizons' total length over the column's observed samples in them, so that the
        weights sum to the same total as the cell weights and λ keeps its meaning."""
        if "sample_weight" not in self._cache:
            span = sum(tf - t0 for t0, tf in self.horizons())
            counts = sum(
                self.observed(k)[self._inside(k)].sum(axis=0) for k in range(self.n_trajectories)
            )
            self._cache["sample_weight"] = span / np.maximum(counts, 1)
        return self._cache["sample_weight"].copy()

    def _segment_inputs(self, k: int) -> Inputs:
        """Trajectory k's DOP inputs: known inputs, the constant per-trajectory part and (for
        the loss at the nodes) the interpolated fit targets, stacked as the layout says."""
        d = self.trajectories[k]
        layout = self.layout
        u_fn = self.input_function(k)
        constant = layout.constant_inputs(k, d)
        if self.loss == "samples" and not constant.size:
            if u_fn is None:
                return Inputs.none()
            n_inputs = self.model.n_inputs
            return u_fn if isinstance(u_fn, Inputs) else Inputs.from_function(u_fn, n_inputs)
        target_in = (
            Inputs.from_samples(d.t, self.targets(k), self.interpolation)
            if self.loss == "nodes"
            else None
        )

        def all_inputs(t: np.ndarray) -> np.ndarray:
            t = np.asarray(t, dtype=float)
            parts = [u_fn(t)] if u_fn is not None else []
            parts.append(np.tile(constant, (t.size, 1)))
            if target_in is not None:
                parts.append(target_in(t))
            return np.column_stack(parts)

        return Inputs.from_function(all_inputs, layout.n_inputs)

    def _measured_states(self, k: int, linear: bool = False) -> guesses.Measured:
        """The states trajectory k measures, through their samples (NaN in the others)."""
        d = self.trajectories[k]
        has_mask = self.mask is not None and self.mask[k] is not None
        return guesses.Measured(d.t, d.x, self.measured(k), self.interpolation, linear or has_mask)

    def state_guess_of(self, k: int) -> Any:
        """The state guess given for trajectory ``k``: ``state_guess`` itself, or its k-th entry
        when it is a sequence of guesses."""
        sg = self.state_guess
        if not isinstance(sg, str) and not callable(sg) and not isinstance(sg, Trajectory):
            sg = list(sg)[k]
        return sg

    def starting_values(self, k: int) -> np.ndarray:
        """The starting value of every state of trajectory k, (n_states,): its fixed initial
        value, else its first measured value, else 0 moved into its bounds."""
        x0 = self.initial_states()[k]
        d = self.trajectories[k]
        seen = self.measured(k)
        start = np.full(self.model.n_states, np.nan) if x0 is None else x0.copy()
        free = np.isnan(start)
        first = free & seen[0]
        start[first] = d.x[0, first]
        later = np.isnan(start) & seen.any(axis=0)
        if later.any():
            t0 = self.horizon_of(k)[0]
            start[later] = self._measured_states(k, linear=True)(np.array([t0]))[0, later]
        hidden = np.isnan(start)
        start[hidden] = guesses.zero_into(*self.state_bounds())[hidden]
        return start

    def _guess_parameters(self) -> np.ndarray:
        """The model parameters of a guess that integrates the model (module
        `collocnode.training._guess`)."""
        if self.params_guess is not None:
            return np.asarray(self.params_guess, dtype=float)
        return guesses.physics_params(self.model)

    def _state_guess(self, k: int) -> Any:
        """Trajectory k's state guess as the DOP takes it: a constant vector (n_states,) or a
        callable ``t (n,) -> (n, n_states)``, projected into the state bounds."""
        if ("guess", k) not in self._cache:
            self._cache[("guess", k)] = self._make_state_guess(k)
        return self._cache[("guess", k)]

    def _make_state_guess(self, k: int) -> Any:
        sg, d = self.state_guess_of(k), self.trajectories[k]
        lb, ub = self.state_bounds()
        bounded = bool(np.isfinite(lb).any() or np.isfinite(ub).any())
        none = np.zeros(0, dtype=int)
        if isinstance(sg, Trajectory):
            base = Inputs.from_samples(sg.t, sg.x, "linear")
            return (
                guesses.Guess(base, none, d.t, np.zeros((d.n_samples, 0)), lb, ub)
                if (bounded)
                else base
            )
        if callable(sg):
            return (
                guesses.Guess(sg, none, d.t, np.zeros((d.n_samples, 0)), lb, ub)
                if (bounded)
                else sg
            )
        start = self.starting_values(k)
        if sg == "constant":
            return np.clip(start, lb, ub)
        measured_states = self._measured_states(k) if sg == "data" else None
        free = (
            np.flatnonzero(~self.measured(k).any(axis=0))
            if sg == "data"
            else np.arange(self.model.n_states)
        )
        if sg == "data" and not free.size:
            base = measured_states
            return (
                guesses.Guess(base, none, d.t, np.zeros((d.n_samples, 0)), lb, ub)
                if (bounded)
                else base
            )
        t = guesses.guess_grid(*self.horizon_of(k), d.t)
        c = self.model.per_trajectory_values(self.trajectory_params_of(k))
        values = guesses.integrate(
            self.model,
            self._guess_parameters(),
            c,
            self.input_function(k),
            measured_states,
            free,
            start,
            t,
        )
        base = measured_states if measured_states is not None else start
        return guesses.Guess(base, free, t, values, lb, ub)


def _pick(value: Any, rows: list[int]) -> Any:
    """The entries ``rows`` of a per-trajectory field (a list, or an array with one row per
    trajectory); anything else (shared by all trajectories) as it is."""
    if isinstance(value, (list, tuple)):
        return [value[i] for i in rows]
    if isinstance(value, np.ndarray) and value.ndim == 2:
        return value[rows]
    return value


class _Constant:
    """A constant state guess ``t (n,) -> (n, n_states)`` (picklable)."""

    def __init__(self, x: np.ndarray) -> None:
        self.x = np.asarray(x, dtype=float)

    def __call__(self, t: np.ndarray) -> np.ndarray:
        return np.tile(self.x, (np.size(t), 1))
