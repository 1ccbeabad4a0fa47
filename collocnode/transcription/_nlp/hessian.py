"""The Hessian choice: what ``RadauIIA(hessian=...)`` accepts, its command-line names, and what
each choice means for the structured NLP and for IPOPT. The one home of this vocabulary.

The Lagrangian Hessian of the collocation NLP has three kinds of blocks: per-node state-state
blocks H_xx, a node-by-parameter border H_xp and the parameter-parameter block H_pp summed over all
nodes. A choice says which of them are computed exactly (symbolically, per node) and which IPOPT
or a quasi-Newton update approximates:

============================== ========================= ===================== ==================
choice                         exact blocks (NLP mode)   approximated by       IPOPT's
                                                                               ``hessian_approx``
============================== ========================= ===================== ==================
``"exact"``                    all (``"exact"``)         --                    ``exact``
``"limited-memory"``           none (``"none"``)         IPOPT's L-BFGS        ``limited-memory``
``PartialQuasiNewton("sr1")``  H_xx, H_xp                SR1/BFGS on H_pp      ``exact``
                               (``"partial-pp"``)
``PartialQuasiNewton(blocks=   H_xx                      Broyden on H_xp,      ``exact``
"xp+pp")``                     (``"partial-xp-pp"``)     SR1/BFGS on H_pp
============================== ========================= ===================== ==================

The command-line names (`HESSIAN_NAMES`) are "exact", "limited-memory", "sr1", "bfgs" (the
H_pp update) and "sr1-xp", "bfgs-xp" (H_xp learned as well); `hessian_from_name` turns one
into a choice.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import _validation as v

# the string choices of RadauIIA(hessian=...); the third kind is a PartialQuasiNewton
HESSIANS = ("exact", "limited-memory")
# command-line names of every choice
HESSIAN_NAMES = ("exact", "limited-memory", "sr1", "bfgs", "sr1-xp", "bfgs-xp")
# which Lagrangian Hessian blocks the structured NLP computes symbolically
NLP_MODES = ("exact", "partial-pp", "partial-xp-pp", "none")

UPDATES = ("sr1", "bfgs")
BLOCKS = ("pp", "xp+pp")


@dataclass(frozen=True)
class PartialQuasiNewton:
    """Selects a partial quasi-Newton Hessian for [`RadauIIA`][collocnode.RadauIIA]
    (``hessian=...``).

    Args:
        update: "sr1" (symmetric rank one; can represent indefinite Hessians, skipped when its
            denominator is tiny) or "bfgs" (Powell-damped BFGS; stays positive definite).
        blocks: which blocks are approximated, "pp" (H_pp only) or "xp+pp" (H_xp and H_pp).
        initial_scale: B_pp starts as ``initial_scale · I``; None rescales it at the first
            update to |rᵀr / sᵀr| per group (Shanno–Phua), starting from I.
        skip_tol: an SR1 update is skipped when |uᵀs| < skip_tol ‖u‖ ‖s‖.
    """

    update: str = "sr1"
    blocks: str = "pp"
    initial_scale: float | None = None
    skip_tol: float = 1e-8

    def __post_init__(self) -> None:
        v.choice("update", self.update, UPDATES)
        v.choice("blocks", self.blocks, BLOCKS)
        if self.initial_scale is not None:
            v.positive_float("initial_scale", self.initial_scale)
        v.positive_float("skip_tol", self.skip_tol)

    @property
    def nlp_mode(self) -> str:
        """The NLP mode (`NLP_MODES`) that computes the exact blocks."""
        return "partial-pp" if self.blocks == "pp" else "partial-xp-pp"


Hessian = str | PartialQuasiNewton


def check_hessian(hessian: object) -> Hessian:
    """``hessian`` if it is one of `HESSIANS` or a
    [`PartialQuasiNewton`][collocnode.PartialQuasiNewton]; otherwise a ValueError naming the field
    and the value."""
    if not isinstance(hessian, PartialQuasiNewton) and (
        not isinstance(hessian, str) or hessian not in HESSIANS
    ):
        raise ValueError(
            f"hessian must be one of {HESSIANS} or a PartialQuasiNewton, got {hessian!r}"
        )
    return hessian  # type: ignore[return-value]


def hessian_from_name(name: str) -> Hessian:
    """The choice of a command-line name (`HESSIAN_NAMES`): "exact" / "limited-memory" as
    they are; "sr1", "bfgs" → the H_pp update; a suffix "-xp" also learns H_xp."""
    v.choice("hessian", name, HESSIAN_NAMES)
    if name in HESSIANS:
        return name
    update, _, xp = name.partition("-")
    return PartialQuasiNewton(update, "xp+pp" if xp else "pp")


def nlp_mode(hessian: object) -> str:
    """The structured NLP's mode (`NLP_MODES`) for a choice; a mode is returned as it is.

    Raises:
        ValueError: ``hessian`` is neither a choice nor a mode.
    """
    if isinstance(hessian, PartialQuasiNewton):
        return hessian.nlp_mode
    if isinstance(hessian, str) and hessian in NLP_MODES:
        return hessian
    if hessian == "limited-memory":
        return "none"
    raise ValueError(
        f"hessian must be one of {HESSIANS + NLP_MODES[1:]} or a PartialQuasiNewton, "
        f"got {hessian!r}"
    )


def ipopt_approximation(hessian: Hessian) -> str:
    """IPOPT's ``hessian_approximation`` for a choice: "limited-memory" for IPOPT's own L-BFGS,
    "exact" otherwise (a partial quasi-Newton Hessian is handed to IPOPT as if exact)."""
    return "limited-memory" if check_hessian(hessian) == "limited-memory" else "exact"
