"""The result of solving a dynamic optimization problem by collocation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._status import SolverStatus
from ._mesh import Mesh
from ._nlp.assembly import NLPSize
from ._problem import DynamicOptimizationProblem


class NestRecords:
    """What a solution says of the algorithms it came through: the records of the wrappers of
    the nest that produced it, outermost first (``solve`` sets them; a bare ``RadauIIA`` solve
    has none)."""

    records: tuple[Any, ...]

    def record(self, kind: type) -> Any:
        """The record of the outermost level of the nest of kind ``kind``: a wrapper
        algorithm class (``UntilConsistent``: its ``UntilConsistentRecord``) or a record class.

        Raises:
            KeyError: no level of the nest is of that kind (the message lists the records).
        """
        wanted = getattr(kind, "record_type", None) or kind
        if not isinstance(wanted, type):
            raise TypeError(f"kind must be an algorithm or record class, got {kind!r:.80}")
        for record in self.records:
            if isinstance(record, wanted):
                return record
        held = ", ".join(type(r).__name__ for r in self.records) or "no records"
        raise KeyError(f"the nest holds no {wanted.__name__} (it holds {held})")

    def describe(self) -> str:
        """One line per level of the nest that kept a record, outermost first ("" for a
        bare transcription)."""
        return "\n".join(r.describe() for r in self.records)

    def _nest_rows(self) -> list[tuple[str, str]]:
        return [("algorithm" if k == 0 else "", r.describe()) for k, r in enumerate(self.records)]


@dataclass
class Solution(NestRecords):
    """States at the mesh nodes, parameters, and how the solve went.

    Calling the solution at times ``t`` evaluates the collocation polynomials (dense output).

    Attributes:
        status: the outcome ([`SolverStatus`][collocnode.SolverStatus]); only ``SUCCESS`` means
            IPOPT converged.
        ipopt_status: IPOPT's own return status name.
        message: extra detail (e.g. where a non-finite value appeared).
        objective: final objective value.
        iterations: IPOPT iterations.
        mesh: the collocation mesh.
        x_nodes: states at the mesh nodes, shape (n_nodes, n_states).
        p: parameters, shape (n_params,).
        lam_g: constraint multipliers, shape (n_constraints,).
        history: per iteration (wall time since the IPOPT start [s], iteration, objective,
            primal infeasibility, dual infeasibility).
        timings: wall times [s]: ``build`` (transcription, JIT), ``ipopt`` (IPOPT's own work),
            ``callbacks`` (function and derivative evaluations), ``ordering_trial`` (only with
            an [`OrderingTrial`][collocnode.OrderingTrial]: its trial runs), ``total``.
        size: NLP size (variables, constraints, Jacobian and Hessian nonzeros).
        problem: the solved problem.
        meshes, segment_states: per trajectory (segment) its mesh and node states (n_nodes_s,
            n_states); the first are ``mesh`` and ``x_nodes``.
        non_finite_evaluations: IPOPT callback evaluations (objective, constraints and their
            derivatives) that returned NaN or Inf; IPOPT answers each by shortening its step.
        tf: the final time (the solved one when it is free; then the meshes are stretched to
            it).
        segment_unknowns: per segment all node unknowns [x, z, u_c] (n_nodes_s, node_width);
            read the controls and algebraic states through
            [`controls`][collocnode.Solution.controls] /
            [`algebraic`][collocnode.Solution.algebraic].
        ordering_trial: with an [`OrderingTrial`][collocnode.OrderingTrial], IPOPT's seconds per
            iteration of each MUMPS ordering tried (inf where its trial failed); the solve ran
            with the least. Empty otherwise.
        nlp: the `StructuredNLP` the solve ran on, kept so that its Jacobian and
            Hessian can be evaluated at the optimum afterwards (the uncertainty of a trained
            model); None for a solution made otherwise. It stays in this process: copies and
            pickles of the solution drop it.
        records: the records of the wrappers of the nest ``solve`` ran, outermost first
            (`record`, `describe`).
    """

    status: SolverStatus
    ipopt_status: str
    message: str
    objective: float
    iterations: int
    mesh: Mesh
    x_nodes: np.ndarray
    p: np.ndarray
    lam_g: np.ndarray
    history: list[tuple[float, int, float, float, float]]
    timings: dict[str, float]
    size: NLPSize
    problem: DynamicOptimizationProblem = field(repr=False)
    meshes: list[Mesh] = field(default_factory=list, repr=False)
    segment_states: list[np.ndarray] = field(default_factory=list, repr=False)
    non_finite_evaluations: int = 0
    tf: float | None = None
    segment_unknowns: list[np.ndarray] = field(default_factory=list, repr=False)
    ordering_trial: dict[str, float] = field(default_factory=dict)
    nlp: Any = field(default=None, repr=False, compare=False)
    records: tuple[Any, ...] = field(default=(), repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        # the NLP holds CasADi Functions (and maybe compiled code) of this process only
        return {**self.__dict__, "nlp": None}

    def __post_init__(self) -> None:
        if not self.meshes:
            self.meshes, self.segment_states = [self.mesh], [self.x_nodes]
        if self.tf is None:
            self.tf = float(self.mesh.tf)
        if not self.segment_unknowns:
            self.segment_unknowns = list(self.segment_states)

    def _check_segment(self, segment: int) -> None:
        if not 0 <= segment < self.n_segments:
            raise ValueError(f"segment must be in [0, {self.n_segments}), got {segment}")

    def _node_local(self, first: int, n: int, what: str, t, segment: int) -> np.ndarray:
        if n == 0:
            raise ValueError(f"the problem has no {what}")
        self._check_segment(segment)
        mesh = self.meshes[segment]
        values = self.segment_unknowns[segment][1:, first : first + n]  # collocation nodes
        return mesh.interpolate_collocation(values, t)

    def controls(self, t: np.ndarray | float, segment: int = 0) -> np.ndarray:
        """The free controls at ``t``: scalar -> (n_controls,), (n,) -> (n, n_controls); per
        interval the polynomial through its collocation values (see
        [`Mesh.interpolate_collocation`][collocnode.Mesh.interpolate_collocation])."""
        dop = self.problem
        first = dop.n_states + dop.n_algebraic
        return self._node_local(first, dop.n_controls, "controls", t, segment)

    def algebraic(self, t: np.ndarray | float, segment: int = 0) -> np.ndarray:
        """The algebraic states at ``t``, like [`controls`][collocnode.Solution.controls]:
        (n_algebraic,) or (n, n_algebraic)."""
        dop = self.problem
        return self._node_local(dop.n_states, dop.n_algebraic, "algebraic states", t, segment)

    @property
    def n_segments(self) -> int:
        """Number of trajectories (segments) solved together."""
        return len(self.meshes)

    def states(self, t: np.ndarray | float, segment: int = 0) -> np.ndarray:
        """Dense output of one segment's states at ``t``."""
        self._check_segment(segment)
        scalar = np.ndim(t) == 0
        mesh, x = self.meshes[segment], self.segment_states[segment]
        out = mesh.interpolate(x, np.atleast_1d(np.asarray(t, dtype=float)))
        return out[0] if scalar else out

    @property
    def success(self) -> bool:
        return self.status == SolverStatus.SUCCESS

    @property
    def t_nodes(self) -> np.ndarray:
        return self.mesh.node_times

    def __call__(self, t: np.ndarray | float) -> np.ndarray:
        """States of the first segment at ``t`` (scalar -> (n_states,), (n,) -> (n, n_states))."""
        return self.states(t, 0)

    def derivative(self, t: np.ndarray) -> np.ndarray:
        """Time derivative of the collocation polynomials at ``t``, shape (n, n_states)."""
        return self.mesh.derivative(self.x_nodes, np.atleast_1d(np.asarray(t, dtype=float)))

    def to_dict(self) -> dict[str, Any]:
        """The JSON-friendly summary written to ``result.json``."""
        return {
            "status": self.status.value,
            "ipopt_status": self.ipopt_status,
            "message": self.message,
            "objective": self.objective,
            "iterations": self.iterations,
            "non_finite_evaluations": self.non_finite_evaluations,
            "tf": self.tf,
            "wall_time_s": dict(self.timings),
            **(
                {"ordering_trial_s_per_iteration": dict(self.ordering_trial)}
                if self.ordering_trial
                else {}
            ),
            "n_variables": self.size.n_variables,
            "n_constraints": self.size.n_constraints,
            "nnz_jacobian": self.size.nnz_jacobian,
            "nnz_hessian": self.size.nnz_hessian,
            "mesh": {
                "intervals": self.mesh.n_intervals,
                "stages": sorted({int(s) for s in self.mesh.stages}),
                "nodes": self.mesh.n_nodes,
            },
        }

    def summary(self) -> str:
        """A short human-readable table."""
        t = self.timings
        rows = [
            ("status", f"{self.status.value} ({self.ipopt_status})"),
            ("objective", f"{self.objective:.6g}"),
            ("iterations", str(self.iterations)),
            (
                "wall time [s]",
                f"total {t['total']:.2f} = build {t['build']:.2f} + "
                f"IPOPT {t['ipopt']:.2f} + callbacks {t['callbacks']:.2f}"
                + (f" + ordering trial {t['ordering_trial']:.2f}" if "ordering_trial" in t else ""),
            ),
            ("NLP", f"{self.size.n_variables} variables, {self.size.n_constraints} constraints"),
            ("nonzeros", f"Jacobian {self.size.nnz_jacobian}, Hessian {self.size.nnz_hessian}"),
        ]
        if self.ordering_trial:
            chosen = min(self.ordering_trial, key=self.ordering_trial.__getitem__)
            tried = ", ".join(f"{k} {s:.3g}" for k, s in self.ordering_trial.items())
            rows.append(
                (
                    "MUMPS ordering",
                    f"{chosen} (IPOPT s per iteration in the trial: {tried})",
                )
            )
        if self.non_finite_evaluations:
            rows.append(("NaN/Inf evaluations", str(self.non_finite_evaluations)))
        if self.message:
            rows.append(("message", self.message))
        rows += self._nest_rows()
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {val}" for k, val in rows)
