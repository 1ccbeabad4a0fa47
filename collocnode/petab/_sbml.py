"""An SBML model as an ODE in SymPy: x' = f(x, c, t), x(0) = x0(c).

Read with ``python-libsbml`` (function definitions expanded by its converter), the math through
``sbmlmath``. What becomes what (SBML Level 2/3 core):

- every species is a state (its concentration, or its amount where ``hasOnlySubstanceUnits``);
  its rate is Σ_r stoichiometry · v_r / V over the reactions (V its compartment's size; a
  boundary or constant species has rate 0 unless a rate rule says otherwise);
- a parameter with a rate rule is a state; a rate rule on a species replaces its reactions;
- assignment rules are substituted into every expression, in dependency order;
- initial assignments give initial values (of states) or values (of constants) as expressions;
- parameters, compartments and constants are the model's *constants* c, with their SBML value
  (or initial assignment) as the default; PEtab's condition and parameter tables override them.

What this module refuses, each with one error naming the construct and its id: events, algebraic
rules, delays, fast reactions, rate rules on compartments (variable volumes), conversion factors,
stoichiometries that are not constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sympy as sp

TIME = sp.Symbol("t", real=True)


class SbmlError(ValueError):
    """An SBML model that cannot be read or holds a construct this importer does not support."""


@dataclass(frozen=True)
class OdeModel:
    """The ODE of an SBML model.

    Attributes:
        states: state ids (species, then parameters with rate rules), in order.
        rhs: x' per state, in the symbols of states, constants and `TIME`.
        initial: x(0) per state, in the symbols of constants (and `TIME` = 0).
        constants: every constant id -> its default value (a number or an expression of other
            constants).
        assignments: assignment-rule targets -> their expressions (already substituted into
            ``rhs``; kept for observables that name them).
        volumes: per state the compartment size its value is divided by (1 for amounts).
        name: the model's id.
        n_species: how many of the states (the first) are species.
    """

    states: tuple[str, ...]
    rhs: tuple[sp.Expr, ...]
    initial: tuple[sp.Expr, ...]
    constants: dict[str, sp.Expr]
    assignments: dict[str, sp.Expr]
    volumes: tuple[sp.Expr, ...]
    name: str = ""
    n_species: int = 0

    @property
    def n_states(self) -> int:
        return len(self.states)

    def expand(self, expr: sp.Expr) -> sp.Expr:
        """``expr`` with assignment-rule targets replaced by their expressions."""
        if not self.assignments:
            return expr
        return expr.xreplace({sp.Symbol(k, real=True): v for k, v in self.assignments.items()})


def read_sbml(path: str | Path) -> OdeModel:
    """The ODE of the SBML file at ``path``.

    Raises:
        SbmlError: the file cannot be read, has errors, or holds an unsupported construct
            (named, with its id and the file).
    """
    import libsbml

    path = Path(path)
    if not path.is_file():
        raise SbmlError(f"{path}: no such SBML file")
    document = libsbml.readSBMLFromFile(str(path))
    return _from_document(document, str(path))


def ode_from_document(document: object, where: str) -> OdeModel:
    """The ODE of an already parsed ``libsbml.SBMLDocument``; ``where`` names it in errors."""
    return _from_document(document, where)


def _from_document(document: object, where: str) -> OdeModel:
    import libsbml

    errors = [
        document.getError(k)
        for k in range(document.getNumErrors())
        if document.getError(k).getSeverity() >= libsbml.LIBSBML_SEV_ERROR
    ]
    if errors:
        e = errors[0]
        raise SbmlError(f"{where}: line {e.getLine()}: {e.getShortMessage()}: {e.getMessage()}")
    properties = libsbml.ConversionProperties()
    properties.addOption("expandFunctionDefinitions", True)
    if document.convert(properties) != libsbml.LIBSBML_OPERATION_SUCCESS:
        raise SbmlError(f"{where}: its function definitions could not be expanded")
    model = document.getModel()
    if model is None:
        raise SbmlError(f"{where}: the document holds no model")
    return _Reader(model, where).ode()


def _sym(name: str) -> sp.Symbol:
    return sp.Symbol(name, real=True)


class _Reader:
    """One pass over a libsbml Model into an `OdeModel`."""

    def __init__(self, model: object, where: str) -> None:
        self.model, self.where = model, where

    def fail(self, what: str) -> SbmlError:
        return SbmlError(f"{self.where}: {what} is not supported by the collocnode PEtab importer")

    def math(self, obj: object, local: dict[sp.Symbol, sp.Expr] | None = None) -> sp.Expr:
        import sbmlmath

        if not obj.isSetMath():
            raise SbmlError(f"{self.where}: {obj.getElementName()} {obj.getId()!r} has no math")
        expr = sbmlmath.sbml_math_to_sympy(obj)
        # every symbol real, the time csymbol as TIME, Avogadro's number as its value
        subs: dict[sp.Basic, sp.Basic] = {}
        for s in expr.free_symbols:
            if isinstance(s, sbmlmath.TimeSymbol):
                subs[s] = TIME
            elif isinstance(s, sbmlmath.CSymbol) and "avogadro" in str(s).lower():
                subs[s] = sp.Float(6.02214179e23)
            elif isinstance(s, sbmlmath.CSymbol):
                raise self.fail(f"the csymbol {s} (in {obj.getElementName()} {obj.getId()!r})")
            elif isinstance(s, sp.Symbol):
                subs[s] = sp.Symbol(s.name, real=True)
        for node in sp.preorder_traversal(expr):
            if isinstance(node, (sbmlmath.Delay,)) or type(node).__name__ == "delay":
                raise self.fail(f"delay() (in {obj.getElementName()} {obj.getId()!r})")
            if isinstance(node, sbmlmath.RateOf) or type(node).__name__ == "rateOf":
                raise self.fail(f"rateOf() (in {obj.getElementName()} {obj.getId()!r})")
        expr = expr.xreplace(subs)
        return expr.xreplace(local) if local else expr

    def refuse_unsupported(self) -> None:
        m = self.model
        if m.getNumEvents():
            raise self.fail(
                f"the event {m.getEvent(0).getId() or '(no id)'!r} (SBML events; "
                f"{m.getNumEvents()} in the model)"
            )
        for r in m.getListOfRules():
            if r.isAlgebraic():
                raise self.fail("an algebraic rule (a DAE)")
        for r in m.getListOfReactions():
            if r.isSetFast() and r.getFast():
                raise self.fail(f"the fast reaction {r.getId()!r}")
        if m.isSetConversionFactor() or any(
            s.isSetConversionFactor() for s in m.getListOfSpecies()
        ):
            raise self.fail("a conversion factor")

    def ode(self) -> OdeModel:
        self.refuse_unsupported()
        m = self.model
        self.rate_rules = {r.getVariable(): r for r in m.getListOfRules() if r.isRate()}
        self.assign_rules = {r.getVariable(): r for r in m.getListOfRules() if r.isAssignment()}
        self.initial_assign = {a.getSymbol(): a for a in m.getListOfInitialAssignments()}
        for c in m.getListOfCompartments():
            if c.getId() in self.rate_rules or c.getId() in self.assign_rules:
                raise self.fail(f"a rule on the compartment {c.getId()!r} (a variable volume)")
        species = [s for s in m.getListOfSpecies() if s.getId() not in self.assign_rules]
        rate_params = [p for p in m.getListOfParameters() if p.getId() in self.rate_rules]
        states = [s.getId() for s in species] + [p.getId() for p in rate_params]
        volumes = [
            _sym(s.getCompartment()) if not s.getHasOnlySubstanceUnits() else sp.Integer(1)
            for s in species
        ] + [sp.Integer(1)] * len(rate_params)
        initial = [self.species_initial(s) for s in species] + [
            self.parameter_initial(p) for p in rate_params
        ]
        amount_rate = self.amount_rates(states)
        rhs = [
            self.math(self.rate_rules[sid]) if sid in self.rate_rules else rate / volume
            for sid, rate, volume in zip(states, amount_rate, volumes, strict=True)
        ]
        assignments = self.assignments(self.assign_rules)
        expand = {_sym(a): e for a, e in assignments.items()}
        rhs = [sp.sympify(f).xreplace(expand) for f in rhs]
        initial = [sp.sympify(x0).xreplace(expand) for x0 in initial]
        self.check_initial(states, initial)
        return OdeModel(
            states=tuple(states),
            rhs=tuple(rhs),
            initial=tuple(initial),
            constants=self.constants(),
            assignments=assignments,
            volumes=tuple(volumes),
            name=m.getId(),
            n_species=len(species),
        )

    def constants(self) -> dict[str, sp.Expr]:
        """Compartment sizes and parameters without rules: their values or initial assignments."""
        m = self.model
        constants: dict[str, sp.Expr] = {}
        for c in m.getListOfCompartments():
            constants[c.getId()] = sp.Float(c.getSize()) if c.isSetSize() else sp.Float(1.0)
        for p in m.getListOfParameters():
            if p.getId() in self.rate_rules or p.getId() in self.assign_rules:
                continue
            constants[p.getId()] = sp.Float(p.getValue()) if p.isSetValue() else sp.nan
        for sid, a in self.initial_assign.items():
            if sid in constants:
                constants[sid] = self.math(a)
        return constants

    def species_initial(self, s: object) -> sp.Expr:
        """A species' initial value in the units of its symbol (concentration or amount)."""
        compartment = _sym(s.getCompartment())
        amounts = s.getHasOnlySubstanceUnits()
        if s.getId() in self.initial_assign:
            return self.math(self.initial_assign[s.getId()])
        if s.isSetInitialConcentration():
            c = sp.Float(s.getInitialConcentration())
            return c * compartment if amounts else c
        if s.isSetInitialAmount():
            a = sp.Float(s.getInitialAmount())
            return a if amounts else a / compartment
        return sp.nan

    def parameter_initial(self, p: object) -> sp.Expr:
        if p.getId() in self.initial_assign:
            return self.math(self.initial_assign[p.getId()])
        return sp.Float(p.getValue()) if p.isSetValue() else sp.nan

    def amount_rates(self, states: list[str]) -> list[sp.Expr]:
        """Per state Σ_r stoichiometry · v_r over the reactions (boundary and constant species,
        and states that are no species: 0)."""
        m = self.model
        index = {sid: k for k, sid in enumerate(states)}
        rates = [sp.Integer(0)] * len(states)
        for r in m.getListOfReactions():
            if not r.isSetKineticLaw():
                raise SbmlError(f"{self.where}: reaction {r.getId()!r} has no kinetic law")
            law = r.getKineticLaw()
            local = {
                _sym(q.getId()): sp.Float(q.getValue())
                for q in list(law.getListOfParameters()) + list(law.getListOfLocalParameters())
            }
            rate = self.math(law, local)
            for refs, sign in ((r.getListOfReactants(), -1.0), (r.getListOfProducts(), 1.0)):
                for ref in refs:
                    sid = ref.getSpecies()
                    s = m.getSpecies(sid)
                    if sid not in index or s.getBoundaryCondition() or s.getConstant():
                        continue  # boundary and constant species: reactions leave them be
                    rates[index[sid]] += sign * self.stoichiometry(r, ref) * rate
        return rates

    def stoichiometry(self, reaction: object, ref: object) -> float:
        if hasattr(ref, "isSetStoichiometryMath") and ref.isSetStoichiometryMath():
            raise self.fail(f"stoichiometryMath (reaction {reaction.getId()!r})")
        variable = (self.rate_rules, self.assign_rules, self.initial_assign)
        if ref.isSetId() and any(ref.getId() in rules for rules in variable):
            raise self.fail(f"a variable stoichiometry (reaction {reaction.getId()!r})")
        st = ref.getStoichiometry() if ref.isSetStoichiometry() else 1.0
        return st if np.isfinite(st) else 1.0

    def assignments(self, rules: dict[str, object]) -> dict[str, sp.Expr]:
        """Assignment rules with each other substituted, in dependency order."""
        raw = {k: self.math(r) for k, r in rules.items()}
        names = {sp.Symbol(k, real=True): k for k in raw}
        done: dict[str, sp.Expr] = {}
        visiting: set[str] = set()

        def resolve(k: str) -> sp.Expr:
            if k in done:
                return done[k]
            if k in visiting:
                raise SbmlError(f"{self.where}: the assignment rules for {k!r} are cyclic")
            visiting.add(k)
            expr = raw[k]
            deps = {s: resolve(names[s]) for s in expr.free_symbols if s in names}
            done[k] = expr.xreplace(deps) if deps else expr
            visiting.discard(k)
            return done[k]

        for k in raw:
            resolve(k)
        return done

    def check_initial(self, states: list[str], initial: list[sp.Expr]) -> None:
        for sid, x0 in zip(states, initial, strict=True):
            if x0 is sp.nan:
                raise SbmlError(f"{self.where}: state {sid!r} has no initial value")
