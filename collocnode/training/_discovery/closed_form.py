"""A discovered closed form: its equations, its CasADi expression, and the model it goes into.

The closed form of a block (or of the whole right-hand side) replaces the block in the hybrid
model as a parametric term: each coefficient of its support becomes a fitted physical
[`Parameter`][collocnode.Parameter] of the new model, an NLP variable of the re-fit by collocation,
while the rest of the physics and the other blocks stay as they were.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import casadi as ca
import numpy as np

from ..._data import Trajectory
from ...models._hybrid import HybridModel, Parameter
from .library import Terms
from .samples import BlockSamples, DiscoveryError

#: a denominator smaller than this (relative to its largest magnitude on the samples) counts as
#: vanishing: the closed form has a pole on the data range
SINGULAR_RTOL = 1e-3


@dataclass(frozen=True)
class PathPoint:
    """One distinct support on the threshold path of one output.

    Attributes:
        threshold: the threshold that gave it (NaN: the optimizer's own).
        n_terms: its nonzero coefficients.
        relative_mse: weighted mean squared residual of the closed form over the weighted mean
            square of the output (dimensionless).
        score: the criterion's value (+inf where the support is empty or singular; NaN without
            a criterion).
        singular: its denominator vanishes on the data range.
        coefficients: its coefficients ([ξ, η] for the rational form).
        chosen: whether the selection kept it.
    """

    threshold: float
    n_terms: int
    relative_mse: float
    score: float
    singular: bool
    coefficients: np.ndarray = field(repr=False)
    chosen: bool = False

    def selected(self, chosen: bool) -> PathPoint:
        return replace(self, chosen=chosen)


def _number(c: float) -> str:
    return f"{c:.4g}"


def linear_combination(coefficients: np.ndarray, names: tuple[str, ...]) -> str:
    """Σ c_k name_k as text (4 significant digits, zero terms left out; "0" if all are)."""
    parts = []
    for c, name in zip(coefficients, names, strict=True):
        if c == 0:
            continue
        magnitude = _number(abs(c)) if name == "1" else f"{_number(abs(c))} {name}"
        sign = "-" if c < 0 else "+"
        parts.append(f"{sign} {magnitude}" if parts else ("-" if c < 0 else "") + magnitude)
    return " ".join(parts) if parts else "0"


@dataclass(frozen=True)
class ClosedForm:
    """A discovered closed form of a block's outputs in its inputs.

    ``y_j = Θ(z) ξ_j`` ("linear"), ``tanh(Θ(z) ξ_j)`` ("tanh") or
    ``Θ(z) ξ_j / (1 + Φ(z) η_j)`` ("rational"), with ``z`` the block's inputs.

    Attributes:
        block: the block's name (None: the whole right-hand side).
        form: "linear", "tanh" or "rational".
        input_names, output_names: labels of z and y.
        terms: the library's terms Θ (names and CasADi function).
        coefficients: ξ, shape (n_out, n_terms); zero outside the support.
        denominator_terms: Φ of a rational form, else None.
        denominator: η, shape (n_out, n_denominator_terms) ((n_out, 0) without one).
        paths: per output, the distinct supports of the threshold path, the chosen one marked.
        criterion: the model-selection criterion ("none": the optimizer's own threshold).
        samples: the node samples it was fitted to.
        wall_time_s: the discovery's wall time [s] (sampling, library, path).
    """

    block: str | None
    form: str
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    terms: Terms = field(repr=False)
    coefficients: np.ndarray
    denominator_terms: Terms | None = field(repr=False)
    denominator: np.ndarray
    paths: tuple[tuple[PathPoint, ...], ...] = field(repr=False)
    criterion: str
    samples: BlockSamples = field(repr=False)
    wall_time_s: float = math.nan

    def __post_init__(self) -> None:
        for name in ("coefficients", "denominator"):
            arr = np.array(getattr(self, name), dtype=float)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    def timed(self, seconds: float) -> ClosedForm:
        return replace(self, wall_time_s=float(seconds))

    # ---- reading it ------------------------------------------------------------------------------
    @property
    def explained(self) -> np.ndarray:
        """Per output, the share of the block's variation over its node samples that the closed
        form reproduces, 1 − Σ w (y − ŷ)² / Σ w (y − ȳ)² (quadrature weights w; 1: all of it),
        (n_out,). It measures the library against the network, not against the truth."""
        y = self.samples.outputs
        w = self.samples.weights / self.samples.weights.sum()
        residual = y - self(self.samples.inputs)
        mean = w @ y
        variation = w @ (y - mean) ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            share = 1.0 - (w @ residual**2) / variation
        return np.where(variation > 0, share, 1.0)

    @property
    def n_out(self) -> int:
        return int(self.coefficients.shape[0])

    @property
    def owner(self) -> str:
        return "rhs" if self.block is None else self.block

    @property
    def denominator_names(self) -> tuple[str, ...]:
        return () if self.denominator_terms is None else self.denominator_terms.names

    @property
    def support(self) -> np.ndarray:
        """Nonzero coefficients, shape (n_out, n_terms + n_denominator_terms)."""
        return np.hstack([self.coefficients, self.denominator]) != 0

    @property
    def n_terms(self) -> int:
        """Nonzero coefficients in all outputs."""
        return int(self.support.sum())

    def equation(self, j: int) -> str:
        """Output j as text, e.g. ``"x0' = 1.3 x0 - 0.9 x0 x1"``."""
        num = linear_combination(self.coefficients[j], self.terms.names)
        if self.form == "tanh":
            rhs = f"tanh({num})"
        elif self.form == "rational":
            den = linear_combination(self.denominator[j], self.denominator_names)
            den = "1" if den == "0" else ("1 - " + den[1:] if den.startswith("-") else "1 + " + den)
            rhs = f"({num}) / ({den})"
        else:
            rhs = num
        return f"{self.output_names[j]} = {rhs}"

    def equations(self) -> list[str]:
        return [self.equation(j) for j in range(self.n_out)]

    def __str__(self) -> str:
        return "\n".join(self.equations())

    def coefficient_table(self) -> dict[str, dict[str, float]]:
        """Output name -> term name -> nonzero coefficient (denominator terms as ``"den:T"``)."""
        out = {}
        for j, name in enumerate(self.output_names):
            row = {t: float(c) for t, c in zip(self.terms.names, self.coefficients[j], strict=True)}
            row.update(
                {
                    f"den:{t}": float(c)
                    for t, c in zip(self.denominator_names, self.denominator[j], strict=True)
                }
            )
            out[name] = {t: c for t, c in row.items() if c != 0}
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly summary: equations, coefficients, the chosen supports' scores."""
        return {
            "block": self.block,
            "form": self.form,
            "criterion": self.criterion,
            "equations": self.equations(),
            "coefficients": self.coefficient_table(),
            "n_terms": self.n_terms,
            "library_terms": list(self.terms.names),
            "samples": self.samples.n_samples,
            "measured_samples": self.samples.n_measured,
            "wall_time_s": self.wall_time_s,
            "selected": [
                {
                    "output": name,
                    "threshold": p.threshold,
                    "n_terms": p.n_terms,
                    "relative_mse": p.relative_mse,
                    "score": p.score,
                    "path_length": len(path),
                }
                for name, path in zip(self.output_names, self.paths, strict=True)
                for p in path
                if p.chosen
            ],
        }

    # ---- evaluating it ---------------------------------------------------------------------------
    def __call__(self, z: np.ndarray) -> np.ndarray:
        """The closed form at inputs ``z`` (n, n_in) -> (n, n_out)."""
        from .regression import predict

        z = np.atleast_2d(np.asarray(z, dtype=float))
        theta = self.terms(z)
        phi = self.denominator_terms(z) if self.denominator_terms is not None else None
        phi = np.zeros((z.shape[0], 0)) if phi is None else phi
        c = np.hstack([self.coefficients, self.denominator])
        return np.column_stack([predict(self.form, theta, phi, c[j]) for j in range(self.n_out)])

    def casadi(self, z: Any, coefficients: Any = None, denominator: Any = None) -> Any:
        """The closed form as a CasADi column (n_out, 1) of inputs ``z`` (n_in, 1); the
        coefficients may be given as CasADi expressions of the same shapes (default: the
        discovered values), zero outside the support."""
        xi = self.coefficients if coefficients is None else coefficients
        eta = self.denominator if denominator is None else denominator
        theta = self.terms.function(z)
        phi = self.denominator_terms.function(z) if self.denominator_terms is not None else None
        rows = []
        for j in range(self.n_out):
            num = _dot(xi, j, theta, self.coefficients[j] != 0)
            if self.form == "tanh":
                rows.append(ca.tanh(num))
            elif self.form == "rational":
                den = 1 + _dot(eta, j, phi, self.denominator[j] != 0)
                rows.append(num / den)
            else:
                rows.append(num)
        return ca.vertcat(*rows)

    # ---- the model it goes into ------------------------------------------------------------------
    def parameter_names(self) -> list[str]:
        """Names of the coefficient parameters of [`model`][collocnode.ClosedForm.model], in the
        order of the support (output by output, numerator then denominator terms)."""
        names = []
        for j in range(self.n_out):
            names += [
                f"{self.owner}[{j}]:{t}"
                for t, c in zip(self.terms.names, self.coefficients[j], strict=True)
                if c != 0
            ]
            names += [
                f"{self.owner}[{j}]:den:{t}"
                for t, c in zip(self.denominator_names, self.denominator[j], strict=True)
                if c != 0
            ]
        return names

    def _support_values(self) -> list[float]:
        values = []
        for j in range(self.n_out):
            values += [float(c) for c in self.coefficients[j] if c != 0]
            values += [float(c) for c in self.denominator[j] if c != 0]
        return values

    def model(self, model: HybridModel) -> HybridModel:
        """``model`` with the block (or the whole right-hand side) replaced by this closed form,
        each coefficient of the support a fitted [`Parameter`][collocnode.Parameter] (named as in
        [`parameter_names`][collocnode.ClosedForm.parameter_names]) starting at its discovered
        value. The other blocks and parameters stay; the model has no recipe (it cannot be saved to
        a model file)."""
        if not isinstance(model, HybridModel):
            raise TypeError(f"model must be a HybridModel, got {model!r:.80}")
        names = self.parameter_names()
        self._check_replaces(model, names)
        parameters = dict(model.parameters)
        parameters.update(
            {n: Parameter(c, fit=True) for n, c in zip(names, self._support_values(), strict=True)}
        )
        closed = self

        def expression(params: Mapping[str, Any], z: Any) -> Any:
            xi, eta = closed._symbolic_coefficients(params, names)
            return closed.casadi(z, xi, eta)

        if self.block is None:
            keep, rhs, outputs = _rhs_replaced(model, expression)
        else:
            keep, rhs, outputs = _block_replaced(
                model, self.block, len(self.input_names), expression
            )
        return HybridModel(
            n_states=model.n_states,
            blocks=keep,
            rhs=rhs,
            outputs=outputs,
            n_outputs=model.n_outputs,
            n_inputs=model.n_inputs,
            parameters=parameters,
            state_names=model.state_names,
            input_names=model.input_names,
            output_names=model.output_names,
        )

    def _check_replaces(self, model: HybridModel, names: list[str]) -> None:
        """Refuse a model whose names clash with the coefficients' or whose block (or
        right-hand side) has other inputs or outputs than this closed form."""
        clash = [n for n in names if n in model.parameters or n in model.blocks]
        if clash:
            raise ValueError(f"the model already has a parameter or block named {clash[0]!r}")
        n_in = len(self.input_names)
        if self.block is not None:
            if self.block not in model.blocks:
                raise ValueError(f"the model has no block {self.block!r} to replace")
            old = model.blocks[self.block]
            if old.n_in != n_in or old.n_out != self.n_out:
                raise ValueError(
                    f"block {self.block!r} of the model maps {old.n_in} inputs to {old.n_out} "
                    f"outputs; the closed form maps {n_in} to {self.n_out}"
                )
        elif n_in != model.n_states + model.n_inputs or self.n_out != model.n_states:
            raise ValueError(
                f"the closed form of a right-hand side maps {n_in} inputs to {self.n_out} "
                f"outputs; the model has {model.n_states} states and {model.n_inputs} inputs"
            )

    def _symbolic_coefficients(self, params: Mapping[str, Any], names: list[str]) -> tuple:
        """ξ and η as nested lists: the parameters (in the order of ``names``) on the support,
        0 elsewhere."""
        values = iter(params[n] for n in names)
        xi, eta = [], []
        for j in range(self.n_out):  # the order of parameter_names: numerator, then denominator
            xi.append([next(values) if c != 0 else 0 for c in self.coefficients[j]])
            eta.append([next(values) if c != 0 else 0 for c in self.denominator[j]])
        return xi, eta

    def with_parameters(self, closed: HybridModel, p: np.ndarray) -> ClosedForm:
        """This closed form with the coefficients of ``closed``'s parameter vector ``p`` (e.g.
        after the re-fit), same support."""
        values = closed.split_params(p)
        fitted = [float(values[n]) for n in self.parameter_names()]
        return self._with_support_values(fitted)

    def _with_support_values(self, fitted: list[float]) -> ClosedForm:
        it = iter(fitted)
        xi = np.zeros_like(self.coefficients)
        eta = np.zeros_like(self.denominator)
        for j in range(self.n_out):
            for k in np.flatnonzero(self.coefficients[j]):
                xi[j, k] = next(it)
            for k in np.flatnonzero(self.denominator[j]):
                eta[j, k] = next(it)
        # a coefficient that the re-fit drove to exactly 0 would leave the support: keep it tiny
        xi[(self.coefficients != 0) & (xi == 0)] = np.finfo(float).tiny
        eta[(self.denominator != 0) & (eta == 0)] = np.finfo(float).tiny
        return replace(self, coefficients=xi, denominator=eta)

    def pruned(self, tol: float) -> ClosedForm:
        """This closed form without the terms whose share of their output on the node samples
        is below ``tol``: RMS(c_k X_k) over RMS of the regression's target (quadrature-
        weighted), with X_k the term's column in the form's linear regression (θ_k for the
        numerator, -y φ_k for a denominator term; the target is y, or atanh(y) for the tanh
        form). An output keeps at least its largest numerator term.

        Raises:
            ValueError: ``tol`` is not positive.
        """
        from .regression import design, shares

        if not tol > 0 or not math.isfinite(tol):
            raise ValueError(f"tol must be a positive number, got {tol!r}")
        s = self.samples
        w = s.weights / s.weights.mean()
        theta = self.terms(s.inputs)
        phi = (
            self.denominator_terms(s.inputs)
            if self.denominator_terms is not None
            else np.zeros((s.n_samples, 0))
        )
        K = self.terms.n_terms
        xi, eta = self.coefficients.copy(), self.denominator.copy()
        for j in range(self.n_out):
            X, target, sw = design(self.form, theta, phi, s.outputs[:, j], w)
            share = shares(X, target, sw, np.concatenate([xi[j], eta[j]]))
            small = (share < tol) & (np.concatenate([xi[j], eta[j]]) != 0)
            numerator = small[:K]
            if numerator.sum() == np.count_nonzero(xi[j]):
                numerator[np.argmax(np.where(xi[j] != 0, share[:K], -np.inf))] = False
            xi[j, numerator] = 0.0
            eta[j, small[K:]] = 0.0
        return replace(self, coefficients=xi, denominator=eta)

    def refit_problem(self, trained: Any, start: Any = None, **changes: Any) -> Any:
        """The training problem of ``trained`` (the
        [`TrainingSolution`][collocnode.TrainingSolution] of the network) with this closed form in
        the model: the same data and settings, the coefficients starting from this closed form's
        values and the other weights from ``trained``, the node states from its collocation
        solution. ``start`` (a solution of an earlier re-fit) gives the starting weights and states
        instead, where it has them. Block constraints on the replaced block are dropped (it is
        gone); ``changes`` replace fields of the problem (e.g. ``regularization``)."""
        problem = trained.problem
        closed = self.model(problem.model)
        values = dict(problem.model.split_params(trained.p))
        values.update(zip(self.parameter_names(), self._support_values(), strict=True))
        source = trained
        if start is not None:
            earlier = start.model.split_params(start.p)
            values.update({k: val for k, val in earlier.items() if k in closed.slices})
            values.update(zip(self.parameter_names(), self._support_values(), strict=True))
            source = start
        p0 = np.zeros(closed.n_params)
        for name, s in closed.slices.items():
            p0[s] = values[name]
        sol = source.solution
        guesses = [
            Trajectory(sol.meshes[k].node_times, sol.segment_states[k])
            for k in range(problem.n_trajectories)
        ]
        kept = tuple(c for c in problem.block_constraints if c.block in closed.blocks)
        fields = {
            "model": closed,
            "params_guess": p0,
            "state_guess": guesses[0] if len(guesses) == 1 else guesses,
            "block_constraints": kept,
            **changes,
        }
        return replace(problem, **fields)

    def coefficient_errors(self, truth: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
        """The coefficients against true ones (output name -> term name -> value; absent terms
        are zero): the largest relative error of the true terms, the spurious terms found, the
        true terms missed, and whether the support is exactly the true one."""
        found = self.coefficient_table()
        worst, spurious, missed = 0.0, [], []
        for out, table in found.items():
            true = dict(truth.get(out, {}))
            for term in table:
                if term not in true or true[term] == 0:
                    spurious.append(f"{out}: {term}")
            for term, c_true in true.items():
                if c_true == 0:
                    continue
                if term not in table:
                    missed.append(f"{out}: {term}")
                    worst = math.inf
                else:
                    worst = max(worst, abs(table[term] - c_true) / abs(c_true))
        return {
            "max_relative_error": worst,
            "spurious": spurious,
            "missed": missed,
            "exact_support": not spurious and not missed,
        }


def _rhs_replaced(model: HybridModel, expression: Any) -> tuple[dict, Any, Any]:
    """The blocks, right-hand side and outputs of ``model`` with its whole right-hand side the
    closed form ``expression(params, z)`` of z = [x; u] (the blocks stay for the outputs)."""
    own = list(model.parameters)
    keep = dict(model.blocks) if model.outputs is not None else {}

    def rhs(x, u, t, blocks, params):
        return expression(params, ca.vertcat(x, u))

    outputs = None
    if model.outputs is not None:

        def outputs(x, u, t, blocks, params):
            return model.outputs(x, u, t, blocks, {k: params[k] for k in own})

    return keep, rhs, outputs


def _block_replaced(
    model: HybridModel, block: str, n_in: int, expression: Any
) -> tuple[dict, Any, Any]:
    """The blocks, right-hand side and outputs of ``model`` with its block ``block`` the closed
    form ``expression(params, z)`` of the block's inputs z."""
    own = list(model.parameters)
    keep = {k: b for k, b in model.blocks.items() if k != block}
    order = list(model.blocks)

    def with_closed_form(blocks: Any, params: Mapping[str, Any]) -> _Substituted:
        return _Substituted(blocks, order, block, n_in, lambda z: expression(params, z))

    def rhs(x, u, t, blocks, params):
        return model.rhs(x, u, t, with_closed_form(blocks, params), {k: params[k] for k in own})

    outputs = None
    if model.outputs is not None:

        def outputs(x, u, t, blocks, params):
            return model.outputs(
                x, u, t, with_closed_form(blocks, params), {k: params[k] for k in own}
            )

    return keep, rhs, outputs


def _dot(coefficients: Any, j: int, terms: Any, support: np.ndarray) -> Any:
    """Σ_k c_jk θ_k over the support (CasADi)."""
    row = coefficients[j]
    out = 0
    for k in np.flatnonzero(support):
        out = out + row[k] * terms[int(k)]
    return out


class _Substituted(Mapping):
    """The model's blocks with one replaced by a closed form (same input check as Blocks)."""

    def __init__(self, blocks: Any, order: list[str], name: str, n_in: int, fn: Any) -> None:
        self._blocks, self._order, self._name, self._n_in, self._fn = blocks, order, name, n_in, fn

    def __getitem__(self, name: str) -> Any:
        if name != self._name:
            return self._blocks[name]

        def evaluate(x: Any) -> Any:
            z = ca.vertcat(x)
            if z.shape != (self._n_in, 1):
                raise ValueError(
                    f"block {name!r} takes {self._n_in} inputs (a column), got shape {z.shape}"
                )
            return self._fn(z)

        return evaluate

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


def check_singular_free(found: ClosedForm) -> None:
    """Raise [`DiscoveryError`][collocnode.DiscoveryError] if a rational closed form's denominator
    vanishes on its samples (after a re-fit moved its coefficients)."""
    if found.form != "rational" or found.denominator_terms is None:
        return
    phi = found.denominator_terms(found.samples.inputs)
    for j in range(found.n_out):
        d = 1.0 + phi @ found.denominator[j]
        if (np.any(d > 0) and np.any(d < 0)) or np.abs(d).min() <= SINGULAR_RTOL * np.abs(d).max():
            raise DiscoveryError(
                f"the closed form of output {found.output_names[j]!r} of "
                f"{found.samples.label} is singular on the data range after the re-fit "
                f"(its denominator reaches {np.abs(d).min():.3g})"
            )
