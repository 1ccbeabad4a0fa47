"""Direct collocation: Radau IIA / fLGR tables, meshes, the dynamic optimization problem, the
collocation algorithm and its transcription to a structured NLP solved by IPOPT."""

from .collocation import RadauIIA
from .ipopt.options import IpoptOptions, OrderingTrial
from .mesh import Mesh
from .nlp.build import FactorizationCostWarning
from .nlp.hessian import PartialQuasiNewton
from .nlp.structured import StructuredNLP
from .problem import Constraint, DynamicOptimizationProblem, Inputs, Proximal
from .radau import RadauTable, lagrange_basis, lagrange_derivative, radau_table
from .refine import RefinementRule, interval_errors
from .solution import Solution
from .variables import AlgebraicStates, Controls

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
    from ..tools.moved import moved_name

    return moved_name(
        __name__,
        name,
        {
            "AdaptiveRefinement": "collocnode.strategies.adaptive",
            "AdaptiveRefinementRecord": "collocnode.strategies.adaptive",
            "solve_dop": "collocnode.transcription.collocation",
        },
    )
