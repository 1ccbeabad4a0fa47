"""Figures for the experiments (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # headless; scripts and CI have no display
import matplotlib.pyplot as plt
import numpy as np


def trajectories(
    t_truth: np.ndarray,
    truth: np.ndarray,
    t_model: np.ndarray | None,
    model: np.ndarray | None,
    t_data: np.ndarray | None = None,
    data: np.ndarray | None = None,
    names: Sequence[str] = (),
    train_end: float | None = None,
    title: str = "",
) -> Any:
    """One panel per state: data (dots), truth (line), learned model (dashed)."""
    n = truth.shape[1]
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.2 * n), sharex=True, squeeze=False)
    for k, ax in enumerate(axes[:, 0]):
        if data is not None:
            ax.plot(t_data, data[:, k], ".", ms=2.5, color="0.6", label="data")
        ax.plot(t_truth, truth[:, k], "k-", lw=1.2, label="truth")
        if model is not None:
            ax.plot(t_model, model[:, k], "--", color="tab:red", lw=1.4, label="learned")
        if train_end is not None:
            ax.axvline(train_end, color="tab:blue", lw=0.8, ls=":")
        ax.set_ylabel(names[k] if k < len(names) else f"x{k}")
    axes[0, 0].legend(loc="upper right", fontsize=8, ncol=3)
    axes[-1, 0].set_xlabel("t [s]")
    if title:
        axes[0, 0].set_title(title)
    return fig


def vector_field_error(
    xs: np.ndarray,
    ys: np.ndarray,
    error: np.ndarray,
    path: np.ndarray | None = None,
    vmax: float = 6.0,
    title: str = "",
) -> Any:
    """The 2-norm error between learned and true vector fields on a grid (paper Fig. 8);
    values above ``vmax`` are left white."""
    fig, ax = plt.subplots(figsize=(6, 5))
    masked = np.ma.masked_greater(error, vmax)
    mesh = ax.pcolormesh(xs, ys, masked, shading="auto", cmap="viridis", vmin=0, vmax=vmax)
    fig.colorbar(mesh, ax=ax, label="‖f_learned − f_true‖₂")
    if path is not None:
        ax.plot(path[:, 0], path[:, 1], "w--", lw=1.2, label="true trajectory")
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(title or "vector-field error")
    return fig


def objective_history(curves: dict[str, np.ndarray], title: str = "") -> Any:
    """Objective against wall time, one curve per run or phase (paper Fig. 2).
    Each curve is an (n, 2) array of (wall time [s], objective)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, c in curves.items():
        c = np.asarray(c, dtype=float)
        if c.size:
            ax.semilogy(c[:, 0], np.maximum(c[:, 1], 1e-300), "-o", ms=2, label=label)
    ax.set_xlabel("wall time [s]")
    ax.set_ylabel("objective")
    ax.grid(True, which="both", alpha=0.3)
    if len(curves) > 1:
        ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def percentile_bands(
    t: np.ndarray, runs: np.ndarray, truth: np.ndarray, names: Sequence[str] = (), title: str = ""
) -> Any:
    """Median and 5-95 / 25-75 % bands over many runs (runs: (n_runs, n_t, n_states))."""
    n = truth.shape[1]
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.2 * n), sharex=True, squeeze=False)
    for k, ax in enumerate(axes[:, 0]):
        r = runs[:, :, k]
        p5, p25, p50, p75, p95 = np.nanpercentile(r, [5, 25, 50, 75, 95], axis=0)
        ax.fill_between(t, p5, p95, color="tab:red", alpha=0.15, label="5–95 %")
        ax.fill_between(t, p25, p75, color="tab:red", alpha=0.3, label="25–75 %")
        ax.plot(t, p50, color="tab:red", lw=1, label="median")
        ax.plot(t, truth[:, k], "k--", lw=1, label="truth")
        ax.set_ylabel(names[k] if k < len(names) else f"x{k}")
    axes[0, 0].legend(fontsize=8, ncol=4, loc="upper right")
    axes[-1, 0].set_xlabel("t [s]")
    if title:
        axes[0, 0].set_title(title)
    return fig
