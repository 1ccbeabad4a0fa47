"""Sparse regression of a block's outputs on a library of terms in its inputs, with a threshold
path and a model-selection criterion (SINDy, Brunton et al. 2016, on the collocation nodes).

Three forms of the closed form, each a linear regression for a pysindy optimizer:

* ``"linear"``: y_j = Θ(z) ξ_j (SINDy);
* ``"tanh"``: y_j = tanh(Θ(z) ξ_j), a known outer nonlinearity (MNN §5.1, "ODEs with complex
  nonlinear function of the form f(p(x))"), regressed as atanh(y_j) = Θ(z) ξ_j with the sample
  weights times (1 − y_j²)², so that each sample counts by its error in y_j (first order); a
  sample the network puts at or beyond ±1 (a saturated tanh overshot) says nothing about the
  argument and gets weight 0;
* ``"rational"``: y_j = Θ(z) ξ_j / (1 + Φ(z) η_j) (MNN §5.1, rational derivatives p/q), the
  denominator's constant fixed to 1, regressed in the linearised form
  y_j = Θ(z) ξ_j − y_j Φ(z) η_j (as SINDy-PI's implicit form does).

The sparsity path is the optimizer's: SSR (stepwise sparse regression, Boninsegna et al.
2018; the default, on unit-norm columns) removes one term per step and FROLS adds one, each
keeping every step; STLSQ and SR3 are swept over a range of thresholds. Every distinct support
of the path is re-fitted by weighted least squares on it and scored by the criterion on the
residual of the closed form itself (y_j − ŷ_j, not the linearised one), weighted by the
samples' quadrature weights; the best is kept per output. The criteria (Mangan et al. 2017,
"Model selection for dynamical systems via sparse regression and information criteria") with n
samples, k nonzero coefficients and the weighted mean squared residual r:

    AIC = n log r + 2k,   AICc = AIC + 2k(k + 1) / (n − k − 1),   BIC = n log r + k log n.

n is the number of measured samples behind the trained model, not the number of nodes: the
nodes interpolate the fit and add no independent observations (with n = nodes every term that
lowers the residual by a fraction of a percent would enter).
"""

from __future__ import annotations

import copy
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ... import _validation as v
from .closed_form import SINGULAR_RTOL, ClosedForm, PathPoint, linear_combination
from .library import Terms, fit_terms, is_library, pysindy
from .samples import RHS, BlockSamples, DiscoveryError, DiscoveryWarning, block_samples

FORMS = ("linear", "tanh", "rational")
CRITERIA = ("aicc", "aic", "bic", "none")
WEIGHTS = ("quadrature", "uniform")

#: the tanh form refuses outputs beyond this magnitude (a network's overshoot of a saturated
#: tanh stays well below it; an output of 5 is no tanh)
TANH_OVERSHOOT = 1.05

#: a residual below this fraction of the output's RMS counts as exact (rounding, not misfit):
#: without the floor the criteria would rank exact fits by their rounding errors
EXACT_RTOL = 1e-9


