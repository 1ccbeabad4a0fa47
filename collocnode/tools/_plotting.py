"""Every figure of the library: experiments, comparisons and the quarter vehicle.

Each function takes arrays and returns a matplotlib ``Figure`` that belongs to no GUI backend
(nothing global is switched; save it with `collocnode.tools._io.save_figure`, which also works
headless). Units are those of the arrays, times in seconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import _style as style


def _figure(figsize: tuple[float, float]) -> Any:
    """A figure whose layout keeps every label inside it and apart (constrained layout)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def _window(t: np.ndarray, window: tuple[float, float] | None) -> np.ndarray:
    """Samples of ``t`` inside ``window`` [s]; all of them when ``t`` ends before the window."""
    if window is None or t[-1] < window[1]:
        return np.ones(t.size, dtype=bool)
    return (t >= window[0]) & (t <= window[1])


# --- experiments -----------------------------------------------------------------------------
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
    band: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    band_label: str = "95 % band",
) -> Any:
    """One panel per state: data (dots), truth (line), learned model (dashed).

    ``truth`` is ``(len(t_truth), n_states)``, ``model`` and ``data`` likewise on their times;
    ``train_end`` [s] shades the training window and marks its end. ``band`` = (t, lower,
    upper), the bounds ``(len(t), n_states)``, shades a prediction band around the learned model
    (only where it is finite)."""
    n = truth.shape[1]
    fig = _figure((8, 2.2 * n))
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)
    for k, ax in enumerate(axes[:, 0]):
        if data is not None:
            ax.plot(t_data, data[:, k], ".", ms=2.5, color=style.DATA, label="data")
        ax.plot(t_truth, truth[:, k], "-", color=style.TRUTH, lw=1.2, label="truth")
        if band is not None:
            tb, lo, hi = band
            finite = np.isfinite(lo[:, k]) & np.isfinite(hi[:, k])
            ax.fill_between(
                tb,
                lo[:, k],
                hi[:, k],
                where=finite,
                color=style.LEARNED,
                alpha=0.2,
                lw=0,
                label=band_label,
            )
        if model is not None:
            ax.plot(t_model, model[:, k], "--", color=style.LEARNED, lw=1.4, label="learned")
        if train_end is not None:
            ax.axvspan(t_truth[0], train_end, color=style.TRAINING_SHADE, lw=0, zorder=0)
            ax.axvline(train_end, color=style.BOUNDARY, lw=0.9, ls="--")
        ax.set_ylabel(names[k] if k < len(names) else f"x{k}")
    axes[0, 0].legend(loc="upper right", fontsize=8, ncol=3)
    axes[-1, 0].set_xlabel("t [s]")
    if title:
        axes[0, 0].set_title(title)
    return fig


