"""SymPy expressions to CasADi by walking the expression tree.

An imported model's math arrives as SymPy expressions (SBML MathML through ``sbmlmath``, PEtab
formulas through ``petab``). They become CasADi expressions here by a walk over the tree that
knows each node type it accepts, never by printing and executing code: model files are data.
Anything outside the table below is refused with the construct named.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import casadi as ca
import sympy as sp
from sympy.core.function import AppliedUndef

_UNARY: dict[type, Callable[[Any], Any]] = {
    sp.exp: ca.exp,
    sp.log: ca.log,
    sp.sin: ca.sin,
    sp.cos: ca.cos,
    sp.tan: ca.tan,
    sp.asin: ca.asin,
    sp.acos: ca.acos,
    sp.atan: ca.atan,
    sp.sinh: ca.sinh,
    sp.cosh: ca.cosh,
    sp.tanh: ca.tanh,
    sp.asinh: ca.asinh,
    sp.acosh: ca.acosh,
    sp.atanh: ca.atanh,
    sp.Abs: ca.fabs,
    sp.floor: ca.floor,
    sp.ceiling: ca.ceil,
    sp.sign: ca.sign,
}

_RELATIONAL: dict[type, Callable[[Any, Any], Any]] = {
    sp.StrictLessThan: lambda a, b: a < b,
    sp.LessThan: lambda a, b: a <= b,
    sp.StrictGreaterThan: lambda a, b: a > b,
    sp.GreaterThan: lambda a, b: a >= b,
    sp.Equality: lambda a, b: a == b,
    sp.Unequality: lambda a, b: a != b,
}


class UnsupportedMathError(ValueError):
    """A construct in a model's math that has no CasADi counterpart here."""


def to_casadi(expr: sp.Basic, symbols: Mapping[sp.Symbol, Any]) -> Any:
    """``expr`` as a CasADi expression with each free symbol replaced by ``symbols[symbol]``
    and each application of an undefined function ``f`` by ``symbols[f](*args)``.

    Raises:
        UnsupportedMathError: a symbol missing from ``symbols`` or a node type outside this
            module's table, named.
    """
    memo: dict[sp.Basic, Any] = {}

    def walk(e: sp.Basic) -> Any:
        if e in memo:
            return memo[e]
        out = _node(e, walk, symbols)
        memo[e] = out
        return out

    return walk(sp.sympify(expr))


def _node(e: sp.Basic, walk: Callable[[sp.Basic], Any], symbols: Mapping) -> Any:
    if e.is_Symbol:
        if e not in symbols:
            raise UnsupportedMathError(f"unknown symbol {e.name!r}")
        return symbols[e]
    if e is sp.true:
        return 1.0
    if e is sp.false:
        return 0.0
    if e.is_Number or e.is_NumberSymbol:
        value = float(e)
        return value
    if isinstance(e, sp.Add):
        return _fold(e.args, walk, lambda a, b: a + b)
    if isinstance(e, sp.Mul):
        return _fold(e.args, walk, lambda a, b: a * b)
    if isinstance(e, sp.Pow):
        base, exponent = e.args
        if exponent == sp.Rational(1, 2):
            return ca.sqrt(walk(base))
        if exponent.is_Integer and exponent == -1:
            return 1.0 / walk(base)
        if exponent.is_Integer and 0 < int(exponent) <= 4:
            b = walk(base)
            return _fold([b] * int(exponent), lambda z: z, lambda a, c: a * c)
        if exponent.is_Integer:
            return walk(base) ** int(exponent)
        return _power(walk(base), walk(exponent))
    func = type(e)
    if func in _UNARY:
        if func is sp.log and len(e.args) == 2:
            return ca.log(walk(e.args[0])) / ca.log(walk(e.args[1]))
        return _UNARY[func](walk(e.args[0]))
    if func in _RELATIONAL:
        return _RELATIONAL[func](walk(e.args[0]), walk(e.args[1]))
    if isinstance(e, sp.And):
        return _fold(e.args, walk, ca.logic_and)
    if isinstance(e, sp.Or):
        return _fold(e.args, walk, ca.logic_or)
    if isinstance(e, sp.Not):
        return ca.logic_not(walk(e.args[0]))
    if isinstance(e, sp.Xor):
        return _fold(e.args, walk, _xor)
    if isinstance(e, sp.Max):
        return _fold(e.args, walk, ca.fmax)
    if isinstance(e, sp.Min):
        return _fold(e.args, walk, ca.fmin)
    if isinstance(e, sp.Piecewise):
        # the first piece whose condition holds, built from the last piece backwards
        out = None
        for value, condition in reversed(e.args):
            if out is None:
                if condition is not sp.true:
                    # no piece holds: SBML leaves the value undefined; NaN says so
                    out = ca.if_else(walk(condition), walk(value), ca.DM.nan())
                else:
                    out = walk(value)
            else:
                out = ca.if_else(walk(condition), walk(value), out)
        return out
    if isinstance(e, AppliedUndef):
        # a network output (collocnode.petab._hybrid): evaluated by the callable the caller
        # maps the function to, never looked up by name elsewhere
        if e.func not in symbols:
            raise UnsupportedMathError(f"unknown function {func.__name__!r}")
        return symbols[e.func](*[walk(a) for a in e.args])
    if e is sp.nan:
        return float("nan")
    if e in (sp.oo, -sp.oo):
        return float(e)
    raise UnsupportedMathError(f"unsupported math construct {func.__name__} in {str(e)[:80]}")


def _power(base: Any, exponent: Any) -> Any:
    """``base ** exponent``, 0 where the base is negative and the exponent not an integer.

    Such a power is undefined (NaN): SBML leaves it so, and a simulator meets it only where a
    concentration has strayed below 0 by its round-off. An optimizer meets it wherever an
    iterate puts a concentration slightly below 0 (a Hill term ``X^n`` of a state that starts
    at an estimated value cannot be bounded), so it is taken at the base's nearest defined
    value, 0. CasADi's if_else is 0 where its condition is false, whatever the other branch.
    """
    defined = ca.logic_or(base >= 0, ca.floor(exponent) == exponent)
    return ca.if_else(defined, base**exponent, 0.0)


def _xor(a: Any, b: Any) -> Any:
    return ca.logic_and(ca.logic_or(a, b), ca.logic_not(ca.logic_and(a, b)))


def _fold(args: Any, walk: Callable[[Any], Any], op: Callable[[Any, Any], Any]) -> Any:
    """``op`` applied across ``args`` as a balanced tree (shallow graphs for long sums)."""
    items = [walk(a) for a in args]
    while len(items) > 1:
        paired = [op(items[k], items[k + 1]) for k in range(0, len(items) - 1, 2)]
        if len(items) % 2:
            paired.append(items[-1])
        items = paired
    return items[0]
