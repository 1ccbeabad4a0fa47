"""Import PEtab problems (SBML + tables) and fit them by collocation.

Needs the ``petab`` extra (``pip install -e ".[petab]"``: petab, python-libsbml, sbmlmath).
"""

from ._multistart import MultistartResult, StartResult, multistart, waterfall
from ._problem import PetabFit, PetabProblem, Score, import_petab
from ._profile import Profile, profile
from ._tables import PetabError

__all__ = [
    "MultistartResult",
    "PetabError",
    "PetabFit",
    "PetabProblem",
    "Profile",
    "Score",
    "StartResult",
    "import_petab",
    "multistart",
    "profile",
    "waterfall",
]
