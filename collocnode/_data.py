"""Trajectory data: the container both sides of the library train on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from . import _validation as v


@dataclass(frozen=True)
class Trajectory:
    """Samples of one trajectory (one experiment).

    Attributes:
        t: sample times, shape ``(n,)``, strictly increasing [s].
        x: states, shape ``(n, n_states)``; NaN where a value is missing (a state that is not
            measured at all is a column of NaN, or is left out: see below). None: no state is
            measured (then ``y`` must hold at least one column).
        u: known inputs at the sample times, shape ``(n, n_inputs)`` (``n_inputs`` may be 0);
            always finite (inputs are known).
        y: observed outputs that are not states (e.g. accelerations), shape ``(n, n_outputs)``
            (``n_outputs`` may be 0); NaN where a value is missing.
        state_names, input_names, output_names: labels of the columns. A trajectory whose
            ``state_names`` name only some of a model's states measures those; a
            [`TrainingProblem`][collocnode.TrainingProblem] treats the others as hidden. A table
            with named columns (a pandas DataFrame) given as ``x``, ``u`` or ``y`` names them: its
            column names are used where no labels are given, and must match the labels given.
        params: the conditions of this experiment, name -> finite float (a feed
            concentration, a load, a temperature; for the benchmark systems, the parameter
            values the trajectory was generated with). A model's per-trajectory parameters
            (``Parameter(..., per_trajectory=True)``) take their values from here, by name.

    Whether a NaN is acceptable is for the consumer to say: a training problem accepts one
    where its mask or its observation model (the fitted columns) allows it and names the index
    otherwise; code that needs every value calls
    [`require_complete`][collocnode.Trajectory.require_complete].

    Examples:
        One experiment of two named states, one sample missing:

        ```python
        import numpy as np

        from collocnode import Trajectory

        t = np.linspace(0.0, 2.0, 5)
        x = np.column_stack([np.cos(t), -np.sin(t)])
        x[2, 1] = np.nan  # a missing sample: a training problem leaves it out of the fit
        data = Trajectory(t, x, state_names=("q", "v"), params={"k": 1.0})
        print(data.x.shape, data.u.shape, data.state_names, data.params)
        try:
            data.require_complete()  # for code that needs every value
        except ValueError as err:
            print(err)
        ```
    """

    t: np.ndarray
    x: np.ndarray | None = None
    u: np.ndarray | None = None
    y: np.ndarray | None = None
    state_names: tuple[str, ...] = ()
    input_names: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()
    params: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for field_name, labels_name in (
            ("x", "state_names"),
            ("u", "input_names"),
            ("y", "output_names"),
        ):
            object.__setattr__(
                self,
                labels_name,
                _labels_of_columns(
                    field_name, getattr(self, field_name), labels_name, getattr(self, labels_name)
                ),
            )
        t = v.increasing("t", self.t)
        n = t.size
        if n < 1:
            raise ValueError("t must hold at least one sample, got 0")
        x = np.zeros((n, 0)) if self.x is None else v.measured_array("x", self.x)
        if x.ndim == 1:
            x = x[:, None]
        if x.ndim != 2 or x.shape[0] != n:
            raise ValueError(f"x must have shape ({n}, n_states) to match t, got {x.shape}")
        u = np.zeros((n, 0)) if self.u is None else v.finite_array("u", self.u)
        if u.ndim == 1:
            u = u[:, None]
        if u.ndim != 2 or u.shape[0] != n:
            raise ValueError(f"u must have shape ({n}, n_inputs) to match t, got {u.shape}")
        y = np.zeros((n, 0)) if self.y is None else v.measured_array("y", self.y)
        if y.ndim == 1:
            y = y[:, None]
        if y.ndim != 2 or y.shape[0] != n:
            raise ValueError(f"y must have shape ({n}, n_outputs) to match t, got {y.shape}")
        if x.shape[1] == 0 and y.shape[1] == 0:
            raise ValueError(
                "x must hold at least one state column (or y an output column): a trajectory "
                "measures something, got neither"
            )
        for name, labels, width in (
            ("state_names", self.state_names, x.shape[1]),
            ("input_names", self.input_names, u.shape[1]),
            ("output_names", self.output_names, y.shape[1]),
        ):
            object.__setattr__(self, name, v.names(name, labels, width))
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "u", u)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "params", _check_params(self.params))

    @property
    def n_samples(self) -> int:
        return self.t.size

    @property
    def n_states(self) -> int:
        return self.x.shape[1]

    @property
    def n_outputs(self) -> int:
        return self.y.shape[1]

    @property
    def complete(self) -> bool:
        """Whether every state and output value is present (no NaN)."""
        return self.first_missing() is None

    def first_missing(self) -> tuple[str, int, int] | None:
        """The first missing value, ``("x" or "y", sample, column)``, or None if none is."""
        for name in ("x", "y"):
            missing = np.argwhere(np.isnan(getattr(self, name)))
            if missing.size:
                return name, int(missing[0, 0]), int(missing[0, 1])
        return None

    def require_complete(self, where: str = "data") -> None:
        """A ValueError naming the first missing value (``where`` names this trajectory) if any
        value is NaN: for code that needs every sample (regressions on all states, the PyTorch
        methods)."""
        missing = self.first_missing()
        if missing is not None:
            name, i, j = missing
            labels = self.state_names if name == "x" else self.output_names
            label = f" ({labels[j]!r})" if labels else ""
            raise ValueError(
                f"{where}.{name}[{i}, {j}]{label} is NaN (a missing value), but every value is "
                "needed here"
            )

    @property
    def t0(self) -> float:
        return float(self.t[0])

    @property
    def tf(self) -> float:
        return float(self.t[-1])

    def window(self, t_start: float, t_end: float) -> Trajectory:
        """The samples with ``t_start <= t <= t_end`` (inclusive, with a tolerance of 1e-9 dt)."""
        t_start = v.finite_float("t_start", t_start)
        t_end = v.finite_float("t_end", t_end)
        tol = 1e-9 * (float(np.min(np.diff(self.t))) if self.t.size > 1 else 1.0)
        mask = (self.t >= t_start - tol) & (self.t <= t_end + tol)
        if not mask.any():
            raise ValueError(
                f"window [{t_start}, {t_end}] holds no samples of t in [{self.t0}, {self.tf}]"
            )
        return self._select(mask)

    def head(self, n: int) -> Trajectory:
        """The first ``n`` samples."""
        n = v.positive_int("n", n)
        if n > self.n_samples:
            raise ValueError(f"n must be <= n_samples = {self.n_samples}, got {n}")
        return self._select(slice(0, n))

    def tail(self, start: int) -> Trajectory:
        """The samples from index ``start`` on."""
        start = v.nonnegative_int("start", start)
        if start >= self.n_samples:
            raise ValueError(f"start must be < n_samples = {self.n_samples}, got {start}")
        return self._select(slice(start, None))

    def with_noise(
        self,
        sigma_x: float | np.ndarray = 0.0,
        sigma_y: float | np.ndarray = 0.0,
        seed: int | None = None,
    ) -> Trajectory:
        """A copy with i.i.d. Gaussian noise on the states (std ``sigma_x``) and on the outputs
        (std ``sigma_y``); each is a scalar or one value per column."""
        sigmas = {
            name: _check_sigma(f"sigma_{name}", sig, arr.shape[1])
            for name, arr, sig in (("x", self.x, sigma_x), ("y", self.y, sigma_y))
        }
        rng = np.random.default_rng(v.optional_seed("seed", seed))
        noisy = {
            name: arr + rng.standard_normal(arr.shape) * sigmas[name]
            for name, arr in (("x", self.x), ("y", self.y))
        }
        return self._replace(**noisy)

    def _select(self, idx: slice | np.ndarray) -> Trajectory:
        return self._replace(t=self.t[idx], x=self.x[idx], u=self.u[idx], y=self.y[idx])

    def _replace(self, **changes: object) -> Trajectory:
        fields = dict(
            t=self.t,
            x=self.x,
            u=self.u,
            y=self.y,
            state_names=self.state_names,
            input_names=self.input_names,
            output_names=self.output_names,
            params=self.params,
        )
        fields.update(changes)
        return Trajectory(**fields)  # type: ignore[arg-type]


def _labels_of_columns(field_name: str, table: object, labels_name: str, labels: object) -> object:
    """The labels of ``table``'s columns where it is a table with string column names (a pandas
    DataFrame) and ``labels`` are not given; ``labels`` otherwise (checked later). Labels given
    that differ from the column names are refused: one of the two orders is a mistake."""
    columns = getattr(table, "columns", None)
    if columns is None or isinstance(table, np.ndarray):
        return labels
    names = tuple(columns)
    if not names or not all(isinstance(c, str) for c in names):
        return labels  # unnamed columns (0, 1, ...): no labels to take
    if isinstance(labels, (list, tuple)) and len(labels) and tuple(labels) != names:
        raise ValueError(
            f"{labels_name} {tuple(labels)!r:.80} differ from the column names of {field_name} "
            f"{names!r:.80}; give one of them"
        )
    return names


def _check_params(params: object) -> dict[str, float]:
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping of names to numbers, got {params!r:.60}")
    out = {}
    for name, value in params.items():
        if not isinstance(name, str):
            raise TypeError(f"params keys must be strings, got {name!r:.60}")
        out[name] = v.finite_float(f"params[{name!r}]", value)
    return out


def _check_sigma(name: str, sigma: object, n_columns: int) -> np.ndarray:
    """A noise level: a scalar or one value per column, finite and >= 0; shape () or (n,)."""
    try:
        s = v.finite_array(name, sigma)
    except ValueError:  # non-finite: say so in the words the caller expects
        raise ValueError(f"{name} must be finite and >= 0, got {sigma!r:.60}") from None
    if np.any(s < 0):
        raise ValueError(f"{name} must be finite and >= 0, got {sigma!r:.60}")
    if s.shape not in ((), (1,), (n_columns,)):
        raise ValueError(
            f"{name} must be a scalar or have {n_columns} entries (one per column), "
            f"got shape {s.shape}"
        )
    return s
