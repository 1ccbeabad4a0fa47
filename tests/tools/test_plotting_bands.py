"""The figures' prediction bands: shaded where finite, the curves kept readable."""

import numpy as np

from collocnode.tools import _plotting as plotting


def _shaded(ax):
    return [c for c in ax.collections if c.get_label() and not c.get_label().startswith("_")]


def test_characteristic_shades_its_band_and_keeps_the_curves_in_view():
    x = np.linspace(-4.0, 4.0, 81)
    lower, upper = np.tanh(x) - 0.1 - x**4, np.tanh(x) + 0.1 + x**4
    fig = plotting.characteristic(
        x, np.tanh(x), np.tanh(x), 1.0, xlabel="Δv_s [m/s]", band=(lower, upper)
    )
    (ax,) = fig.axes
    assert [c.get_label() for c in _shaded(ax)] == ["95 % band"]
    low, high = ax.get_ylim()
    assert low > -2.0 and high < 2.0  # the band's x⁴ growth does not set the scale


def test_trajectories_shade_only_the_finite_part_of_a_band():
    t = np.linspace(0.0, 1.0, 11)
    x = np.column_stack([t, -t])
    lower, upper = x - 0.1, x + 0.1
    upper[5:, 1] = np.inf
    fig = plotting.trajectories(t, x, t, x, band=(t, lower, upper), names=("a", "b"))
    top, bottom = fig.axes
    for ax in (top, bottom):
        (band,) = _shaded(ax)
        assert band.get_label() == "95 % band"
    # the second state's band stops where its upper bound is infinite
    drawn = np.concatenate([p.vertices[:, 0] for p in _shaded(bottom)[0].get_paths()])
    assert drawn.max() <= t[4] + 1e-12


def test_characteristic_bands_draw_the_curves_and_the_deviations():
    x = np.linspace(-1.0, 1.0, 41)
    panel = {
        "x": x,
        "true": x**3,
        "learned": x**3 + 0.01,
        "lower": x**3 - 0.02,
        "upper": x**3 + 0.04,
        "sigma": 0.4,
        "xlabel": "Δz_s [mm]",
        "title": "spring",
    }
    fig = plotting.characteristic_bands([panel, {**panel, "title": "friction"}])
    assert len(fig.axes) == 4
    top_left, top_right, bottom_left, _ = fig.axes
    assert top_left.get_title() == "spring" and top_right.get_title() == "friction"
    deviation = [line for line in bottom_left.get_lines() if line.get_label() == "true − learned"]
    np.testing.assert_allclose(deviation[0].get_ydata(), -0.01)
