"""Network and surrogate specs, built for CasADi and for torch with one flat weight layout."""

from ._activations import ACTIVATIONS, Activation, get_activation, require_c2
from ._base import Block
from ._mlp import MLP
from ._rational import RationalChebyshev

__all__ = [
    "ACTIVATIONS",
    "MLP",
    "Activation",
    "Block",
    "RationalChebyshev",
    "get_activation",
    "require_c2",
]
