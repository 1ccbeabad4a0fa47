"""The known equations stepped by a fixed-step scheme: the MBD-NODE paper's "Numerical" row.

MBD-NODE Table 5 puts plain RK4 on the true equations of motion beside the learned models of the
single mass-spring (2.0e-3 over 30 s, "Numerical, Cartesian, RK4"), to show what the integrator
alone costs. This method learns nothing: `fit` only checks its arguments, and
`predict` steps the system's own right-hand side (`System.rhs`) over the requested
times with the fixed-step scheme of ``integrator`` (`collocnode.tools._fixed_step`; the
MBD-NODE code's first-order "RK4" is ``"rk4_mbdnode_code"``). Its error is the integrator's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import _validation as v
from ..._data import Trajectory
from ...tools._fixed_step import INTEGRATORS, check_integrator, integrate
from .base import FitResult, Trainer, TrainerOptions
from .status import MethodStatus


@dataclass(frozen=True)
class NumericalOptions(TrainerOptions):
    """Options of the numerical baseline (the network options are accepted and unused).

    Attributes:
        integrator: the fixed-step scheme (``collocnode.tools._fixed_step.INTEGRATORS``).
        substeps: steps per sample interval.
    """

    epochs: int = 1
    integrator: str = "rk4"
    substeps: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        v.choice("integrator", self.integrator, INTEGRATORS)
        v.positive_int("substeps", self.substeps)


class Numerical(Trainer):
    """The system's own equations, stepped; see the module docstring."""

    name = "numerical"
    options_class = NumericalOptions
    predicts_while_fitting = False
    options: NumericalOptions

    def fit(
        self,
        system: Any,
        train: Trajectory | Sequence[Trajectory],
        *,
        budget_s: float | None = None,
        callback: Any = None,
    ) -> FitResult:
        start = time.perf_counter()
        self._check_fit_args(system, train, budget_s)
        check_integrator(self.options.integrator, getattr(system, "n_coords", 0) or 0)
        self.system, self._fitted = system, True
        return FitResult(
            method=self.name,
            status=MethodStatus.SUCCESS,
            train_time_s=time.perf_counter() - start,
            epochs=0,
            n_params=0,
            message=f"nothing trained: the equations stepped by {self.options.integrator}",
        )

    @property
    def n_params(self) -> int:
        return 0

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        t, x0 = self._check_predict_args(t, x0)
        system = self.system
        inputs = _input_function(system, t, u)

        def rhs(tk: float, x: np.ndarray) -> np.ndarray:
            return system.rhs(tk, x, inputs(tk))

        return integrate(
            rhs,
            t,
            x0,
            self.options.integrator,
            n_coords=getattr(system, "n_coords", 0) or 0,
            substeps=self.options.substeps,
        )


def _input_function(
    system: Any, t: np.ndarray, u: np.ndarray | Callable[[Any], Any] | None
) -> Callable[[float], np.ndarray | None]:
    """u(t) of a rollout: None (the system's own inputs), a callable, or samples at ``t``
    interpolated linearly (``(len(t), n_inputs)``)."""
    if u is None or not system.n_inputs:
        return lambda tk: None
    if callable(u):
        return lambda tk: np.asarray(u(tk), dtype=float)
    samples = v.finite_array("u", u, shape=(t.size, system.n_inputs))
    return lambda tk: np.array([np.interp(tk, t, col) for col in samples.T])
