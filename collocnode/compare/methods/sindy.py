"""SINDy: sparse identification of nonlinear dynamics (Brunton, Proctor & Kutz, PNAS 2016), the
gold standard of equation discovery the Mechanistic Neural Networks paper compares against
(its §5.1 runs pysindy 1.7.5).

pysindy's ``SINDy`` as its users run it: the states' derivatives are estimated from the
samples (finite differences, smoothed by Savitzky-Golay by default), a feature library of the
states and known inputs (polynomials, optionally with a Fourier library) is fitted to them by a
sparse regression (STLSQ with a fixed threshold by default), and the discovered equations are
integrated for prediction. Several training trajectories are fitted together. No network, no
epochs: the shared options of the comparison (``epochs``, ``hidden``, ``activation``, ...) are
accepted and not used.

Prediction integrates the discovered right-hand side with scipy's LSODA (discovered equations
can be stiff where the data were not); the right-hand side is compiled once as a CasADi
function of the library's terms (the same terms pysindy evaluates).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from ... import _validation as v
from ..._data import Trajectory
from ...tools._fixed_step import DivergenceError
from ...tools._ivp import SimulationError, solve_bounded
from ...training._discovery.library import pysindy, symbolic_terms
from .base import Callback, FitResult, Trainer
from .options import TrainerOptions

OPTIMIZERS = ("stlsq", "sr3", "ssr")
DIFFERENTIATION = ("smoothed", "finite")
PREDICT_METHODS = ("LSODA", "Radau", "BDF", "DOP853", "RK45")


@dataclass(frozen=True)
class SINDyOptions(TrainerOptions):
    """SINDy options (pysindy's defaults where the MNN paper gives none).

    Attributes:
        degree: degree of the polynomial library of the states and inputs.
        fourier: frequencies of a Fourier library added to the polynomials (0: none).
        optimizer: "stlsq" (sequentially thresholded least squares, Brunton et al.), "sr3" or
            "ssr".
        threshold: the sparsity threshold (STLSQ's threshold; SR3's L0 threshold; ignored by
            SSR, which stops at the inflection of its error).
        alpha: the ridge weight of STLSQ and SSR.
        differentiation: "smoothed" (finite differences of Savitzky-Golay smoothed samples,
            pysindy's ``SmoothedFiniteDifference``) or "finite" (plain centred differences).
        predict_method: the scipy integrator of the rollout ("LSODA" switches to a stiff
            method where the discovered equations are stiff; "Radau", "BDF", "DOP853",
            "RK45").
        predict_rtol: relative tolerance of the rollout (absolute: the same times each state's
            spread in the training data).
        blowup: a rollout whose state exceeds this magnitude counts as diverged.

    ``epochs``, ``hidden``, ``activation``, ``init`` and ``normalize`` are not used.
    """

    degree: int = 3
    fourier: int = 0
    optimizer: str = "stlsq"
    threshold: float = 0.1
    alpha: float = 0.05
    differentiation: str = "smoothed"
    predict_method: str = "LSODA"
    predict_rtol: float = 1e-8
    blowup: float = 1e8

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.param_inputs:
            raise ValueError(f"param_inputs {self.param_inputs!r}: SINDy takes no parameter inputs")
        v.positive_int("degree", self.degree)
        v.nonnegative_int("fourier", self.fourier)
        v.choice("optimizer", self.optimizer, OPTIMIZERS)
        v.nonnegative_float("threshold", self.threshold)
        v.nonnegative_float("alpha", self.alpha)
        v.choice("differentiation", self.differentiation, DIFFERENTIATION)
        v.choice("predict_method", self.predict_method, PREDICT_METHODS)
        v.positive_float("predict_rtol", self.predict_rtol)
        v.positive_float("blowup", self.blowup)


class SINDy(Trainer):
    """SINDy trainer; see the module docstring."""

    name = "sindy"
    options_class = SINDyOptions
    predicts_while_fitting = False  # one regression, no epochs to watch
    QUICK: dict[str, Any] = {}

    def __init__(self, options: SINDyOptions | None = None, **overrides: Any) -> None:
        super().__init__(options, **overrides)
        self.model: Any = None
        self._rhs: ca.Function | None = None

    # --- the pysindy model ---------------------------------------------------------------------
    def _pysindy_model(self) -> Any:
        ps = pysindy()
        o = self.options
        library = ps.PolynomialLibrary(degree=o.degree)
        if o.fourier:
            library = library + ps.FourierLibrary(n_frequencies=o.fourier)
        optimizer = {
            "stlsq": lambda: ps.STLSQ(threshold=o.threshold, alpha=o.alpha),
            "sr3": lambda: ps.SR3(reg_weight_lam=ps.SR3.calculate_l0_weight(o.threshold, 1.0)),
            "ssr": lambda: ps.SSR(alpha=o.alpha),
        }[o.optimizer]()
        differentiation = (
            ps.SmoothedFiniteDifference()
            if o.differentiation == "smoothed"
            else ps.FiniteDifference()
        )
        return ps.SINDy(
            optimizer=optimizer, feature_library=library, differentiation_method=differentiation
        )

    def fit(
        self,
        system: Any,
        train: Trajectory | Sequence[Trajectory],
        *,
        budget_s: float | None = None,
        callback: Callback | None = None,
    ) -> FitResult:
        """Fit the equations to ``train`` (one regression; ``budget_s`` and ``callback`` have
        no epochs to act on: the callback's ``on_start``/``on_end`` hooks run, it is never
        called)."""
        trajs, budget_s = self._check_fit_args(system, train, budget_s)
        start = time.perf_counter()
        self.system = system
        if callback is not None and callable(getattr(callback, "on_start", None)):
            from ...training._callbacks import RunInfo

            callback.on_start(RunInfo(max_iterations=1, n_states=system.n_states, n_params=0))
        try:
            model = self._pysindy_model()
            names = list(system.state_names or (f"x{i}" for i in range(system.n_states)))
            n_u = system.n_inputs
            inputs = list(system.input_names or (f"u{i}" for i in range(n_u)))
            with warnings.catch_warnings():
                # STLSQ warns when its threshold removes every term: the status says so below
                warnings.filterwarnings("ignore", "Sparsity parameter is too big", UserWarning)
                model.fit(
                    [tr.x for tr in trajs],
                    t=[tr.t for tr in trajs],
                    u=[tr.u[:, :n_u] for tr in trajs] if n_u else None,
                    feature_names=names + inputs,
                )
            self.model = model
            self._rhs = self._compile(model, system.n_states, n_u)
            self._spread = np.where(
                (s := np.vstack([tr.x for tr in trajs]).std(axis=0)) > 0, s, 1.0
            )
            self._fitted = True
            coef = np.asarray(model.coefficients())
            if not np.all(np.isfinite(coef)):
                raise FloatingPointError("the regression gave non-finite coefficients")
            residual = self._derivative_mse(model, trajs, n_u)
            status, message = "success", "; ".join(self.equations())
            if not np.any(coef):
                status, message = "failed", "the threshold removed every term of every state"
        except KeyboardInterrupt:
            return FitResult(self.name, "interrupted", time.perf_counter() - start, 0, 0)
        finally:
            if callback is not None and callable(getattr(callback, "on_end", None)):
                callback.on_end()
        elapsed = time.perf_counter() - start
        return FitResult(
            self.name,
            status,
            elapsed,
            epochs=1,
            n_params=self.n_params,
            best_loss=residual,
            history=[(elapsed, 1, residual)],
            message=message,
        )

    @staticmethod
    def _derivative_mse(model: Any, trajs: list[Trajectory], n_u: int) -> float:
        """Mean squared misfit of the regression: the equations against the estimated
        derivatives of the training samples."""
        errs = []
        for tr in trajs:
            xdot = np.asarray(model.differentiation_method(tr.x, t=tr.t))
            pred = np.asarray(model.predict(tr.x, u=tr.u[:, :n_u] if n_u else None))
            errs.append(((pred - xdot) ** 2).ravel())
        return float(np.mean(np.concatenate(errs)))

    @staticmethod
    def _compile(model: Any, n_states: int, n_inputs: int) -> ca.Function:
        """``rhs(x, u) -> x'`` of the discovered equations, compiled once."""
        terms = symbolic_terms(model.feature_library, "the states and inputs")
        x = ca.SX.sym("x", n_states)
        u = ca.SX.sym("u", n_inputs)
        xdot = ca.DM(np.asarray(model.coefficients())) @ terms(ca.vertcat(x, u))
        return ca.Function("sindy", [x, u], [xdot])

    # --- reading it ---------------------------------------------------------------------------
    def equations(self, precision: int = 4) -> list[str]:
        """The discovered equations, ``"x' = ..."`` per state (pysindy's text)."""
        self._require_fitted()
        names = self.model.feature_names[: self.system.n_states]
        return [
            f"{name}' = {eq}"
            for name, eq in zip(names, self.model.equations(precision), strict=True)
        ]

    def coefficients(self) -> dict[str, dict[str, float]]:
        """State -> term -> nonzero coefficient."""
        self._require_fitted()
        terms = self.model.get_feature_names()
        names = self.model.feature_names[: self.system.n_states]
        coef = np.asarray(self.model.coefficients())
        return {
            name: {t: float(c) for t, c in zip(terms, row, strict=True) if c != 0}
            for name, row in zip(names, coef, strict=True)
        }

    def vector_field(self, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        """The discovered x' at states ``x`` (n, n_states) and inputs ``u`` (n, n_inputs)."""
        self._require_fitted()
        x = np.atleast_2d(np.asarray(x, dtype=float))
        u = np.zeros((x.shape[0], 0)) if u is None else np.atleast_2d(u)
        return np.asarray(self._rhs.map(x.shape[0])(x.T, u.T)).T

    @property
    def n_params(self) -> int:
        """The discovered model's nonzero coefficients."""
        self._require_fitted()
        return int(np.count_nonzero(self.model.coefficients()))

    def get_weights(self) -> dict[str, np.ndarray]:
        """The coefficient matrix, flat (states x library terms)."""
        self._require_fitted()
        return {"coefficients": np.asarray(self.model.coefficients(), dtype=float).ravel()}

    # --- rollout -------------------------------------------------------------------------------
    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        t, x0 = self._check_predict_args(t, x0)
        n_u = self.system.n_inputs
        u_at = _input_function(t, u, self.system.inputs if n_u else None, n_u)
        rhs = self._rhs

        def f(tt: float, x: np.ndarray) -> np.ndarray:
            return np.asarray(rhs(x, u_at(tt))).ravel()

        if t.size == 1:
            return x0[None, :].copy()
        try:
            return solve_bounded(
                f,
                t,
                x0,
                self.options.predict_method,
                bound=self.options.blowup,
                what="the SINDy rollout",
                rtol=self.options.predict_rtol,
                atol=self.options.predict_rtol * self._spread,
            )
        except SimulationError as exc:
            k = int(np.searchsorted(t, exc.t_fail, side="right"))
            k = min(max(k, 1), t.size - 1)
            raise DivergenceError(k, t[k], None, str(exc)) from None


def _input_function(
    t: np.ndarray, u: Any, default: Callable[[Any], Any] | None, n_u: int
) -> Callable[[float], np.ndarray]:
    """The known inputs as a function of time: samples at ``t`` (interpolated linearly), a
    callable, or the system's own."""
    if not n_u:
        return lambda tt: np.zeros(0)
    if u is None:
        if default is None:
            raise ValueError("the system has inputs; pass u")
        return lambda tt: np.atleast_1d(np.asarray(default(tt), dtype=float)).ravel()[:n_u]
    if callable(u):
        return lambda tt: np.atleast_1d(np.asarray(u(tt), dtype=float)).ravel()[:n_u]
    samples = np.asarray(u, dtype=float).reshape(t.size, -1)[:, :n_u]
    return lambda tt: np.array([np.interp(tt, t, samples[:, i]) for i in range(n_u)])


__all__ = ["SINDy", "SINDyOptions"]
