"""Network and surrogate specs, built for CasADi and for torch with one flat weight layout."""

from .activations import ACTIVATIONS, Activation, get_activation, require_c2
from .base import Block
from .mlp import MLP
from .rational import RationalChebyshev

__all__ = [
    "ACTIVATIONS",
    "MLP",
    "Activation",
    "Block",
    "RationalChebyshev",
    "get_activation",
    "require_c2",
]