def regularization_path(
    lambdas: Sequence[float],
    errors: Sequence[float],
    consistent: Sequence[bool],
    chosen: float,
) -> Any:
    """Held-out error against λ (both logarithmic): filled markers where the model passed the
    consistency check, hollow where it did not, the chosen λ marked; failed re-simulations
    (inf) drawn at the top edge."""
    fig = _figure((6, 4))
    ax = fig.subplots()
    lam = np.asarray(lambdas, dtype=float)
    err = np.asarray(errors, dtype=float)
    finite = np.isfinite(err)
    top = float(err[finite].max()) * 3 if finite.any() else 1.0
    shown = np.where(finite, err, top)
    ok = np.asarray(consistent, dtype=bool)
    ax.plot(lam, shown, color="0.6", lw=1, zorder=1)
    ax.scatter(lam[ok], shown[ok], s=40, color="C0", label="consistent", zorder=2)
    ax.scatter(
        lam[~ok],
        shown[~ok],
        s=40,
        facecolors="none",
        edgecolors="C3",
        label="inconsistent",
        zorder=2,
    )
    ax.axvline(chosen, color="C2", ls="--", lw=1, label=f"chosen λ = {chosen:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("λ (weight penalty)")
    ax.set_ylabel("held-out error (per column spread)")
    style.axis(ax)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    return fig


def vector_field_error(
    xs: np.ndarray,
    ys: np.ndarray,
    error: np.ndarray,
    path: np.ndarray | None = None,
    vmax: float = 6.0,
    title: str = "",
    path_label: str = "true trajectory",
) -> Any:
    """The 2-norm error between learned and true vector fields on a grid (paper Fig. 8);
    ``error`` is ``(len(ys), len(xs))`` [state units / s]; values above ``vmax`` are white, which
    the colour bar's white end says (white is not "no error": the error there is largest);
    ``path`` ``(n, 2)`` is drawn over it as ``path_label``."""
    from matplotlib import colormaps

    fig = _figure((6, 5))
    ax = fig.subplots()
    cmap = colormaps["viridis"].with_extremes(over="white")
    mesh = ax.pcolormesh(xs, ys, error, shading="auto", cmap=cmap, vmin=0, vmax=vmax)
    fig.colorbar(
        mesh, ax=ax, extend="max", label=f"‖f_learned(x, y) − f_true(x, y)‖₂ (white: > {vmax:g})"
    )
    if path is not None:
        ax.plot(path[:, 0], path[:, 1], "-", color="white", lw=1.0, label=path_label)
        # a dark box: the white line of the path shows in it
        ax.legend(loc="upper right", fontsize=8, facecolor="0.3", labelcolor="white")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(title or "error of the learned vector field")
    return fig


def iteration_history(
    history: np.ndarray,
    objective_label: str = "objective",
    title: str = "",
    violation_label: str = "constraint violation\n(inf_pr)",
) -> Any:
    """IPOPT's iterates: the objective (top) and the constraint violation (bottom, IPOPT's
    primal infeasibility inf_pr: the largest residual of the collocation equations and
    constraints, on a logarithmic axis) against the iteration.

    ``history`` is ``(n, 5)``: a solution's ``history`` rows (wall time [s], iteration,
    objective, inf_pr, inf_du). An iterate that violates the collocation equations is not a
    trajectory of the model, and its objective is no fit of one: IPOPT lowers the violation
    first, and the objective may rise meanwhile (the bottom panel shows why). The objective's
    axis is logarithmic where it is positive and spans more than a decade, linear otherwise
    (where a logarithmic axis would label one tick or none)."""
    history = np.asarray(history, dtype=float).reshape(-1, 5)
    it, objective, inf_pr = history[:, 1], history[:, 2], history[:, 3]
    fig = _figure((6, 5))
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.plot(it, objective, "-o", ms=2, color=style.LEARNED)
    positive = objective.size > 0 and bool(np.all(objective > 0))
    if positive and objective.max() > 10 * objective.min():
        top.set_yscale("log")
    top.set_ylabel(objective_label)
    top.set_title(title or "IPOPT iterations: objective and constraint violation")
    bottom.semilogy(it, np.maximum(inf_pr, 1e-300), "-o", ms=2, color=style.TRUTH)
    bottom.set_ylabel(violation_label)
    bottom.set_xlabel("IPOPT iteration")
    for ax in (top, bottom):
        style.axis(ax)
        ax.grid(True, which="both", alpha=0.3)
    return fig


def objective_history(curves: Mapping[str, np.ndarray], title: str = "") -> Any:
    """Objective against wall time, one curve per run or phase (paper Fig. 2).
    Each curve is an (n, 2) array of (wall time [s], objective)."""
    fig = _figure((6, 4))
    ax = fig.subplots()
    for label, c in curves.items():
        c = np.asarray(c, dtype=float)
        if c.size:
            ax.semilogy(c[:, 0], np.maximum(c[:, 1], 1e-300), "-o", ms=2, label=label)
    ax.set_xlabel("wall time [s]")
    ax.set_ylabel("objective")
    style.axis(ax)
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
    fig = _figure((8, 2.2 * n))
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)
    for k, ax in enumerate(axes[:, 0]):
        r = runs[:, :, k]
        p5, p25, p50, p75, p95 = np.nanpercentile(r, [5, 25, 50, 75, 95], axis=0)
        ax.fill_between(t, p5, p95, color=style.LEARNED, alpha=0.15, label="5–95 %")
        ax.fill_between(t, p25, p75, color=style.LEARNED, alpha=0.3, label="25–75 %")
        ax.plot(t, p50, color=style.LEARNED, lw=1, label="median")
        ax.plot(t, truth[:, k], "k--", lw=1, label="truth")
        ax.set_ylabel(names[k] if k < len(names) else f"x{k}")
    axes[0, 0].legend(fontsize=8, ncol=4, loc="upper right")
    axes[-1, 0].set_xlabel("t [s]")
    if title:
        axes[0, 0].set_title(title)
    return fig


