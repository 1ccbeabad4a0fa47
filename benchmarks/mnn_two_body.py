#!/usr/bin/env python
"""MNN §5.4 (Figure 5, App. A.4, B.4): a mass ratio and a force law from one two-body trajectory.

Two bodies in the plane under Newtonian gravity, G = 1, masses m₁ = 2 and m₂ = 1 (the paper's
ground-truth ratio 2), the centre of mass at rest, separation 1 and a relative speed 1.2 times
the circular one at t = 0 (eccentricity 0.44); one trajectory of four orbital periods sampled at
``--steps`` points (the paper: 40,000 steps of a random trajectory; its other settings are
lost), noise-free. Each method models Newton's second and third laws, m₁ q₁'' = F,
m₂ q₂'' = -F, with the force F(r) a network of the separation r = q₂ - q₁ (two 16-unit tanh
layers here, the paper's 2 x 1024), and learns the masses up to a common factor:

- ``collocation``: a hybrid model with m₁ = 1 fixed and m₂ a fitted parameter, trained by
  collocation (500 x 3 Radau IIA at 2001 samples) from a regression warm start; then the
  force block's closed form by sparse regression on r_i / |r|^k
  (k = 1..4, a custom pysindy library), re-fitted by collocation (inverse-square law found
  when the term r / |r|³ alone is kept);
- ``mnn``: the paper's MNN: per body and axis a second-order ODE c₂ u'' = ±F(r_t) with a
  constant, learned c₂ (the mass), solved over windows of ``--horizon`` points by the relaxed
  solver from the window's first state, loss on the positions;
- ``sonode``: the second-order neural ODE baseline with the same force network and masses,
  integrated by RK4 over the same windows, loss on the positions.

Scores (Figure 5): the mass ratio m₁ / m₂; the force error as the paper normalises it, each
force divided by the magnitude of its own first-step force (forces are determined up to a
factor), mean over the trajectory of the squared difference; and the cosine similarity of the
learned and true force directions, averaged over the trajectory. The learned forces are
evaluated at the true separations.

    python benchmarks/mnn_two_body.py [--methods collocation,mnn,sonode] [--steps 2001]
        [--epochs 50] [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import Any

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp

from collocnode import (
    Discovered,
    HybridModel,
    IpoptOptions,
    Parameter,
    RadauIIA,
    SparseRegression,
    TrainingProblem,
    Trajectory,
    WarmStarted,
    solve,
)
from collocnode.nn import MLP
from collocnode.tools import _machine as machine
from collocnode.tools._io import write_json

M1, M2 = 2.0, 1.0
MU = M1 + M2  # G (m1 + m2) with G = 1
STATE_NAMES = ("x1", "y1", "x2", "y2", "vx1", "vy1", "vx2", "vy2")
HIDDEN = (16, 16)


def trajectory(steps: int) -> tuple[Trajectory, float]:
    """The two-body trajectory over four periods (states q₁, q₂, q₁', q₂') and the period."""
    r0, v0 = np.array([1.0, 0.0]), np.array([0.0, 1.2 * np.sqrt(MU)])
    q1, q2 = -M2 / MU * r0, M1 / MU * r0
    v1, v2 = -M2 / MU * v0, M1 / MU * v0
    energy = 0.5 * v0 @ v0 - MU / np.linalg.norm(r0)
    period = 2 * np.pi * (-MU / (2 * energy)) ** 1.5 / np.sqrt(MU)

    def rhs(_, s):
        r = s[2:4] - s[0:2]
        f = M1 * M2 * r / np.linalg.norm(r) ** 3  # on body 1
        return np.concatenate([s[4:8], f / M1, -f / M2])

    t = np.linspace(0.0, 4 * period, steps)
    x0 = np.concatenate([q1, q2, v1, v2])
    sol = solve_ivp(rhs, (0, t[-1]), x0, t_eval=t, method="DOP853", rtol=1e-12, atol=1e-12)
    return Trajectory(t, sol.y.T, state_names=STATE_NAMES), float(period)


def true_force(r: np.ndarray) -> np.ndarray:
    return M1 * M2 * r / np.linalg.norm(r, axis=1, keepdims=True) ** 3


def scores(force: np.ndarray, r: np.ndarray, ratio: float) -> dict[str, float]:
    """Mass ratio, normalised force MSE and mean cosine similarity (see the docstring)."""
    true = true_force(r)
    ft = true / np.linalg.norm(true[0])
    fl = force / max(np.linalg.norm(force[0]), 1e-300)
    cos = np.sum(ft * fl, axis=1) / (
        np.linalg.norm(ft, axis=1) * np.maximum(np.linalg.norm(fl, axis=1), 1e-300)
    )
    return {
        "mass_ratio": float(ratio),
        "mass_ratio_error": float(abs(ratio - M1 / M2) / (M1 / M2)),
        "force_mse": float(np.mean(np.sum((fl - ft) ** 2, axis=1))),
        "cosine_similarity": float(np.mean(cos)),
    }


# --- collocation, then the force's closed form -------------------------------------------------
def physics(x, u, t, blocks, params):
    f = blocks["force"](ca.vertcat(x[2] - x[0], x[3] - x[1]))
    return ca.vertcat(x[4:8], f / params["m1"], -f / params["m2"])


def inverse_powers() -> Any:
    """r_x / |r|^k and r_y / |r|^k for k = 1..4: a library in which Newton's law is one term per
    axis."""
    import pysindy as ps

    def term(k: int, axis: int) -> Any:
        # two arguments exactly: pysindy's CustomLibrary applies a function to every pair of
        # inputs by its argument count, so a default argument (k=k) would ask for triples
        return lambda a, b: (a, b)[axis] / (a**2 + b**2) ** (k / 2)

    def name(k: int, axis: int) -> Any:
        return lambda a, b: f"{(a, b)[axis]}/|r|^{k}"

    pairs = [(k, axis) for k in range(1, 5) for axis in (0, 1)]
    return ps.CustomLibrary([term(*p) for p in pairs], [name(*p) for p in pairs])


def run_collocation(data: Trajectory, args: argparse.Namespace) -> dict[str, Any]:
    scale = float(np.std(data.x[:, 2:4] - data.x[:, 0:2]))
    net = MLP((2, *HIDDEN, 2), "tanh", input_scale=scale)
    model = HybridModel(
        n_states=8,
        blocks={"force": net},
        rhs=physics,
        parameters={"m1": Parameter(1.0), "m2": Parameter(1.0, fit=True, lb=0.01, ub=100.0)},
        state_names=STATE_NAMES,
    )
    problem = TrainingProblem(
        model, data, regularization=1e-6, initial_state="data", state_guess="data"
    )
    intervals = (data.n_samples - 1) // 4
    # AMD: on this KKT system MUMPS's automatic choice took 19.5 s of IPOPT time for the first
    # four iterations at 401 samples (METIS 2.7 s, AMD 0.4 s) and 10.9 s for three at 2001 (AMD
    # 9.4 s); measured from random weights with IPOPT's print_timing_statistics, one run each,
    # (2, 8, 8, 2) and (2, 16, 16, 2) networks. From random weights IPOPT's dual infeasibility
    # grows to 1e11 within three iterations; the regression warm start gives it a force to
    # begin with.
    leaf = RadauIIA(
        intervals,
        3,
        ipopt=IpoptOptions(
            tol=1e-8, max_iter=60 if args.quick else 1000, mumps_ordering="amd", print_level=0
        ),
    )
    regression = SparseRegression(inverse_powers(), input_names=("rx", "ry"), criterion="aicc")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solve(problem, Discovered(WarmStarted(leaf), "force", regression), seed=0)
    elapsed = time.perf_counter() - start
    r = sol.record(Discovered)
    rel = data.x[:, 2:4] - data.x[:, 0:2]
    net_params = r.trained.params
    network_force = net.numpy(rel, net_params["force"])
    out = {
        "train_time_s": elapsed,
        "wall_time_s": dict(r.times),
        "status": r.trained.status.value,
        "network": scores(network_force, rel, 1.0 / net_params["m2"]),
        "network_consistent": r.trained.consistency.consistent,
        "error": r.error,
    }
    if r.refitted is not None:
        closed = sol
        out["closed_form"] = {
            "equations": r.refitted.equations(),
            "discovered": r.found.equations(),
            "status": closed.status.value,
            "consistent": closed.consistency.consistent,
            **scores(r.refitted(rel), rel, 1.0 / closed.params["m2"]),
        }
    return out


# --- the PyTorch models: MNN and the second-order neural ODE -----------------------------------
class _Newton:
    """The force network and the two masses (log-parameterised), shared by MNN and SONODE."""

    def __init__(self, seed: int, dtype: Any) -> None:
        import torch

        spec = MLP((2, *HIDDEN, 2), "tanh")
        self.force = spec.torch_module(spec.init_weights(np.random.default_rng(seed)), dtype=dtype)
        self.log_m = torch.zeros(2, dtype=dtype, requires_grad=True)

    def parameters(self) -> list[Any]:
        return [*self.force.parameters(), self.log_m]

    def masses(self) -> Any:
        return self.log_m.exp()


def _windows(data: Trajectory, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    x = data.x
    idx = np.arange(x.shape[0] - horizon + 1)[:, None] + np.arange(horizon)
    return x[idx], np.diff(data.t)[idx[:, :-1]]


def _train_torch(kind: str, data: Trajectory, args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from collocnode.compare.methods.mnn_solver import solve_ode
    from collocnode.tools._fixed_step import integrate

    torch.manual_seed(0)
    torch.set_num_threads(1)
    dtype = torch.float64
    W, H = (torch.as_tensor(a, dtype=dtype) for a in _windows(data, args.horizon))
    newton = _Newton(0, dtype)
    optimizer = torch.optim.Adam(newton.parameters(), lr=args.lr)
    generator = torch.Generator().manual_seed(0)
    start = time.perf_counter()
    epochs = 3 if args.quick else args.epochs
    B, T = 64, args.horizon
    for _ in range(epochs):
        for idx in torch.randperm(W.shape[0], generator=generator).split(B):
            w, h = W[idx], H[idx]  # (b, T, 8), (b, T-1)
            b = w.shape[0]
            m = newton.masses()
            if kind == "mnn":
                f = newton.force(w[..., 2:4] - w[..., 0:2])  # (b, T, 2), at the data's positions
                rhs = torch.stack([f[..., 0], f[..., 1], -f[..., 0], -f[..., 1]], dim=1)
                mass = torch.stack([m[0], m[0], m[1], m[1]])  # per body and axis
                coeffs = torch.zeros((b, 4, T, 3), dtype=dtype)
                coeffs = (
                    coeffs
                    + torch.stack([torch.zeros_like(mass), torch.zeros_like(mass), mass], dim=-1)[
                        None, :, None, :
                    ]
                )
                iv = torch.stack([w[:, 0, 0:4], w[:, 0, 4:8]], dim=-1)  # (b, 4, 2)
                u = solve_ode(
                    coeffs.reshape(b * 4, T, 3),
                    rhs.reshape(b * 4, T),
                    iv.reshape(b * 4, 2),
                    h.repeat_interleave(4, dim=0),
                    ridge=1e-10,
                )[..., 0].reshape(b, 4, T)
                pred = u.transpose(1, 2)  # positions (b, T, 4)
            else:

                def rhs_fn(_, s, m=m):
                    f = newton.force(s[..., 2:4] - s[..., 0:2])
                    return torch.cat([s[..., 4:8], f / m[0], -f / m[1]], dim=-1)

                t = np.concatenate([[0.0], np.cumsum(h[0].numpy())])  # uniform samples
                pred = integrate(rhs_fn, t, w[:, 0], "rk4")[..., 0:4].transpose(0, 1)
            loss = ((pred - w[..., 0:4]) ** 2).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    elapsed = time.perf_counter() - start
    rel = data.x[:, 2:4] - data.x[:, 0:2]
    with torch.no_grad():
        force = newton.force(torch.as_tensor(rel, dtype=dtype)).numpy()
        m = newton.masses().numpy()
    return {"train_time_s": elapsed, "epochs": epochs, **scores(force, rel, m[0] / m[1])}


def run_mnn(data: Trajectory, args: argparse.Namespace) -> dict[str, Any]:
    return _train_torch("mnn", data, args)


def run_sonode(data: Trajectory, args: argparse.Namespace) -> dict[str, Any]:
    return _train_torch("sonode", data, args)


METHODS = {"collocation": run_collocation, "mnn": run_mnn, "sonode": run_sonode}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="collocation,mnn,sonode")
    ap.add_argument("--steps", type=int, default=2001)
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--horizon", type=int, default=10)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--quick", action="store_true", help="a short smoke run (not the results)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    methods = args.methods.split(",")
    for m in methods:
        if m not in METHODS:
            ap.error(f"unknown method {m!r}; valid: {', '.join(METHODS)}")
    steps = min(args.steps, 401) if args.quick else args.steps
    data, period = trajectory(steps)
    record = {
        **machine.run_record("benchmarks/mnn_two_body.py", argv),
        "quick": args.quick,
        "config": {
            "masses": [M1, M2],
            "steps": steps,
            "period": period,
            "horizon": args.horizon,
            "epochs": args.epochs,
            "lr": args.lr,
            "hidden": list(HIDDEN),
        },
        "methods": {},
    }
    for name in methods:
        try:
            row = METHODS[name](data, args)
        except Exception as exc:
            row = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
        record["methods"][name] = row
        print(name, {k: v for k, v in row.items() if k != "wall_time_s"}, flush=True)
    if args.json:
        write_json(args.json, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
