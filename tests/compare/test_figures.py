"""The one plotting module: comparison and quarter-vehicle figures drawn from arrays."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from helpers import labels_fit

from collocnode.tools import _plotting as plotting
from collocnode.tools._io import save_figure

T = np.linspace(0.0, 10.0, 101)


def _lines(ax):
    return [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]


def test_rollout_comparison_shows_both_windows_with_the_boundary_and_the_state_names():
    truth = np.column_stack([np.sin(T), np.cos(T), T, -T, T**2])
    fig = plotting.rollout_comparison(
        T, truth, {"fnode": truth + 0.1}, names=("x", "y", "z"), train_end=6.0, title="vdp"
    )
    axes = fig.axes
    assert len(axes) == 4  # at most four states
    assert [ax.get_ylabel() for ax in axes] == ["x", "y", "z", "x3"]
    labelled = [line for line in axes[0].get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in labelled] == ["truth", "fnode"]
    x = labelled[0].get_xdata()
    assert x[0] == T[0] and x[-1] == T[-1]  # the training window too, not only extrapolation
    boundary = [line for line in axes[0].get_lines() if line.get_label().startswith("_")]
    assert [line.get_xdata()[0] for line in boundary] == [6.0]
    (shade,) = axes[0].patches
    assert shade.get_x() == T[0] and shade.get_width() == 6.0
    assert {t.get_text().strip() for t in axes[0].texts} == {"training", "extrapolation"}
    # the legend names every method once, for all panels
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["truth", "fnode"]


def test_a_diverging_rollout_does_not_flatten_the_others():
    truth = np.column_stack([np.sin(T), np.cos(T)])
    wild = truth * np.exp(T)[:, None]
    fig = plotting.rollout_comparison(T, truth, {"node": wild}, train_end=5.0)
    low, high = fig.axes[0].get_ylim()
    assert -2.0 < low < -1.0 and 1.0 < high < 2.0


def test_acceleration_figures_use_the_window_or_the_whole_short_horizon():
    a = np.column_stack([np.sin(T), np.cos(T)])
    fig = plotting.acceleration_comparison(T, a, {"node": a * 0.9})
    x = fig.axes[0].get_lines()[0].get_xdata()
    assert x.min() >= 4.0 and x.max() <= 8.0
    assert [ax.get_ylabel() for ax in fig.axes] == ["a_b [m/s²]", "a_w [m/s²]"]
    short = T[T <= 3.0]
    fig = plotting.acceleration_window(
        short, a[: short.size, 0], a[: short.size, 0], a[: short.size, 0], learned_label="PeN-ODE"
    )
    (ax,) = fig.axes
    assert _lines(ax) == ["data", "true model", "PeN-ODE"]
    assert ax.get_lines()[0].get_xdata().size == short.size


def test_characteristic_marks_one_and_two_sigma_and_cuts_the_reference():
    x = np.linspace(-4.0, 4.0, 81)
    ref_x = np.linspace(-10.0, 10.0, 21)
    fig = plotting.characteristic(
        x,
        np.tanh(x),
        np.tanh(x) * 1.1,
        1.0,
        xlabel="Δv_s [m/s]",
        learned_label="learned, strategy II",
        reference=(ref_x, np.tanh(ref_x)),
        reference_label="Kamp et al. 2023",
    )
    (ax,) = fig.axes
    assert _lines(ax) == ["true (data generator)", "learned, strategy II", "Kamp et al. 2023"]
    ref = ax.get_lines()[2].get_xdata()
    assert ref.min() >= -4.0 and ref.max() <= 4.0
    sigma_lines = sorted(line.get_xdata()[0] for line in ax.get_lines()[3:])
    assert sigma_lines == [-2.0, -1.0, 1.0, 2.0]


def test_error_figures_and_saving(tmp_path):
    fig = plotting.time_vs_error({"fnode": (2.0, 0.1), "lstm": (1.0, 1.0)}, "test MSE")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["fnode", "lstm"]
    save_figure(fig, tmp_path / "time_vs_error.png")
    curves = {"fnode": np.array([[1.0, 0.5], [2.0, 0.2]]), "node": np.zeros((0, 2))}
    fig = plotting.error_vs_time(curves, "test MSE", target=0.3, target_label="collocation")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["fnode", "collocation"]
    path = save_figure(fig, tmp_path / "error_vs_time.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_plotting_module_loads_neither_torch_nor_the_comparison_nor_pyplot():
    code = (
        "import sys, collocnode.tools._plotting; "
        "print(sorted(m for m in ('torch', 'collocnode.compare', 'matplotlib.pyplot') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


METHODS = ("collocation", "node", "fnode", "mbdnode", "lstm", "fcnn", "mnn", "snde")


def _comparison_figures(methods=METHODS):
    truth = np.column_stack([np.sin(T), np.cos(T)])
    rollouts = {m: truth * (1 + 0.05 * k) for k, m in enumerate(methods)}
    points = {m: (1.0 + k, 0.1 * (k + 1)) for k, m in enumerate(methods)}
    curves = {m: np.array([[1.0, 1.0], [2.0 + k, 0.5]]) for k, m in enumerate(methods)}
    return {
        "rollouts": plotting.rollout_comparison(
            T, truth, rollouts, names=("x", "y"), train_end=6.0, title="vdp: rollouts"
        ),
        "accelerations": plotting.acceleration_comparison(T, truth, rollouts, title="qvm"),
        "time_vs_error": plotting.time_vs_error(points, "test MSE", title="vdp: time vs error"),
        "error_vs_time": plotting.error_vs_time(curves, "test MSE", 0.3, "collocation's"),
    }


def _colors_by_label(fig):
    from matplotlib.colors import to_hex

    (legend,) = fig.legends
    handles = legend.legend_handles
    out = {}
    for text, handle in zip(legend.get_texts(), handles, strict=True):
        color = handle.get_color() if hasattr(handle, "get_color") else handle.get_facecolor()
        rgba = np.asarray(color).reshape(-1, 4)[0] if np.ndim(color) else color
        out[text.get_text()] = to_hex(rgba)
    return out


def test_each_method_has_one_colour_in_every_figure_and_the_methods_differ():
    colors = [_colors_by_label(fig) for fig in _comparison_figures().values()]
    for method in METHODS:
        assert len({c[method] for c in colors}) == 1, method
    assert len({colors[0][m] for m in METHODS}) == len(METHODS)
    # a method keeps its colour when it is drawn without the others
    alone = _colors_by_label(_comparison_figures(("snde",))["rollouts"])
    assert alone["snde"] == colors[0]["snde"]


def test_comparison_figures_have_no_clipped_or_overlapping_labels():
    for name, fig in _comparison_figures().items():
        assert labels_fit(fig) == ([], []), name


def test_the_reports_figures_name_the_states_and_mark_the_end_of_training(tmp_path, monkeypatch):
    from collocnode.compare._run import report as report_module

    drawn = {}
    monkeypatch.setattr(
        report_module, "save_figure", lambda fig, path: drawn.setdefault(path.name, fig)
    )
    truth = np.column_stack([np.sin(T), np.cos(T)])
    for method in ("collocation", "fnode"):
        np.savez(tmp_path / f"{method}.npz", t=T, x_data=truth, x_pred=truth * 1.01)
    rows = [
        {"method": "collocation", "train_time_s": 5.0, "test_mse": 1e-4},
        {"method": "fnode", "train_time_s": 1.0, "test_mse": 0.5, "curve": [(0.5, 0.7)]},
    ]
    meta = {"n_train": 61, "state_names": ["position", "velocity"], "target_metric": "test_mse"}
    report_module.write_plots({"problem": "vdp", "meta": meta, "rows": rows}, tmp_path)
    assert sorted(drawn) == ["error_vs_time.png", "rollouts.png", "time_vs_error.png"]
    rollouts = drawn["rollouts.png"]
    assert [ax.get_ylabel() for ax in rollouts.axes] == ["position", "velocity"]
    boundary = [line for line in rollouts.axes[0].get_lines() if line.get_label().startswith("_")]
    assert [line.get_xdata()[0] for line in boundary] == [T[60]]  # the last training sample
    rollout, points, curves = (
        _colors_by_label(drawn[f"{name}.png"])
        for name in ("rollouts", "time_vs_error", "error_vs_time")
    )
    assert rollout["fnode"] == points["fnode"] == curves["fnode"]
    assert rollout["collocation"] == points["collocation"] == curves["collocation's test MSE"]
