"""Collocation meshes: a time grid, a Radau IIA stage count per interval, and the node list.

The nodes are numbered in time order (paper §2.3): ``x_00`` at ``t0``, then the m_i collocation
nodes ``t_ij = t_i + c_j h_i`` of every interval i. Because ``c_m = 1``, the last node of
interval i - 1 is the first point ``x_i0`` of interval i, so it appears once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import _validation as v
from ._radau import (
    MAX_STAGES,
    collocation_basis,
    lagrange_basis,
    lagrange_derivative,
    radau_table,
)


def _check_stages(value: object, n_intervals: int) -> np.ndarray:
    """``value`` (an int or one per interval) as a read-only int array of shape (n_intervals,)."""
    if np.ndim(value) == 0:
        names, items = ["stages"], [value]
    else:
        arr = np.asarray(value, dtype=object)
        if arr.ndim != 1:
            raise ValueError(f"stages must be an int or a 1-D sequence, got shape {arr.shape}")
        if arr.size != n_intervals:
            raise ValueError(
                f"stages must have one entry per interval ({n_intervals}), got {arr.size}"
            )
        names, items = [f"stages[{i}]" for i in range(arr.size)], list(arr)
    out = np.array(
        [v.positive_int(name, s) for name, s in zip(names, items, strict=True)], dtype=int
    )
    too_many = np.flatnonzero(out > MAX_STAGES)
    if too_many.size:
        i = int(too_many[0])
        raise ValueError(f"{names[i]} must be at most {MAX_STAGES}, got {out[i]}")
    return np.broadcast_to(out, (n_intervals,)).copy()


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Mesh:
    """A time grid with a Radau IIA stage count per interval.

    Attributes:
        grid: interval boundaries ``t_0 < t_1 < ... < t_n``, shape ``(n_intervals + 1,)`` [s].
        stages: collocation stages m_i of each interval, shape ``(n_intervals,)``, each in 1..200.
            Passing a single int to the constructor uses it for every interval.

    All derived arrays are read-only and computed once on first access.
    """

    grid: np.ndarray
    stages: np.ndarray

    def __post_init__(self) -> None:
        grid = v.increasing("grid", self.grid).copy()  # a copy: it is made read-only below
        if grid.size < 2:
            raise ValueError(f"grid must hold at least 2 times (one interval), got {grid.size}")
        object.__setattr__(self, "grid", _readonly(grid))
        object.__setattr__(self, "stages", _readonly(_check_stages(self.stages, grid.size - 1)))
        # Node times must be distinct for the interpolation to be defined; an interval shorter
        # than a few ulps of its start time cannot hold them.
        gaps = np.diff(self.node_times)
        bad = np.flatnonzero(gaps <= 0)
        if bad.size:
            i = int(self.collocation_interval[bad[0]])
            raise ValueError(
                f"grid interval {i} = [{float(grid[i])!r}, {float(grid[i + 1])!r}] is too short "
                f"to hold {self.stages[i]} distinct collocation times"
            )

    # ---- constructors -------------------------------------------------------------------------

    @classmethod
    def from_grid(cls, grid: object, stages: object) -> Mesh:
        """A mesh on ``grid`` (strictly increasing times) with ``stages`` (an int or one per
        interval)."""
        return cls(grid=grid, stages=stages)

    @classmethod
    def equidistant(cls, t0: float, tf: float, intervals: int, stages: object) -> Mesh:
        """``intervals`` equal intervals on ``[t0, tf]`` (the paper's 500 x Radau5 setup)."""
        t0, tf = _check_span(t0, tf)
        n = v.fits_in_memory("intervals", v.positive_int("intervals", intervals), "intervals")
        grid = t0 + (tf - t0) * (np.arange(n + 1) / n)
        grid[-1] = tf  # exact end point, whatever the rounding of the line above
        return cls(grid=grid, stages=stages)

    @classmethod
    def spectral(cls, t0: float, tf: float, nodes: int) -> Mesh:
        """One interval with ``nodes`` stages: global (spectral) collocation, as in the paper's
        §4.2.1 (70 nodes on [0, 7])."""
        t0, tf = _check_span(t0, tf)
        nodes = v.positive_int("nodes", nodes)
        if nodes > MAX_STAGES:
            raise ValueError(f"nodes must be at most {MAX_STAGES}, got {nodes}")
        return cls(grid=np.array([t0, tf]), stages=nodes)

    # ---- sizes and times ----------------------------------------------------------------------

    @property
    def n_intervals(self) -> int:
        return int(self.stages.size)

    @property
    def t0(self) -> float:
        return float(self.grid[0])

    @property
    def tf(self) -> float:
        return float(self.grid[-1])

    @cached_property
    def h(self) -> np.ndarray:
        """Interval lengths, shape ``(n_intervals,)`` [s]."""
        return _readonly(np.diff(self.grid))

    @property
    def n_collocation(self) -> int:
        """Number of collocation nodes, ``sum(stages)``."""
        return int(self.stages.sum())

    @property
    def n_nodes(self) -> int:
        """Number of state nodes, ``1 + sum(stages)`` (``x_00`` plus every collocation node)."""
        return 1 + self.n_collocation

    @cached_property
    def interval_start(self) -> np.ndarray:
        """Node index of each interval's first point ``x_i0``, shape ``(n_intervals,)``."""
        return _readonly(np.concatenate(([0], np.cumsum(self.stages)[:-1])))

    @cached_property
    def collocation_index(self) -> np.ndarray:
        """Node index of each collocation node, shape ``(n_collocation,)``: ``1 .. n_nodes-1``."""
        return _readonly(np.arange(1, self.n_nodes))

    @cached_property
    def collocation_interval(self) -> np.ndarray:
        """Interval of each collocation node, shape ``(n_collocation,)``."""
        return _readonly(np.repeat(np.arange(self.n_intervals), self.stages))

    @cached_property
    def collocation_stage(self) -> np.ndarray:
        """Stage j (1-based) of each collocation node within its interval, shape
        ``(n_collocation,)``."""
        first = np.repeat(self.interval_start, self.stages)
        return _readonly(self.collocation_index - first)

    @cached_property
    def _c_flat(self) -> np.ndarray:
        """Local coordinate c_j of each collocation node, shape ``(n_collocation,)``."""
        return self._per_stage("c")

    @cached_property
    def node_times(self) -> np.ndarray:
        """Times of all nodes in order, shape ``(n_nodes,)`` [s]."""
        i = self.collocation_interval
        times = np.empty(self.n_nodes)
        times[0] = self.grid[0]
        times[1:] = self.grid[i] + self.h[i] * self._c_flat
        # c_m = 1, but t_i + h_i may round away from t_{i+1}; interval ends are the grid exactly.
        times[self.interval_start + self.stages] = self.grid[1:]
        return _readonly(times)

    @cached_property
    def quadrature_weights(self) -> np.ndarray:
        """``h_i b_j`` per collocation node, shape ``(n_collocation,)`` [s]: the Radau rule
        ``sum_k w_k L(t_k) ≈ ∫_{t0}^{tf} L dt`` over the collocation nodes (paper eq. 10)."""
        return _readonly(self.h[self.collocation_interval] * self._per_stage("b"))

    def _per_stage(self, field: str) -> np.ndarray:
        """A per-stage table vector (``"c"`` or ``"b"``) laid out over the collocation nodes."""
        out = np.empty(self.n_collocation)
        first = self.interval_start
        for m in np.unique(self.stages):
            rows = first[self.stages == m][:, None] + np.arange(int(m))
            out[rows] = getattr(radau_table(int(m)), field)
        return out

    # ---- dense output -------------------------------------------------------------------------

    def interpolate(self, node_values: object, t: object) -> np.ndarray:
        """The piecewise collocation polynomial through ``node_values`` at times ``t``.

        Args:
            node_values: values at the nodes, shape ``(n_nodes, ...)``.
            t: times in ``[t0, tf]``, a scalar or shape ``(n_t,)`` [s].

        Returns:
            shape ``(n_t, ...)``, or ``node_values.shape[1:]`` for a scalar t. Each t uses the
            degree-m_i polynomial of its interval; at node times it returns the node values
            exactly.
        """
        return self._evaluate(node_values, t, derivative=False)

    def derivative(self, node_values: object, t: object) -> np.ndarray:
        """Time derivative of [`interpolate`][collocnode.Mesh.interpolate], same shapes
        [units of node_values / s].

        The piecewise polynomial is only continuous at the grid times; there (and at every node)
        this returns the one-sided derivative of the interval that ends at that time (interval 0
        at ``t0``), which at a collocation node ``t_ij`` is ``D[j-1] @ x_i / h_i``: the collocated
        derivative that equals ``f(x_ij)`` for a converged collocation solution.
        """
        return self._evaluate(node_values, t, derivative=True)

    def interpolate_collocation(self, values: object, t: object) -> np.ndarray:
        """The piecewise polynomial through values given at the collocation nodes only.

        Args:
            values: shape ``(n_collocation, ...)``: one row per collocation node (the mesh's
                nodes without ``t0``), e.g. controls or algebraic states.
            t: times in ``[t0, tf]``, a scalar or shape ``(n_t,)`` [s].

        Returns:
            shape ``(n_t, ...)`` (or ``values.shape[1:]`` for a scalar t): per interval the
            degree m_i - 1 polynomial through its m_i values, exact at the collocation nodes;
            before an interval's first node it is extrapolated, and at ``t0`` it is interval
            0's value there.
        """
        return self._piecewise(
            "values",
            values,
            self.n_collocation,
            "collocation node",
            t,
            lambda m, local, interval: collocation_basis(radau_table(m), local),
        )

    def locate(self, t: object) -> tuple[np.ndarray, np.ndarray]:
        """The interval that holds each time and the local coordinate there.

        Args:
            t: times in ``[t0, tf]``, a scalar or shape ``(n_t,)`` [s].

        Returns:
            ``(interval, local)``, shapes ``(n_t,)``: interval index (int) and
            ``s = (t - t_i) / h_i`` in [0, 1]. A grid time belongs to the interval that ends
            there (interval 0 for ``t0``); a node time gets its node's exact coordinate (c_j, or
            0 for ``t0``), so the basis row there is an exact unit row.
        """
        times = np.atleast_1d(v.finite_array("t", t))
        if times.ndim != 1:
            raise ValueError(f"t must be a scalar or 1-D array, got shape {times.shape}")
        outside = np.flatnonzero((times < self.grid[0]) | (times > self.grid[-1]))
        if outside.size:
            k = int(outside[0])
            raise ValueError(
                f"t must lie in [t0, tf] = [{self.t0!r}, {self.tf!r}], "
                f"got t[{k}] = {float(times[k])!r}"
            )
        interval = np.clip(np.searchsorted(self.grid, times, side="right") - 1, 0, None)
        interval = np.minimum(interval, self.n_intervals - 1)
        local = np.clip((times - self.grid[interval]) / self.h[interval], 0.0, 1.0)
        # Times that are node times use that node's exact local coordinate, so the basis row is
        # an exact unit row (and the derivative row is the D row) rather than rounding-close.
        node = np.minimum(np.searchsorted(self.node_times, times), self.n_nodes - 1)
        on_node = self.node_times[node] == times
        at_collocation = on_node & (node > 0)
        k = node[at_collocation] - 1
        interval[at_collocation] = self.collocation_interval[k]
        local[at_collocation] = self._c_flat[k]
        local[on_node & (node == 0)] = 0.0
        return interval, local

    def _evaluate(self, node_values: object, t: object, derivative: bool) -> np.ndarray:
        def basis(m: int, local: np.ndarray, interval: np.ndarray) -> np.ndarray:
            if derivative:
                return lagrange_derivative(radau_table(m), local) / self.h[interval][:, None]
            return lagrange_basis(radau_table(m), local)

        return self._piecewise("node_values", node_values, self.n_nodes, "node", t, basis)

    def _piecewise(
        self, name: str, values: object, n_rows: int, row: str, t: object, basis
    ) -> np.ndarray:
        """Per interval ``basis(m, local, interval) @ values[rows]``, where row k of an
        interval's values is row ``interval_start + k`` of ``values`` (its node x_i0 and
        collocation nodes for node values; its collocation nodes for collocation values, which
        are numbered from the first collocation node)."""
        vals = v.finite_array(name, values)
        if vals.ndim == 0 or vals.shape[0] != n_rows:
            raise ValueError(
                f"{name} must have shape ({n_rows}, ...), one row per {row}, got {vals.shape}"
            )
        times = v.finite_array("t", t)
        interval, local = self.locate(times)
        out = np.empty((interval.size, *vals.shape[1:]))
        m_of = self.stages[interval]
        for m in np.unique(m_of):
            sel = np.flatnonzero(m_of == m)
            b = basis(int(m), local[sel], interval[sel])  # (n_sel, rows per interval)
            rows = self.interval_start[interval[sel]][:, None] + np.arange(b.shape[1])
            out[sel] = np.einsum("kj,kj...->k...", b, vals[rows])
        return out[0] if times.ndim == 0 else out

    # ---- identity -----------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mesh):
            return NotImplemented
        return np.array_equal(self.grid, other.grid) and np.array_equal(self.stages, other.stages)

    def __hash__(self) -> int:
        return hash((self.grid.tobytes(), self.stages.tobytes()))

    def __repr__(self) -> str:
        m = np.unique(self.stages)
        stages = str(int(m[0])) if m.size == 1 else f"{int(m.min())}..{int(m.max())}"
        return (
            f"Mesh(t0={self.t0!r}, tf={self.tf!r}, intervals={self.n_intervals}, "
            f"stages={stages}, nodes={self.n_nodes})"
        )


def _check_span(t0: object, tf: object) -> tuple[float, float]:
    a = v.finite_float("t0", t0)
    b = v.finite_float("tf", tf)
    if not b > a:
        raise ValueError(f"tf must be greater than t0, got t0 = {a!r}, tf = {b!r}")
    return a, b
