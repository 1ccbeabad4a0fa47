"""Trajectory: bad input that used to be accepted silently or answered with a numpy traceback."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import Trajectory

T = np.linspace(0.0, 1.0, 5)
X = np.column_stack([T, 2 * T])


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"mu": np.nan}, ValueError, r"^params\['mu'\] must be finite, got nan"),
        ({"mu": np.inf}, ValueError, r"^params\['mu'\] must be finite, got inf"),
        ({"mu": "1.0"}, TypeError, r"^params\['mu'\] must be a number, got '1.0'"),
        ({1: 1.0}, TypeError, r"^params keys must be strings, got 1"),
        ([("mu", 1.0)], TypeError, r"^params must be a mapping of names to numbers"),
    ],
)
def test_params_must_be_finite_numbers_by_name(params, error, match):
    with pytest.raises(error, match=match):
        Trajectory(T, X, params=params)


def test_params_are_stored_as_floats():
    traj = Trajectory(T, X, params={"mu": 1, "k": np.float32(0.5)})
    assert traj.params == {"mu": 1.0, "k": 0.5}
    assert all(type(value) is float for value in traj.params.values())


@pytest.mark.parametrize("key", ["t", "x", "u", "y"])
def test_object_arrays_of_strings_are_not_numbers(key):
    arrays = {"t": T, "x": X, "u": np.zeros((5, 1)), "y": np.zeros((5, 1))}
    numbers = np.asarray(arrays[key])
    arrays[key] = np.array([str(a) for a in numbers.ravel()], dtype=object).reshape(numbers.shape)
    with pytest.raises(TypeError, match=rf"^{key} must be an array of real numbers"):
        Trajectory(**arrays)


def test_object_arrays_of_numbers_are_still_numbers():
    traj = Trajectory(np.array([0.0, 1, np.float32(2)], dtype=object), [1.0, 2.0, 3.0])
    assert traj.t.dtype == np.float64 and traj.t.tolist() == [0.0, 1.0, 2.0]


def test_time_spans_that_overflow_are_refused():
    with pytest.raises(ValueError, match=r"^t spans \[-1e\+308, 1e\+308\], whose length overflows"):
        Trajectory([-1e308, 1e308], [0.0, 1.0])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(sigma_x=[0.1, 0.2, 0.3]), ValueError, r"^sigma_x must be a scalar or have 2 entries"),
        (dict(sigma_x=np.zeros((2, 2))), ValueError, r"^sigma_x must be .* got shape \(2, 2\)"),
        (dict(sigma_y=[0.1, 0.2]), ValueError, r"^sigma_y must be a scalar or have 0 entries"),
        (dict(sigma_x="big"), TypeError, r"^sigma_x must be an array of real numbers, got 'big'"),
        (dict(sigma_x=np.nan), ValueError, r"^sigma_x must be finite and >= 0, got nan"),
        (dict(sigma_x=[0.1, -0.1]), ValueError, r"^sigma_x must be finite and >= 0"),
        (dict(seed="one"), TypeError, r"^seed must be None or a non-negative integer, got 'one'"),
        (dict(seed=-1), ValueError, r"^seed must be a non-negative integer, got -1"),
    ],
)
def test_with_noise_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        Trajectory(T, X).with_noise(**kwargs)


def test_with_noise_per_column_sigma():
    noisy = Trajectory(T, X).with_noise([0.0, 1.0], seed=0)
    assert np.array_equal(noisy.x[:, 0], X[:, 0]) and not np.array_equal(noisy.x[:, 1], X[:, 1])
    # one value for all columns, as a scalar or a 1-entry array
    one = Trajectory(T, X).with_noise([0.5], seed=1)
    assert np.array_equal(one.x, Trajectory(T, X).with_noise(0.5, seed=1).x)


@pytest.mark.parametrize(
    "start, end, error, match",
    [
        ("a", 1.0, TypeError, r"^t_start must be a number, got 'a'"),
        (0.0, np.nan, ValueError, r"^t_end must be finite, got nan"),
    ],
)
def test_window_bounds_are_numbers(start, end, error, match):
    with pytest.raises(error, match=match):
        Trajectory(T, X).window(start, end)


@pytest.mark.parametrize("field", ["state_names", "input_names", "output_names"])
def test_a_single_string_is_not_a_list_of_labels(field):
    arrays = {"u": np.zeros((5, 1)), "y": np.zeros((5, 1))}
    with pytest.raises(TypeError, match=rf"^{field} must be a sequence of strings, got 'ab'"):
        Trajectory(T, X, **arrays, **{field: "ab"})


def test_the_column_names_of_a_table_name_its_columns():
    pd = pytest.importorskip("pandas")
    t = np.linspace(0.0, 1.0, 5)
    x = pd.DataFrame({"position": np.sin(t), "velocity": np.cos(t)})
    y = pd.DataFrame({"acceleration": -np.sin(t)})
    traj = Trajectory(t, x, y=y)
    assert traj.state_names == ("position", "velocity")
    assert traj.output_names == ("acceleration",)
    np.testing.assert_array_equal(traj.x[:, 1], np.cos(t))
    # the same names given again are fine; other names are one of two mistakes
    assert Trajectory(t, x, state_names=("position", "velocity")).state_names == tuple(x.columns)
    with pytest.raises(ValueError, match=r"state_names \('velocity', 'position'\) differ"):
        Trajectory(t, x, state_names=("velocity", "position"))
    # unnamed columns (0, 1) give no names
    assert Trajectory(t, pd.DataFrame(np.ones((5, 2)))).state_names == ()


@pytest.mark.parametrize(
    ("label", "match"),
    [
        ("a\nb", "control character or a line break, got U\\+000A"),
        ("tab\there", "U\\+0009"),
        ("\u202eevil", "bidirectional control character, got U\\+202E"),
        ("x" * 257, "at most 256 characters, got 257"),
    ],
)
def test_labels_print_as_what_they_are(label, match):
    t = np.linspace(0.0, 1.0, 3)
    with pytest.raises(ValueError, match=r"state_names\[1\] must .*" + match):
        Trajectory(t, np.ones((3, 2)), state_names=("x", label))
    # letters of any script, and a zero-width joiner inside an emoji, are labels
    assert Trajectory(t, np.ones((3, 2)), state_names=("θ̇", "👩\u200d🔬")).state_names[0] == "θ̇"


# ---- missing values: NaN marks them, the consumer says where they are acceptable ---------------
def test_nan_marks_a_missing_state_or_output_value():
    x = X.copy()
    x[2, 1] = np.nan
    traj = Trajectory(T, x, y=np.r_[1.0, np.nan, 3.0, 4.0, 5.0], state_names=("a", "b"))
    assert not traj.complete
    assert traj.first_missing() == ("x", 2, 1)
    with pytest.raises(ValueError, match=r"^train\[3\]\.x\[2, 1\] \('b'\) is NaN \(a missing"):
        traj.require_complete("train[3]")
    Trajectory(T, X).require_complete()  # complete: nothing to say
    only_y = Trajectory(T, y=np.c_[np.ones(5), [1, 2, np.nan, 4, 5]])
    assert only_y.first_missing() == ("y", 2, 1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(x=np.c_[T, np.full(5, np.inf)]), r"^x must be finite \(or NaN where a value is "),
        (dict(x=X, y=np.full(5, -np.inf)), r"^y must be finite \(or NaN where a value is "),
        (dict(x=X, u=np.full(5, np.nan)), r"^u must be finite, found nan at index \(0,\)"),
        (dict(), r"^x must hold at least one state column \(or y an output column\)"),
        (dict(x=np.zeros((5, 0))), r"^x must hold at least one state column"),
    ],
)
def test_infinite_values_and_unknown_inputs_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Trajectory(T, **kwargs)


def test_a_trajectory_of_outputs_only_has_no_state_columns():
    traj = Trajectory(T, y=np.ones(5), output_names=("a",))
    assert traj.x.shape == (5, 0) and traj.n_states == 0 and traj.n_outputs == 1
    assert traj.window(0.25, 0.75).x.shape == (3, 0)
