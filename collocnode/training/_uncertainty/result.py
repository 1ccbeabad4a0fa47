"""The uncertainty of a trained model: ``sol.uncertainty()`` and what it returns.

One more linear-algebra step after the solve (`collocnode.training._uncertainty.linearization`,
`collocnode.training._uncertainty.laplace`): the Laplace approximation of the fitted quantities'
posterior, the data-only information beside it, intervals, prediction bands and the identifiability
report.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy.special import ndtri  # the normal quantile, without loading scipy.stats
from threadpoolctl import threadpool_limits

from ... import _validation as v
from ..._status import SolverStatus
from .._checks import column_label
from .._ranges import ExtrapolationWarning, outside_range
from .bands import Band
from .identifiability import Identifiability, analyse
from .laplace import HESSIANS, LaplaceFit, check_noise, fit
from .linearization import Linearization, linearize
from .posterior import ParameterPosterior, _level
from .quantities import FittedQuantities
from .spectrum import RCOND
from .trajectories import collocation_band, forward_band, sampled_trajectory_band


class UncertaintyWarning(UserWarning):
    """The numbers of an uncertainty analysis need care: the solve did not converge, the data do
    not determine some quantities, or an interval is wider than its value."""


@dataclass
class Uncertainty:
    """The Laplace approximation at a trained model's solution (`uncertainty`).

    Attributes:
        quantities: the fitted quantities θ (names, kinds, values).
        posterior: N(θ̂, C) with the prior the weight penalty implies
            (`ParameterPosterior`, ``label="posterior"``).
        data: the same from the data alone (``label="data"``; no prior).
        laplace: the noise, temperatures, information and precision (`LaplaceFit`).
        hessian: "gauss-newton" or "exact".
        columns: the labels of the fitted columns.
        converged: whether the solve converged (IPOPT's success); the numbers of a solve that
            did not are those of the linearisation at its last iterate.
        status: the solve's status.
        identifiability: the identifiability report.
        timings: wall time of each step [s] (``total`` among them).
    """

    quantities: FittedQuantities
    posterior: ParameterPosterior
    data: ParameterPosterior
    laplace: LaplaceFit
    hessian: str
    columns: tuple[str, ...]
    converged: bool
    status: str
    identifiability: Identifiability
    timings: dict[str, float]
    linearization: Linearization = field(repr=False)
    solution: Any = field(repr=False)

    # ---- the fitted quantities ----------------------------------------------------------------
    def _pick(self, which: str) -> ParameterPosterior:
        v.choice("which", which, ("posterior", "data"))
        return self.posterior if which == "posterior" else self.data

    def std(self, name: str | None = None, which: str = "posterior") -> Any:
        """The standard deviation of one fitted quantity (a float), or of all (n_θ,); inf where
        the (posterior or data-only) information does not determine it."""
        post = self._pick(which)
        std = post.std()
        return std if name is None else float(std[self.quantities.index(name)])

    def interval(
        self, name: str, level: float = 0.95, which: str = "posterior"
    ) -> tuple[float, float]:
        """The symmetric interval value ± z σ of one fitted quantity at ``level``."""
        z = float(ndtri(0.5 + 0.5 * _level(level)))
        i = self.quantities.index(name)
        s = self.std(which=which)[i]
        value = float(self.quantities.values[i])
        return value - z * s, value + z * s

    def covariance(self, names: list[str] | None = None, which: str = "posterior") -> np.ndarray:
        """The covariance of the named quantities (default all), (k, k), physical units."""
        cov = self._pick(which).covariance()
        if names is None:
            return cov
        idx = [self.quantities.index(n) for n in names]
        return cov[np.ix_(idx, idx)]

    def correlation(self, names: list[str] | None = None, which: str = "posterior") -> np.ndarray:
        cov = self.covariance(names, which)
        s = np.sqrt(np.diag(cov))
        s = np.where(s > 0, s, 1.0)
        return cov / s[:, None] / s[None, :]

    def parameters(self, level: float = 0.95) -> dict[str, dict[str, Any]]:
        """The physical parameters and free initial states: value, std (posterior and data
        only), the interval at ``level``, and whether the data determine them."""
        out = {}
        std, std_data = self.std(), self.std(which="data")
        bounded = self.data.bounded(np.eye(self.quantities.n))
        for i in self.quantities.of_kind("parameter", "initial_state"):
            name = self.quantities.names[i]
            lo, hi = self.interval(name, level)
            out[name] = {
                "kind": self.quantities.kinds[i],
                "value": float(self.quantities.values[i]),
                "std": float(std[i]),
                "lower": lo,
                "upper": hi,
                "std_data": float(std_data[i]),
                "identifiable": bool(bounded[i]),
            }
        return out

    def sample(self, n: int, seed: int | None = None, which: str = "posterior") -> np.ndarray:
        """``n`` draws of θ, (n, n_θ)."""
        return self._pick(which).sample(n, seed)

    # ---- bands ---------------------------------------------------------------------------------
    def block_band(
        self,
        block: str,
        inputs: np.ndarray,
        output: int = 0,
        level: float = 0.95,
        method: str = "delta",
        samples: int = 500,
        seed: int | None = 0,
        which: str = "posterior",
    ) -> Band:
        """The band of a block's output over ``inputs`` (m,) or (m, n_in) (e.g. the learned
        friction characteristic), by the delta method or by sampling the posterior.

        Points whose input lies outside the range the block was trained on are flagged
        (`Band.extrapolated`) and warned of (`ExtrapolationWarning`)."""
        band = self._pick(which).block_band(
            self.solution.model, block, inputs, output, level, method, samples, seed
        )
        X = band.x[:, None] if band.x.ndim == 1 else band.x
        outside, bounds = outside_range(self.solution, block, X)
        if outside.any() and bounds is not None:
            ranges = ", ".join(f"[{a:.4g}, {b:.4g}]" for a, b in zip(*bounds, strict=True))
            warnings.warn(
                f"{int(outside.sum())} of {outside.size} points of the band of block {block!r} "
                f"lie outside the inputs it was trained on ({ranges}): "
                "there the band is the network's extrapolation, which no data checked "
                "(band.extrapolated marks them)",
                ExtrapolationWarning,
                stacklevel=2,
            )
        return replace(band, extrapolated=outside)

    def band(
        self,
        fn: Any,
        x: np.ndarray,
        level: float = 0.95,
        method: str = "delta",
        samples: int = 500,
        seed: int | None = 0,
        which: str = "posterior",
    ) -> Band:
        """The band of any CasADi function of the parameter vector, ``fn(p) -> (m, 1)``
        (`ParameterPosterior.band_of`)."""
        return self._pick(which).band_of(fn, x, level, method, samples, seed)

    def trajectory_band(
        self,
        t: np.ndarray,
        segment: int = 0,
        outputs: bool = False,
        level: float = 0.95,
        method: str = "delta",
        samples: int = 200,
        seed: int | None = 0,
        which: str = "posterior",
        **simulate_kwargs: Any,
    ) -> Band:
        """The band of trajectory ``segment``'s states (or, ``outputs``, its model outputs) at
        times ``t`` (n,): value (n, n_states or n_outputs) with its band.

        ``method="delta"`` (the linearised predictive) re-simulates the model from the start of
        the horizon with its forward sensitivities (`collocnode.training._uncertainty.forward`;
        ``simulate_kwargs`` go to [`collocnode.simulate`][collocnode.simulate]) and propagates the
        covariance through them; the value is the re-simulation at θ̂; any ``t`` at or after the
        horizon's start. ``method="collocation"`` propagates it through the collocation
        sensitivities instead (no integration; the value is the collocation trajectory; inside the
        training horizon only). ``method="sampling"`` re-simulates the model for ``samples`` draws
        from the posterior (initial states among them when they were fitted) and takes quantiles;
        the value is the re-simulation at θ̂. Draws whose re-simulation fails are counted in
        ``failed`` and left out. For a network with many weights the draws move along
        directions the data do not constrain and spread far wider than the linearised band
        (see `collocnode.training._uncertainty.forward`).
        """
        level = _level(level)
        v.choice("method", method, ("delta", "collocation", "sampling"))
        post = self._pick(which)
        problem = self.solution.problem
        segment = v.nonnegative_int("segment", segment)
        if segment >= problem.n_trajectories:
            raise ValueError(
                f"segment must be < {problem.n_trajectories} (the number of trajectories), got "
                f"{segment}"
            )
        if outputs and not self.solution.model.n_outputs:
            raise ValueError("the model has no outputs")
        t = v.increasing("t", t)
        t0, tf = problem.horizon_of(segment)
        if method == "collocation":
            if t.size and (t[0] < t0 or t[-1] > tf):
                raise ValueError(
                    f"the collocation sensitivities exist on the training horizon [{t0!r}, "
                    f"{tf!r}] only; method='delta' re-simulates beyond it"
                )
            return collocation_band(self, post, t, segment, outputs, level)
        if t.size and t[0] < t0:
            raise ValueError(f"t must start at or after the horizon's start {t0!r}")
        if method == "delta":
            return forward_band(self, post, t, segment, outputs, level, simulate_kwargs)
        return sampled_trajectory_band(
            self, post, t, segment, outputs, level, samples, seed, simulate_kwargs
        )

    # ---- reports -------------------------------------------------------------------------------
    def summary(self, level: float = 0.95) -> str:
        """A short table: the method, the noise, the identifiability and the physical
        parameters' intervals."""
        lf = self.laplace
        noise = ", ".join(f"{c} {s:.4g}" for c, s in zip(self.columns, lf.noise, strict=True))
        prior = "" if lf.prior_std is None else f", prior on the weights τ = {lf.prior_std:.3g}"
        ident = self.identifiability
        rows = [
            ("uncertainty", f"Laplace ({self.hessian}){prior}"),
            ("noise σ", noise + (" (estimated)" if lf.estimated else " (given)")),
            (
                "fitted",
                f"{self.quantities.n} quantities, {lf.effective:.1f} effective, "
                f"{int(self.linearization.observed.sum())} observations",
            ),
            (
                "identifiability",
                f"{ident.n_null} of {ident.eigenvalues.size} directions not determined by the "
                f"data; condition {ident.condition:.3g}",
            ),
        ]
        if not self.converged:
            rows.append(("warning", f"the solve did not converge ({self.status})"))
        for name, row in self.parameters(level).items():
            rows.append(
                (
                    name,
                    f"{row['value']:.6g} ± {row['std']:.3g} [{row['lower']:.6g}, "
                    f"{row['upper']:.6g}] (data only ± {row['std_data']:.3g})"
                    + ("" if row["identifiable"] else " NOT IDENTIFIABLE"),
                )
            )
        if ident.wide:
            rows.append(("wide intervals", ", ".join(ident.wide)))
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {val}" for k, val in rows)

    def to_dict(self, level: float = 0.95) -> dict[str, Any]:
        """The JSON-friendly summary written to ``result.json`` (the full covariance of the
        weights goes into the model file instead)."""
        lf = self.laplace
        return {
            "method": "laplace",
            "hessian": self.hessian,
            "converged": self.converged,
            "status": self.status,
            "noise": dict(zip(self.columns, lf.noise.tolist(), strict=True)),
            "noise_estimated": lf.estimated,
            "temperature": dict(zip(self.columns, lf.temperature.tolist(), strict=True)),
            "prior_std": lf.prior_std,
            "n_fitted": self.quantities.n,
            "effective_parameters": lf.effective,
            "observations": int(self.linearization.observed.sum()),
            "held": dict(self.quantities.held),
            "parameters": self.parameters(level),
            "identifiability": self.identifiability.to_dict(),
            "wall_time_s": dict(self.timings),
        }


