"""Direct collocation: Radau IIA / fLGR tables, meshes and the transcription to an NLP."""

from .algorithm import RadauIIA
from .ipopt import IpoptOptions
from .mesh import Mesh
from .nlp import StructuredNLP
from .problem import Constraint, DynamicOptimizationProblem, Inputs
from .quasi_newton import PartialQuasiNewton
from .radau import RadauTable, lagrange_basis, lagrange_derivative, radau_table
from .solution import Solution

__all__ = [
    "Constraint",
    "DynamicOptimizationProblem",
    "Inputs",
    "IpoptOptions",
    "Mesh",
    "PartialQuasiNewton",
    "RadauIIA",
    "RadauTable",
    "Solution",
    "StructuredNLP",
    "lagrange_basis",
    "lagrange_derivative",
    "radau_table",
]
