"""Import PEtab problems (SBML + tables) and fit them by collocation.

Needs the ``petab`` extra (``pip install -e ".[petab]"``: petab, python-libsbml, sbmlmath).
"""

from ._tables import PetabError
from .problem import PetabProblem, Score, import_petab

__all__ = ["PetabError", "PetabProblem", "Score", "import_petab"]