def uncertainty(
    sol: Any,
    noise: Any = None,
    hessian: str = "gauss-newton",
    level: float = 0.95,
    rcond: float = RCOND,
) -> Uncertainty:
    """The Laplace approximation of a trained model's fitted quantities at its solution.

    Args:
        sol: a [`TrainingSolution`][collocnode.TrainingSolution].
        noise: the standard deviation of the measurement noise, one number or one per fitted
            column (units of the column); None (default): estimated from the residuals at the
            samples.
        hessian: "gauss-newton" (default: positive semi-definite, first-order sensitivities
            only) or "exact" (the NLP's exact Lagrangian Hessian: adds the curvature of the
            model weighted by the residuals; may be indefinite away from a minimum).
        level: the level of the intervals the identifiability report checks.
        rcond: eigenvalues of the scaled information below ``rcond`` times the largest are
            directions the data do not determine (`collocnode.training._uncertainty.spectrum`).

    Warns:
        UncertaintyWarning: the solve did not converge (the numbers are those of the
            linearisation at its last iterate); some quantities are not identifiable (their
            intervals are infinite); a physical parameter's interval is wider than its value;
            the exact Hessian has negative curvature; the initial state is held at a noisy
            first sample (``initial_state="data"``), whose noise the intervals leave out.

    Raises:
        ValueError: a noise level <= 0 (or of the wrong shape), an unknown ``hessian``, a
            problem with a proximal term, residuals that cannot estimate the noise.
    """
    start = time.perf_counter()
    problem = getattr(sol, "problem", None)
    if problem is None or getattr(problem, "problem_kind", None) != "training":
        raise TypeError(f"sol must be a TrainingSolution, got {sol!r:.80}")
    v.choice("hessian", hessian, HESSIANS)
    level = _level(level)
    rcond = v.positive_float("rcond", rcond)
    labels = [
        column_label(kind, i, sol.model, problem.trajectories[0]) for kind, i in problem.columns
    ]
    sigma = check_noise(noise, labels)
    if problem.proximal is not None:
        raise ValueError(
            "the problem has a proximal term (a block of consensus ADMM): its optimum is not "
            "the model's; take the uncertainty of the whole problem's solution"
        )
    if isinstance(problem.initial_state, str) and problem.initial_state == "data":
        warnings.warn(
            "the initial state is held at each trajectory's first sample "
            "(initial_state='data'), whose noise these intervals do not include, so they are "
            "too narrow (docs/uncertainty.md gives the coverage measured both ways); fit it "
            "(the default) for honest intervals",
            UncertaintyWarning,
            stacklevel=3,
        )
    converged = sol.status == SolverStatus.SUCCESS
    if not converged:
        warnings.warn(
            f"the solve did not converge (status {sol.status.value}): the uncertainty is that of "
            "the linearisation at its last iterate",
            UncertaintyWarning,
            stacklevel=3,
        )
    # one BLAS thread: the dense work is on matrices of n_θ ≈ 100 columns (and the triangular
    # solves of a sparse LU), where more threads gain little on an idle machine and lose
    # tenfold on a busy one (OpenBLAS threads spin waiting for cores)
    with threadpool_limits(limits=1, user_api="blas"):
        lin = linearize(sol, exact=hessian == "exact")
        tick = time.perf_counter()
        return _result(sol, lin, sigma, hessian, level, rcond, labels, converged, start, tick)


