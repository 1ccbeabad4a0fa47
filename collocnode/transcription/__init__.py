"""Direct collocation: Radau IIA / fLGR tables, meshes and the transcription to an NLP."""

from .adaptive import AdaptiveRefinement, AdaptiveSolution
from .algorithm import RadauIIA
from .driver import solve_dop
from .hessian import PartialQuasiNewton
from .ipopt_options import IpoptOptions, OrderingTrial
from .mesh import Mesh
from .nlp import StructuredNLP
from .problem import Constraint, DynamicOptimizationProblem, Inputs
from .radau import RadauTable, lagrange_basis, lagrange_derivative, radau_table
from .refine import RefinementRule, interval_errors
from .solution import Solution
from .variables import AlgebraicStates, Controls

__all__ = [
    "AdaptiveRefinement",
    "AdaptiveSolution",
    "AlgebraicStates",
    "Constraint",
    "Controls",
    "DynamicOptimizationProblem",
    "Inputs",
    "IpoptOptions",
    "Mesh",
    "OrderingTrial",
    "PartialQuasiNewton",
    "RadauIIA",
    "RadauTable",
    "RefinementRule",
    "Solution",
    "StructuredNLP",
    "interval_errors",
    "lagrange_basis",
    "lagrange_derivative",
    "radau_table",
    "solve_dop",
]
