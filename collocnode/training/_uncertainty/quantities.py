"""The fitted quantities θ of a training problem, by name: what the uncertainty is about.

θ holds, in this order, the entries of the model's parameter vector p that the solve was free
to move (block weights, then fitted physical parameters, in the model's layout) and the free
initial states (one per state of each trajectory whose initial state is not fixed), all in
physical units. A parameter whose bounds are equal, or that ended at one of its bounds, is no
entry of θ: it is listed in ``held`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...models._hybrid import HybridModel

#: the kinds of fitted quantity
KINDS = ("weight", "parameter", "initial_state")


@dataclass(frozen=True)
class FittedQuantities:
    """Names and places of the entries of θ.

    Attributes:
        names: one per entry: ``"friction[3]"`` (weight 3 of block "friction"), ``"k"`` (a
            fitted physical parameter), ``"x0.prey"`` / ``"x0[1].prey"`` (the free initial state
            "prey" of the only / of trajectory 1).
        kinds: one of `KINDS` per entry.
        p_index: the entry's index into p (-1 for an initial state), (n_θ,) int.
        state: for an initial state its (trajectory, state index); (-1, -1) otherwise,
            (n_θ, 2) int.
        values: the fitted values, (n_θ,) in physical units.
        held: parameters of p that are no entry of θ: name -> reason ("fixed": equal bounds;
            "at lower bound", "at upper bound").
    """

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    p_index: np.ndarray
    state: np.ndarray
    values: np.ndarray
    held: dict[str, str]

    @property
    def n(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """The position of ``name`` in θ; one clear error for an unknown name."""
        try:
            return self.names.index(name)
        except ValueError:
            if name in self.held:
                raise ValueError(
                    f"{name!r} was not fitted freely ({self.held[name]}): it has no uncertainty"
                ) from None
            shown = [n for n, k in zip(self.names, self.kinds, strict=True) if k != "weight"]
            raise ValueError(
                f"unknown fitted quantity {name!r}; physical parameters and initial states: "
                f"{', '.join(shown) or 'none'} (block weights are named like 'block[3]')"
            ) from None

    def of_kind(self, *kinds: str) -> np.ndarray:
        """Indices of the entries of the given kinds, (k,) int."""
        return np.array([i for i, k in enumerate(self.kinds) if k in kinds], dtype=np.int64)


def parameter_names(model: HybridModel) -> list[str]:
    """The name of every entry of p: ``block[i]`` for weights, the name of a physical
    parameter."""
    names = [""] * model.n_params
    for name, s in model.slices.items():
        if name in model.blocks:
            for i in range(s.start, s.stop):
                names[i] = f"{name}[{i - s.start}]"
        else:
            names[s.start] = name
    return names


def initial_state_name(model: HybridModel, segment: int, state: int, n_segments: int) -> str:
    label = model.state_names[state] if model.state_names else f"x{state}"
    return f"x0.{label}" if n_segments == 1 else f"x0[{segment}].{label}"
