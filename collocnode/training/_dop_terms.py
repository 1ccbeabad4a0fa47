"""The model functions of a training problem's dynamic optimization problem (paper eqs. 6 and
21), handed to [`DynamicOptimizationProblem`][collocnode.DynamicOptimizationProblem] and called
once with CasADi symbols when it is transcribed: the model's dynamics, the fit of its columns at
the collocation nodes (a Lagrange term) or at the samples (a sample loss), the weights'
regularization (a Mayer term), the block constraints (eq. 17, boundary constraints that see
only the parameters) and the user's path constraints.

The DOP's parameter and input vectors are laid out by `Layout`:
the model's parameters, then the fitted per-trajectory parameters; the known inputs, the given
per-trajectory parameters, then the fit targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from ..models._hybrid import HybridModel
from ..transcription._problem import Constraint
from ._constraints import BlockConstraint, PathConstraint


@dataclass(frozen=True)
class FitTerms:
    """The dynamics and the fit of one training problem.

    Attributes:
        model: the hybrid model.
        layout: how the DOP's parameter and input vectors are split (``layout.split(w, P) ->
            (p, u, c, q̂)``: the model's parameters, known inputs, per-trajectory parameters and
            fit targets).
        columns: the fitted columns, ("x", state index) or ("y", output index), n_fit of them.
        scales: each fitted column's scale s_c, (n_fit,).
        regularization: λ of the weights' penalty λ ‖w‖².
    """

    model: HybridModel
    layout: Any
    columns: tuple[tuple[str, int], ...]
    scales: np.ndarray
    regularization: float

    def _fitted(self, x: Any, p: Any, u: Any, t: Any, c: Any) -> Any:
        """The fitted columns q (n_fit,): states, or model outputs (evaluated only if fitted)."""
        uses_outputs = any(k == "y" for k, _ in self.columns)
        y = self.model.symbolic(x, p, u, t, c)[1] if uses_outputs else None
        return ca.vertcat(*[x[i] if k == "x" else y[i] for k, i in self.columns])

    def dynamics(self, x: Any, P: Any, w: Any, t: Any) -> Any:
        """The model's right-hand side f(x, p, u, t; c) (n_states,)."""
        p, u, c, _ = self.layout.split(w, P)
        return self.model.symbolic(x, p, u, t, c)[0]

    def lagrange(self, x: Any, P: Any, w: Any, t: Any) -> Any:
        """The fit at a node: Σ_c ((q_c − q̂_c) / s_c)² (eq. 21a's integrand)."""
        p, u, c, q_hat = self.layout.split(w, P)
        return ca.sumsqr((self._fitted(x, p, u, t, c) - q_hat) / self.scales)

    def sample_loss(self, x: Any, P: Any, w: Any, t: Any, d: Any) -> Any:
        """The fit at a sample: Σ_c w_c (q_c − q̂_c)² / s_c², with d = [q̂ (n_fit), w_c / s_c²
        (n_fit)]: the weights hold the cell lengths, the scales and the mask (0 where
        missing), so a missing value adds exactly nothing."""
        p, u, c, _ = self.layout.split(w, P)
        n_fit = len(self.columns)
        q_hat, weight = ca.vertsplit(d, [0, n_fit, 2 * n_fit])
        return ca.dot(weight, (self._fitted(x, p, u, t, c) - q_hat) ** 2)

    def weight_penalty(self, x0: Any, xf: Any, P: Any) -> Any:
        """λ ‖w‖² over the networks' weights (the first ``n_weights`` parameters)."""
        weights = ca.vertsplit(P, [0, self.model.n_weights, P.size1()])[0]
        return self.regularization * ca.sumsqr(weights)


@dataclass(frozen=True)
class _PathValues:
    """The user's path constraints at a node, stacked: ``g(x, u, t, blocks, params)`` written
    like the physics."""

    model: HybridModel
    layout: Any
    constraints: tuple[PathConstraint, ...]

    def __call__(self, x: Any, P: Any, w: Any, t: Any) -> Any:
        p, u, c, _ = self.layout.split(w, P)
        m = self.model
        return ca.vertcat(*[m.evaluate("path", g.fn, g.n, x, p, u, t, c) for g in self.constraints])


def path_constraint(
    model: HybridModel, layout: Any, constraints: Sequence[PathConstraint]
) -> Constraint | None:
    """The path constraints ``lb <= g(...) <= ub`` at every collocation node as one
    constraint, or None without any."""
    if not constraints:
        return None
    cons = tuple(constraints)
    return Constraint.make(
        "path",
        _PathValues(model, layout, cons),
        sum(g.n for g in cons),
        np.concatenate([g.lb for g in cons]),
        np.concatenate([g.ub for g in cons]),
    )


@dataclass(frozen=True)
class _BlockValues:
    """The constrained blocks' outputs at their fixed inputs, stacked: a boundary function of
    (x0, xf, p) that sees only p."""

    model: HybridModel
    constraints: tuple[BlockConstraint, ...]

    def __call__(self, x0: Any, xf: Any, p: Any) -> Any:
        m = self.model
        return ca.vertcat(
            *[
                m.blocks[c.block].casadi(ca.DM(np.atleast_1d(c.at)), p[m.slices[c.block]])
                for c in self.constraints
            ]
        )


def block_constraint(
    model: HybridModel, constraints: Sequence[BlockConstraint]
) -> Constraint | None:
    """The block constraints ``lb <= block(at) <= ub`` as one boundary constraint (their
    bounds broadcast over each block's outputs), or None without any."""
    if not constraints:
        return None
    cons = tuple(constraints)
    n_out = [model.blocks[c.block].n_out for c in cons]
    lb = np.concatenate([np.broadcast_to(c.lb, (n,)) for c, n in zip(cons, n_out, strict=True)])
    ub = np.concatenate([np.broadcast_to(c.ub, (n,)) for c, n in zip(cons, n_out, strict=True)])
    return Constraint.make("block_constraints", _BlockValues(model, cons), sum(n_out), lb, ub)
