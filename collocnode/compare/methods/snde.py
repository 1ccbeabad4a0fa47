"""SNDE: stabilized neural differential equations.

White, Kilbertus, Gelbrecht & Boers, "Stabilized Neural Differential Equations for Learning
Dynamics with Explicit Constraints" (NeurIPS 2023). For a system with constraints ``g(u, t) = 0``
(or conserved quantities ``I(u) = I(u_0)``, the paper's energy constraints) the learned
right-hand side is replaced by

    u' = f_Θ(u) − γ F(u) g(u),        F = G⁺ = Gᵀ (G Gᵀ)⁻¹,  G = ∂g/∂u      (SNDE eqs. 5, 11–12)

which leaves every solution on the constraint manifold unchanged (Thm. 1) and makes the manifold
asymptotically stable for γ large enough (Thm. 2). ``stabilizer="transpose"`` uses the cheaper
``F = Gᵀ`` (App. B, eq. 29). Second-order systems use ``u = (q, q')``, ``u' = (q', NN(u))`` and the
stabilization acts on the whole state. As in the SNDE code, ``g`` is measured relative to its
value at each trajectory's first state, so conserved quantities (energy, angular momentum,
Casimirs) and holonomic constraints are handled alike. Training is multiple shooting on chunks of
three steps through an adaptive solver (`collocnode.compare.methods.node`).

With ``augment`` > 0 this is the stabilized ANODE (SANODE): the stabilization acts on the real
state and ``F`` has zero rows for the augmented states (the SNDE code's choice).

``projection="tangent"`` is the tangent projection operator (TPO, SNDE App. D.2, eqs. 30–31):
``u' = P(u) f_Θ(u)`` with ``P = I − G⁺G`` the orthogonal projector onto the tangent space of the
constraint level set through ``u`` (for the rigid body's sphere ``g = |u|²/2 − C``, ``G = uᵀ``
and ``P = I − u uᵀ/|u|²``, eq. 30). ``g`` is then constant along exact solutions; the ordinary
solver's error still drifts it slowly. The registry's ``tpo`` sets γ = 0 (no stabilization).

The constraints come from the system in numpy. The stabilization term therefore enters torch as a
custom autograd function whose backward pass uses the Jacobian of ``F g`` by central differences
(exact ``G`` from the system, the derivative of ``F`` by differences); both are float64. The
projection is a custom autograd function of ``(u, f)`` in the same way: its derivative in ``f``
is exact (``Pᵀ = P``), its derivative in ``u`` (through ``G(u)``) by central differences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ... import _validation as v
from .node import NODE, NODEOptions

STABILIZERS = ("pinv", "transpose")
PROJECTIONS = ("none", "tangent")


@dataclass(frozen=True)
class SNDEOptions(NODEOptions):
    """SNDE options (defaults: SNDE App. F and Table 4: chunks of 3 steps, Tsit5-like dopri5 at
    1e-6, AdamW with weight decay 1e-6, LR decaying exponentially to 1e-5 over the epochs).

    Attributes:
        gamma: stabilization rate γ [1/s] (≥ 0; 0 gives the plain NODE).
        stabilizer: "pinv" (F = G⁺) or "transpose" (F = Gᵀ).
        relative: measure g relative to each trajectory's first state (the SNDE code's choice).
        fd_step: relative step of the central differences in the backward pass.
        projection: "none", or "tangent" for ``u' = (I − G⁺G) f_Θ(u)`` (TPO, App. D.2), the
            stabilization (γ > 0) added on top.
    """

    gamma: float = 8.0
    stabilizer: str = "pinv"
    relative: bool = True
    fd_step: float = 1e-6
    shooting: int | None = 3
    optimizer: str = "adamw"
    weight_decay: float = 1e-6
    lr_min: float | None = 1e-5
    partition: bool = False
    projection: str = "none"

    def __post_init__(self) -> None:
        super().__post_init__()
        v.nonnegative_float("gamma", self.gamma)
        v.choice("stabilizer", self.stabilizer, STABILIZERS)
        v.choice("projection", self.projection, PROJECTIONS)
        v.positive_float("fd_step", self.fd_step)
        if self.partition:
            raise ValueError("partition must be False for SNDE: it stabilizes the full state")


def _invariant_names(system: Any) -> list[str]:
    try:
        x0 = np.asarray(system.x0, dtype=float)
    except NotImplementedError:
        return []
    return sorted(system.invariants(x0[None, :]))


def constraint_functions(system: Any, fd_step: float = 1e-6) -> tuple[Any, Any]:
    """``(g, G)`` of ``system`` as callables ``(x (B, n), t (B,)) -> (B, m)``, ``(B, m, n)``.

    Holonomic mechanisms stabilize the full invariant manifold of their state, positions and
    velocities (``state_constraints``): the position constraints alone leave the velocity drift of
    a learned acceleration uncorrected. Systems with ``constraints`` use those and their
    ``constraint_jacobian``. Otherwise the conserved quantities of ``invariants`` (energy,
    momentum) are the constraints — the SNDE paper's choice for the double pendulum and the
    DC-DC converter — with their Jacobian by central differences.
    """
    if hasattr(system, "state_constraints") and hasattr(system, "state_constraint_jacobian"):

        def g(x: np.ndarray, t: np.ndarray) -> np.ndarray:
            return np.asarray(system.state_constraints(x), dtype=float)

        def G(x: np.ndarray, t: np.ndarray) -> np.ndarray:
            return np.asarray(system.state_constraint_jacobian(x), dtype=float)

        return g, G

    if system.n_constraints > 0:

        def g_rows(x: np.ndarray, t: np.ndarray) -> np.ndarray:
            return np.stack(
                [
                    np.atleast_1d(system.constraints(xi, float(ti)))
                    for xi, ti in zip(x, t, strict=True)
                ]
            )

        def G_rows(x: np.ndarray, t: np.ndarray) -> np.ndarray:
            return np.stack(
                [
                    np.atleast_2d(system.constraint_jacobian(xi, float(ti)))
                    for xi, ti in zip(x, t, strict=True)
                ]
            )

        return (
            _batched_if_equal(system.constraints, g_rows),
            _batched_if_equal(system.constraint_jacobian, G_rows),
        )

    names = _invariant_names(system)
    if not names:
        raise ValueError(f"{system.name} has neither constraints nor invariants to stabilize")

    def g(x: np.ndarray, t: np.ndarray) -> np.ndarray:
        inv = system.invariants(x)
        return np.stack([np.asarray(inv[k], dtype=float) for k in names], axis=-1)

    def G(x: np.ndarray, t: np.ndarray) -> np.ndarray:
        n = x.shape[-1]
        h = fd_step * np.maximum(1.0, np.abs(x))  # (B, n)
        cols = []
        for k in range(n):
            e = np.zeros_like(x)
            e[:, k] = h[:, k]
            cols.append((g(x + e, t) - g(x - e, t)) / (2.0 * h[:, k : k + 1]))
        return np.stack(cols, axis=-1)  # (B, m, n)

    return g, G


def _batched_if_equal(batched: Any, rows: Any) -> Any:
    """``rows(x, t)`` (one system call per row), or one call ``batched(x, t)`` on the whole batch
    once that has given the same values on a batch of at least two rows.

    The systems' ``constraints``/``constraint_jacobian`` are documented for one state, but most
    broadcast over leading axes; the row loop dominated SNDE training time. A function that does
    not broadcast (error, other shape or other values on the check) keeps the row loop for good.
    """
    state: dict[str, bool | None] = {"batched": None}

    def call(x: np.ndarray, t: np.ndarray) -> np.ndarray:
        if state["batched"]:
            return np.asarray(batched(x, t), dtype=float)
        out = rows(x, t)
        if state["batched"] is None and x.shape[0] >= 2:
            try:
                with np.errstate(all="ignore"):
                    trial = np.asarray(batched(x, t), dtype=float)
                same = trial.shape == out.shape and np.allclose(
                    trial, out, rtol=1e-12, atol=1e-14, equal_nan=True
                )
            except Exception:  # any failure means "does not broadcast"
                same = False
            state["batched"] = bool(same)
        return out

    return call


def stabilization(
    funcs: tuple[Any, Any], x: np.ndarray, t: np.ndarray, ref: np.ndarray | None, kind: str
) -> np.ndarray:
    """``F(x) (g(x, t) − ref)`` for each row of ``x`` (``(B, n_states)``, times ``t`` (B,));
    ``F = G⁺ = Gᵀ (G Gᵀ)⁻¹`` (SNDE eq. 12; G must have full row rank) or ``Gᵀ`` (eq. 29)."""
    g_fn, G_fn = funcs
    g = g_fn(x, t)
    if ref is not None:
        g = g - ref
    G = G_fn(x, t)
    if kind == "transpose":
        return np.einsum("bmn,bm->bn", G, g)
    y = np.linalg.solve(G @ np.swapaxes(G, -1, -2), g[..., None])[..., 0]
    return np.einsum("bmn,bm->bn", G, y)


class _Stabilize(torch.autograd.Function):
    """``F g`` evaluated in numpy; vector-Jacobian products by central differences."""

    @staticmethod
    def forward(ctx, x, t, ref, funcs, kind, fd_step):  # type: ignore[override]
        xn = x.detach().cpu().numpy()
        tn = np.broadcast_to(t.detach().cpu().numpy(), (xn.shape[0],))
        rn = (
            None
            if ref is None
            else np.broadcast_to(ref.detach().cpu().numpy(), (xn.shape[0], ref.shape[-1]))
        )
        ctx.args = (xn, tn, rn, funcs, kind, fd_step, x.dtype, x.device)
        return torch.as_tensor(
            stabilization(funcs, xn, tn, rn, kind), dtype=x.dtype, device=x.device
        )

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        xn, tn, rn, funcs, kind, fd_step, dtype, device = ctx.args
        b, n = xn.shape
        h = fd_step * np.maximum(1.0, np.abs(xn))  # (B, n)
        # all 2n perturbed copies of every row in one batched evaluation: (2, n, B, n)
        eye = np.eye(n)[:, None, :] * h[None, :, :]
        xs = np.stack([xn[None] + eye, xn[None] - eye]).reshape(-1, n)
        reps = 2 * n
        ts = np.tile(tn, reps)
        rs = None if rn is None else np.tile(rn, (reps, 1))
        s = stabilization(funcs, xs, ts, rs, kind).reshape(2, n, b, n)
        jac_t = (s[0] - s[1]) / (2.0 * h.T[:, :, None])  # (k, B, n): d s / d x_k
        gn = grad.detach().cpu().numpy()
        out = np.einsum("kbn,bn->bk", jac_t, gn)
        return torch.as_tensor(out, dtype=dtype, device=device), None, None, None, None, None


def tangent_projection(
    funcs: tuple[Any, Any], x: np.ndarray, t: np.ndarray, f: np.ndarray
) -> np.ndarray:
    """``(I − G⁺G) f`` for each row: ``f`` (B, n) projected onto the tangent space of the level
    set of ``g`` through ``x`` (B, n) at times ``t`` (B,) (G must have full row rank)."""
    G = funcs[1](x, t)
    y = np.linalg.solve(G @ np.swapaxes(G, -1, -2), np.einsum("bmn,bn->bm", G, f)[..., None])
    return f - np.einsum("bmn,bm->bn", G, y[..., 0])


class _Project(torch.autograd.Function):
    """``P(x) f`` evaluated in numpy. Its vector-Jacobian product in ``f`` is exact (``P`` is an
    orthogonal projector, ``Pᵀ = P``); in ``x`` it is taken by central differences of
    ``P(x) f`` at fixed ``f`` (P depends on x through G: treating it as a constant would drop
    that part of the gradient)."""

    @staticmethod
    def forward(ctx, x, f, t, funcs, fd_step):  # type: ignore[override]
        xn = x.detach().cpu().numpy()
        fn = f.detach().cpu().numpy()
        tn = np.broadcast_to(t.detach().cpu().numpy(), (xn.shape[0],))
        ctx.args = (xn, fn, tn, funcs, fd_step, x.dtype, x.device)
        return torch.as_tensor(
            tangent_projection(funcs, xn, tn, fn), dtype=x.dtype, device=x.device
        )

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        xn, fn, tn, funcs, fd_step, dtype, device = ctx.args
        b, n = xn.shape
        gn = grad.detach().cpu().numpy()
        grad_f = tangent_projection(funcs, xn, tn, gn)  # P grad (P symmetric)
        h = fd_step * np.maximum(1.0, np.abs(xn))  # (B, n)
        eye = np.eye(n)[:, None, :] * h[None, :, :]
        xs = np.stack([xn[None] + eye, xn[None] - eye]).reshape(-1, n)
        reps = 2 * n
        s = tangent_projection(funcs, xs, np.tile(tn, reps), np.tile(fn, (reps, 1)))
        s = s.reshape(2, n, b, n)
        jac_t = (s[0] - s[1]) / (2.0 * h.T[:, :, None])  # (k, B, n): d (P f) / d x_k
        grad_x = np.einsum("kbn,bn->bk", jac_t, gn)
        as_t = {"dtype": dtype, "device": device}
        return torch.as_tensor(grad_x, **as_t), torch.as_tensor(grad_f, **as_t), None, None, None


class SNDE(NODE):
    """Stabilized neural ODE; see the module docstring."""

    name = "snde"
    options_class = SNDEOptions
    QUICK = {"epochs": 10, "batch_size": 8, "hidden": (32, 32)}
    # SNDE Table 4 (ReLU MLPs with two hidden layers in the paper; tanh here by default so that
    # the field is C² for the collocation side — pass activation="relu" for the paper's choice).
    PAPER = {
        "two_body": {
            "gamma": 8.0,
            "hidden": (128, 128),
            "lr": 1e-3,
            "lr_min": 1e-5,
            "epochs": 1000,
        },
        "rigid_body": {
            "gamma": 32.0,
            "hidden": (64, 64),
            "lr": 1e-4,
            "lr_min": 1e-5,
            "epochs": 1000,
        },
        "dcdc": {"gamma": 8.0, "hidden": (64, 64), "lr": 5e-3, "lr_min": 1e-5, "epochs": 1000},
        "robot_arm": {
            "gamma": 16.0,
            "hidden": (128, 128),
            "lr": 1e-3,
            "lr_min": 1e-5,
            "epochs": 1000,
        },
        "double_pendulum": {
            "gamma": 16.0,
            "hidden": (128, 128),
            "lr": 1e-2,
            "lr_min": 1e-4,
            "epochs": 1000,
        },
    }

    @classmethod
    def not_applicable(cls, system: Any) -> str | None:
        if system.n_constraints == 0 and not _invariant_names(system):
            return (
                "it stabilizes constraints g(x) = 0 or conserved quantities, and the system "
                "defines neither"
            )
        return None

    def _setup(self, system: Any, trajs: list[Any]) -> int:
        self._funcs = constraint_functions(system, self.options.fd_step)
        return super()._setup(system, trajs)

    def _reference(self, x0: np.ndarray, t0: float) -> np.ndarray | None:
        if not self.options.relative:
            return None
        return self._funcs[0](np.asarray(x0, dtype=float)[None, :], np.array([t0]))[0]

    def _rhs_batch(self, t_rel: torch.Tensor, z: torch.Tensor, ctx: dict[str, Any]) -> torch.Tensor:
        f = super()._rhs_batch(t_rel, z, ctx)
        o = self.options
        if o.gamma == 0.0 and o.projection == "none":
            return f
        # the constraints act on the real state; augmented states (SANODE) are left alone
        n = self.layout.n_model
        x, f_x, f_a = z[:, :n], f[:, :n], f[:, n:]
        t_abs = (ctx["t0"] + t_rel).expand(z.shape[0])
        if o.projection == "tangent":
            f_x = _Project.apply(x, f_x, t_abs, self._funcs, o.fd_step)
        if o.gamma > 0.0:
            s = _Stabilize.apply(x, t_abs, ctx["ref"], self._funcs, o.stabilizer, o.fd_step)
            f_x = f_x - o.gamma * s
        return torch.cat([f_x, f_a], dim=-1) if o.augment else f_x


@dataclass(frozen=True)
class SANODEOptions(SNDEOptions):
    """Options of the stabilized ANODE: `SNDEOptions` with one augmented state by default
    (the SNDE paper's Table 4 gives 2, 2 and 1 per problem, in ``SANODE.PAPER``)."""

    augment: int = 1


# SNDE paper Table 4: augmented dimensions of the (S)ANODE. The SNDE code pads the data with zeros
# for them, so its loss fits the augmented states to zero too (``augmented_loss``); without that
# the SANODE drifts off the rigid body's sphere (benchmarks/sanode_drift.py).
_AUGMENT = {"two_body": 2, "rigid_body": 2, "dcdc": 1}


class SANODE(SNDE):
    """Stabilized augmented neural ODE: the stabilization acts on the real state only."""

    name = "sanode"
    options_class = SANODEOptions
    PAPER = {
        name: {**SNDE.PAPER[name], "augment": k, "augmented_loss": True}
        for name, k in _AUGMENT.items()
    }


@dataclass(frozen=True)
class ANODEOptions(NODEOptions):
    """Options of the augmented NODE: `NODEOptions` with one augmented state by default
    (the SNDE paper's Table 4 gives 2, 2 and 1 per problem, in ``ANODE.PAPER``)."""

    augment: int = 1


# SNDE paper App. F, the training its NODE and ANODE baselines share with the SNODE (chunks of 3
# steps, AdamW with weight decay 1e-6); the rest of Table 4's row is the SNODE's, less γ
_SNDE_BASELINE = {"shooting": 3, "optimizer": "adamw", "weight_decay": 1e-6}


class ANODE(NODE):
    """Augmented neural ODE (Dupont et al. 2019), the SNDE paper's unstabilized baseline: a NODE
    with ``augment`` extra states."""

    name = "anode"
    options_class = ANODEOptions
    PAPER = {
        name: {
            **_SNDE_BASELINE,
            **{key: value for key, value in SNDE.PAPER[name].items() if key != "gamma"},
            "augment": k,
            "augmented_loss": True,
        }
        for name, k in _AUGMENT.items()
    }
