"""torch modules for the network specs; imported only when torch is wanted."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ._activations import get_activation

# The torch form of every activation of collocnode.nn._activations (same function).
TORCH_ACTIVATIONS: dict[str, Any] = {
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "softplus": nn.functional.softplus,
    "squareplus": lambda x: 0.5 * (x + torch.sqrt(1.0 + x * x)),  # Langenkamp et al. eq. (18)
    "silu": nn.functional.silu,
    "identity": lambda x: x,
    "relu": torch.relu,
}


def torch_activation(name: str) -> Any:
    """The torch form of activation ``name`` (a ValueError lists the valid names)."""
    return TORCH_ACTIVATIONS[get_activation(name).name]


class TorchMLP(nn.Module):
    """The torch twin of [`collocnode.nn.MLP`][collocnode.nn.MLP] (same function, same flat weight
    layout)."""

    def __init__(
        self, spec: Any, weights: np.ndarray | None = None, dtype: Any = None, device: Any = None
    ) -> None:
        super().__init__()
        self.spec = spec
        dtype = dtype or torch.float64
        self.layers = nn.ModuleList(
            nn.Linear(i, o, dtype=dtype, device=device) for o, i in spec.layer_shapes
        )
        self._act = torch_activation(spec.activation)
        for name in ("input_shift", "input_scale", "output_scale"):
            self.register_buffer(
                name, torch.tensor(getattr(spec, name), dtype=dtype, device=device)
            )
        if weights is None:
            weights = spec.init_weights()
        self.set_flat(weights)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = (x - self.input_shift) / self.input_scale
        for k, layer in enumerate(self.layers):
            z = layer(z)
            if k < len(self.layers) - 1:
                z = self._act(z)
        return z * self.output_scale

    def get_flat(self) -> np.ndarray:
        """The weights as a float64 numpy vector in the spec's flat layout."""
        vec = nn.utils.parameters_to_vector(self.parameters())
        return vec.detach().cpu().to(torch.float64).numpy().copy()

    def set_flat(self, weights: np.ndarray) -> None:
        w = np.asarray(weights, dtype=float)
        if w.shape != (self.spec.n_params,):
            raise ValueError(f"weights must have shape ({self.spec.n_params},), got {w.shape}")
        ref = next(self.parameters())
        with torch.no_grad():
            nn.utils.vector_to_parameters(
                torch.as_tensor(w, dtype=ref.dtype, device=ref.device), self.parameters()
            )


class TorchRational(nn.Module):
    """The torch twin of [`collocnode.nn.RationalChebyshev`][collocnode.nn.RationalChebyshev] (same
    parameter layout)."""

    def __init__(
        self, spec: Any, weights: np.ndarray | None = None, dtype: Any = None, device: Any = None
    ) -> None:
        super().__init__()
        self.spec = spec
        dtype = dtype or torch.float64
        w = spec.init_weights() if weights is None else np.asarray(weights, dtype=float)
        if w.shape != (spec.n_params,):
            raise ValueError(f"weights must have shape ({spec.n_params},), got {w.shape}")
        self.weights = nn.Parameter(torch.as_tensor(w, dtype=dtype, device=device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = (x[..., 0] - self.spec.input_shift) / self.spec.input_scale
        return self.spec._ratio(s, self.weights)[..., None]

    def get_flat(self) -> np.ndarray:
        return self.weights.detach().cpu().to(torch.float64).numpy().copy()

    def set_flat(self, weights: np.ndarray) -> None:
        w = np.asarray(weights, dtype=float)
        if w.shape != (self.spec.n_params,):
            raise ValueError(f"weights must have shape ({self.spec.n_params},), got {w.shape}")
        with torch.no_grad():
            self.weights.copy_(torch.as_tensor(w, dtype=self.weights.dtype))
