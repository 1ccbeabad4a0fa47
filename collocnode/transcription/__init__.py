"""Direct collocation: Radau IIA / fLGR tables, meshes, the dynamic optimization problem, the
collocation algorithm and its transcription to a structured NLP solved by IPOPT."""

from ._collocation import RadauIIA
from ._ipopt.options import IpoptOptions, OrderingTrial
from ._mesh import Mesh
from ._nlp.build import FactorizationCostWarning
from ._nlp.hessian import PartialQuasiNewton
from ._nlp.structured import StructuredNLP
from ._problem import Constraint, DynamicOptimizationProblem, Inputs, Proximal
from ._radau import RadauTable, lagrange_basis, lagrange_derivative, radau_table
from ._refine import RefinementRule, interval_errors
from ._solution import Solution
from ._variables import AlgebraicStates, Controls

__all__ = [
    "AlgebraicStates",
    "Constraint",
    "Controls",
    "DynamicOptimizationProblem",
    "FactorizationCostWarning",
    "Inputs",
    "IpoptOptions",
    "Mesh",
    "OrderingTrial",
    "PartialQuasiNewton",
    "Proximal",
    "RadauIIA",
    "RadauTable",
    "RefinementRule",
    "Solution",
    "StructuredNLP",
    "interval_errors",
    "lagrange_basis",
    "lagrange_derivative",
    "radau_table",
]


def __getattr__(name: str) -> object:
    # names of 0.2 that moved up to the solve strategies; one release with a warning
    from ..tools._moved import moved_name

    return moved_name(
        __name__,
        name,
        {
            "AdaptiveRefinement": "collocnode.strategies._adaptive",
            "AdaptiveRefinementRecord": "collocnode.strategies._adaptive",
            "solve_dop": "collocnode.transcription._collocation",
        },
    )
