"""The one plotting module: comparison and quarter-vehicle figures drawn from arrays."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from collocnode.tools import plotting
from collocnode.tools.io import save_figure

T = np.linspace(0.0, 10.0, 101)


def _lines(ax):
    return [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]


def test_rollout_comparison_shows_the_window_after_start():
    truth = np.column_stack([np.sin(T), np.cos(T), T, -T, T**2])
    fig = plotting.rollout_comparison(T, truth, {"fnode": truth + 0.1}, start=60, title="vdp")
    axes = fig.axes
    assert len(axes) == 4  # at most four states
    assert _lines(axes[0]) == ["truth", "fnode"]
    x = axes[0].get_lines()[0].get_xdata()
    assert x[0] == T[60] and x[-1] == T[-1]


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
    assert [t.get_text() for t in fig.axes[0].texts] == ["fnode", "lstm"]
    save_figure(fig, tmp_path / "time_vs_error.png")
    curves = {"fnode": np.array([[1.0, 0.5], [2.0, 0.2]]), "node": np.zeros((0, 2))}
    fig = plotting.error_vs_time(curves, "test MSE", target=0.3, target_label="collocation")
    assert _lines(fig.axes[0]) == ["fnode", "collocation"]
    path = save_figure(fig, tmp_path / "error_vs_time.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_plotting_module_loads_neither_torch_nor_the_comparison_nor_pyplot():
    code = (
        "import sys, collocnode.tools.plotting; "
        "print(sorted(m for m in ('torch', 'collocnode.compare', 'matplotlib.pyplot') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
