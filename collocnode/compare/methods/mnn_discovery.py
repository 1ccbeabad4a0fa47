"""MNN for equation discovery: the mechanistic block with a sparse library right-hand side.

Pervez, Locatello & Gavves (ICML 2024), §3.4 and App. A.3 (MNN eqs. 36-37): a network maps the
observed window x (T points, D states) to a sequence y of the same shape; the basis Θ(y) of
polynomials up to a degree is formed at every point, and the ODE

    u' = f(Θ(y) ξ)                                                   (MNN eq. 37)

is solved over the window by the relaxed solver (`collocnode.compare.methods.mnn_solver`, order
R = 1 with coefficients c = (0, 1), the initial value the window's first sample). The loss is
MSE(u, x) + MSE(y, x); every cycle of epochs ends by zeroing the coefficients below a threshold
for good (SINDy-style sequential thresholding, as the authors' Lorenz code does in 10 cycles).
f is the identity (the SINDy-like case), tanh, or a ratio Θ(y) ξ / (1 + Φ(y) η) of two
combinations of the basis (the rational case of §5.1; Φ is the basis without its constant).

Our choices where the paper leaves freedom (stated, kept fixed): ξ (and η) are trained
parameters rather than the output of an MLP applied to a learned vector; the network is
residual, y = x + NN(x), so that it starts at y = x; the coefficients have their own learning
rate (they are O(10) for Lorenz, the network's weights O(1)); the window is ``horizon`` points.

Prediction integrates the discovered equations u' = f(Θ(u) ξ) (LSODA); the network is only the
training-time denoiser.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import _validation as v
from ..._data import Trajectory
from ...nn import MLP
from ...tools._fixed_step import DivergenceError
from ...tools._ivp import SimulationError, solve_bounded
from ...training._discovery.library import pysindy
from .base import Callback, FitResult, Trainer
from .options import GradientOptions

FORMS = ("linear", "tanh", "rational")


@dataclass(frozen=True)
class MNNDiscoveryOptions(GradientOptions):
    """Options of MNN discovery (defaults after the authors' Lorenz code where it has them).

    Attributes:
        degree: degree of the polynomial basis (with its constant).
        form: f of MNN eq. 37: "linear", "tanh" or "rational".
        horizon: points T per window.
        stride: windows start every ``stride`` samples.
        cycles: cycles of ``epochs / cycles`` epochs, each ending by thresholding.
        threshold: coefficients below this magnitude are zeroed at the end of every cycle.
        coefficient_lr: Adam's learning rate of ξ and η.
        ridge: Tikhonov term of the solver's normal equations.
        predict_rtol: relative tolerance of the rollout of the discovered equations.
        blowup: a rollout whose state exceeds this magnitude counts as diverged.
    """

    epochs: int = 400
    hidden: tuple[int, ...] = (128, 128)
    lr: float = 5e-4
    lr_decay: float = 1.0
    batch_size: int = 128
    degree: int = 2
    form: str = "linear"
    horizon: int = 20
    stride: int = 1
    cycles: int = 10
    threshold: float = 0.1
    coefficient_lr: float = 1e-2
    ridge: float = 1e-10
    predict_rtol: float = 1e-8
    blowup: float = 1e8

    def __post_init__(self) -> None:
        super().__post_init__()
        v.positive_int("degree", self.degree)
        v.choice("form", self.form, FORMS)
        if v.positive_int("horizon", self.horizon) < 3:
            raise ValueError(f"horizon must be >= 3, got {self.horizon}")
        v.positive_int("stride", self.stride)
        if v.positive_int("cycles", self.cycles) > self.epochs:
            raise ValueError(f"cycles must be <= epochs = {self.epochs}, got {self.cycles}")
        v.nonnegative_float("threshold", self.threshold)
        v.positive_float("coefficient_lr", self.coefficient_lr)
        v.nonnegative_float("ridge", self.ridge)
        v.positive_float("predict_rtol", self.predict_rtol)
        v.positive_float("blowup", self.blowup)
        if self.param_inputs:
            raise ValueError(f"param_inputs {self.param_inputs!r}: not used by MNN discovery")


class MNNDiscovery(Trainer):
    """MNN equation discovery; see the module docstring. Systems without inputs."""

    name = "mnn_discovery"
    options_class = MNNDiscoveryOptions
    predicts_while_fitting = False
    QUICK: dict[str, Any] = {"epochs": 20, "cycles": 2, "hidden": (32,)}

    @classmethod
    def not_applicable(cls, system: Any) -> str | None:
        if system.n_inputs:
            return "MNN discovery here fits autonomous systems (no known inputs)"
        return None

    # --- the model --------------------------------------------------------------------------------
    def _setup(self, system: Any, trajs: list[Trajectory]) -> None:
        import torch

        from .device import resolve_device, resolve_dtype

        o = self.options
        self.device, self.dtype = resolve_device(o.device), resolve_dtype(o.dtype)
        torch.manual_seed(o.seed)
        D, T = system.n_states, o.horizon
        ps = pysindy()
        x_all = np.vstack([tr.x for tr in trajs])
        self.library = ps.PolynomialLibrary(degree=o.degree).fit(x_all)
        self.names = tuple(system.state_names or (f"x{i}" for i in range(D)))
        self.terms = tuple(self.library.get_feature_names(list(self.names)))
        powers = np.asarray(self.library.powers_)
        self.den_columns = [k for k, t in enumerate(self.terms) if t != "1"]
        windows, steps = [], []
        for k, tr in enumerate(trajs):
            if tr.n_samples < T:
                raise ValueError(f"train[{k}] has {tr.n_samples} samples, fewer than horizon {T}")
            for s in range(0, tr.n_samples - T + 1, o.stride):
                windows.append(tr.x[s : s + T])
                steps.append(np.diff(tr.t[s : s + T]))
        spec = MLP((T * D, *o.hidden, T * D), o.activation, o.init)
        self.net = spec.torch_module(
            spec.init_weights(np.random.default_rng(o.seed)), dtype=self.dtype, device=self.device
        )
        K = len(self.terms)
        self.xi = torch.zeros((D, K), dtype=self.dtype, device=self.device, requires_grad=True)
        L = len(self.den_columns) if o.form == "rational" else 0
        self.eta = torch.zeros((D, L), dtype=self.dtype, device=self.device, requires_grad=True)
        self.mask_xi = torch.ones((D, K), dtype=self.dtype, device=self.device)
        self.mask_eta = torch.ones((D, L), dtype=self.dtype, device=self.device)
        self._powers = self._tensor(powers)
        self._W = self._tensor(np.asarray(windows))  # (N, T, D)
        self._H = self._tensor(np.asarray(steps))  # (N, T-1)
        self._solution_map = self._linear_solution_map(np.asarray(steps))
        self._spread = np.where((s := x_all.std(axis=0)) > 0, s, 1.0)

    def _linear_solution_map(self, steps: np.ndarray) -> Any:
        """With c = (0, 1) fixed, the relaxed solver's u is linear in (b, u(t_1)): where every
        window has the same steps it is u = G [b; u(t_1)] with one (T, T + 1) matrix G, the
        solver applied to unit right-hand sides (the same least-squares solution, computed
        once). None where the steps differ between windows."""
        import torch

        from .mnn_solver import solve_ode

        if not np.allclose(steps, steps[:1], rtol=1e-12, atol=0.0):
            return None
        T = steps.shape[1] + 1
        eye = torch.eye(T + 1, dtype=self.dtype, device=self.device)
        coeffs = eye.new_zeros((T + 1, T, 2))
        coeffs[..., 1] = 1.0
        h = self._tensor(steps[:1]).expand(T + 1, T - 1)
        with torch.no_grad():
            u = solve_ode(coeffs, eye[:, :T], eye[:, T:], h, True, self.options.ridge)[..., 0]
        return u.T.contiguous()  # (T, T + 1): column k is the solution for unit input k

    def _tensor(self, a: np.ndarray) -> Any:
        import torch

        return torch.as_tensor(np.asarray(a, dtype=float), dtype=self.dtype, device=self.device)

    def _basis(self, y: Any) -> Any:
        """Θ(y): (..., D) -> (..., K), the monomials of the library's powers."""
        return (y.unsqueeze(-2) ** self._powers).prod(dim=-1)

    def _rhs(self, y: Any) -> Any:
        """f(Θ(y) ξ): (..., D) -> (..., D) with the masked coefficients."""
        theta = self._basis(y)
        num = theta @ (self.xi * self.mask_xi).T
        if self.options.form == "tanh":
            return num.tanh()
        if self.options.form == "rational":
            phi = theta[..., self.den_columns]
            return num / (1.0 + phi @ (self.eta * self.mask_eta).T)
        return num

    def _loss(self, idx: Any) -> Any:
        import torch

        from .mnn_solver import solve_ode

        x = self._W[idx]  # (B, T, D)
        B, T, D = x.shape
        y = x + self.net(x.reshape(B, T * D)).reshape(B, T, D)
        b = self._rhs(y)  # (B, T, D)
        if self._solution_map is not None:
            inputs = torch.cat([b, x[:, :1, :]], dim=1)  # (B, T + 1, D): [b; u(t_1)]
            u = torch.einsum("tk,bkd->btd", self._solution_map, inputs)
        else:
            coeffs = x.new_zeros((B * D, T, 2))
            coeffs[..., 1] = 1.0  # u' = b
            u = (
                solve_ode(
                    coeffs,
                    b.transpose(1, 2).reshape(B * D, T),
                    x[:, 0, :].reshape(B * D, 1),
                    self._H[idx].repeat_interleave(D, dim=0),
                    central=True,
                    ridge=self.options.ridge,
                )[..., 0]
                .reshape(B, D, T)
                .transpose(1, 2)
            )
        return ((u - x) ** 2).mean() + ((y - x) ** 2).mean()

    # --- training ---------------------------------------------------------------------------------
    def fit(
        self,
        system: Any,
        train: Trajectory | Sequence[Trajectory],
        *,
        budget_s: float | None = None,
        callback: Callback | None = None,
    ) -> FitResult:
        """Train for ``epochs`` in ``cycles``, each ending by thresholding the coefficients;
        the final (sparse) coefficients are kept. ``callback`` is not called (no per-epoch
        protocol here)."""
        import torch

        trajs, budget_s = self._check_fit_args(system, train, budget_s)
        self.system = system
        start = time.perf_counter()
        self._setup(system, trajs)
        self._fitted = True
        o = self.options
        optimizer = torch.optim.Adam(
            [
                {"params": list(self.net.parameters()), "lr": o.lr},
                {"params": [self.xi, self.eta], "lr": o.coefficient_lr},
            ]
        )
        generator = torch.Generator().manual_seed(o.seed)
        per_cycle = o.epochs // o.cycles
        n = self._W.shape[0]
        history: list[tuple[float, int, float]] = []
        status, message, epoch = "success", "", 0
        try:
            for epoch in range(1, o.epochs + 1):
                total = 0.0
                for idx in torch.randperm(n, generator=generator).split(o.batch_size):
                    optimizer.zero_grad(set_to_none=True)
                    loss = self._loss(idx.to(self.device))
                    value = float(loss.detach())
                    if not math.isfinite(value):
                        status, message = "diverged", f"non-finite loss in epoch {epoch}"
                        break
                    loss.backward()
                    optimizer.step()
                    total += value * idx.numel()
                if status != "success":
                    break
                history.append((time.perf_counter() - start, epoch, total / n))
                if epoch % per_cycle == 0 or epoch == o.epochs:
                    self._threshold()
                if budget_s is not None and time.perf_counter() - start > budget_s:
                    status, message = "budget", f"wall-time budget ran out in epoch {epoch}"
                    self._threshold()
                    break
        except KeyboardInterrupt:
            status, message = "interrupted", f"interrupted in epoch {epoch}"
        if status == "success":
            message = "; ".join(self.equations())
        return FitResult(
            self.name,
            status,
            time.perf_counter() - start,
            epochs=len(history),
            n_params=self.n_params,
            best_loss=history[-1][2] if history else math.inf,
            history=history,
            message=message,
        )

    def _threshold(self) -> None:
        import torch

        with torch.no_grad():
            thr = self.options.threshold
            self.mask_xi *= (self.xi.abs() >= thr).to(self.dtype)
            self.mask_eta *= (self.eta.abs() >= thr).to(self.dtype)
            self.xi *= self.mask_xi
            self.eta *= self.mask_eta

    # --- reading it -------------------------------------------------------------------------------
    def coefficient_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """ξ (D, K) and η (D, L), zero outside the support."""
        self._require_fitted()
        xi = (self.xi * self.mask_xi).detach().cpu().double().numpy()
        eta = (self.eta * self.mask_eta).detach().cpu().double().numpy()
        return xi, eta

    def coefficients(self) -> dict[str, dict[str, float]]:
        """State -> term -> nonzero coefficient (denominator terms as ``"den:T"``)."""
        xi, eta = self.coefficient_arrays()
        out = {}
        for j, name in enumerate(self.names):
            row = {t: float(c) for t, c in zip(self.terms, xi[j], strict=True) if c != 0}
            den = [self.terms[k] for k in self.den_columns] if eta.shape[1] else []
            row.update({f"den:{t}": float(c) for t, c in zip(den, eta[j], strict=True) if c != 0})
            out[f"{name}'"] = row
        return out

    def equations(self) -> list[str]:
        from ...training._discovery.closed_form import linear_combination

        xi, eta = self.coefficient_arrays()
        lines = []
        for j, name in enumerate(self.names):
            num = linear_combination(xi[j], self.terms)
            if self.options.form == "tanh":
                num = f"tanh({num})"
            elif self.options.form == "rational":
                den_names = tuple(self.terms[k] for k in self.den_columns)
                den = linear_combination(eta[j], den_names)
                den = "1" if den == "0" else ("1 - " + den[1:] if den[0] == "-" else "1 + " + den)
                num = f"({num}) / ({den})"
            lines.append(f"{name}' = {num}")
        return lines

    def vector_field(self, x: np.ndarray) -> np.ndarray:
        """The discovered u' at states ``x`` (n, D)."""
        xi, eta = self.coefficient_arrays()
        x = np.atleast_2d(np.asarray(x, dtype=float))
        theta = np.asarray(self.library.transform(x), dtype=float)
        num = theta @ xi.T
        if self.options.form == "tanh":
            return np.tanh(num)
        if self.options.form == "rational":
            return num / (1.0 + theta[:, self.den_columns] @ eta.T)
        return num

    @property
    def n_params(self) -> int:
        """Trained parameters: the network's weights and the coefficients."""
        self._require_fitted()
        net = sum(p.numel() for p in self.net.parameters())
        return int(net + self.xi.numel() + self.eta.numel())

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        """Integrate the discovered equations from ``x0`` over ``t`` (LSODA)."""
        t, x0 = self._check_predict_args(t, x0)
        if t.size == 1:
            return x0[None, :].copy()
        try:
            return solve_bounded(
                lambda tt, x: self.vector_field(x)[0],
                t,
                x0,
                "LSODA",
                bound=self.options.blowup,
                what="the MNN rollout",
                rtol=self.options.predict_rtol,
                atol=self.options.predict_rtol * self._spread,
            )
        except SimulationError as exc:
            k = min(max(int(np.searchsorted(t, exc.t_fail, side="right")), 1), t.size - 1)
            raise DivergenceError(k, t[k], None, str(exc)) from None
