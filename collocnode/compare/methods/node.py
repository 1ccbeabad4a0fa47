"""The sequential neural ODE: trained through an adaptive ODE solver (torchdiffeq).

``z' = F_Θ(t, z)`` (second-order form ``(q', NN(q, q'))`` for second-order systems, as the SNDE
paper's NODE baseline) is integrated with ``torchdiffeq.odeint`` and the squared error against the
data is back-propagated either directly through the solver steps or by the adjoint method
(``odeint_adjoint``, Chen et al. 2018). ``shooting=None`` fits each whole training trajectory from
its first sample (the classic sequential NODE, MBD-NODE eq. 15); ``shooting=k`` fits
non-overlapping chunks of ``k`` steps, each started from its observed first sample and sharing its
end sample with the next chunk (multiple shooting, as the SNDE paper trains).

``augment=k`` gives the augmented NODE (ANODE, Dupont et al. 2019): the integrated state is
extended by ``k`` states that start at 0 at every initial state (every chunk start and every
rollout); the network reads and drives them, and only the real state enters the loss and the
prediction.

``hamiltonian="state"`` gives an HNN trained through the solver, as the SNDE paper trains its
HNN baseline (App. D.1, Fig. 8): the field is Hamilton's equations ``(∂H/∂p, −∂H/∂q)`` of a scalar
network ``H(q, p)`` with ``p = q'`` (`HamiltonianField`), fitted to trajectories
like the NODE instead of to derivative labels like `HNN`; ``"squares"`` is the SNDE
code's network of the squared state (`SquaredInputHamiltonianField`).

torchdiffeq is an optional dependency (``pip install collocnode[torch]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from ... import _validation as v
from ..._data import Trajectory
from ...tools._fixed_step import DivergenceError
from .energy import build_scalar_field
from .field import FieldOptions, FieldTrainer, data_stats
from .hnn import HamiltonianField, SquaredInputHamiltonianField, hamiltonian_output_scale
from .inputs import InputSignal

SOLVERS = ("dopri5", "dopri8", "bosh3", "adaptive_heun", "rk4", "midpoint", "euler")
# NODEOptions.hamiltonian: the field class of each choice
HAMILTONIAN_FIELDS = {"state": HamiltonianField, "squares": SquaredInputHamiltonianField}


def _torchdiffeq() -> Any:
    try:
        import torchdiffeq
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the NODE and SNDE methods need torchdiffeq: pip install torchdiffeq"
        ) from None
    return torchdiffeq


@dataclass(frozen=True)
class NODEOptions(FieldOptions):
    """Options of the solver-trained neural ODEs (NODE and SNDE).

    Attributes:
        solver: torchdiffeq method for training and rollout ("dopri5" is the Dormand–Prince 5(4)
            pair; the SNDE paper used the similar Tsit5).
        rtol, atol: solver tolerances in training (SNDE: 1e-6).
        predict_rtol, predict_atol: tolerances of the rollout (SNDE tests: 1e-9).
        adjoint: gradients by the adjoint method instead of back-propagation through the steps.
        shooting: steps per multiple-shooting chunk, or None for whole trajectories.
        lr_min: if set, the decay per epoch is ``(lr_min / lr) ** (1 / (epochs - 1))`` (SNDE's
            exponential schedule from Max LR to Min LR) and overrides ``lr_decay``.
        blowup: a rollout whose state exceeds this magnitude counts as diverged.
        augment: augmented states (ANODE; 0: none). They start at 0, the network reads them
            after the model state and outputs their derivatives after its own outputs.
        augmented_loss: with ``augment``, also count the augmented states' squares in the
            loss, that is, fit them to zero, as the SNDE code does by padding the data with
            zeros; False: the loss is over the model state only.
        hamiltonian: None (the field is the network), or the field is Hamilton's equations of a
            scalar network ``H`` of the state (``"state"``) or of its square (``"squares"``);
            see the module docstring. Needs a second-order system without inputs and
            parameter inputs, and no ``augment``.
    """

    epochs: int = 300
    hidden: tuple[int, ...] = (128, 128)
    solver: str = "dopri5"
    rtol: float = 1e-6
    atol: float = 1e-6
    predict_rtol: float = 1e-9
    predict_atol: float = 1e-9
    adjoint: bool = False
    shooting: int | None = None
    lr_min: float | None = None
    blowup: float = 1e8
    augment: int = 0
    augmented_loss: bool = False
    hamiltonian: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        v.choice("solver", self.solver, SOLVERS)
        object.__setattr__(self, "augment", v.nonnegative_int("augment", self.augment))
        if self.hamiltonian is not None:
            v.choice("hamiltonian", self.hamiltonian, HAMILTONIAN_FIELDS)
            if self.augment:
                raise ValueError(
                    f"hamiltonian={self.hamiltonian!r} does not take augmented states, got "
                    f"augment={self.augment}"
                )
        for name in ("rtol", "atol", "predict_rtol", "predict_atol", "blowup"):
            v.positive_float(name, getattr(self, name))
        for name in ("adjoint", "augmented_loss"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if self.shooting is not None:
            v.positive_int("shooting", self.shooting)
        if self.lr_min is not None:
            lo = v.positive_float("lr_min", self.lr_min)
            if lo > self.lr:
                raise ValueError(f"lr_min must be <= lr = {self.lr}, got {self.lr_min}")
            decay = (lo / self.lr) ** (1.0 / max(self.epochs - 1, 1))
            object.__setattr__(self, "lr_decay", decay)


class _ODEFunc(nn.Module):
    """``F(t_rel, z)`` for a batch of chunks; the per-call context is set by the trainer
    (an ``nn.Module`` so that ``odeint_adjoint`` finds the parameters)."""

    def __init__(self, trainer: NODE) -> None:
        super().__init__()
        self.field = trainer.field
        self._trainer = [trainer]  # a list keeps the trainer out of the module tree
        self.ctx: dict[str, Any] = {}

    def forward(self, t_rel: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return self._trainer[0]._rhs_batch(t_rel, z, self.ctx)


class NODE(FieldTrainer):
    """Sequential neural ODE (direct back-propagation, or adjoint with ``adjoint=True``)."""

    name = "node"
    options_class = NODEOptions
    QUICK = {"epochs": 20, "batch_size": 8, "hidden": (32, 32), "shooting": 10}
    # The quarter vehicle as Kamp et al. (ICINCO 2023) trained it through an ODE solver: Adam
    # 1e-3 without decay, 3 random sequences of 4 s (4000 samples) per update, started from the
    # observed states, 1000 updates = 250 passes over the ten 4 s chunks of the 42 s. Their
    # model was the hybrid one; here the whole field is a network, with data-derived scaling.
    PAPER = {
        "qvm": {
            "shooting": 4000,
            "batch_size": 3,
            "epochs": 250,
            "lr_decay": 1.0,
            "normalize": True,
        }
    }

    # --- data ------------------------------------------------------------------------------------
    def _setup(self, system: Any, trajs: list[Trajectory]) -> int:
        self._prepare(system, trajs)
        lay, o = self.layout, self.options
        zs = [lay.reduce(tr.x) for tr in trajs]  # the model states of each trajectory
        chunks, times, ids = [], [], []
        for k, (tr, z) in enumerate(zip(trajs, zs, strict=True)):
            n = tr.n_samples
            if n < 2:
                raise ValueError(f"train[{k}] needs at least 2 samples, got {n}")
            step = n - 1 if o.shooting is None else min(o.shooting, n - 1)
            for s in range(0, n - step, step):
                chunks.append(z[s : s + step + 1])
                times.append(tr.t[s : s + step + 1])
                ids.append(k)
        self._chunks = [self._tensor(c) for c in chunks]
        self._times = [np.asarray(t, dtype=float) for t in times]
        self._ids = ids
        self._refs = [self._reference(trajs[k].x[0], trajs[k].t0) for k in ids]
        feats = np.concatenate(
            [self._net_inputs(tr, mu) for tr, mu in zip(trajs, self.train_params, strict=True)]
        )
        d = np.concatenate(
            [np.diff(z, axis=0) / np.diff(tr.t)[:, None] for tr, z in zip(trajs, zs, strict=True)]
        )
        if o.hamiltonian is None:
            self._build_field(feats, d[:, lay.n_q :] if lay.second_order else d, o.augment)
        else:
            self._build_hamiltonian(system, np.concatenate(zs), d)
        self._func = _ODEFunc(self)
        self._signals_for(trajs)
        self._train_mu = [self._tensor(mu) for mu in self.train_params]
        return len(self._chunks)

    def _build_hamiltonian(self, system: Any, z: np.ndarray, dz: np.ndarray) -> None:
        """The field of ``hamiltonian``: a scalar network of ``z`` (n, n_model) or its square,
        its output scaled by the finite-difference derivatives ``dz`` (n - 1 per trajectory,
        n_model) as the HNN's by its labels."""
        o, lay = self.options, self.layout
        why = None
        if not lay.second_order:
            why = f"{system.name} is first order (H needs the state (q, p), p = q')"
        elif lay.n_inputs:
            why = f"{system.name} has known inputs ({', '.join(system.input_names)})"
        elif o.param_inputs:
            why = f"parameter inputs {o.param_inputs!r} are set"
        if why is not None:
            raise ValueError(f"hamiltonian={o.hamiltonian!r} does not apply: {why}")
        net_inputs = z * z if o.hamiltonian == "squares" else z
        scale = hamiltonian_output_scale(data_stats(z)[1], dz, lay.n_q) if o.normalize else 1.0
        self.field = build_scalar_field(
            HAMILTONIAN_FIELDS[o.hamiltonian], net_inputs, scale, o, lay, self.dtype, self.device
        )

    @property
    def _block(self) -> str:
        """``"H"`` (``"H_of_squares"``: a network of ``z ⊙ z``) for a Hamiltonian field: its
        spec maps the state to a scalar, not to the field ``"f"``."""
        names = {"state": "H", "squares": "H_of_squares"}
        return names.get(self.options.hamiltonian, super()._block)

    def _reference(self, x0: np.ndarray, t0: float) -> np.ndarray | None:
        """A per-trajectory constant of the right-hand side, from its first state (None here;
        SNDE: the constraint values there)."""
        return None

    # --- augmented states ------------------------------------------------------------------
    def _augmented(self, z: torch.Tensor) -> torch.Tensor:
        """``z`` (..., n_model) followed by ``augment`` zeros (the ANODE initial state)."""
        k = self.options.augment
        return torch.cat([z, z.new_zeros((*z.shape[:-1], k))], dim=-1) if k else z

    # --- right-hand side ----------------------------------------------------------------------
    def _rhs_batch(self, t_rel: torch.Tensor, z: torch.Tensor, ctx: dict[str, Any]) -> torch.Tensor:
        t_abs = ctx["t0"] + t_rel
        if self.layout.n_inputs:
            if "signal" in ctx:
                u = ctx["signal"](t_abs)
            else:
                u = self._batch_inputs(ctx["traj"], t_abs)
        else:
            u = z.new_zeros((*z.shape[:-1], 0))
        return self.field(z, u, ctx["mu"])

    def _solve(
        self, z0: torch.Tensor, t_rel: torch.Tensor, ctx: dict[str, Any], rtol: float, atol: float
    ) -> torch.Tensor:
        tde = _torchdiffeq()
        self._func.ctx = ctx
        o = self.options
        if o.adjoint and torch.is_grad_enabled():
            return tde.odeint_adjoint(
                self._func,
                z0,
                t_rel,
                rtol=rtol,
                atol=atol,
                method=o.solver,
                adjoint_params=tuple(self.field.parameters()),
            )
        return tde.odeint(self._func, z0, t_rel, rtol=rtol, atol=atol, method=o.solver)

    def _loss(self, idx: torch.Tensor) -> torch.Tensor:
        o = self.options
        groups: dict[tuple[float, ...], list[int]] = {}
        for i in idx.tolist():
            rel = self._times[i] - self._times[i][0]
            groups.setdefault(tuple(np.round(rel, 12)), []).append(i)
        total = None
        for rel, members in groups.items():
            t_rel = self._tensor(np.asarray(rel))
            data = torch.stack([self._chunks[i] for i in members], dim=1)  # (k+1, B, n)
            ctx = {
                "t0": self._tensor(np.array([self._times[i][0] for i in members])),
                "traj": torch.as_tensor([self._ids[i] for i in members], device=self.device),
                "mu": torch.stack([self._train_mu[self._ids[i]] for i in members]),
                "ref": self._stack_refs(members),
            }
            pred = self._solve(self._augmented(data[0]), t_rel, ctx, o.rtol, o.atol)
            # the real state, or with the augmented states against 0 (the SNDE code's padding)
            target = self._augmented(data[1:]) if o.augmented_loss else data[1:]
            err = pred[1:, :, : target.shape[-1]] - target
            part = (err * err).sum(dim=-1).mean(dim=0).sum()  # mean over predicted samples
            total = part if total is None else total + part
        return total / idx.numel()

    def _stack_refs(self, members: list[int]) -> torch.Tensor | None:
        if self._refs[members[0]] is None:
            return None
        return self._tensor(np.stack([self._refs[i] for i in members]))

    # --- rollout ----------------------------------------------------------------------------------
    def _rollout_model(
        self,
        t: np.ndarray,
        z0: np.ndarray,
        sig: InputSignal,
        mu: torch.Tensor,
        x0: np.ndarray | None = None,
        keep_augmented: bool = False,
    ) -> np.ndarray:
        """The model states ``(n, n_model)`` (with the augmented ones after them if
        ``keep_augmented``); a DivergenceError's partial rollout holds the model states."""
        o = self.options
        n = z0.shape[-1]
        ref = None if x0 is None else self._reference(x0, float(t[0]))
        ref = None if ref is None else self._tensor(ref)[None, :]
        ctx = {"t0": self._tensor(np.array([t[0]])), "signal": sig, "mu": mu[None, :], "ref": ref}
        t_rel = self._tensor(t - t[0])
        z0t = self._augmented(self._tensor(z0)[None, :])
        with torch.no_grad():
            try:
                z = self._solve(z0t, t_rel, ctx, o.predict_rtol, o.predict_atol)[:, 0]
            except (AssertionError, RuntimeError) as exc:  # torchdiffeq: "underflow in dt"
                z = None
                err = exc
            if z is not None:
                zn = z.cpu().numpy()
                bad = ~np.isfinite(zn).all(axis=1) | (
                    np.abs(np.nan_to_num(zn, nan=np.inf)).max(axis=1) > o.blowup
                )
                if bad.any():
                    k = int(np.argmax(bad))
                    raise DivergenceError(k, t[k], zn[:k, :n], "non-finite or blow-up")
                return zn if keep_augmented else zn[:, :n]
            # locate the failing sample interval, one interval at a time
            out = [z0t[0]]
            for k in range(t.size - 1):
                ctx["t0"] = self._tensor(np.array([t[k]]))
                try:
                    seg = self._solve(
                        out[-1][None, :],
                        self._tensor(np.array([0.0, t[k + 1] - t[k]])),
                        ctx,
                        o.predict_rtol,
                        o.predict_atol,
                    )
                except (AssertionError, RuntimeError):
                    raise DivergenceError(
                        k + 1,
                        t[k + 1],
                        torch.stack(out)[:, :n].cpu().numpy(),
                        f"solver failed: {err}",
                    ) from None
                out.append(seg[-1, 0])
            partial = torch.stack(out)[:, :n].cpu().numpy()
            raise DivergenceError(t.size - 1, t[-1], partial, str(err))

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: Any = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        t, x0 = self._check_predict_args(t, x0)
        sig = self._inputs(t, u)
        z = self._rollout_model(t, self.layout.reduce(x0), sig, self._mu(params), x0)
        return self.layout.expand(z, self.system, x0)

    def predict_with_derivatives(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: Any = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rollout ``(n, n_states)`` and the right-hand side the solver integrated, at the
        rolled-out states: the learned field for the NODE (with the augmented states of its
        rollout for an ANODE, whose derivatives are dropped); SNDE adds its stabilization and
        projection. States the model does not learn get NaN."""
        t, x0 = self._check_predict_args(t, x0)
        sig, mu, lay = self._inputs(t, u), self._mu(params), self.layout
        za = self._rollout_model(t, lay.reduce(x0), sig, mu, x0, keep_augmented=True)
        x = lay.expand(za[:, : lay.n_model], self.system, x0)
        ref = self._reference(x0, float(t[0]))
        ctx = {
            "t0": self._tensor(t),
            "signal": sig,
            "mu": mu[None, :],
            "ref": None if ref is None else self._tensor(ref)[None, :],
        }
        with torch.no_grad():
            dz = self._rhs_batch(self._tensor(np.zeros(())), self._tensor(za), ctx)
        return x, self._expand_derivative(dz[:, : lay.n_model].cpu().numpy())

    def augmented_states(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: Any = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        """The augmented states ``(n, augment)`` of the rollout from ``x0`` over ``t`` (an
        ANODE's; they start at 0 and are not part of the system's state). Raises
        DivergenceError as `predict` does."""
        t, x0 = self._check_predict_args(t, x0)
        sig, lay = self._inputs(t, u), self.layout
        za = self._rollout_model(t, lay.reduce(x0), sig, self._mu(params), x0, keep_augmented=True)
        return za[:, lay.n_model :]
