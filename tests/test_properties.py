"""Property-based tests that try to break the public containers and the validation layer:
``Trajectory``, the validation helpers, ``Mesh``, ``Inputs`` and the Radau tables."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from collocnode import Inputs, Mesh, Trajectory
from collocnode import _validation as v
from collocnode.transcription import radau_table

PROPS = settings(max_examples=40, deadline=None)
finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
non_finite = st.sampled_from([np.nan, np.inf, -np.inf])
names = st.from_regex(r"[a-z][a-z_0-9]{0,11}", fullmatch=True)


@st.composite
def times(draw, min_size: int = 1, max_size: int = 25) -> np.ndarray:
    """Strictly increasing finite sample times, at least 1e-3 apart."""
    n = draw(st.integers(min_size, max_size))
    t0 = draw(st.floats(-100.0, 100.0))
    gaps = draw(st.lists(st.floats(1e-3, 10.0), min_size=n - 1, max_size=n - 1))
    t = t0 + np.concatenate(([0.0], np.cumsum(gaps)))
    assume(np.all(np.diff(t) > 0))  # rounding of the sum must not merge samples
    return t


@st.composite
def trajectories(draw) -> dict:
    t = draw(times())
    n = t.size
    cols = {k: draw(st.integers(lo, 3)) for k, lo in (("x", 1), ("u", 0), ("y", 0))}
    arrays = {k: draw(hnp.arrays(float, (n, c), elements=finite)) for k, c in cols.items()}
    return {"t": t, **arrays}


def first_line(exc: pytest.ExceptionInfo) -> str:
    return str(exc.value).splitlines()[0]


# ---- Trajectory -------------------------------------------------------------------------------


@PROPS
@given(trajectories())
def test_trajectory_keeps_valid_data(d):
    traj = Trajectory(**d, state_names=tuple(f"s{i}" for i in range(d["x"].shape[1])))
    for key in ("t", "x", "u", "y"):
        got = getattr(traj, key)
        assert got.dtype == np.float64 and np.array_equal(got, d[key])
    assert traj.n_samples == d["t"].size and traj.n_states == d["x"].shape[1]
    assert (traj.t0, traj.tf) == (d["t"][0], d["t"][-1])


@PROPS
@given(trajectories(), st.sampled_from(["t", "x", "u", "y"]), non_finite, st.data())
def test_trajectory_rejects_non_finite_values_naming_the_field(d, key, bad, data):
    arr = d[key].copy()
    assume(arr.size)
    index = data.draw(st.tuples(*[st.integers(0, s - 1) for s in arr.shape]))
    arr[index] = bad
    if key in ("x", "y") and np.isnan(bad):  # a missing measurement
        assert np.isnan(getattr(Trajectory(**{**d, key: arr}), key)[index])
        return
    with pytest.raises(ValueError) as exc:
        Trajectory(**{**d, key: arr})
    message = first_line(exc)
    assert message.startswith(f"{key} must be finite"), message
    assert message.endswith(f"at index {tuple(index)}"), message


@PROPS
@given(trajectories(), st.data())
def test_trajectory_rejects_non_increasing_times(d, data):
    t = d["t"].copy()
    assume(t.size >= 2)
    i = data.draw(st.integers(0, t.size - 2))
    t[i + 1] = t[i] - data.draw(st.floats(0.0, 10.0))  # equal or backwards
    with pytest.raises(ValueError, match=r"^t must be strictly increasing") as exc:
        Trajectory(**{**d, "t": t})
    # it names the first offending pair
    first = int(np.flatnonzero(np.diff(t) <= 0)[0])
    assert f"t[{first}]" in first_line(exc)


@PROPS
@given(trajectories(), st.sampled_from(["x", "u", "y"]), st.integers(1, 3))
def test_trajectory_rejects_misshaped_columns(d, key, extra):
    arr = np.concatenate([d[key]] + [d[key][:1]] * extra) if d[key].size else np.zeros((1, 1))
    assume(arr.shape[0] != d["t"].size)
    with pytest.raises(ValueError, match=rf"^{key} must have shape \({d['t'].size}, "):
        Trajectory(**{**d, key: arr})


@PROPS
@given(trajectories(), st.sampled_from(["state_names", "input_names", "output_names"]))
def test_trajectory_rejects_wrong_label_counts(d, key):
    width = {"state_names": d["x"], "input_names": d["u"], "output_names": d["y"]}[key].shape[1]
    labels = tuple(f"c{i}" for i in range(width + 1))
    with pytest.raises(ValueError, match=rf"^{key} has {width + 1} labels for {width} columns"):
        Trajectory(**d, **{key: labels})


@PROPS
@given(trajectories(), st.data())
def test_head_tail_split_and_rejoin(d, data):
    traj = Trajectory(**d)
    n = traj.n_samples
    k = data.draw(st.integers(1, n))
    head = traj.head(k)
    assert head.n_samples == k and np.array_equal(head.x, traj.x[:k])
    if k < n:
        tail = traj.tail(k)
        assert tail.n_samples == n - k
        for key in ("t", "x", "u", "y"):
            joined = np.concatenate([getattr(head, key), getattr(tail, key)])
            assert np.array_equal(joined, getattr(traj, key))
    with pytest.raises(ValueError, match=rf"^n must be <= n_samples = {n}, got {n + 1}"):
        traj.head(n + 1)
    with pytest.raises(ValueError, match=rf"^start must be < n_samples = {n}, got {n}"):
        traj.tail(n)
    with pytest.raises(ValueError, match=r"^n must be a positive integer"):
        traj.head(0)


@PROPS
@given(trajectories(), st.data())
def test_window_holds_exactly_the_samples_inside(d, data):
    traj = Trajectory(**d)
    t = traj.t
    i = data.draw(st.integers(0, t.size - 1))
    j = data.draw(st.integers(i, t.size - 1))
    win = traj.window(t[i], t[j])
    assert np.array_equal(win.t, t[i : j + 1])
    assert np.array_equal(win.x, traj.x[i : j + 1]) and np.array_equal(win.u, traj.u[i : j + 1])
    whole = traj.window(traj.t0, traj.tf)
    assert all(np.array_equal(getattr(whole, k), getattr(traj, k)) for k in ("t", "x", "u", "y"))
    # strictly between two neighbouring samples (beyond the tolerance) there is nothing
    if t.size >= 2:
        k = min(i, t.size - 2)
        gap = t[k + 1] - t[k]
        with pytest.raises(ValueError, match="holds no samples"):
            traj.window(t[k] + 0.25 * gap, t[k + 1] - 0.25 * gap)


@PROPS
@given(trajectories())
def test_zero_noise_is_the_identity_and_noise_is_seeded(d):
    traj = Trajectory(**d)
    assert np.array_equal(traj.with_noise(0.0, seed=1).x, traj.x)
    a, b = traj.with_noise(0.5, seed=3), traj.with_noise(0.5, seed=3)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.t, traj.t)
    with pytest.raises(ValueError, match=r"^sigma_x must be finite and >= 0"):
        traj.with_noise(-0.1)


# ---- the validation helpers -------------------------------------------------------------------


@PROPS
@given(names, st.integers(-(10**12), 10**12))
def test_integer_checks(name, value):
    for check, ok, kind in (
        (v.positive_int, value > 0, "positive"),
        (v.nonnegative_int, value >= 0, "non-negative"),
    ):
        if ok:
            out = check(name, value)
            assert out == value and type(out) is int
            assert check(name, np.int64(value)) == value
        else:
            with pytest.raises(ValueError) as exc:
                check(name, value)
            assert first_line(exc) == f"{name} must be a {kind} integer, got {value}"


@PROPS
@given(names, st.one_of(st.booleans(), st.floats(allow_nan=True), st.text(max_size=5), st.none()))
def test_integer_checks_reject_non_integers_as_type_errors(name, value):
    for check in (v.positive_int, v.nonnegative_int):
        with pytest.raises(TypeError, match=rf"^{name} must be a "):
            check(name, value)


@PROPS
@given(names, st.floats(allow_nan=True, allow_infinity=True))
def test_float_checks(name, value):
    table = {
        v.positive_float: np.isfinite(value) and value > 0,
        v.nonnegative_float: np.isfinite(value) and value >= 0,
        v.finite_float: bool(np.isfinite(value)),
    }
    for check, ok in table.items():
        if ok:
            out = check(name, value)
            assert out == value and type(out) is float
            assert check(name, np.float64(value)) == value
        else:
            with pytest.raises(ValueError) as exc:
                check(name, value)
            message = first_line(exc)
            assert message.startswith(f"{name} must be "), message
            assert message.endswith(f"got {value}"), message


@PROPS
@given(names, st.one_of(st.booleans(), st.text(max_size=5), st.none(), st.just([1.0])))
def test_float_checks_reject_non_numbers_as_type_errors(name, value):
    for check in (v.positive_float, v.nonnegative_float, v.finite_float):
        with pytest.raises(TypeError, match=rf"^{name} must be a "):
            check(name, value)


@PROPS
@given(
    names, hnp.arrays(float, hnp.array_shapes(min_dims=1, max_dims=3), elements=finite), st.data()
)
def test_finite_array_names_the_first_bad_entry(name, arr, data):
    assert np.array_equal(v.finite_array(name, arr), arr)
    assert v.finite_array(name, arr.tolist()).shape == arr.shape
    assert v.finite_array(name, arr, ndim=arr.ndim).shape == arr.shape
    free = tuple(None if data.draw(st.booleans()) else s for s in arr.shape)
    assert v.finite_array(name, arr, shape=free).shape == arr.shape
    with pytest.raises(ValueError, match=rf"^{name} must have {arr.ndim + 1} dimension"):
        v.finite_array(name, arr, ndim=arr.ndim + 1)
    with pytest.raises(ValueError, match=rf"^{name} must have shape "):
        v.finite_array(name, arr, shape=(*arr.shape[:-1], arr.shape[-1] + 1))
    bad = arr.copy()
    positions = data.draw(
        st.lists(st.tuples(*[st.integers(0, s - 1) for s in arr.shape]), min_size=1, max_size=3)
    )
    assume(all(s > 0 for s in arr.shape))
    for pos in positions:
        bad[pos] = data.draw(non_finite)
    first = tuple(int(i) for i in np.argwhere(~np.isfinite(bad))[0])
    with pytest.raises(ValueError, match=rf"^{name} must be finite, found .* at index ") as exc:
        v.finite_array(name, bad)
    assert first_line(exc).endswith(f"at index {first}")


@PROPS
@given(
    names,
    st.one_of(
        st.text(min_size=1, max_size=4).filter(lambda s: not _is_number(s)),
        st.just([[1.0], [2.0, 3.0]]),
        st.just({"a": 1}),
    ),
)
def test_finite_array_rejects_non_numbers(name, value):
    with pytest.raises(TypeError, match=rf"^{name} must be an array of real numbers"):
        v.finite_array(name, value)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@PROPS
@given(names, times(min_size=2), st.data())
def test_increasing(name, t, data):
    assert np.array_equal(v.increasing(name, t), t)
    i = data.draw(st.integers(0, t.size - 2))
    flat = t.copy()
    flat[i + 1] = flat[i]
    assert np.array_equal(v.increasing(name, flat, strict=False), flat)
    first = int(np.flatnonzero(np.diff(flat) <= 0)[0])
    with pytest.raises(ValueError, match=rf"^{name} must be strictly increasing") as exc:
        v.increasing(name, flat)
    assert f"{name}[{first}] = " in first_line(exc)
    back = t.copy()
    back[i + 1] = back[i] - 1.0
    with pytest.raises(ValueError, match=rf"^{name} must be non-decreasing, but {name}\[{i}\]"):
        v.increasing(name, back, strict=False)


@PROPS
@given(names, st.lists(names, min_size=1, max_size=6, unique=True), st.data())
def test_choice(name, options, data):
    pick = data.draw(st.sampled_from(options))
    assert v.choice(name, pick, options) == pick
    other = data.draw(st.one_of(names, st.integers(), st.none()).filter(lambda x: x not in options))
    with pytest.raises(ValueError) as exc:
        v.choice(name, other, options)
    message = first_line(exc)
    assert message.startswith(f"unknown {name} {other!r}; ")
    assert message.endswith("valid: " + ", ".join(options))


@PROPS
@given(names, st.lists(finite, min_size=1, max_size=6), st.data())
def test_finite_array_rejects_numbers_written_as_strings_in_object_arrays(name, values, data):
    mixed = np.array(values, dtype=object)
    assert np.array_equal(v.finite_array(name, mixed), np.array(values))
    mixed[data.draw(st.integers(0, len(values) - 1))] = data.draw(st.sampled_from(["1.5", "nan"]))
    with pytest.raises(TypeError, match=rf"^{name} must be an array of real numbers"):
        v.finite_array(name, mixed)


@PROPS
@given(names, st.floats(1e308, 1.7e308), st.floats(1e308, 1.7e308))
def test_increasing_refuses_spans_that_overflow(name, low, high):
    # every entry is finite, but high - (-low) >= 2e308 is not
    with pytest.raises(ValueError, match=rf"^{name} spans \[.*\], whose length overflows"):
        v.increasing(name, [-low, 0.0, high])
    assert v.increasing(name, [0.0, high]).tolist() == [0.0, high]


def test_finite_array_rejects_complex_numbers():
    with pytest.raises(TypeError, match=r"^x must be an array of real numbers"):
        v.finite_array("x", np.array([1.0 + 2.0j]))


@pytest.mark.parametrize("check", [v.positive_float, v.finite_float, v.nonnegative_float])
def test_float_checks_reject_huge_integers_as_value_errors(check):
    with pytest.raises(ValueError, match=r"^x must be"):
        check("x", 10**400)


# ---- Mesh -------------------------------------------------------------------------------------


@PROPS
@given(times(min_size=2, max_size=8), st.integers(1, 6), st.data())
def test_mesh_layout_and_quadrature(grid, m, data):
    stages = data.draw(
        st.one_of(
            st.just(m), st.lists(st.integers(1, 6), min_size=grid.size - 1, max_size=grid.size - 1)
        )
    )
    mesh = Mesh.from_grid(grid, stages)
    nt = mesh.node_times
    assert mesh.n_nodes == 1 + int(np.sum(mesh.stages)) == nt.size
    assert np.all(np.diff(nt) > 0) and nt[0] == grid[0] and nt[-1] == grid[-1]
    assert np.all(np.isin(grid, nt)), "every grid time is a node"
    w = mesh.quadrature_weights
    assert np.all(w > 0)
    per_interval = np.bincount(mesh.collocation_interval, weights=w)
    np.testing.assert_allclose(per_interval, np.diff(grid), rtol=1e-12)
    # node values come back exactly at the nodes
    values = data.draw(hnp.arrays(float, (mesh.n_nodes, 2), elements=finite))
    assert np.array_equal(mesh.interpolate(values, nt), values)


@PROPS
@given(times(min_size=2, max_size=8), st.data())
def test_mesh_rejects_bad_grids_naming_them(grid, data):
    i = data.draw(st.integers(0, grid.size - 2))
    bad = grid.copy()
    bad[i + 1] = bad[i]
    with pytest.raises(ValueError, match=rf"^grid must be strictly increasing, but grid\[{i}\]"):
        Mesh.from_grid(bad, 2)
    bad = grid.copy()
    bad[i] = data.draw(non_finite)
    with pytest.raises(ValueError, match=r"^grid must be finite"):
        Mesh.from_grid(bad, 2)
    stages = [2] * (grid.size - 1)
    stages[i] = data.draw(st.integers(-5, 0))
    with pytest.raises(ValueError, match=rf"^stages\[{i}\] must be a positive integer"):
        Mesh.from_grid(grid, stages)


# ---- Inputs -----------------------------------------------------------------------------------


@PROPS
@given(
    times(min_size=4, max_size=20),
    st.integers(1, 3),
    st.sampled_from(["linear", "cubic"]),
    st.data(),
)
def test_inputs_reproduce_their_samples(t, n, kind, data):
    values = data.draw(hnp.arrays(float, (t.size, n), elements=st.floats(-100, 100)))
    inputs = Inputs.from_samples(t, values, kind)
    assert inputs.n == n
    got = inputs(t)
    assert got.shape == (t.size, n)
    scale = max(1.0, float(np.max(np.abs(values))))
    np.testing.assert_allclose(got, values, rtol=0, atol=1e-9 * scale)
    # between the samples: linear stays inside the neighbours' range
    mid = (t[:-1] + t[1:]) / 2
    if kind == "linear":
        lo = np.minimum(values[:-1], values[1:])
        hi = np.maximum(values[:-1], values[1:])
        inner = inputs(mid)
        assert np.all(inner >= lo - 1e-9 * scale) and np.all(inner <= hi + 1e-9 * scale)


@PROPS
@given(
    times(min_size=4, max_size=20), st.lists(finite.map(lambda c: c / 1e6), min_size=4, max_size=4)
)
def test_cubic_inputs_are_exact_on_cubics(t, coef):
    u = (t - t.mean()) / max(1.0, np.ptp(t))
    p = np.polynomial.Polynomial(coef)
    inputs = Inputs.from_samples(t, p(u), "cubic")
    s = np.linspace(t[0], t[-1], 37)
    expected = p((s - t.mean()) / max(1.0, np.ptp(t)))
    np.testing.assert_allclose(inputs(s)[:, 0], expected, rtol=1e-7, atol=1e-9)


@PROPS
@given(times(min_size=4, max_size=12), st.data())
def test_inputs_reject_bad_samples_and_times(t, data):
    values = np.zeros((t.size, 2))
    bad = values.copy()
    bad[data.draw(st.integers(0, t.size - 1)), 1] = data.draw(non_finite)
    with pytest.raises(ValueError, match=r"^inputs\.values must be finite"):
        Inputs.from_samples(t, bad)
    with pytest.raises(ValueError, match=r"^inputs\.values must have shape"):
        Inputs.from_samples(t, values[:-1])
    with pytest.raises(ValueError, match=r"^cubic input interpolation needs >= 4 samples"):
        Inputs.from_samples(t[:3], values[:3])
    with pytest.raises(ValueError, match=r"^unknown inputs\.kind 'spline'"):
        Inputs.from_samples(t, values, "spline")
    inputs = Inputs.from_samples(t, values, "linear")
    outside = t[-1] + data.draw(st.floats(1e-3, 1e3)) * max(1.0, abs(t[-1] - t[0]))
    with pytest.raises(ValueError, match=r"^input samples cover "):
        inputs(np.array([t[0], outside]))


def test_input_functions_are_checked():
    with pytest.raises(TypeError, match="inputs function must be callable"):
        Inputs.from_function(3.0, 1)
    with pytest.raises(ValueError, match="n_inputs must be a positive integer, got 0"):
        Inputs.from_function(lambda t: t, 0)
    with pytest.raises(ValueError, match=r"inputs\(t\) must be finite, found nan"):
        Inputs.from_function(lambda t: np.full((t.size, 1), np.nan), 1)(np.zeros(2))


# ---- Radau tables -----------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 60), st.data())
def test_radau_table_properties(m, data):
    tab = radau_table(m)
    c, b, D, A = tab.c, tab.b, tab.D, tab.A
    assert c.shape == (m,) and c[-1] == 1.0 and np.all(np.diff(c) > 0) and c[0] > 0
    assert np.all(b > 0)
    np.testing.assert_allclose(b.sum(), 1.0, rtol=0, atol=1e-13)
    np.testing.assert_allclose(A[-1], b, rtol=0, atol=1e-13)
    np.testing.assert_allclose(D.sum(axis=1), 0.0, atol=1e-11 * m * m)  # constants
    # a random polynomial of degree <= m: D differentiates it, b integrates degree 2m - 2
    k = data.draw(st.integers(1, m))
    np.testing.assert_allclose(
        D @ tab.tau**k, k * c ** (k - 1), rtol=1e-9, atol=1e-9 * max(1, m * m)
    )
    q = data.draw(st.integers(0, 2 * m - 2))
    np.testing.assert_allclose(b @ c**q, 1.0 / (q + 1), rtol=1e-12, atol=1e-14)
    # the stage order: A integrates degree m - 1 from 0 to each c_j
    r = data.draw(st.integers(0, m - 1))
    np.testing.assert_allclose(A @ c**r, c ** (r + 1) / (r + 1), rtol=1e-10, atol=1e-12)


@PROPS
@given(st.one_of(st.integers(-5, 0), st.integers(201, 10**6)))
def test_radau_table_rejects_bad_stage_counts(m):
    with pytest.raises(ValueError, match=r"^stages must be (a positive integer|at most 200)"):
        radau_table(m)


def test_message_helpers_quote_long_values_briefly():
    with pytest.raises(ValueError) as exc:
        v.choice("method", "x" * 500, ["a"])
    assert len(first_line(exc)) < 120 and re.search(r"x+\.\.\.", first_line(exc))