@dataclass(frozen=True)
class SparseRegression:
    """Settings of a discovery: the library, the optimizer, the form and the selection.

    Args:
        library: a pysindy feature library (default ``PolynomialLibrary(degree=3)``); fitted to
            a copy, never in place.
        optimizer: a pysindy optimizer that gives the sparsity path (default
            ``SSR(normalize_columns=True)``): SSR and FROLS walk it; STLSQ's ``threshold`` and
            SR3's ``reg_weight_lam`` (through the equivalent L0/L1 weight) are swept.
        form: "linear", "tanh" or "rational" (see the module docstring).
        denominator: the library of a rational form's denominator (default: ``library``
            without its constant term).
        thresholds: the thresholds swept (STLSQ, SR3), in the units the optimizer thresholds;
            None: ``n_thresholds`` values spaced geometrically between half the smallest and
            the largest coefficient it finds with a zero threshold.
        n_thresholds: length of the automatic threshold path.
        criterion: "aicc", "aic" or "bic" (select along the path, per output), or "none" (one
            fit with the optimizer's own threshold).
        weights: "quadrature" (the Radau weights of the nodes, the training loss's measure) or
            "uniform".
        input_names: labels of the block's inputs (default: a state's name where the input is
            that state, ``z0, z1, ...`` otherwise).
    """

    library: Any = None
    optimizer: Any = None
    form: str = "linear"
    denominator: Any = None
    thresholds: Sequence[float] | None = None
    n_thresholds: int = 40
    criterion: str = "aicc"
    weights: str = "quadrature"
    input_names: Sequence[str] = field(default=())

    def __post_init__(self) -> None:
        ps = pysindy()
        if self.library is not None and not is_library(self.library):
            raise TypeError(f"library must be a pysindy feature library, got {self.library!r:.80}")
        if self.optimizer is not None and not isinstance(
            self.optimizer, ps.optimizers.BaseOptimizer
        ):
            raise TypeError(f"optimizer must be a pysindy optimizer, got {self.optimizer!r:.80}")
        v.choice("form", self.form, FORMS)
        if self.denominator is not None:
            if self.form != "rational":
                raise ValueError(
                    f"denominator is the library of a rational form; form is {self.form!r}"
                )
            if not is_library(self.denominator):
                raise TypeError(
                    f"denominator must be a pysindy feature library, got {self.denominator!r:.80}"
                )
        if self.thresholds is not None:
            values = [
                v.positive_float(f"thresholds[{i}]", t) for i, t in enumerate(self.thresholds)
            ]
            if not values:
                raise ValueError("thresholds must hold at least one value, got none")
            object.__setattr__(self, "thresholds", tuple(sorted(values)))
        v.positive_int("n_thresholds", self.n_thresholds)
        v.choice("criterion", self.criterion, CRITERIA)
        v.choice("weights", self.weights, WEIGHTS)
        object.__setattr__(self, "input_names", v.names("input_names", self.input_names))
        optimizer = self.the_optimizer()
        if self.criterion != "none" and not isinstance(optimizer, (ps.SSR, ps.FROLS)):
            _path_parameter(optimizer)  # refuse an optimizer without a path

    def the_library(self) -> Any:
        return pysindy().PolynomialLibrary(degree=3) if self.library is None else self.library

    def the_optimizer(self) -> Any:
        if self.optimizer is None:
            return pysindy().SSR(normalize_columns=True)
        return self.optimizer


def _path_parameter(optimizer: Any) -> tuple[str, Any]:
    """The optimizer parameter the path sweeps and the map from a threshold to its value."""
    params = optimizer.get_params()
    if "threshold" in params:
        return "threshold", lambda thr: thr
    if "reg_weight_lam" in params:
        nu = params.get("relax_coeff_nu", 1.0)
        if params.get("regularizer", "L0").lower() == "l0":
            return "reg_weight_lam", lambda thr: type(optimizer).calculate_l0_weight(thr, nu)
        if params.get("regularizer").lower() == "l1":
            return "reg_weight_lam", lambda thr: thr / nu  # the prox soft-thresholds at λν
    raise ValueError(
        f"optimizer {type(optimizer).__name__} has no sparsity path (SSR and FROLS walk one; "
        f"STLSQ's threshold and SR3's L0/L1 reg_weight_lam are swept); give criterion='none' "
        f"to use it as it is"
    )


def discover(
    trained: Any, block: str | None = RHS, regression: SparseRegression | None = None
) -> ClosedForm:
    """The closed form of a trained block (None: the model's whole right-hand side), by sparse
    regression of its outputs at the collocation nodes on a library of terms in its inputs.

    Args:
        trained: a [`TrainingSolution`][collocnode.TrainingSolution].
        block: the name of a block of ``trained.model``, or None.
        regression: the settings (default ``SparseRegression()``: cubic polynomials, SSR's
            sparsity path, AICc, quadrature weights).

    Returns:
        The [`ClosedForm`][collocnode.ClosedForm]: readable equations, coefficients, a CasADi
        expression, the model with the block replaced by it
        ([`ClosedForm.model`][collocnode.ClosedForm.model]) and the problem that re-fits its
        coefficients ([`ClosedForm.refit_problem`][collocnode.ClosedForm.refit_problem]).

    Raises:
        DiscoveryError: an unknown block, a library that does not match the block's inputs, a
            threshold that removes every term of an output, a closed form singular on the data
            range, a tanh form on outputs outside (−1, 1). The trained model is not changed.

    Warns:
        DiscoveryWarning: the trained model failed its consistency check (its ``consistency``);
            the closed form reproduces less than 99.9 % of an output's variation over the node
            samples (`ClosedForm.explained`): the library does not express the block.
    """
    start = time.perf_counter()
    report = getattr(trained, "consistency", None)
    if report is not None and not report.consistent:
        # the block's samples are the collocation trajectory, which the model does not follow
        warnings.warn(
            f"discovering from a model that failed its consistency check ({report.summary()}): "
            f"the closed form fits the collocation trajectory, which the learned model does "
            f"not reproduce; refine the mesh first (UntilConsistent)",
            DiscoveryWarning,
            stacklevel=2,
        )
    regression = SparseRegression() if regression is None else regression
    if not isinstance(regression, SparseRegression):
        raise TypeError(f"regression must be a SparseRegression, got {regression!r:.80}")
    samples = block_samples(trained, block)
    if regression.input_names:
        if len(regression.input_names) != samples.inputs.shape[1]:
            raise DiscoveryError(
                f"input_names has {len(regression.input_names)} labels, but {samples.label} "
                f"has {samples.inputs.shape[1]} inputs"
            )
        samples = replace(samples, input_names=tuple(regression.input_names))
    found = regress(samples, regression)
    _warn_unexpressed(found)
    return found.timed(time.perf_counter() - start)


