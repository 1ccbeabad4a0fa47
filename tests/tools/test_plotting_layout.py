"""The experiments' figures keep every label inside the figure and apart from the others at
their default size (constrained layout)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import labels_fit

from collocnode.tools import plotting

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
