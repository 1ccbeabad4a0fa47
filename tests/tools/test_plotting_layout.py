"""The experiments' figures keep every label inside the figure and apart from the others at
their default size (constrained layout)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import labels_fit

from collocnode.tools import _plotting as plotting

T = np.linspace(0.0, 10.0, 101)
X = np.column_stack([np.sin(T), np.cos(T)])
XS = np.linspace(-4.0, 4.0, 81)


def _panel(title, scale):
    true = np.tanh(XS) * scale
    return dict(
        x=XS,
        true=true,
        learned=true * 1.05,
        lower=true - 0.1,
        upper=true + 0.1,
        sigma=1.0,
        xlabel="Δv_s [m/s]",
        title=title,
    )


# a solution's history: (wall time [s], iteration, objective, inf_pr, inf_du); the objective
# rises at iterations 2-3 while the violation falls, as IPOPT's does from an infeasible start
HISTORY = np.array(
    [
        (0.01, 0, 0.017, 6e-2, 1e-3),
        (0.02, 1, 0.013, 1e-2, 1e-4),
        (0.03, 2, 0.0136, 1e-3, 1e-5),
        (0.04, 3, 0.0159, 1e-5, 1e-6),
        (0.05, 4, 0.0149, 1e-9, 1e-9),
    ]
)

FIGURES = {
    "trajectories": lambda: plotting.trajectories(
        T, X, T, X * 1.01, T, X, names=("x", "y"), train_end=7.0, title="vdp", band=(T, X, X)
    ),
    "percentile_bands": lambda: plotting.percentile_bands(
        T, np.stack([X, 1.1 * X]), X, names=("x", "y"), title="robustness"
    ),
    "regularization_path": lambda: plotting.regularization_path(
        [1e-5, 1e-4, 1e-3], [1.0, 0.5, np.inf], [True, False, True], 1e-4
    ),
    "vector_field_error": lambda: plotting.vector_field_error(
        XS, XS, np.abs(np.add.outer(XS, XS)), path=X, title="vector field"
    ),
    # the comparison's times of a quick run: 0.25 to 6 s, less than two decades, where
    # matplotlib would label the minor ticks too
    "time_vs_error": lambda: plotting.time_vs_error(
        {"fnode": (0.27, 6.9), "lstm": (2.9, 0.6), "collocation": (6.1, 6e-5)}, "test MSE"
    ),
    "error_vs_time": lambda: plotting.error_vs_time(
        {"fnode": np.array([[0.3, 2.0], [0.9, 1.0]]), "node": np.array([[0.4, 3.0], [4.0, 2.0]])},
        "test MSE",
        6e-5,
        "collocation's",
    ),
    "objective_history": lambda: plotting.objective_history(
        {
            "phase 1": np.array([[0.1, 10.0], [1.0, 1.0]]),
            "phase 2": np.array([[1.0, 1.0], [2, 0.5]]),
            "phase 3": np.array([[2.0, 0.5], [3.0, 0.45]]),
        }
    ),
    "iteration_history": lambda: plotting.iteration_history(
        HISTORY, objective_label="objective: ∫ fit² dt + λ‖w‖²\n(λ = 0.0001)"
    ),
    "characteristic": lambda: plotting.characteristic(
        XS,
        np.tanh(XS),
        1.1 * np.tanh(XS),
        1.0,
        xlabel="Δv_s [m/s]",
        reference=(XS, np.tanh(XS)),
        band=(np.tanh(XS) - 0.1, np.tanh(XS) + 0.1),
        title="damper",
    ),
    "characteristic_bands": lambda: plotting.characteristic_bands(
        [_panel("damper", 1.0), _panel("spring", 1e4)]
    ),
    "acceleration_window": lambda: plotting.acceleration_window(
        T, X[:, 0], X[:, 0], 1.1 * X[:, 0], title="a_b"
    ),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_labels_fit(name):
    assert labels_fit(FIGURES[name]()) == ([], [])


def test_the_learned_field_error_says_what_it_shows_and_what_white_means():
    """Errors above vmax were masked white with no word on the colour bar: white read as no
    error, where the error is largest."""
    fig = plotting.vector_field_error(
        XS, XS, np.abs(np.add.outer(XS, XS)), path=X, path_label="true trajectory, t = 0–10 s"
    )
    ax, bar = fig.axes
    assert bar.get_ylabel() == "‖f_learned(x, y) − f_true(x, y)‖₂ (white: > 6)"
    mesh = ax.collections[0]
    assert tuple(mesh.cmap.get_over()[:3]) == (1.0, 1.0, 1.0)  # white above vmax, not masked
    assert np.ma.count_masked(mesh.get_array()) == 0
    assert mesh.norm.vmax == 6.0 and mesh.get_array().max() == 8.0
    assert ax.get_title() == "error of the learned vector field"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["true trajectory, t = 0–10 s"]


def test_the_iteration_history_shows_the_objective_beside_the_constraint_violation():
    """The objective against wall time alone rose at iterations 2-3 and read as training
    getting worse; beside it, the violation IPOPT was lowering meanwhile."""
    fig = plotting.iteration_history(HISTORY, objective_label="objective: fit + penalty")
    top, bottom = fig.axes
    np.testing.assert_array_equal(top.lines[0].get_xdata(), HISTORY[:, 1])
    np.testing.assert_array_equal(top.lines[0].get_ydata(), HISTORY[:, 2])
    np.testing.assert_array_equal(bottom.lines[0].get_ydata(), HISTORY[:, 3])
    assert top.get_ylabel() == "objective: fit + penalty"
    assert bottom.get_ylabel() == "constraint violation\n(inf_pr)"
    assert bottom.get_xlabel() == "IPOPT iteration" and bottom.get_yscale() == "log"
    # less than a decade: a linear axis, whose ticks are labelled (a log one would label none)
    assert top.get_yscale() == "linear"
    spread = HISTORY.copy()
    spread[:, 2] = np.geomspace(1.0, 1e-3, 5)  # three decades: a logarithmic axis
    assert plotting.iteration_history(spread).axes[0].get_yscale() == "log"
