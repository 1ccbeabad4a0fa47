"""The quarter vehicle's hybrid model (Langenkamp et al. §4.1, eq. 15): the known linear physics
with two surrogate blocks for the friction and the progressive spring."""

from __future__ import annotations

from typing import Any

from ..models import HybridModel
from ..nn import Block


def hybrid_model(system: Any, friction: Block, spring: Block) -> HybridModel:
    """The neural QVM: eq. 15 with F_fr = friction(Δv_s) and F_pr = spring(Δz_s)."""

    def forces(x, nets):
        dz, dv = system.relative_motion(x)
        return nets["friction"](dv), nets["spring"](dz)

    def rhs(x, u, t, nets, params):
        return system.physics_rhs(x, u[0], *forces(x, nets))[0]

    def outputs(x, u, t, nets, params):
        return system.physics_rhs(x, u[0], *forces(x, nets))[1]

    return HybridModel(
        n_states=5,
        blocks={"friction": friction, "spring": spring},
        rhs=rhs,
        outputs=outputs,
        n_outputs=2,
        n_inputs=1,
        state_names=system.state_names,
        input_names=system.input_names,
        output_names=("a_b", "a_w"),
        recipe=(
            "collocnode.recipes.qvm:hybrid_model",
            {"system": system, "friction": friction, "spring": spring},
        ),
    )
