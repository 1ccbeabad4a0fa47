"""MNN §5.4's benchmark: its library of inverse powers and its scores."""

from __future__ import annotations

import numpy as np
import pytest
from load_benchmark import load_benchmark

from collocnode import SparseRegression
from collocnode.training._discovery.library import fit_terms
from collocnode.training._discovery.regression import regress
from collocnode.training._discovery.samples import BlockSamples

pytest.importorskip("pysindy")
two_body = load_benchmark("mnn_two_body")


def test_the_library_has_both_axes_of_every_inverse_power():
    rng = np.random.default_rng(0)
    r = rng.uniform(0.5, 2.5, (50, 2)) * rng.choice([-1.0, 1.0], (50, 2))
    terms = fit_terms(two_body.inverse_powers(), r, ("rx", "ry"), "block 'force'")
    assert terms.names == tuple(f"{a}/|r|^{k}" for k in range(1, 5) for a in ("rx", "ry"))
    norm = np.linalg.norm(r, axis=1, keepdims=True)
    expected = np.hstack([r / norm**k for k in range(1, 5)])
    np.testing.assert_allclose(terms(r), expected, rtol=1e-14)


def test_the_regression_finds_newtons_law_in_it():
    rng = np.random.default_rng(1)
    r = rng.uniform(0.5, 2.5, (200, 2)) * rng.choice([-1.0, 1.0], (200, 2))
    force = two_body.true_force(r)  # M1 M2 r / |r|³
    samples = BlockSamples(
        "force", r, force, np.ones(200), np.arange(200.0), ("rx", "ry"), ("Fx", "Fy"), 200
    )
    found = regress(samples, SparseRegression(two_body.inverse_powers()))
    # one term per axis: the inverse square law, the masses' product its coefficient
    assert found.equations() == ["Fx = 2 rx/|r|^3", "Fy = 2 ry/|r|^3"]


def test_the_scores_of_the_true_force_are_perfect():
    t = np.linspace(0.0, 1.0, 30)
    r = np.stack([np.cos(t) + 1.5, np.sin(t)], axis=1)
    s = two_body.scores(3.0 * two_body.true_force(r), r, 2.0)  # forces count up to a factor
    assert s["force_mse"] == pytest.approx(0.0, abs=1e-28)
    assert s["cosine_similarity"] == pytest.approx(1.0)
    assert s["mass_ratio_error"] == 0.0
