"""The interface every parameterized block (network or other surrogate) implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np


class Block(ABC):
    """A function y = F(x; w) of inputs x (n_in,) and a flat parameter vector w (n_params,).

    One block is evaluated three ways with the same flat layout of ``w``: symbolically in
    CasADi (for the collocation NLP), in numpy (for simulation and metrics) and as a torch module
    (for the PyTorch trainers), so that weights move freely between the two sides.
    """

    n_in: int
    n_out: int

    @property
    @abstractmethod
    def n_params(self) -> int: ...

    @abstractmethod
    def casadi(self, x: Any, w: Any) -> Any:
        """Symbolic forward pass; ``x`` is (n_in, 1), ``w`` is (n_params, 1); returns (n_out, 1)."""

    @abstractmethod
    def numpy(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Forward pass on a batch ``x`` of shape (..., n_in); returns (..., n_out)."""

    @abstractmethod
    def init_weights(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """A random initial parameter vector of shape (n_params,)."""

    @abstractmethod
    def torch_module(
        self, weights: np.ndarray | None = None, dtype: Any = None, device: Any = None
    ) -> Any:
        """A ``torch.nn.Module`` computing the same function, holding ``weights`` if given."""

    @property
    def domain(self) -> tuple[float, float]:
        """Input range on which the block is defined (applies to every input)."""
        return (-float("inf"), float("inf"))

    def check_smooth(self) -> None:
        """Raise ValueError if the block is not C² (IPOPT needs exact second derivatives)."""

    def casadi_function(self, name: str = "block") -> Any:
        """``casadi.Function(name, [x, w], [y])`` with SX internals."""
        import casadi as ca

        x = ca.SX.sym("x", self.n_in)
        w = ca.SX.sym("w", self.n_params)
        return ca.Function(name, [x, w], [self.casadi(x, w)], ["x", "w"], ["y"])
