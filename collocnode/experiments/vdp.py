"""Van der Pol neural ODE trained by collocation (Langenkamp et al. §4.2, eq. 21)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validation as v
from .. import problems
from ..io import save_figure, write_json
from ..models import NeuralODE
from ..nn import MLP
from ..simulate import SimulationError
from ..solve import solve
from ..training import TrainingProblem, TrainingSolution
from ..transcription import IpoptOptions, RadauIIA

T_TRAIN = 7.0  # training horizon [s] (paper: "a little over one period")
T_EXTRAPOLATE = 20.0  # end of the extrapolation window [s]


@dataclass(frozen=True)
class VdPOptions:
    """Settings of the paper's Van der Pol experiment; defaults reproduce §4.2.

    ``regularization=None`` picks the paper's λ: 1e-4, or 1e-3 for σ >= 0.5.
    ``spectral`` > 0 replaces the mesh by one interval with that many fLGR nodes.
    """

    noise: float = 0.0
    seed: int = 0
    intervals: int = 500
    stages: int = 5
    spectral: int = 0
    regularization: float | None = None
    hidden: int = 5
    activation: str = "sigmoid"
    tol: float = 1e-7
    max_iter: int = 200
    backend: str = "casadi"
    jit: bool = True
    print_level: int = 5

    def __post_init__(self) -> None:
        v.nonnegative_float("noise", self.noise)
        v.nonnegative_int("seed", self.seed)
        v.positive_int("intervals", self.intervals)
        v.positive_int("stages", self.stages)
        v.nonnegative_int("spectral", self.spectral)
        v.positive_int("hidden", self.hidden)
        v.positive_float("tol", self.tol)
        v.positive_int("max_iter", self.max_iter)
        if self.regularization is not None:
            v.nonnegative_float("regularization", self.regularization)

    @property
    def lam(self) -> float:
        if self.regularization is not None:
            return self.regularization
        return 1e-3 if self.noise >= 0.5 else 1e-4

    def algorithm(self) -> RadauIIA:
        ipopt = IpoptOptions(
            tol=self.tol, max_iter=self.max_iter, backend=self.backend, print_level=self.print_level
        )
        if self.spectral:
            return RadauIIA.spectral(self.spectral, jit=self.jit, ipopt=ipopt)
        return RadauIIA(self.intervals, self.stages, jit=self.jit, ipopt=ipopt)


def seeds(seed: int) -> tuple[int, int]:
    """Independent seeds for the data noise and the initial weights of run ``seed``."""
    a, b = np.random.SeedSequence(seed).spawn(2)
    return int(a.generate_state(1)[0]), int(b.generate_state(1)[0])


def train(opts: VdPOptions) -> tuple[TrainingSolution, Any]:
    """Generate the noisy data of the paper and train the two 2-5-5-1 networks (eq. 21)."""
    system = problems.get("vdp")
    noise_seed, weight_seed = seeds(opts.seed)
    split = system.generate(noise=opts.noise, seed=noise_seed)
    nets = [MLP((2, opts.hidden, opts.hidden, 1), opts.activation) for _ in range(2)]
    problem = TrainingProblem(
        NeuralODE(nets, state_names=system.state_names),
        split.train,
        regularization=opts.lam,
        initial_state=system.x0,  # eqs. 21d-e
        state_guess="constant",  # the paper's trivial guess: x(t0) at every node
    )
    return solve(problem, opts.algorithm(), seed=weight_seed), split


def evaluate(sol: TrainingSolution, grid: int = 61) -> dict[str, Any]:
    """Re-simulate the learned ODE from x(0) on [0, 20] against the noise-free truth.

    ``train_rmse`` covers [0, 7] and ``extrapolation_rmse`` (7, 20] (same simulation);
    ``vector_field_rmse`` is the RMS of ‖f_learned − f_true‖₂ on a grid over the box
    [-2.5, 2.5] x [-3, 3] that holds the limit cycle.
    """
    system = problems.get("vdp")
    t = np.linspace(0.0, T_EXTRAPOLATE, 2001)
    truth = system.simulate(t)
    out: dict[str, Any] = {"simulation_error": None}
    try:
        learned = sol.simulate(t, system.x0, rtol=1e-10, atol=1e-10).x
        err = learned - truth.x
        tr = t <= T_TRAIN
        out["train_rmse"] = float(np.sqrt(np.mean(err[tr] ** 2)))
        out["extrapolation_rmse"] = float(np.sqrt(np.mean(err[~tr] ** 2)))
    except SimulationError as exc:
        learned = None
        out.update(train_rmse=None, extrapolation_rmse=None, simulation_error=str(exc))
    xs, ys = np.linspace(-2.5, 2.5, grid), np.linspace(-3.0, 3.0, grid)
    X, Y = np.meshgrid(xs, ys)
    pts = np.column_stack([X.ravel(), Y.ravel()])
    fmodel = sol.model.function
    f_learned = np.asarray(
        fmodel.map(pts.shape[0])(
            pts.T, sol.p, np.zeros((0, pts.shape[0])), np.zeros((1, pts.shape[0]))
        )[0]
    ).T
    f_true = system.rhs(0.0, pts)
    field_err = np.linalg.norm(f_learned - f_true, axis=1).reshape(X.shape)
    out["vector_field_rmse"] = float(np.sqrt(np.mean(field_err**2)))
    out["_arrays"] = dict(t=t, truth=truth.x, learned=learned, xs=xs, ys=ys, field=field_err)
    return out


def run(opts: VdPOptions, out_dir: str | Path) -> dict[str, Any]:
    """Train, evaluate, and write ``result.json`` and the plots into ``out_dir``."""
    from .. import plotting

    out_dir = Path(out_dir)
    sol, split = train(opts)
    metrics = evaluate(sol)
    arrays = metrics.pop("_arrays")
    result = {
        "problem": "vdp",
        "settings": asdict(opts) | {"regularization": opts.lam},
        **sol.solution.to_dict(),
        "n_params": sol.model.n_params,
        **metrics,
    }
    write_json(out_dir / "result.json", result)
    t = arrays["t"]
    save_figure(
        plotting.trajectories(
            t,
            arrays["truth"],
            t if arrays["learned"] is not None else None,
            arrays["learned"],
            split.train.t,
            split.train.x,
            names=("x", "y"),
            train_end=T_TRAIN,
            title=f"Van der Pol, σ = {opts.noise}: data, truth, learned neural ODE",
        ),
        out_dir / "trajectories.png",
    )
    save_figure(
        plotting.vector_field_error(
            arrays["xs"],
            arrays["ys"],
            arrays["field"],
            path=arrays["truth"],
            title=f"‖NN − f‖₂, σ = {opts.noise}",
        ),
        out_dir / "vector_field_error.png",
    )
    hist = np.array([(h[0], h[2]) for h in sol.history])
    save_figure(
        plotting.objective_history({"IPOPT": hist}, title="objective vs wall time"),
        out_dir / "objective.png",
    )
    return result