#: a closed form that reproduces less of the block's variation than this is warned of
EXPLAINED_MIN = 0.999


def _warn_unexpressed(found: ClosedForm) -> None:
    """Warn where the library cannot express the trained block: the closed form leaves more
    than 0.1 % of an output's variation over the node samples unexplained (an RMS error of 3 %
    of its spread)."""
    explained = found.explained
    for j in np.flatnonzero(explained < EXPLAINED_MIN):
        y = found.samples.outputs[:, j]
        error = np.abs(y - found(found.samples.inputs)[:, j])
        k = int(np.argmax(error))
        at = ", ".join(
            f"{n} = {v:.4g}"
            for n, v in zip(found.input_names, found.samples.inputs[k], strict=True)
        )
        warnings.warn(
            f"the closed form of {found.samples.label} reproduces {explained[j]:.2%} of output "
            f"{found.output_names[j]!r}'s variation over the node samples (largest error "
            f"{error[k]:.3g} at {at}, where the block gives {y[k]:.4g}): the library does not "
            "express this block; its equation is an approximation of the network, not a law "
            "(add the terms it lacks, e.g. |x|, or check the block against known physics)",
            DiscoveryWarning,
            stacklevel=3,
        )


def regress(samples: BlockSamples, regression: SparseRegression) -> ClosedForm:
    """The closed form of ``samples`` (see [`discover`][collocnode.discover])."""
    owner = samples.label
    terms = fit_terms(regression.the_library(), samples.inputs, samples.input_names, owner)
    den_terms = None
    if regression.form == "rational":
        den_terms = (
            terms.without_constant()
            if regression.denominator is None
            else fit_terms(regression.denominator, samples.inputs, samples.input_names, owner)
        )
        if "1" in den_terms.names:
            raise DiscoveryError(
                f"the denominator library of {owner} has a constant term; the denominator's "
                f"constant is fixed to 1 (give a library without bias)"
            )
    theta = terms(samples.inputs)
    phi = den_terms(samples.inputs) if den_terms is not None else np.zeros((samples.n_samples, 0))
    weights = samples.weights if regression.weights == "quadrature" else np.ones(samples.n_samples)
    weights = weights / weights.mean()
    y = samples.outputs
    if regression.form == "tanh":
        worst = np.abs(y).max(axis=0)
        inside = (np.abs(y) < 1.0).mean(axis=0)
        bad = np.flatnonzero((worst > TANH_OVERSHOOT) | (inside < 0.5))
        if bad.size:
            j = int(bad[0])
            raise DiscoveryError(
                f"the tanh form needs outputs in (−1, 1); output {samples.output_names[j]!r} of "
                f"{owner} reaches {worst[j]:.4g} ({1 - inside[j]:.0%} of its samples outside)"
            )
    n_out = y.shape[1]
    K = terms.n_terms
    coef = np.zeros((n_out, K))
    den = np.zeros((n_out, phi.shape[1]))
    paths = []
    for j in range(n_out):
        c, path = _fit_output(
            j, theta, phi, y[:, j], weights, regression, samples, terms, den_terms
        )
        coef[j], den[j] = c[:K], c[K:]
        paths.append(tuple(path))
    return ClosedForm(
        block=samples.block,
        form=regression.form,
        input_names=samples.input_names,
        output_names=samples.output_names,
        terms=terms,
        coefficients=coef,
        denominator_terms=den_terms,
        denominator=den,
        paths=tuple(paths),
        criterion=regression.criterion,
        samples=samples,
    )


