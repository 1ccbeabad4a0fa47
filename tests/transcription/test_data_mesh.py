"""A mesh chosen from the data: as fine as the sampling and the signal's rate ask for, where
they ask for it, and not fooled by noise."""

import numpy as np
import pytest

from collocnode import RadauIIA
from collocnode.transcription import _data_mesh as dm


def test_a_uniform_record_of_a_slow_signal_gets_one_interval_per_two_samples():
    t = np.linspace(0.0, 10.0, 201)
    mesh = dm.data_mesh(t, np.sin(0.3 * t)[:, None], (0.0, 10.0))
    assert mesh.n_intervals == 100
    np.testing.assert_allclose(np.diff(mesh.grid), 0.1, rtol=1e-9)
    assert np.all(mesh.stages == 3)


def test_a_fast_signal_gets_its_intervals_per_period_where_it_changes_fastest():
    """x = sin(ωt), ω = 4π, 21 samples per second: the rate, not the sampling, decides; the
    intervals are shortest where |x'| is largest (the zero crossings)."""
    t = np.linspace(0.0, 5.0, 106)
    omega = 4 * np.pi
    mesh = dm.data_mesh(t, np.sin(omega * t)[:, None], (0.0, 5.0))
    # ∫ PER_PERIOD ω |cos ωt| / 2π dt over 5 s (the sampling asks for 52)
    expected = dm.PER_PERIOD * omega / (2 * np.pi) * (2 / np.pi) * 5.0
    assert mesh.n_intervals == pytest.approx(expected, rel=0.1)
    mids = 0.5 * (mesh.grid[1:] + mesh.grid[:-1])
    h = np.diff(mesh.grid)
    fast = np.abs(np.cos(omega * mids)) > 0.9
    slow = np.abs(np.cos(omega * mids)) < 0.3
    assert h[fast].mean() < 0.5 * h[slow].mean()


def test_a_log_spaced_record_gets_a_log_spaced_mesh():
    t = np.r_[0.0, np.geomspace(1e-5, 40.0, 60)]
    mesh = dm.data_mesh(t, np.exp(-t)[:, None], (0.0, 40.0))
    h = np.diff(mesh.grid)
    assert h[0] < 1e-4 and h[-1] > 1.0
    assert np.median(h[:10]) < 1e-3 * np.median(h[-10:])  # lengthening along the record


def test_noise_does_not_pass_for_a_fast_signal():
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 10.0, 201)
    clean = np.column_stack([np.sin(t), np.cos(t)])
    noisy = clean + 0.1 * rng.standard_normal(clean.shape)
    n_clean = dm.data_mesh(t, clean, (0.0, 10.0)).n_intervals
    n_noisy = dm.data_mesh(t, noisy, (0.0, 10.0)).n_intervals
    assert n_noisy <= 1.2 * n_clean


def test_the_mesh_is_bounded_and_missing_values_are_left_out():
    t = np.linspace(0.0, 1.0, 3)
    assert dm.data_mesh(t, np.zeros((3, 1)), (0.0, 1.0)).n_intervals == dm.MIN_INTERVALS
    t = np.linspace(0.0, 1.0, 20_001)
    assert dm.data_mesh(t, np.zeros((t.size, 1)), (0.0, 1.0)).n_intervals == dm.MAX_INTERVALS
    t = np.linspace(0.0, 10.0, 201)
    y = np.sin(t)[:, None].copy()
    y[50:60] = np.nan
    assert dm.data_mesh(t, y, (0.0, 10.0)).n_intervals == 100


def test_radau_iia_takes_the_data_mesh_for_auto_and_refuses_other_words():
    from tests.helpers import decay_problem

    problem = decay_problem(2)
    meshes = RadauIIA(intervals="auto", stages=2).meshes_for(problem)
    assert len(meshes) == 2 and all(m.n_intervals >= dm.MIN_INTERVALS for m in meshes)
    assert int(meshes[0].stages[0]) == 2
    assert RadauIIA(intervals="auto").mesh_for((0.0, 1.0)).n_intervals == 100  # no data
    with pytest.raises((TypeError, ValueError), match="intervals"):
        RadauIIA(intervals="automatic")
