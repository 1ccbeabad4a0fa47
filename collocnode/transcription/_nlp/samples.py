"""The data terms at sample times located on the mesh: the samples grouped by the stage count of
their interval (and by the values of the problem's ``sample_groups`` columns, which each group's
function then takes as constants), each with the constants its data-term function is mapped
over (`collocnode.transcription._nlp.graph`).

A sample at time t lies in interval i at local time σ: its state is the interval's collocation
polynomial there, ``Σ_l l~_l(σ) x_il`` with ``beta`` the Lagrange basis row (computed once), so
each data term touches only its interval's m + 1 node states and the parameters.
"""

from __future__ import annotations

import numpy as np

from .._mesh import Mesh
from .._problem import DynamicOptimizationProblem
from .._radau import lagrange_basis, radau_table
from .node_functions import SampleFunctions


class SampleGroup:
    """The data terms of the samples that lie in intervals of ``m`` stages (all segments), with
    the constants their function is mapped over.

    Attributes: ``m``; ``fixed``: the data columns every sample of the group shares, column ->
    value (the problem's ``sample_groups``); per sample ``first_node`` (n_s,) the global node
    index of x_i0 of its interval, ``segment`` (n_s,), ``t`` (n_s,) [s], ``beta`` (n_s, m + 1)
    the Lagrange basis row at its local time, ``u`` (n_s, n_u), ``data`` (n_s, n_data),
    ``weights`` (n_s,); ``fn`` its `SampleFunctions` (set when the NLP is built).
    """

    def __init__(
        self, m: int, parts: list[dict[str, np.ndarray]], fixed: dict[int, float] | None = None
    ) -> None:
        self.m = m
        self.fixed = dict(fixed or {})
        cat = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
        self.first_node, self.segment, self.t = cat["first_node"], cat["segment"], cat["t"]
        self.beta, self.u, self.data = cat["beta"], cat["u"], cat["data"]
        self.weights = cat["weights"]
        self.fn: SampleFunctions | None = None

    @property
    def n(self) -> int:
        return int(self.t.size)


def place_samples(
    dop: DynamicOptimizationProblem, meshes: list[Mesh], node_start: np.ndarray
) -> list[SampleGroup]:
    """Every segment's samples located on its mesh, grouped by the stage count of their
    interval (increasing m); samples with weight 0 are dropped (they add nothing)."""
    parts: dict[tuple[int, tuple[float, ...]], list[dict[str, np.ndarray]]] = {}
    columns = list(dop.sample_groups)
    for k, (seg, mesh) in enumerate(zip(dop.all_segments(), meshes, strict=True)):
        samples = seg.samples
        if samples is None:
            continue
        keep = np.flatnonzero(samples.weights > 0)
        if not keep.size:
            continue
        t = samples.t[keep]
        interval, local = mesh.locate(t)
        u = seg.inputs(t)
        m_of = mesh.stages[interval]
        data = samples.data[keep]
        keys = [tuple(row) for row in data[:, columns].tolist()] if columns else [()] * t.size
        for m, key in sorted({(int(a), b) for a, b in zip(m_of.tolist(), keys, strict=True)}):
            sel = np.flatnonzero((m_of == m) & np.array([kk == key for kk in keys]))
            parts.setdefault((m, key), []).append(
                {
                    "first_node": int(node_start[k]) + mesh.interval_start[interval[sel]],
                    "segment": np.full(sel.size, k),
                    "t": t[sel],
                    "beta": lagrange_basis(radau_table(m), local[sel]),
                    "u": u[sel],
                    "data": samples.data[keep[sel]],
                    "weights": samples.weights[keep[sel]],
                }
            )
    return [
        SampleGroup(m, parts[(m, key)], dict(zip(columns, key, strict=True)))
        for m, key in sorted(parts)
    ]