def design(
    form: str, theta: np.ndarray, phi: np.ndarray, y: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The regression's features, target and sample weights for one output ``y`` (n,)."""
    if form == "linear":
        return theta, y, w
    if form == "tanh":
        inside = np.abs(y) < 1.0
        target = np.arctanh(np.where(inside, y, 0.0))
        return theta, target, np.where(inside, w * (1.0 - y * y) ** 2, 0.0)
    return np.hstack([theta, -y[:, None] * phi]), y, w


def predict(form: str, theta: np.ndarray, phi: np.ndarray, c: np.ndarray) -> np.ndarray:
    """ŷ of one output with coefficients ``c`` ([ξ, η] for the rational form)."""
    K = theta.shape[1]
    if form == "linear":
        return theta @ c[:K]
    if form == "tanh":
        return np.tanh(theta @ c[:K])
    return (theta @ c[:K]) / (1.0 + phi @ c[K:])


def _criterion(name: str, n: int, k: int, mse: float) -> float:
    if name == "none":
        return math.nan
    log_r = math.log(mse)
    if name == "aic":
        return n * log_r + 2 * k
    if name == "bic":
        return n * log_r + k * math.log(n)
    if n - k - 1 <= 0:
        return math.inf  # AICc is undefined with as many coefficients as samples
    return n * log_r + 2 * k + 2 * k * (k + 1) / (n - k - 1)


def _fit_output(
    j: int,
    theta: np.ndarray,
    phi: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    regression: SparseRegression,
    samples: BlockSamples,
    terms: Terms,
    den_terms: Terms | None,
) -> tuple[np.ndarray, list[PathPoint]]:
    """The selected coefficients of output j and its path."""
    owner, name = samples.label, samples.output_names[j]
    form = regression.form
    X, target, sw = design(form, theta, phi, y, w)
    labels = list(terms.names) + [f"den:{n}" for n in (den_terms.names if den_terms else ())]
    score = _Scorer(
        form=form,
        theta=theta,
        phi=phi,
        y=y,
        w=w,
        criterion=regression.criterion,
        n_measured=samples.n_measured,
        scale=max(float(np.average(y * y, weights=w)), 1e-300),
    )
    path: list[PathPoint] = []
    seen: set[bytes] = set()
    for thr, c in _candidates(X, target, sw, regression):
        key = (c != 0).tobytes()
        if key not in seen:
            seen.add(key)
            path.append(score(thr, c))
    if regression.criterion == "none":
        chosen = path[0]
    else:
        usable = [p for p in path if math.isfinite(p.score)]
        if not usable:
            _refuse_all(path, form, owner, name, labels, samples)
        chosen = min(usable, key=lambda p: (p.score, p.n_terms))
        cleaned = _without_rounding_terms(chosen, score, X, target, sw)
        if cleaned is not None:
            path.append(cleaned)
            chosen = cleaned
    if chosen.n_terms == 0:
        _refuse_empty(X, target, sw, owner, name, labels)
    if chosen.singular:
        _refuse_singular(chosen, form, theta, phi, owner, name, labels, samples)
    return chosen.coefficients, [p.selected(p is chosen) for p in path]


def _candidates(
    X: np.ndarray, target: np.ndarray, sw: np.ndarray, regression: SparseRegression
) -> list[tuple[float, np.ndarray]]:
    """(threshold, coefficients) of the candidates of one output: the optimizer's own fit
    without a criterion, else every support of the threshold path."""
    optimizer = regression.the_optimizer()
    if regression.criterion == "none":
        return [(math.nan, _fit(optimizer, X, target, sw))]
    # every distinct support of the path, re-fitted by weighted least squares on it, so
    # that the criterion compares supports, not the optimizer's shrinkage
    return [
        (thr, _fit_least_squares(X, target, sw, support))
        for thr, support in _path(optimizer, X, target, sw, regression)
    ]


@dataclass(frozen=True)
class _Scorer:
    """One output's candidates scored: the residual of the closed form itself (not the
    linearised one) relative to the output's weighted mean square ``scale``, and the
    criterion on it."""

    form: str
    theta: np.ndarray
    phi: np.ndarray
    y: np.ndarray
    w: np.ndarray
    criterion: str
    n_measured: int
    scale: float

    def __call__(self, thr: float, c: np.ndarray) -> PathPoint:
        k = int(np.count_nonzero(c))
        singular = (
            _smallest_denominator(self.form, self.phi, c, self.theta.shape[1]) <= SINGULAR_RTOL
        )
        if k == 0:
            mse = self.scale
        else:
            with np.errstate(all="ignore"):
                err = self.y - predict(self.form, self.theta, self.phi, c)
            mse = (
                float(np.average(err * err, weights=self.w))
                if np.all(np.isfinite(err))
                else math.inf
            )
        score = (
            math.inf
            if (singular or k == 0)
            else _criterion(
                self.criterion, self.n_measured, k, max(mse, EXACT_RTOL**2 * self.scale)
            )
        )
        return PathPoint(thr, k, mse / self.scale, score, singular, c.copy())


def _without_rounding_terms(
    chosen: PathPoint, score: _Scorer, X: np.ndarray, target: np.ndarray, sw: np.ndarray
) -> PathPoint | None:
    """The chosen support without the terms below the rounding level of the fit, re-fitted on
    what is left (a path that reaches an exact fit may carry them: they are no terms); None
    where it has none, or where the re-fit scores no finite value."""
    tiny = shares(X, target, sw, chosen.coefficients) < EXACT_RTOL
    if not tiny.any() or tiny[chosen.coefficients != 0].all():
        return None
    cleaned = score(
        chosen.threshold,
        _fit_least_squares(X, target, sw, (chosen.coefficients != 0) & ~tiny),
    )
    return cleaned if math.isfinite(cleaned.score) else None


def _refuse_empty(
    X: np.ndarray,
    target: np.ndarray,
    sw: np.ndarray,
    owner: str,
    name: str,
    labels: list[str],
) -> None:
    """Raise [`DiscoveryError`][collocnode.DiscoveryError] for an output whose every term the
    optimizer removed, naming its largest least-squares term."""
    c_ls = _fit_least_squares(X, target, sw, np.ones(X.shape[1], dtype=bool))
    k = int(np.argmax(np.abs(c_ls)))
    raise DiscoveryError(
        f"the optimizer's threshold removes every term of output {name!r} of {owner}: its "
        f"largest least-squares coefficient is {c_ls[k]:.4g} (term {labels[k]!r}); lower "
        f"the threshold or select along a path (criterion='aicc')"
    )


def shares(X: np.ndarray, y: np.ndarray, sw: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Each term's RMS contribution c_k X_k over the RMS of the target (weighted)."""
    ref = math.sqrt(max(float(np.average(y * y, weights=sw)), 1e-300))
    return np.sqrt(np.average((X * c) ** 2, axis=0, weights=sw)) / ref


def _fitted(optimizer: Any, X: np.ndarray, y: np.ndarray, sw: np.ndarray) -> Any:
    """A copy of ``optimizer`` fitted to one output (its ``coef_`` checked finite)."""
    opt = copy.deepcopy(optimizer)
    with warnings.catch_warnings():
        # STLSQ warns when a threshold removes every term; the path expects that at its end
        warnings.simplefilter("ignore", UserWarning)
        opt.fit(X, y[:, None], sample_weight=sw)
    if not np.all(np.isfinite(np.asarray(opt.coef_, dtype=float))):
        raise DiscoveryError(
            f"the optimizer {type(optimizer).__name__} returned non-finite coefficients"
        )
    return opt


def _fit(optimizer: Any, X: np.ndarray, y: np.ndarray, sw: np.ndarray) -> np.ndarray:
    return np.asarray(_fitted(optimizer, X, y, sw).coef_, dtype=float).reshape(-1)


def _fit_least_squares(
    X: np.ndarray, y: np.ndarray, sw: np.ndarray, support: np.ndarray
) -> np.ndarray:
    """Weighted least squares on the columns ``support`` (zero elsewhere)."""
    c = np.zeros(X.shape[1])
    if support.any():
        r = np.sqrt(sw)
        c[support] = np.linalg.lstsq(X[:, support] * r[:, None], y * r, rcond=None)[0]
    return c


def _path(
    optimizer: Any, X: np.ndarray, y: np.ndarray, sw: np.ndarray, regression: SparseRegression
) -> list[tuple[float, np.ndarray]]:
    """The supports of the sparsity path, as (threshold, support) pairs (NaN thresholds for an
    optimizer that walks the path itself: SSR removes, FROLS adds one term per step)."""
    ps = pysindy()
    if isinstance(optimizer, (ps.SSR, ps.FROLS)):
        opt = copy.deepcopy(optimizer)
        opt.set_params(max_iter=X.shape[1])
        opt = _fitted(opt, X, y, sw)
        return [(math.nan, np.asarray(h).reshape(-1) != 0) for h in opt.history_]
    parameter, to_value = _path_parameter(optimizer)
    thresholds = regression.thresholds or _automatic_path(
        X, y, sw, optimizer, parameter, to_value, regression.n_thresholds
    )
    out = []
    for thr in thresholds:
        opt = copy.deepcopy(optimizer)
        opt.set_params(**{parameter: to_value(thr)})
        out.append((float(thr), _fit(opt, X, y, sw) != 0))
    return out


def _automatic_path(
    X: np.ndarray,
    y: np.ndarray,
    sw: np.ndarray,
    optimizer: Any,
    parameter: str,
    to_value: Any,
    n: int,
) -> np.ndarray:
    """Thresholds from half the smallest to the largest magnitude of the coefficients the
    optimizer finds with a zero threshold (before any unbiasing re-fit), in the units it
    thresholds (those of unit-norm columns when it normalizes them)."""
    opt = copy.deepcopy(optimizer)
    opt.set_params(**{parameter: to_value(0.0)})
    if "unbias" in opt.get_params():
        opt.set_params(unbias=False)  # the coefficients it thresholds, not their re-fit
    c = np.abs(_fit(opt, X, y, sw))
    if optimizer.get_params().get("normalize_columns", False):
        c = c * np.linalg.norm(X * np.sqrt(sw)[:, None], axis=0)
    c = c[c > 0]
    if c.size == 0:
        return np.array([1.0])
    lo, hi = 0.5 * c.min(), c.max()
    return np.geomspace(lo, hi, n) if hi > lo else np.array([hi])


def _smallest_denominator(form: str, phi: np.ndarray, c: np.ndarray, K: int) -> float:
    """min |1 + Φη| / max |1 + Φη| over the samples (1 for forms without a denominator); 0
    where the denominator changes sign (it vanishes between two samples)."""
    if form != "rational" or phi.shape[1] == 0:
        return 1.0
    d = 1.0 + phi @ c[K:]
    if np.any(d > 0) and np.any(d < 0):
        return 0.0
    return float(np.abs(d).min() / max(np.abs(d).max(), 1e-300))


def _refuse_singular(
    chosen: PathPoint,
    form: str,
    theta: np.ndarray,
    phi: np.ndarray,
    owner: str,
    name: str,
    labels: list[str],
    samples: BlockSamples,
) -> None:
    K = theta.shape[1]
    d = 1.0 + phi @ chosen.coefficients[K:]
    i = int(np.argmin(np.abs(d)))
    at = ", ".join(
        f"{n} = {val:.4g}" for n, val in zip(samples.input_names, samples.inputs[i], strict=True)
    )
    den_names = tuple(label[4:] for label in labels[K:])
    den = linear_combination(chosen.coefficients[K:], den_names)
    den = "1 - " + den[1:] if den.startswith("-") else "1 + " + den
    raise DiscoveryError(
        f"the closed form of output {name!r} of {owner} is singular on the data range: its "
        f"denominator {den} reaches {d[i]:.3g} at {at}"
        + (" and changes sign" if np.any(d > 0) and np.any(d < 0) else "")
    )


def _refuse_all(
    path: list[PathPoint],
    form: str,
    owner: str,
    name: str,
    labels: list[str],
    samples: BlockSamples,
) -> None:
    if path and all(p.singular or p.n_terms == 0 for p in path) and any(p.singular for p in path):
        raise DiscoveryError(
            f"every closed form on the path of output {name!r} of {owner} is singular on the "
            f"data range (its denominator vanishes at a sample)"
        )
    raise DiscoveryError(
        f"no closed form on the path of output {name!r} of {owner} fits its samples (the "
        f"residual is not finite for every threshold)"
    )
