"""A pysindy feature library applied to a block's inputs, numerically and in CasADi.

Any pysindy feature library (``PolynomialLibrary``, ``FourierLibrary``, ``CustomLibrary`` and
their sums and products) maps the inputs ``z`` (n, n_in) to the candidate terms Θ(z)
(n, n_terms). The same library applied to a row of CasADi scalars gives the terms as CasADi
expressions (pysindy builds them with numpy operations, which call CasADi's own ``sin``,
``tanh``, ``*`` on object arrays), so that the discovered expression can enter the collocation
NLP. Both evaluations are checked against each other on the samples, term by term.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from .samples import DiscoveryError

#: the relative difference between the CasADi and the numpy evaluation of a term beyond which
#: the term is refused (both evaluate the same floating-point operations)
_AGREEMENT_RTOL = 1e-8


def pysindy() -> Any:
    """The pysindy module; an ImportError that names the extra to install if it is missing."""
    try:
        import pysindy as ps
    except ImportError as exc:  # pragma: no cover - the dev extra installs it
        raise ImportError(
            "equation discovery needs pysindy: pip install 'collocnode[discovery]'"
        ) from exc
    return ps


def is_library(value: Any) -> bool:
    ps = pysindy()
    return isinstance(value, ps.feature_library.base.BaseFeatureLibrary)


@dataclass(frozen=True)
class Terms:
    """A fitted library over named inputs.

    Attributes:
        library: the fitted pysindy library (a copy of the one given).
        input_names: the inputs' labels (n_in,).
        names: the terms' labels (n_terms,), pysindy's ``get_feature_names``.
        function: ``casadi.Function("terms", [z (n_in, 1)], [Θ(z) (n_terms, 1)])``.
    """

    library: Any
    input_names: tuple[str, ...]
    names: tuple[str, ...]
    function: ca.Function

    @property
    def n_terms(self) -> int:
        return len(self.names)

    def __call__(self, z: np.ndarray) -> np.ndarray:
        """Θ(z): (n, n_in) -> (n, n_terms)."""
        return np.asarray(self.library.transform(np.asarray(z, dtype=float)), dtype=float)

    def without_constant(self) -> Terms:
        """These terms without a constant term "1" (the denominator library of a rational
        form, whose constant is fixed to 1)."""
        keep = [k for k, name in enumerate(self.names) if name != "1"]
        z = ca.SX.sym("z", len(self.input_names))
        out = self.function(z)
        return Terms(
            _Subset(self.library, keep),
            self.input_names,
            tuple(self.names[k] for k in keep),
            ca.Function("terms", [z], [out[keep] if keep else ca.SX(0, 1)], ["z"], ["theta"]),
        )


class _Subset:
    """Some columns of a fitted library (its transform only)."""

    def __init__(self, library: Any, columns: list[int]) -> None:
        self.library, self.columns = library, columns

    def transform(self, z: np.ndarray) -> np.ndarray:
        return np.asarray(self.library.transform(z), dtype=float)[:, self.columns]


def _custom_functions(library: Any) -> list[tuple[str, Any]]:
    """The functions of every pysindy CustomLibrary in ``library`` (its sums, products and
    generalized libraries walked through ``libraries``), each with a label for messages."""
    found: list[tuple[str, Any]] = []
    for kind in ("functions", "function_names"):
        for k, f in enumerate(getattr(library, kind, None) or ()):
            found.append((f"{kind}[{k}]", f))
    for sub in getattr(library, "libraries", None) or ():
        found.extend(_custom_functions(sub))
    return found


def _refuse_default_arguments(library: Any, owner: str) -> None:
    """A CustomLibrary function with a default argument (``lambda x, k=k: x**k``) never sees
    its default: pysindy counts every positional argument (``__code__.co_argcount``) and fills
    each with an input, so such a term silently becomes another function of the inputs, or
    disappears when there are fewer inputs than arguments."""
    for label, f in _custom_functions(library):
        code, defaults = getattr(f, "__code__", None), getattr(f, "__defaults__", None)
        if code is None or not defaults:
            continue
        params = code.co_varnames[code.co_argcount - len(defaults) : code.co_argcount]
        raise DiscoveryError(
            f"CustomLibrary {label} of the library for {owner} has positional arguments with "
            f"defaults ({', '.join(params)}): pysindy fills every positional argument with an "
            f"input, so a default is never used; bind such constants with a closure "
            f"(def power(k): return lambda x: x**k)"
        )


def _arity_hint(library: Any, n_in: int) -> str:
    """Why a pysindy CustomLibrary gave no terms, where its functions ask for more inputs than
    there are: it applies each function to every combination of as many inputs as the function
    has positional arguments."""
    wide = [
        code.co_argcount
        for _, f in _custom_functions(library)
        if (code := getattr(f, "__code__", None)) is not None and code.co_argcount > n_in
    ]
    if not wide:
        return ""
    return (
        f": its functions take up to {max(wide)} positional arguments, and pysindy's "
        "CustomLibrary applies each function to every combination of that many distinct inputs "
        "(interaction_only=True, its default)"
    )


def fit_terms(library: Any, inputs: np.ndarray, input_names: tuple[str, ...], owner: str) -> Terms:
    """``library`` fitted to the inputs (n, n_in) of ``owner`` (a label for messages), with its
    terms' names and CasADi function, checked.

    Raises:
        DiscoveryError: the library was fitted to another number of inputs, a CustomLibrary
            function has default arguments, the library does not apply to these inputs, or a
            term is not finite on them or has no CasADi form that agrees.
    """
    if not is_library(library):
        raise TypeError(
            f"library must be a pysindy feature library (PolynomialLibrary, FourierLibrary, "
            f"CustomLibrary, ...), got {library!r:.80}"
        )
    n_in = inputs.shape[1]
    fitted_width = getattr(library, "n_features_in_", None)
    if fitted_width is not None and fitted_width != n_in:
        raise DiscoveryError(
            f"the library was fitted to {fitted_width} inputs, but {owner} has {n_in} "
            f"({', '.join(input_names)})"
        )
    _refuse_default_arguments(library, owner)
    lib = copy.deepcopy(library)  # never refit the caller's object
    try:
        lib.fit(inputs)
        theta = np.asarray(lib.transform(inputs), dtype=float)
        names = tuple(lib.get_feature_names(list(input_names)))
    except DiscoveryError:
        raise
    except Exception as exc:
        raise DiscoveryError(
            f"the library does not apply to the {n_in} inputs of {owner} "
            f"({', '.join(input_names)}): {type(exc).__name__}: {exc}"
        ) from None
    if theta.shape != (inputs.shape[0], len(names)):
        raise DiscoveryError(
            f"the library gives {theta.shape[1]} columns but {len(names)} term names on the "
            f"inputs of {owner}"
        )
    if not names:
        raise DiscoveryError(
            f"the library has no terms for the {n_in} inputs of {owner}{_arity_hint(lib, n_in)}"
        )
    for k, name in enumerate(names):
        bad = ~np.isfinite(theta[:, k])
        if bad.any():
            i = int(np.argmax(bad))
            at = ", ".join(
                f"{n} = {val:.4g}" for n, val in zip(input_names, inputs[i], strict=True)
            )
            raise DiscoveryError(
                f"library term {name!r} is not finite at {int(bad.sum())} of {bad.size} samples "
                f"of {owner} (first at {at})"
            )
    function = _symbolic(lib, n_in, names, owner)
    _check_agreement(function, theta, inputs, names, owner)
    return Terms(lib, input_names, names, function)


def symbolic_terms(library: Any, owner: str = "the inputs") -> ca.Function:
    """The terms of a fitted pysindy library as ``casadi.Function("terms", [z (n_in, 1)],
    [Θ(z) (n_terms, 1)])``.

    Raises:
        DiscoveryError: a term has no CasADi form.
    """
    names = tuple(library.get_feature_names())
    return _symbolic(library, int(library.n_features_in_), names, owner)


def _symbolic(lib: Any, n_in: int, names: tuple[str, ...], owner: str) -> ca.Function:
    z = ca.SX.sym("z", n_in)
    row = np.empty((1, n_in), dtype=object)
    for i in range(n_in):
        row[0, i] = z[i]
    try:
        out = np.asarray(lib.transform(row), dtype=object).reshape(-1)
    except Exception as exc:
        raise DiscoveryError(
            f"the library's terms have no CasADi form for {owner} (write custom terms with "
            f"operators and numpy functions CasADi knows: +, *, /, **, np.sin, np.tanh, "
            f"np.exp, ...): {type(exc).__name__}: {exc}"
        ) from None
    if out.size != len(names):
        raise DiscoveryError(
            f"the library gives {out.size} CasADi terms for {len(names)} named terms of {owner}"
        )
    terms = []
    for k, term in enumerate(out):
        try:
            terms.append(ca.SX(term))
        except Exception:
            raise DiscoveryError(
                f"library term {names[k]!r} of {owner} is not a CasADi expression (got "
                f"{term!r:.60})"
            ) from None
    return ca.Function("terms", [z], [ca.vertcat(*terms)], ["z"], ["theta"])


def _check_agreement(
    function: ca.Function,
    theta: np.ndarray,
    inputs: np.ndarray,
    names: tuple[str, ...],
    owner: str,
) -> None:
    symbolic = np.asarray(function.map(inputs.shape[0])(inputs.T)).T
    scale = np.maximum(np.abs(theta).max(axis=0), 1.0)
    diff = np.abs(symbolic - theta).max(axis=0) / scale
    worst = int(np.argmax(diff))
    if not diff[worst] <= _AGREEMENT_RTOL:
        raise DiscoveryError(
            f"library term {names[worst]!r} of {owner} evaluates differently in CasADi than in "
            f"numpy (relative difference {diff[worst]:.3g}); write it with operations both know"
        )
