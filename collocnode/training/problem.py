"""The training problem (Langenkamp et al. eqs. 6 and 21) and its transcription into a DOP."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from ..algorithm import Lowered
from ..data import Trajectory
from ..models.hybrid import HybridModel
from ..status import SolveInterrupted
from ..transcription.problem import (
    DynamicOptimizationProblem,
    Inputs,
    Proximal,
    Samples,
    Segment,
)
from .checks import (
    LOSSES,
    check_block_constraints,
    check_data,
    check_data_matches_model,
    check_fit,
    check_initial_state,
    check_inputs,
    check_interpolation,
    check_scale,
    check_state_guess,
    check_tspan,
    check_x_nominal,
    column_label,
    mentions_data,
)
from .constraints import BlockConstraint
from .dop_terms import FitTerms, block_constraint
from .samples import cell_weights, check_mask


@dataclass(frozen=True)
class TrainingProblem:
    """Fit a model's parameters to one trajectory or to several (sharing the parameters).

    Args:
        model: the (hybrid) neural ODE.
        data: the training trajectory (states, inputs, outputs at the sample times), or a
            sequence of trajectories (different initial conditions, inputs, ...): each becomes its
            own set of node states in the NLP, all sharing the weights, so the cost grows
            linearly with the number of trajectories.
        fit: which columns enter the loss: "states", "outputs", or a sequence of state/output
            names.
        scale: per fitted column divisor s_c: "none", "std" (the data's standard deviation,
            paper eq. 16) or an array.
        regularization: λ of the weight penalty λ‖w‖² on the block weights (paper eq. 21a), or
            None (the default): not chosen by the user -- 0 in a plain collocation solve, and
            chosen on held-out data by :class:`~collocnode.RegularizationPath` (which the default
            algorithm of ``solve`` uses for such a problem). :attr:`lam` is the value in use.
        initial_state: fixed x(t0) (paper eqs. 21d-e): an array (n_states,) for every
            trajectory, one row per trajectory (n_trajectories, n_states), "data" (each
            trajectory's first sample), or None for free initial states.
        block_constraints: constraints on blocks at given inputs.
        tspan: training horizon of a single trajectory; default: the data's time span.
        interpolation: "cubic" or "linear" interpolation of the data at the collocation nodes.
        inputs: exact known inputs ``u(t: (n,)) -> (n, n_inputs)`` (one callable per trajectory
            for several); default: interpolate data.u.
        state_guess: initial guess of the node states: "constant" (x(t0) everywhere, as in the
            paper), "data" (the interpolated data), a callable ``t -> (n, n_states)``, or a
            :class:`Trajectory` to interpolate (one per trajectory for several).
        params_guess: initial parameter vector; default: the blocks' random initialisation
            (seeded by ``solve(..., seed=...)``).
        x_nominal: typical state magnitudes for the NLP's scaling: "auto" (the standard deviation
            of each state column of the data; 1 where a column is constant), None (no scaling)
            or an array (n_states,).
        loss: "nodes" (the interpolated data at the collocation nodes, Radau quadrature) or
            "samples" (at the measurement times, cell-weighted; see the module docstring). The
            samples of a trajectory must lie inside its horizon (``tspan`` keeps only the samples
            inside it).
        mask: missing values (``loss="samples"`` only): a boolean array (n_samples, n_fit),
            True where fitted column c (in the order of :attr:`columns`) is observed, for one
            trajectory; for several, a sequence with one such array (or None: all observed) per
            trajectory. A missing value contributes nothing (its entry in the data is ignored);
            every fitted column needs an observed value in every trajectory's horizon.
        proximal: a :class:`~collocnode.transcription.Proximal` term pulling the parameters
            (and, for one trajectory, the states at the horizon's ends, in the NLP's scaled
            units) toward a centre: the pull of consensus ADMM on a block. None: none.

    ``problem_kind`` is "training" (the trait the algorithms of :mod:`collocnode.algorithm`
    read); :meth:`subset` and :meth:`window` give the parts of the problem that consensus ADMM
    and pre-training solve.
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
    mask: Any = None
    proximal: Proximal | None = None
    _columns: tuple[tuple[str, int], ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        # the one validation point: each check below owns one field or one concern
        if not isinstance(self.model, HybridModel):
            raise TypeError(f"model must be a HybridModel, got {self.model!r:.80}")
        data = check_data(self.data)
        object.__setattr__(self, "data", data[0] if len(data) == 1 else data)
        self.model.check_smooth()
        check_inputs(self.inputs, len(data))
        check_data_matches_model(self.model, data, self.inputs)
        object.__setattr__(self, "_columns", check_fit(self.fit, self.model, data))
        if self.regularization is not None:
            v.nonnegative_float("regularization", self.regularization)
        v.choice("loss", self.loss, LOSSES)
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
        object.__setattr__(self, "mask", check_mask(self.mask, self.loss, data, len(self._columns)))
        if self.loss == "samples":
            self._check_observed()
        self._check_proximal()

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

    def _check_observed(self) -> None:
        """Every fitted column observed in every trajectory's horizon; an initial state taken
        from the data observed at the first sample."""
        first = self.trajectories[0]
        for k in range(self.n_trajectories):
            t0, tf = self.horizon_of(k)
            observed = self.observed(k)[self._inside(k)]
            for c, (kind, i) in enumerate(self.columns):
                if not observed[:, c].any():
                    label = column_label(kind, i, self.model, first)
                    by = f" (mask{'' if self.n_trajectories == 1 else f'[{k}]'})"
                    raise ValueError(
                        f"fitted column {label!r} of data[{k}] has no observed value in the "
                        f"horizon [{t0!r}, {tf!r}]" + (by if self.mask is not None else "")
                    )
            if isinstance(self.initial_state, str) and self.mask is not None:
                missing = [
                    column_label(kind, i, self.model, first)
                    for c, (kind, i) in enumerate(self.columns)
                    if kind == "x" and not self.observed(k)[0, c]
                ]
                if missing:
                    raise ValueError(
                        f"initial_state='data' takes the first sample of data[{k}], but the mask "
                        f"marks state {missing[0]!r} missing there"
                    )

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
        """The fitted data columns of trajectory k, shape (n_samples, n_fit)."""
        d = self.trajectories[k]
        return np.column_stack([d.x[:, i] if c == "x" else d.y[:, i] for c, i in self.columns])

    def scales(self) -> np.ndarray:
        """The divisor s_c of every fitted column (n_fit,); "std" is the standard deviation of
        the column's observed values over all trajectories."""
        if isinstance(self.scale, str):
            if self.scale == "none":
                return np.ones(len(self._columns))
            values = np.vstack([self.targets(k) for k in range(self.n_trajectories)])
            observed = np.vstack([self.observed(k) for k in range(self.n_trajectories)])
            s = np.array([values[observed[:, c], c].std() for c in range(values.shape[1])])
            if np.any(s <= 0):
                raise ValueError("scale='std' needs non-constant fitted data columns")
            return s
        return np.asarray(self.scale, dtype=float)

    def nominal(self) -> np.ndarray | None:
        """The state scaling handed to the NLP (see ``x_nominal``)."""
        if isinstance(self.x_nominal, str):
            x = np.vstack([d.x for d in self.trajectories])
            seen = np.ones(x.shape, dtype=bool)  # a fitted state counts where it is observed
            observed = np.vstack([self.observed(k) for k in range(self.n_trajectories)])
            for c, (kind, i) in enumerate(self.columns):
                if kind == "x":
                    seen[:, i] &= observed[:, c]
            s = np.array([x[seen[:, i], i].std() for i in range(x.shape[1])])
            return np.where(s > 0, s, 1.0)
        return None if self.x_nominal is None else np.asarray(self.x_nominal, dtype=float)

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
        n, ist = self.n_trajectories, self.initial_state
        if ist is None:
            return [None] * n
        if isinstance(ist, str):
            return [d.x[0].copy() for d in self.trajectories]
        arr = np.asarray(ist, dtype=float)
        return [arr] * n if arr.ndim == 1 else list(arr)

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
            d = self.trajectories[0]
            start = np.array([np.interp(t0, d.t, d.x[:, i]) for i in range(d.n_states)])
            changes["state_guess"] = _Constant(start)
        return replace(self, **changes, **self._frozen_scaling())

    def _frozen_scaling(self) -> dict[str, Any]:
        return {"scale": self.scales(), "x_nominal": self.nominal()}

    # ---- the algorithm protocol (collocnode.algorithm) -----------------------------------------
    def lower(self, context: Any) -> Lowered:
        """The dynamic optimization problem of this training problem, started from
        ``params_guess`` or from the model's random initial weights drawn with
        ``context.seed``; the user's callback receives training iteration states, and the
        collocation solution comes back as a :class:`~collocnode.TrainingSolution`.

        Raises:
            SolveInterrupted: Ctrl-C while the problem is transcribed ("build").
        """
        from .callbacks import for_training
        from .solution import TrainingSolution

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
        segment per trajectory, the fit at the nodes or at the samples (:mod:`.dop_terms`)."""
        m = self.model
        terms = FitTerms(m, self.columns, self.scales(), self.lam)
        at_samples = self.loss == "samples"
        boundary = block_constraint(m, self.block_constraints)
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
        p_lb, p_ub = m.param_bounds()
        return DynamicOptimizationProblem(
            dynamics=terms.dynamics,
            n_states=m.n_states,
            n_params=m.n_params,
            tspan=segments[0].tspan,
            lagrange=None if at_samples else terms.lagrange,
            mayer=terms.weight_penalty if self.lam > 0 else None,
            boundary=boundary,
            inputs=segments[0].inputs,
            p_lb=p_lb,
            p_ub=p_ub,
            x_guess=segments[0].x_guess,
            p_guess=params_guess,
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
        w_c the cell weights of :func:`cell_weights` (0 where missing)."""
        t0, tf = self.horizon_of(k)
        inside = self._inside(k)
        t = np.clip(self.trajectories[k].t[inside], t0, tf)
        observed = self.observed(k)[inside]
        cells = [cell_weights(t, observed[:, c], t0, tf) for c in range(observed.shape[1])]
        weights = np.column_stack(cells) / self.scales() ** 2
        targets = np.where(observed, self.targets(k)[inside], 0.0)
        keep = observed.any(axis=1)
        return Samples(t[keep], np.column_stack([targets, weights])[keep])

    def _segment_inputs(self, k: int) -> Inputs:
        """Known inputs and interpolated fit targets of trajectory k, stacked [u, q̂]; only the
        known inputs for the loss at the samples."""
        d = self.trajectories[k]
        u_fn = self.input_function(k)
        if self.loss == "samples":
            if u_fn is None:
                return Inputs.none()
            n_inputs = self.model.n_inputs
            return u_fn if isinstance(u_fn, Inputs) else Inputs.from_function(u_fn, n_inputs)
        target_in = Inputs.from_samples(d.t, self.targets(k), self.interpolation)

        def all_inputs(t: np.ndarray) -> np.ndarray:
            parts = [u_fn(t)] if u_fn is not None else []
            return np.column_stack([*parts, target_in(t)])

        return Inputs.from_function(all_inputs, self.model.n_inputs + len(self._columns))

    def _observed_states(self, k: int) -> Callable[[np.ndarray], np.ndarray]:
        """The states of trajectory k interpolated linearly through each state's observed
        samples (constant outside them), ``t (n,) -> (n, n_states)``."""
        d = self.trajectories[k]
        seen = np.ones(d.x.shape, dtype=bool)
        observed = self.observed(k)
        for c, (kind, i) in enumerate(self.columns):
            if kind == "x":
                seen[:, i] = observed[:, c]

        def states(t: np.ndarray) -> np.ndarray:
            t = np.asarray(t, dtype=float)
            return np.column_stack(
                [np.interp(t, d.t[seen[:, i]], d.x[seen[:, i], i]) for i in range(d.n_states)]
            )

        return states

    def state_guess_of(self, k: int) -> Any:
        """The state guess given for trajectory ``k``: ``state_guess`` itself, or its k-th entry
        when it is a sequence of guesses."""
        sg = self.state_guess
        if not isinstance(sg, str) and not callable(sg) and not isinstance(sg, Trajectory):
            sg = list(sg)[k]
        return sg

    def _state_guess(self, k: int) -> Any:
        sg, d = self.state_guess_of(k), self.trajectories[k]
        if isinstance(sg, Trajectory):
            return Inputs.from_samples(sg.t, sg.x, "linear")
        if callable(sg):
            return sg
        if sg == "data" and self.mask is not None and self.mask[k] is not None:
            return self._observed_states(k)
        if sg == "data":
            return Inputs.from_samples(d.t, d.x, self.interpolation)
        x0 = self.initial_states()[k]
        return np.asarray(d.x[0] if x0 is None else x0, dtype=float)


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