# --- comparisons ------------------------------------------------------------------------------
def rollout_comparison(
    t: np.ndarray,
    truth: np.ndarray,
    predictions: Mapping[str, np.ndarray],
    names: Sequence[str] = (),
    train_end: float | None = None,
    max_states: int = 4,
    title: str = "",
) -> Any:
    """The first ``max_states`` states of the truth ``(n, n_states)`` and of each method's
    rollout (same shape, on the same times ``t``) over the whole horizon, one panel per state
    labelled with its name (``names``; x0, x1, ... where none is given), each method in its
    colour (`collocnode.tools._style`). ``train_end`` [s] shades the training window and marks its
    end with a vertical line: the extrapolation window follows it. The vertical range is that of the
    truth with a margin, so that a diverging rollout does not flatten the others."""
    n_show = min(truth.shape[1], max_states)
    fig = _figure((style.WIDTH, style.PANEL_HEIGHT * n_show + 0.8))
    axes = fig.subplots(n_show, 1, sharex=True, squeeze=False)[:, 0]
    for k, ax in enumerate(axes):
        if train_end is not None:
            ax.axvspan(t[0], train_end, color=style.TRAINING_SHADE, lw=0, zorder=0)
            ax.axvline(train_end, color=style.BOUNDARY, lw=0.9, ls="--", zorder=1)
        ax.plot(t, truth[:, k], "-", color=style.TRUTH, lw=1.8, label="truth", zorder=2)
        for name, x in predictions.items():
            ax.plot(t, x[:, k], "--", color=style.method_color(name), lw=1.2, label=name, zorder=3)
        _truth_range(ax, truth[:, k])
        ax.set_ylabel(_name(names, k), fontsize=style.LABEL_SIZE)
        style.axis(ax)
    if train_end is not None:
        top = axes[0]
        for text, side in (("training", -1), ("extrapolation", 1)):
            top.annotate(
                text,
                (train_end, 1.0),
                xycoords=top.get_xaxis_transform(),
                xytext=(3 * side, 2),
                textcoords="offset points",
                ha="right" if side < 0 else "left",
                va="bottom",
                fontsize=style.LEGEND_SIZE,
                color=style.BOUNDARY,
            )
    axes[-1].set_xlim(t[0], t[-1])
    axes[-1].set_xlabel("t [s]", fontsize=style.LABEL_SIZE)
    _legend_below(fig, axes[0], title)
    return fig


def acceleration_comparison(
    t: np.ndarray,
    truth: np.ndarray,
    predictions: Mapping[str, np.ndarray],
    names: Sequence[str] = ("a_b", "a_w"),
    window: tuple[float, float] | None = (4.0, 8.0),
    title: str = "",
) -> Any:
    """One panel per acceleration [m/s²]: the truth ``(n, len(names))`` and each method's
    prediction (same shape, on the same times ``t``, in the method's colour) over ``window``
    [s] (the window of the QVM paper's Fig. 4; the whole horizon when ``t`` is shorter)."""
    keep = _window(t, window)
    fig = _figure((style.WIDTH, 2.2 * len(names) + 0.8))
    axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
    for k, (ax, name) in enumerate(zip(axes, names, strict=True)):
        ax.plot(t[keep], truth[keep, k], "-", color=style.TRUTH, lw=1.5, label="truth")
        for method, a in predictions.items():
            ax.plot(t[keep], a[keep, k], "--", color=style.method_color(method), lw=1, label=method)
        ax.set_ylabel(f"{name} [m/s²]", fontsize=style.LABEL_SIZE)
        style.axis(ax)
    axes[-1].set_xlabel("t [s]", fontsize=style.LABEL_SIZE)
    _legend_below(fig, axes[0], title)
    return fig


