"""The algorithm object: the collocation scheme and the NLP solver settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import _validation as v
from .hessian import Hessian, check_hessian
from .ipopt_options import IpoptOptions
from .mesh import Mesh
from .radau import MAX_STAGES


@dataclass(frozen=True)
class RadauIIA:
    """Radau IIA collocation at flipped Legendre-Gauss-Radau points, solved by IPOPT.

    Args:
        intervals: number of equidistant mesh intervals over the problem's horizon.
        stages: collocation nodes per interval (order 2·stages − 1).
        mesh: an explicit :class:`Mesh` (non-uniform grids, per-interval stages); overrides
            ``intervals``/``stages``.
        jit: compile the per-node derivative functions to C (cached on disk; needs gcc).
        threads: threads for the map over collocation nodes (default: the process's share,
            :func:`collocnode.threads.available_threads`: every core unless it runs as one of
            several tasks).
        ipopt: IPOPT settings.
        hessian: "exact" (default), "limited-memory" (IPOPT's L-BFGS of the whole Lagrangian
            Hessian), or a :class:`PartialQuasiNewton` (exact state blocks, quasi-Newton
            parameter blocks; for wide networks, seed paper §2.5.4); see :mod:`.hessian`.

    ``RadauIIA.spectral(70)`` is the global spectral variant: one interval with 70 nodes.
    """

    intervals: int = 100
    stages: int = 3
    mesh: Mesh | None = None
    jit: bool = False
    threads: int | None = None
    ipopt: IpoptOptions = field(default_factory=IpoptOptions)
    hessian: Hessian = "exact"

    def __post_init__(self) -> None:
        check_hessian(self.hessian)
        if not isinstance(self.jit, bool):
            raise TypeError(f"jit must be True or False, got {self.jit!r}")
        v.positive_int("intervals", self.intervals)
        if v.positive_int("stages", self.stages) > MAX_STAGES:
            raise ValueError(f"stages must be at most {MAX_STAGES}, got {self.stages}")
        # one state per node is the least an NLP on this mesh holds
        v.fits_in_memory(
            f"intervals={self.intervals} × stages={self.stages}",
            int(self.intervals) * int(self.stages) + 1,
            "collocation nodes",
        )
        if self.threads is not None:
            v.positive_int("threads", self.threads)
        if self.mesh is not None and not isinstance(self.mesh, Mesh):
            raise TypeError(f"mesh must be a Mesh, got {self.mesh!r}")
        if not isinstance(self.ipopt, IpoptOptions):
            raise TypeError(f"ipopt must be an IpoptOptions, got {self.ipopt!r}")

    @classmethod
    def spectral(cls, nodes: int, **kwargs: object) -> RadauIIA:
        """One interval with ``nodes`` collocation nodes (global spectral collocation)."""
        if v.positive_int("nodes", nodes) > MAX_STAGES:
            raise ValueError(f"nodes must be at most {MAX_STAGES}, got {nodes}")
        return cls(intervals=1, stages=int(nodes), **kwargs)  # type: ignore[arg-type]

    def mesh_for(self, tspan: tuple[float, float]) -> Mesh:
        """The mesh over ``tspan``: ``mesh`` (checked to span it) or an equidistant one."""
        if self.mesh is not None:
            t0, tf = tspan
            tol = 1e-9 * max(1.0, abs(tf - t0))
            if abs(self.mesh.t0 - t0) > tol or abs(self.mesh.tf - tf) > tol:
                raise ValueError(
                    f"mesh spans [{self.mesh.t0}, {self.mesh.tf}] but the problem's horizon is "
                    f"[{t0}, {tf}]"
                )
            return self.mesh
        return Mesh.equidistant(tspan[0], tspan[1], self.intervals, self.stages)
