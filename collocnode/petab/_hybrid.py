"""PEtab SciML networks wired into an imported model: their parameters as part of θ, their
inputs and outputs as model quantities.

A network output that the hybridization table assigns to a model quantity, or that an
observable formula names, becomes a SymPy function application ``net1_output1(W, a_1, ...)``:
``W`` is one symbol standing for the network's whole parameter vector (linear scale), and the
``a_i`` are the network's flattened inputs, each an expression of states, constants and θ. The
walk to CasADi ([`to_casadi`][collocnode.petab._symbolic.to_casadi]) evaluates such an
application with the callable that `NetworkUse.symbols` maps the function to, and ``W`` with
the column of θ entries (estimated) and numbers (frozen) that it maps ``W`` to. So a network
sits wherever an expression can: in the right-hand side, in a constant or an initial value of
each condition (a network "before the ODE"), or in an observable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np
import sympy as sp

from ._tables import EstimatedParameter, sym


@dataclass(frozen=True)
class NetworkArrays:
    """A network's parameter vector (in ``Network.parameters_to_vector`` order), which entries
    are estimated, and the prior of each estimated entry."""

    values: np.ndarray
    estimated: np.ndarray
    priors: tuple[tuple[str, tuple[float, ...]] | None, ...]
    names: tuple[str, ...]


@dataclass(frozen=True)
class NetworkUse:
    """One network of a hybrid problem.

    Attributes:
        net_id: its id in the problem file.
        network: the network read from its YAML file
            ([`Network`][collocnode.petab.sciml.Network]).
        arrays: its parameters, estimated and frozen.
        input_sizes: per forward-pass argument, its PyTorch shape.
        outputs: output entity id -> flat index into the network's output.
    """

    net_id: str
    network: Any
    arrays: NetworkArrays
    input_shapes: tuple[tuple[int, ...], ...]
    outputs: dict[str, int] = field(default_factory=dict)

    @property
    def weights_symbol(self) -> sp.Symbol:
        return sym(f"{self.net_id}.parameters")

    def parameter_ids(self) -> list[str]:
        return [n for n, e in zip(self.arrays.names, self.arrays.estimated, strict=True) if e]

    def estimated_parameters(self) -> list[EstimatedParameter]:
        """The estimated entries as θ entries: linear scale, unbounded, nominal from the
        parameter file."""
        a = self.arrays
        return [
            EstimatedParameter(name, "lin", -np.inf, np.inf, float(value), prior)
            for name, value, estimated, prior in zip(
                a.names, a.values, a.estimated, a.priors, strict=True
            )
            if estimated
        ]

    def application(self, output: str, inputs: list[sp.Expr]) -> sp.Expr:
        """The SymPy application standing for output entity ``output`` on ``inputs``."""
        return sp.Function(output, real=True)(self.weights_symbol, *inputs)

    def symbols(self, theta_lin: dict[sp.Symbol, Any]) -> dict[Any, Any]:
        """``W`` and each output function, for the walk to CasADi (module docstring)."""
        entries = [
            theta_lin[sym(name)] if estimated else float(value)
            for name, value, estimated in zip(
                self.arrays.names, self.arrays.values, self.arrays.estimated, strict=True
            )
        ]
        out: dict[Any, Any] = {self.weights_symbol: ca.vertcat(*entries)}
        forward = self._forward()
        for output, index in self.outputs.items():
            out[sp.Function(output, real=True)] = lambda *args, index=index: forward(*args)[index]
        return out

    def _forward(self) -> Any:
        """The network's whole output on (weights, flat inputs), evaluated once per distinct
        argument objects: the outputs of one network (two accelerations, say) read the same
        evaluation instead of building the network's expression once each. The cache holds
        its arguments, so their ids stay theirs for its life (one model build)."""
        sizes = [int(np.prod(s)) for s in self.input_shapes]
        shapes = [list(s) for s in self.input_shapes]
        cache: dict[tuple[int, ...], tuple[tuple[Any, ...], Any]] = {}

        def forward(weights: Any, *flat: Any) -> Any:
            key = tuple(id(a) for a in (weights, *flat))
            if key not in cache:
                columns, start = [], 0
                for size in sizes:
                    columns.append(ca.vertcat(*flat[start : start + size]))
                    start += size
                params = self.network.parameters_from_vector(weights)
                y = self.network.casadi(columns, params, shapes)
                cache[key] = ((weights, *flat), y)
            return cache[key][1]

        return forward


def hybrid_symbols(networks: tuple[NetworkUse, ...], theta_lin: dict[sp.Symbol, Any]) -> dict:
    """Every network's symbols (`NetworkUse.symbols`) for one θ mapping."""
    out: dict[Any, Any] = {}
    for use in networks:
        out.update(use.symbols(theta_lin))
    return out
