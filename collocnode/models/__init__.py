"""Models: hybrid (physics + named blocks) and plain neural ODEs, their simulation, and a
trained model as the dynamics of a control problem."""

from ._hybrid import HybridModel, NeuralODE, Parameter

__all__ = ["HybridModel", "NeuralODE", "Parameter"]