def time_vs_error(points: Mapping[str, tuple[float, float]], ylabel: str, title: str = "") -> Any:
    """One point per method, in its colour and named in the legend: (training wall time [s],
    error), both axes logarithmic."""
    fig = _figure((style.WIDTH * 0.75, 4.2))
    ax = fig.subplots()
    for name, (time_s, error) in points.items():
        ax.scatter(time_s, error, s=45, color=style.method_color(name), label=name, zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training wall time [s]", fontsize=style.LABEL_SIZE)
    ax.set_ylabel(ylabel, fontsize=style.LABEL_SIZE)
    style.axis(ax)
    ax.grid(True, which="both", alpha=0.3)
    _legend_below(fig, ax, title)
    return fig


def error_vs_time(
    curves: Mapping[str, np.ndarray],
    ylabel: str,
    target: float | None = None,
    target_label: str = "target",
    target_color: str = style.TRUTH,
    title: str = "",
) -> Any:
    """Test error against training wall time, one curve ``(n, 2)`` of (time [s], error) per
    method in its colour, and a dotted line at ``target`` (e.g. collocation's final error, in
    collocation's colour)."""
    fig = _figure((style.WIDTH * 0.75, 4.2))
    ax = fig.subplots()
    for name, c in curves.items():
        c = np.asarray(c, dtype=float).reshape(-1, 2)
        if c.size:
            ax.loglog(c[:, 0], c[:, 1], "-o", ms=2, color=style.method_color(name), label=name)
    if target is not None:
        ax.axhline(target, color=target_color, ls=":", lw=1.2, label=target_label)
    ax.set_xlabel("training wall time [s]", fontsize=style.LABEL_SIZE)
    ax.set_ylabel(ylabel, fontsize=style.LABEL_SIZE)
    style.axis(ax)
    ax.grid(True, which="both", alpha=0.3)
    _legend_below(fig, ax, title)
    return fig


def _legend_columns(fig: Any, labels: Sequence[str]) -> int:
    """As many legend columns (at most six) as fit the figure's width at the legend's font
    size: a column is about the handle plus the longest label."""
    char_in = 0.6 * style.LEGEND_SIZE / 72  # an average character's width [in]
    column_in = 0.7 + char_in * max(len(label) for label in labels)
    fits = int(fig.get_figwidth() // column_in)
    return max(1, min(len(labels), 6, fits))


def _name(names: Sequence[str], k: int) -> str:
    return names[k] if k < len(names) else f"x{k}"


def _truth_range(ax: Any, truth: np.ndarray, margin: float = 0.5) -> None:
    """The vertical range of ``truth`` widened by ``margin`` of its span on each side."""
    finite = truth[np.isfinite(truth)]
    if finite.size:
        low, high = float(finite.min()), float(finite.max())
        pad = margin * (high - low) or 1.0
        ax.set_ylim(low - pad, high + pad)


def _legend_below(fig: Any, ax: Any, title: str) -> None:
    """The legend of ``ax``'s labelled lines below the panels, in up to six columns, and the
    title above them: nothing drawn over the data, and constrained layout keeps both apart from
    the axes' labels."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(
            handles,
            labels,
            loc="outside lower center",
            ncol=_legend_columns(fig, labels),
            fontsize=style.LEGEND_SIZE,
            frameon=False,
        )
    if title:
        fig.suptitle(title, fontsize=style.TITLE_SIZE)


# --- the quarter vehicle ----------------------------------------------------------------------
def characteristic(
    x: np.ndarray,
    true: np.ndarray,
    learned: np.ndarray,
    sigma: float,
    *,
    xlabel: str,
    ylabel: str = "F [N]",
    learned_label: str = "learned",
    true_label: str = "true (data generator)",
    reference: tuple[np.ndarray, np.ndarray] | None = None,
    reference_label: str = "reference",
    title: str = "",
    band: tuple[np.ndarray, np.ndarray] | None = None,
    band_label: str = "95 % band",
) -> Any:
    """A learned force characteristic against the true one over the inputs ``x`` ``(n,)``
    (``true``, ``learned`` ``(n,)``), with vertical lines at ±1σ (dotted) and ±2σ (dash-dotted)
    of the training inputs (``sigma``, in the units of ``x``). ``reference`` = (x, F) adds
    another learned curve (e.g. a paper's), cut to the range of ``x``. ``band`` = (lower,
    upper) on ``x`` shades a prediction band around the learned curve (where it is finite)."""
    fig = _figure((6, 4))
    ax = fig.subplots()
    if band is not None:
        lo, hi = (np.asarray(a, dtype=float) for a in band)
        finite = np.isfinite(lo) & np.isfinite(hi)
        ax.fill_between(
            x, lo, hi, where=finite, color=style.LEARNED, alpha=0.2, lw=0, label=band_label
        )
    ax.plot(x, true, "k-", lw=1.5, label=true_label)
    ax.plot(x, learned, "--", color=style.LEARNED, lw=1.5, label=learned_label)
    if reference is not None:
        xr, fr = (np.asarray(a, dtype=float) for a in reference)
        keep = (xr >= np.min(x)) & (xr <= np.max(x))
        ax.plot(xr[keep], fr[keep], ":", color="tab:blue", lw=1.2, label=reference_label)
    for k, dash in ((1, ":"), (2, "-.")):
        for sign in (-1, 1):
            ax.axvline(sign * k * sigma, color="0.5", ls=dash, lw=0.8)
    if band is not None:
        # the band widens fast where the training inputs end: keep the curves readable
        curves = np.concatenate([np.asarray(true, dtype=float), np.asarray(learned, dtype=float)])
        low, high = float(curves.min()), float(curves.max())
        pad = 0.15 * (high - low or 1.0)
        ax.set_ylim(low - pad, high + pad)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def characteristic_bands(panels: Sequence[Mapping[str, Any]], level: float = 0.95) -> Any:
    """Learned characteristics with their prediction bands beside the truth, one column per
    panel: on top the curves (band shaded), below the deviation from the learned curve (the
    band's half-widths and the truth's deviation), where narrow bands are visible.

    Each panel maps ``x`` (n,), ``true``, ``learned``, ``lower``, ``upper`` (n,), ``sigma``
    (±1σ, ±2σ of the training inputs, units of ``x``), ``xlabel``, ``title`` and optionally
    ``ylabel`` (default "F [N]")."""
    fig = _figure((5.2 * len(panels), 6.4))
    axes = fig.subplots(2, len(panels), sharex="col", squeeze=False, height_ratios=(3, 2))
    label = f"{100 * level:g} % band"
    for k, panel in enumerate(panels):
        x = np.asarray(panel["x"], dtype=float)
        true, learned = (np.asarray(panel[key], dtype=float) for key in ("true", "learned"))
        lo, hi = (np.asarray(panel[key], dtype=float) for key in ("lower", "upper"))
        finite = np.isfinite(lo) & np.isfinite(hi)
        top, bottom = axes[0, k], axes[1, k]
        top.fill_between(
            x, lo, hi, where=finite, color=style.LEARNED, alpha=0.25, lw=0, label=label
        )
        top.plot(x, true, "k-", lw=1.3, label="true (data generator)")
        top.plot(x, learned, "--", color=style.LEARNED, lw=1.3, label="learned")
        span = float(np.ptp(np.concatenate([true, learned]))) or 1.0
        top.set_ylim(
            min(true.min(), learned.min()) - 0.1 * span, max(true.max(), learned.max()) + 0.1 * span
        )
        bottom.fill_between(
            x, lo - learned, hi - learned, where=finite, color=style.LEARNED, alpha=0.25, lw=0
        )
        bottom.plot(x, true - learned, "k-", lw=1.0, label="true − learned")
        bottom.axhline(0.0, color=style.LEARNED, lw=0.8, ls="--")
        inner = np.abs(x) <= 2.5 * panel["sigma"]
        dev = np.concatenate(
            [
                (hi - learned)[inner & finite],
                (lo - learned)[inner & finite],
                (true - learned)[inner],
            ]
        )
        if dev.size:
            bottom.set_ylim(1.3 * dev.min(), 1.3 * dev.max())
        for ax in (top, bottom):
            for j, dash in ((1, ":"), (2, "-.")):
                for sign in (-1, 1):
                    ax.axvline(sign * j * panel["sigma"], color="0.5", ls=dash, lw=0.7)
        top.set_title(panel["title"])
        top.set_ylabel(panel.get("ylabel", "F [N]"))
        bottom.set_ylabel("deviation from learned")
        bottom.set_xlabel(panel["xlabel"])
        top.legend(fontsize=7, loc="upper left")
        bottom.legend(fontsize=7, loc="upper left")
    return fig


def acceleration_window(
    t: np.ndarray,
    data: np.ndarray,
    truth: np.ndarray,
    learned: np.ndarray,
    *,
    window: tuple[float, float] | None = (4.0, 8.0),
    ylabel: str = "a_b [m/s²]",
    learned_label: str = "learned",
    title: str = "",
) -> Any:
    """One acceleration over ``window`` [s] (the whole horizon when ``t`` is shorter): the
    observations ``data`` (dots), the true model and the learned one, all ``(n,)`` on ``t``."""
    keep = _window(t, window)
    fig = _figure((8, 3.5))
    ax = fig.subplots()
    ax.plot(t[keep], data[keep], ".", ms=1.5, color="0.6", label="data")
    ax.plot(t[keep], truth[keep], "k-", lw=1, label="true model")
    ax.plot(t[keep], learned[keep], "--", color=style.LEARNED, lw=1, label=learned_label)
    ax.set_xlabel("t [s]")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return fig
