"""The uncertainty section of a model file: the Laplace posterior of the fitted quantities, so
that a loaded model can draw its bands.

It holds the names, kinds and fitted values of θ, where each sits in p, the basis T of the
subspace θ moves in and the precision in its coordinates, once with the prior the weight
penalty implies ("precision") and once from the data alone ("data_precision"), with the noise
and the settings they came from. Everything is checked on loading against the model and p the
file also holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..training._uncertainty import ParameterPosterior, Uncertainty
from ..training._uncertainty.quantities import KINDS
from ._codec import decode_array, encode_array
from ._format import TAG_ARRAY, only, require, show

FIELDS = (
    "names",
    "kinds",
    "p_index",
    "values",
    "basis",
    "precision",
    "data_precision",
    "rcond",
    "hessian",
    "converged",
    "noise",
    "noise_estimated",
    "prior_std",
)


@dataclass(frozen=True)
class StoredUncertainty:
    """The uncertainty a model file carries.

    Attributes:
        posterior: with the prior the weight penalty implies.
        data: from the data alone.
        hessian: "gauss-newton" or "exact".
        converged: whether the solve had converged.
        noise: the noise standard deviation per fitted column, by column label.
        noise_estimated: whether it was estimated from the residuals.
        prior_std: the weights' prior standard deviation (None without a penalty).
    """

    posterior: ParameterPosterior
    data: ParameterPosterior
    hessian: str
    converged: bool
    noise: dict[str, float]
    noise_estimated: bool
    prior_std: float | None

    def pick(self, which: str) -> ParameterPosterior:
        if which not in ("posterior", "data"):
            raise ValueError(f"which must be 'posterior' or 'data', got {which!r}")
        return self.posterior if which == "posterior" else self.data


def encode_uncertainty(unc: Uncertainty, where: str = "uncertainty") -> dict[str, Any]:
    """The file's section for ``unc`` (the output of ``sol.uncertainty()``)."""
    if not isinstance(unc, Uncertainty):
        raise TypeError(f"{where} must be the result of sol.uncertainty(), got {show(unc)}")
    post, data = unc.posterior, unc.data
    return {
        "names": list(post.names),
        "kinds": list(post.kinds),
        "p_index": encode_array(np.asarray(post.p_index, dtype=np.int64), f"{where}.p_index"),
        "values": encode_array(post.values, f"{where}.values"),
        "basis": encode_array(post.basis, f"{where}.basis"),
        "precision": encode_array(post.precision, f"{where}.precision"),
        "data_precision": encode_array(data.precision, f"{where}.data_precision"),
        "rcond": post.rcond,
        "hessian": unc.hessian,
        "converged": unc.converged,
        "noise": dict(zip(unc.columns, unc.laplace.noise.tolist(), strict=True)),
        "noise_estimated": unc.laplace.estimated,
        "prior_std": unc.laplace.prior_std,
    }


def _array(spec: dict[str, Any], key: str, where: str, shape: tuple[int | None, ...]) -> np.ndarray:
    """A finite array of the given shape (None: any length on that axis)."""
    value = spec[key]
    if not (isinstance(value, dict) and TAG_ARRAY in value):
        raise ValueError(f"{where}.{key} must be an array, got {show(value)}")
    arr = decode_array(value[TAG_ARRAY], f"{where}.{key}")
    if arr.ndim != len(shape) or any(
        want is not None and got != want for got, want in zip(arr.shape, shape, strict=True)
    ):
        shown = "(" + ", ".join("k" if d is None else str(d) for d in shape) + ")"
        raise ValueError(f"{where}.{key} must have shape {shown}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{where}.{key} must be finite")
    return arr


def decode_uncertainty(spec: Any, model: Any, p: np.ndarray) -> StoredUncertainty:
    """The section read back, checked against the model's layout and parameter vector ``p``."""
    n_params, n_weights = model.n_params, model.n_weights
    where = "uncertainty"
    require(spec, FIELDS, where)
    only(spec, FIELDS, where)
    names, kinds = spec["names"], spec["kinds"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{where}.names must be a list of strings")
    if (
        not isinstance(kinds, list)
        or len(kinds) != len(names)
        or any(k not in KINDS for k in kinds)
    ):
        raise ValueError(f"{where}.kinds must give one of {KINDS} per name ({len(names)})")
    n = len(names)
    p_index = _array(spec, "p_index", where, (n,)).astype(np.int64)
    values = _array(spec, "values", where, (n,))
    basis = _array(spec, "basis", where, (n, None))
    k = basis.shape[1]
    precision = _array(spec, "precision", where, (k, k))
    data_precision = _array(spec, "data_precision", where, (k, k))
    in_p = p_index >= 0
    if np.any(p_index >= n_params) or np.any(p_index < -1):
        raise ValueError(f"{where}.p_index must lie in [-1, {n_params})")
    if not np.array_equal(in_p, np.array([kd != "initial_state" for kd in kinds])):
        raise ValueError(f"{where}.p_index must be -1 exactly for the initial states")
    expected = ["weight" if i < n_weights else "parameter" for i in p_index[in_p]]
    if [kd for kd in kinds if kd != "initial_state"] != expected:
        raise ValueError(
            f"{where}.kinds do not match the model: entries of p below {n_weights} are block "
            "weights, the others physical parameters"
        )
    if not np.array_equal(values[in_p], p[p_index[in_p]]):
        raise ValueError(f"{where}.values do not match the file's parameter vector p")
    rcond = spec["rcond"]
    if isinstance(rcond, bool) or not isinstance(rcond, (int, float)) or not rcond > 0:
        raise ValueError(f"{where}.rcond must be a positive number, got {show(rcond)}")
    if spec["hessian"] not in ("gauss-newton", "exact"):
        raise ValueError(f"{where}.hessian must be 'gauss-newton' or 'exact'")
    for key in ("converged", "noise_estimated"):
        if not isinstance(spec[key], bool):
            raise ValueError(f"{where}.{key} must be true or false, got {show(spec[key])}")
    noise = spec["noise"]
    if not isinstance(noise, dict) or not all(
        isinstance(s, (int, float)) and not isinstance(s, bool) and s > 0 for s in noise.values()
    ):
        raise ValueError(f"{where}.noise must map column labels to positive numbers")
    prior = spec["prior_std"]
    if prior is not None and (isinstance(prior, bool) or not isinstance(prior, (int, float))):
        raise ValueError(f"{where}.prior_std must be a number or null, got {show(prior)}")
    common = {
        "names": tuple(names),
        "kinds": tuple(kinds),
        "p_index": p_index,
        "values": values,
        "p": np.asarray(p, dtype=float),
        "basis": basis,
        "rcond": float(rcond),
    }
    return StoredUncertainty(
        posterior=ParameterPosterior(precision=precision, label="posterior", **common),
        data=ParameterPosterior(precision=data_precision, label="data", **common),
        hessian=spec["hessian"],
        converged=spec["converged"],
        noise={str(c): float(s) for c, s in noise.items()},
        noise_estimated=spec["noise_estimated"],
        prior_std=None if prior is None else float(prior),
    )
