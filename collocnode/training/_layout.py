"""Where a training problem's pieces sit in the DOP's input and parameter vectors, and the
per-trajectory parameters (the conditions of each experiment).

The dynamic optimization problem has one parameter vector shared by every trajectory and one
vector of known inputs per trajectory, so a training problem lays its pieces out as

    inputs w = [u (n_inputs), c_known (n_known), e (n_select), q̂ (n_targets)]
    parameters P = [p (the model's n_params), C (n_fitted × n_trajectories, column k: trajectory
                    k's fitted per-trajectory parameters)]

where u are the model's known inputs, c_known the values of the per-trajectory parameters that
are given (constant over each trajectory), e the k-th unit vector on trajectory k (only when
some per-trajectory parameter is fitted: C e then picks that trajectory's column, a linear map
that keeps every node function the same for all trajectories) and q̂ the interpolated fit
targets of the loss at the nodes. The model's parameter vector comes first, so that the
parameters of a solution are ``P[:n_params]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from .._data import Trajectory
from ..models._hybrid import HybridModel


def check_trajectory_params(model: HybridModel, data: tuple[Trajectory, ...]) -> None:
    """Every trajectory gives each per-trajectory parameter that is not fitted; a fitted one
    is given by all trajectories (their values are the guesses) or by none (the parameter's
    value is); every given value lies in the parameter's bounds. One ValueError naming the
    trajectory, the parameter and the value otherwise."""
    for name in model.per_trajectory:
        par = model.parameters[name]
        given = [name in d.params for d in data]
        if not par.fit or any(given):
            missing = [k for k, g in enumerate(given) if not g]
            if missing:
                k = missing[0]
                known = ", ".join(sorted(data[k].params)) or "none"
                why = (
                    "it is fitted per trajectory and other trajectories give its guess"
                    if par.fit
                    else "a per-trajectory parameter of the model that is not fitted"
                )
                raise ValueError(
                    f"data[{k}].params has no {name!r} ({why}); data[{k}].params holds: {known}"
                )
        for k, d in enumerate(data):
            value = d.params.get(name)
            if value is not None and not par.lb <= value <= par.ub:
                raise ValueError(
                    f"data[{k}].params[{name!r}] = {value!r} is outside the parameter's bounds "
                    f"[{par.lb}, {par.ub}]"
                )


@dataclass(frozen=True)
class Layout:
    """The sizes of the pieces of the DOP's input and parameter vectors (module docstring)."""

    model: HybridModel
    n_trajectories: int
    n_targets: int

    @property
    def known(self) -> tuple[str, ...]:
        """The per-trajectory parameters whose values the trajectories give (not fitted)."""
        m = self.model
        return tuple(n for n in m.per_trajectory if not m.parameters[n].fit)

    @property
    def fitted(self) -> tuple[str, ...]:
        """The per-trajectory parameters fitted for every trajectory."""
        m = self.model
        return tuple(n for n in m.per_trajectory if m.parameters[n].fit)

    @property
    def n_select(self) -> int:
        return self.n_trajectories if self.fitted else 0

    @property
    def n_inputs(self) -> int:
        """Length of the DOP's input vector w."""
        return self.model.n_inputs + len(self.known) + self.n_select + self.n_targets

    @property
    def n_params(self) -> int:
        """Length of the DOP's parameter vector P."""
        return self.model.n_params + len(self.fitted) * self.n_trajectories

    def split_inputs(self, w: Any) -> tuple[Any, Any, Any, Any]:
        """(u, c_known, e, q̂) of a DOP input column w."""
        # explicit offsets: a range slice such as w[:0] of a (1, 1) symbol is a 1 x 0 row
        sizes = (self.model.n_inputs, len(self.known), self.n_select, self.n_targets)
        offsets = np.cumsum((0, *sizes)).tolist()
        return tuple(ca.vertsplit(w, offsets))  # type: ignore[return-value]

    def split(self, w: Any, P: Any) -> tuple[Any, Any, Any, Any]:
        """``(p, u, c, q̂)``: the model's parameter vector, its known inputs, its per-trajectory
        parameters (in the order of ``model.per_trajectory``) and the fit targets, from a DOP
        input column w and parameter column P (symbols)."""
        m = self.model
        u, c_known, e, q_hat = self.split_inputs(w)
        p, C = ca.vertsplit(P, [0, m.n_params, P.size1()])
        by_name = dict(zip(self.known, ca.vertsplit(c_known, _units(len(self.known))), strict=True))
        if self.fitted:
            fitted = ca.mtimes(ca.reshape(C, len(self.fitted), self.n_trajectories), e)
            by_name |= dict(
                zip(self.fitted, ca.vertsplit(fitted, _units(len(self.fitted))), strict=True)
            )
        c = ca.vertcat(*[by_name[n] for n in m.per_trajectory]) if by_name else ca.DM(0, 1)
        return p, u, c, q_hat

    def constant_inputs(self, k: int, d: Trajectory) -> np.ndarray:
        """The constant part [c_known, e] of trajectory k's inputs, shape (n_known + n_select,)."""
        e = np.eye(self.n_select)[k] if self.n_select else np.zeros(0)
        return np.concatenate([[d.params[n] for n in self.known], e])

    def guesses(self, data: tuple[Trajectory, ...]) -> np.ndarray:
        """The starting values of C: each trajectory's value of each fitted per-trajectory
        parameter, else the parameter's value; shape (n_fitted * n_trajectories,), column-major
        as in the module docstring."""
        m = self.model
        return np.array(
            [d.params.get(n, m.parameters[n].value) for d in data for n in self.fitted], dtype=float
        )

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of P."""
        lb, ub = self.model.param_bounds()
        pars = [self.model.parameters[n] for n in self.fitted] * self.n_trajectories
        return (
            np.concatenate([lb, [par.lb for par in pars]]),
            np.concatenate([ub, [par.ub for par in pars]]),
        )

    def values(self, P: np.ndarray, data: tuple[Trajectory, ...]) -> list[dict[str, float]]:
        """Per trajectory, the values of the model's per-trajectory parameters at the DOP
        parameters P (the fitted ones from P, the others from the data)."""
        m = self.model
        P = np.asarray(P, dtype=float)
        C = P[m.n_params :].reshape(self.n_trajectories, len(self.fitted))
        out = []
        for k, d in enumerate(data):
            fitted = dict(zip(self.fitted, C[k].tolist(), strict=True))
            out.append(
                {n: fitted[n] if n in fitted else float(d.params[n]) for n in m.per_trajectory}
            )
        return out


def _units(n: int) -> list[int]:
    return list(range(n + 1))
