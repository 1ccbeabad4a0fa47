"""One transcribed problem solved again and again with a proximal term on some of its unknowns.

A consensus method (ADMM, `collocnode.strategies._admm`) solves each block of a split problem
many times, each time pulled toward new values of its shared unknowns:

    minimize  f(z) + ½ Σ_i rho_i (z_{S_i} - c_i)²

The NLP is built once with ``rho`` and ``c`` as NLP parameters (`StructuredNLP.set_proximal`); each
solve sets their values and starts IPOPT from the last iterate. The block exchanges plain arrays
only, so it can live in another process (a Dask actor) and keep its CasADi graph there.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ._collocation import RadauIIA, build_nlp, package
from ._ipopt.backends import solve_ipopt
from ._mesh import Mesh
from ._problem import DynamicOptimizationProblem
from ._solution import Solution

__all__ = ["ProximalBlock"]


class ProximalBlock:
    """A problem's NLP with a proximal term on the unknowns ``shared`` (indices into the NLP's
    unknowns, `collocnode.transcription._nlp`), built once; `solve` re-solves it warm-started.

    Args:
        dop: the block's problem.
        alg: the collocation scheme and IPOPT settings.
        meshes: one mesh per segment of ``dop``.
        shared: the NLP indices S of the unknowns in the proximal term (scaled units: parameters
            as they are, states divided by their nominal value).
    """

    def __init__(
        self,
        dop: DynamicOptimizationProblem,
        alg: RadauIIA,
        meshes: list[Mesh],
        shared: np.ndarray,
    ) -> None:
        t = time.perf_counter()
        self.alg = alg
        self.nlp, self.z = build_nlp(dop, alg, meshes, proximal=shared, advise=True)
        self._build_s = time.perf_counter() - t
        self.last: Solution | None = None

    @property
    def build_s(self) -> float:
        """Wall time of building the NLP [s]."""
        return self._build_s

    @property
    def shared_values(self) -> np.ndarray:
        """The shared unknowns at the current iterate, (len(S),)."""
        return self.z[self.nlp.proximal].copy()

    def move(self, shared: np.ndarray) -> None:
        """Set the shared unknowns of the iterate the next solve starts from, (len(S),)."""
        self.z[self.nlp.proximal] = np.asarray(shared, dtype=float)

    def solve(self, rho: np.ndarray, center: np.ndarray) -> dict[str, Any]:
        """Solve with the proximal term's ``rho`` and ``center`` (each (len(S),)) from the last
        iterate. Returns plain data: ``shared`` (the shared unknowns at the solution),
        ``objective`` (the problem's own objective, proximal term excluded), ``status`` (the
        [`SolverStatus`][collocnode.SolverStatus] value), ``message``, ``iterations``,
        ``seconds`` (wall time of the solve)."""
        t = time.perf_counter()
        self.nlp.set_proximal(rho, center)
        res = solve_ipopt(self.nlp, self.z, self.alg.ipopt, hessian=self.alg.hessian)
        seconds = time.perf_counter() - t
        if np.all(np.isfinite(res.z)):
            self.z = res.z
        self.last = package(self.nlp, res, self._build_s, seconds, False)
        gap = res.z[self.nlp.proximal] - center
        return {
            "shared": res.z[self.nlp.proximal].copy(),
            "objective": float(res.objective - 0.5 * np.sum(rho * gap**2)),
            "status": res.status.value,
            "message": self.last.message,
            "iterations": int(res.iterations),
            "seconds": seconds,
        }

    def states(self) -> dict[str, Any]:
        """The last solve's node states per segment (``segment_states``, physical units),
        ``meshes`` and NLP ``size`` (n_variables, n_constraints, nnz_jacobian, nnz_hessian)."""
        if self.last is None:
            raise RuntimeError("the block has not been solved yet")
        size = self.last.size
        return {
            "segment_states": [np.asarray(x) for x in self.last.segment_states],
            "meshes": list(self.last.meshes),
            "size": (size.n_variables, size.n_constraints, size.nnz_jacobian, size.nnz_hessian),
            "build_s": self._build_s,
        }