def _result(
    sol: Any,
    lin: Linearization,
    sigma: np.ndarray | None,
    hessian: str,
    level: float,
    rcond: float,
    labels: list[str],
    converged: bool,
    start: float,
    tick: float,
) -> Uncertainty:
    lf = fit(lin, sigma, hessian, rcond)
    q = lin.quantities
    T = lin.basis
    common = {
        "names": q.names,
        "kinds": q.kinds,
        "p_index": q.p_index,
        "values": q.values,
        "p": np.asarray(sol.p, dtype=float).copy(),
        "basis": T,
        "rcond": rcond,
    }
    posterior = ParameterPosterior(precision=T.T @ lf.precision @ T, label="posterior", **common)
    data = ParameterPosterior(precision=T.T @ lf.information @ T, label="data", **common)
    if hessian == "exact" and posterior.spectrum.negative:
        warnings.warn(
            f"the exact reduced Hessian has {posterior.spectrum.negative} negative "
            "eigenvalue(s): the solution is not a minimum in those directions; they are "
            "treated as undetermined (hessian='gauss-newton' is positive semi-definite)",
            UncertaintyWarning,
            stacklevel=4,
        )
    if hessian == "exact":
        _warn_indefinite_data(lin, lf.noise, data, common)
    z = float(ndtri(0.5 + 0.5 * level))
    ident = analyse(data, posterior, lin.independent, level, z * posterior.std())
    timings = {**lin.timings, "laplace": time.perf_counter() - tick}
    timings["total"] = time.perf_counter() - start
    result = Uncertainty(
        quantities=q,
        posterior=posterior,
        data=data,
        laplace=lf,
        hessian=hessian,
        columns=tuple(labels),
        converged=converged,
        status=sol.status.value,
        identifiability=ident,
        timings=timings,
        linearization=lin,
        solution=sol,
    )
    _warn(result)
    return result


