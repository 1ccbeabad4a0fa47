"""Figures of a comparison run: rollouts against the truth, time vs error, error vs time.

The error is the report's ``target_metric`` (the generic test MSE, or e.g. the quarter vehicle's
test-road acceleration RMSE); rows that saved accelerations (``a_pred`` in their ``.npz``) get
``accelerations.png`` instead of ``rollouts.png``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..io import save_figure


def write_plots(report: dict[str, Any], out_dir: str | Path) -> list[Path]:
    """``rollouts.png``, ``time_vs_error.png`` and (when curves were recorded)
    ``error_vs_time.png`` from ``compare.json``'s rows and the ``<method>.npz`` files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    rows = report["rows"]
    n_train = report["meta"]["n_train"]
    metric = report["meta"].get("target_metric", "test_mse")
    label = metric.replace("_", " ").replace("mse", "MSE").replace("rmse", "RMSE")
    written = []
    preds, accs = {}, {}
    for row in rows:
        f = out / f"{row['method']}.npz"
        if f.exists():
            with np.load(f) as z:
                if "a_pred" in z:
                    accs[row["method"]] = (z["t"], z["a_data"], z["a_pred"])
                elif "x_pred" in z:
                    preds[row["method"]] = (z["t"], z["x_data"], z["x_pred"])
    if accs:
        written.append(_accelerations(plt, accs, report, out))
    if preds:
        t, x, _ = next(iter(preds.values()))
        n_show = min(x.shape[1], 4)
        fig, axes = plt.subplots(n_show, 1, figsize=(8, 2.2 * n_show), sharex=True, squeeze=False)
        window = slice(max(n_train - 1, 0), None)
        for k, ax in enumerate(axes[:, 0]):
            ax.plot(t[window], x[window, k], "k-", lw=2, label="truth")
            for name, (tm, _, xp) in preds.items():
                ax.plot(tm[window], xp[window, k], "--", lw=1.2, label=name)
            ax.set_ylabel(f"x{k}")
        axes[0, 0].legend(fontsize=7, ncol=4)
        axes[-1, 0].set_xlabel("t [s] (extrapolation window)")
        axes[0, 0].set_title(f"{report['problem']}: rollouts beyond the training window")
        written.append(save_figure(fig, out / "rollouts.png"))
    scored = [r for r in rows if r.get(metric) is not None and r.get("train_time_s")]
    if scored:
        fig, ax = plt.subplots(figsize=(6, 4))
        for r in scored:
            ax.scatter(r["train_time_s"], r[metric], s=40)
            ax.annotate(
                r["method"],
                (r["train_time_s"], r[metric]),
                fontsize=8,
                xytext=(4, 4),
                textcoords="offset points",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("training wall time [s]")
        ax.set_ylabel(label)
        ax.set_title(f"{report['problem']}: time vs error")
        ax.grid(True, which="both", alpha=0.3)
        written.append(save_figure(fig, out / "time_vs_error.png"))
    curves = {r["method"]: r["curve"] for r in rows if r.get("curve")}
    if curves:
        fig, ax = plt.subplots(figsize=(6, 4))
        for name, c in curves.items():
            c = np.array([(a, b) for a, b in c if b is not None], dtype=float)
            if c.size:
                ax.loglog(c[:, 0], c[:, 1], "-o", ms=2, label=name)
        target = next((r.get(metric) for r in rows if r["method"] == "collocation"), None)
        if target is not None:
            ax.axhline(target, color="k", ls=":", lw=1, label=f"collocation's {label}")
        ax.set_xlabel("training wall time [s]")
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
        written.append(save_figure(fig, out / "error_vs_time.png"))
    return written


def _accelerations(plt: Any, accs: dict[str, Any], report: dict[str, Any], out: Path) -> Path:
    """a_b and a_w on the test road: the truth and every method, over 4-8 s (the window of the
    QVM paper's Fig. 4) when the horizon has it, else over the whole horizon."""
    t, a_true, _ = next(iter(accs.values()))
    window = (t >= 4.0) & (t <= 8.0) if t[-1] >= 8.0 else np.ones(t.size, dtype=bool)
    fig, axes = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    for k, (ax, name) in enumerate(zip(axes, ("a_b", "a_w"), strict=True)):
        ax.plot(t[window], a_true[window, k], "k-", lw=1.5, label="truth")
        for method, (tm, _, ap) in accs.items():
            ax.plot(tm[window], ap[window, k], "--", lw=1, label=method)
        ax.set_ylabel(f"{name} [m/s²]")
    axes[0].legend(fontsize=7, ncol=4)
    axes[-1].set_xlabel("t [s]")
    axes[0].set_title(f"{report['problem']}: accelerations on the unseen test road")
    return save_figure(fig, out / "accelerations.png")