def _warn_indefinite_data(
    lin: Linearization, sigma: np.ndarray, data: ParameterPosterior, common: dict[str, Any]
) -> None:
    """Warn where the exact Hessian's data part leaves a physical parameter or an initial
    state undetermined (an infinite data-only std) that the Gauss-Newton information
    determines: the second-order terms made the data-only information indefinite in a
    direction that moves it, which says nothing about the data."""
    q = lin.quantities
    named = [q.names[i] for i in q.of_kind("parameter", "initial_state")]
    std = data.std()
    infinite = [n for n in named if not np.isfinite(std[q.index(n)])]
    if not infinite:
        return
    gauss_newton = np.einsum("c,cij->ij", 1.0 / sigma**2, lin.fisher)
    T = lin.basis
    gn = ParameterPosterior(precision=T.T @ gauss_newton @ T, label="data", **common).std()
    finite = {n: float(gn[q.index(n)]) for n in infinite if np.isfinite(gn[q.index(n)])}
    if finite:
        listed = ", ".join(f"{n} (Gauss-Newton: {s:.3g})" for n, s in finite.items())
        warnings.warn(
            f"the exact Hessian's data part is indefinite ({data.spectrum.negative} negative "
            f"eigenvalue(s)) in directions that move {', '.join(finite)}: their data-only std "
            f"is reported infinite, though the data determine them: {listed}; the posterior "
            "(with the prior) is not affected; hessian='gauss-newton' gives a positive "
            "semi-definite data-only information",
            UncertaintyWarning,
            stacklevel=5,
        )


def _warn(result: Uncertainty) -> None:
    """Warnings about the physical parameters and initial states; undetermined combinations of
    network weights are the rule (many weights, few directions the data see) and are reported
    by the identifiability report and the summary only."""
    ident = result.identifiability
    q = result.quantities
    named = set(q.names[i] for i in q.of_kind("parameter", "initial_state"))
    undetermined = [n for n in ident.non_identifiable_posterior if n in named]
    if undetermined:
        warnings.warn(
            f"{', '.join(undetermined)} {'is' if len(undetermined) == 1 else 'are'} not "
            "determined by the data (and the prior): infinite intervals; see "
            "identifiability.sloppiest",
            UncertaintyWarning,
            stacklevel=5,
        )
    if ident.wide:
        warnings.warn(
            f"the {ident.level:.0%} interval of {', '.join(ident.wide)} is wider than its value",
            UncertaintyWarning,
            stacklevel=5,
        )
