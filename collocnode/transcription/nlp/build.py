"""Guards around building and reading the collocation NLP: the build in a thread that Ctrl-C
can leave at once, the memory estimate that refuses an NLP before it is built, a free final
time's stretched mesh, and where a non-finite value first appears.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ... import _validation as v
from ...status import SolveInterrupted
from ...tools import progress
from ..mesh import Mesh
from ..problem import DynamicOptimizationProblem
from .assembly import estimated_nonzeros
from .structured import StructuredNLP

# Peak memory of the NLP build per estimated derivative nonzero [bytes]: measured 220-250 on
# Van der Pol (2,500 and 10,000 nodes, 102 weights; numpy assembly, scatter matrices, MX graph).
BYTES_PER_NONZERO = 250

T = TypeVar("T")


def stretched(mesh: Mesh, t0: float, tf: float) -> Mesh:
    """``mesh`` (built on [t0, tf_guess]) stretched to [t0, tf]: the free final time's mesh."""
    grid = t0 + (mesh.grid - t0) * ((tf - t0) / (mesh.tf - t0))
    grid[-1] = tf
    return Mesh.from_grid(grid, mesh.stages)


class _Abandoned(Exception):
    """Stops a build whose caller has gone (Ctrl-C) at its next checkpoint."""


def build_interruptibly(build: Callable[[Callable[[str], None]], T]) -> T:
    """``build(checkpoint)`` in a worker thread while the main thread waits, so that Ctrl-C
    takes effect at once even inside one long CasADi call (CasADi releases the GIL).

    ``build`` calls ``checkpoint(phase)`` at each step ("build" or "compile"). Ctrl-C raises
    :class:`SolveInterrupted` with the phase the build was in; the worker stops at its next
    checkpoint. Off the main thread (where Python delivers no Ctrl-C) the build runs in place.

    Raises:
        SolveInterrupted: Ctrl-C during the build, or a KeyboardInterrupt raised by the
            problem's own functions.
    """
    state = {"phase": "build", "abandoned": False}

    def checkpoint(phase: str) -> None:
        if state["abandoned"]:
            raise _Abandoned
        if phase != state["phase"]:
            progress.phase(phase)  # to the watcher of the run, if any
        state["phase"] = phase

    if threading.current_thread() is not threading.main_thread():
        try:
            return build(checkpoint)
        except KeyboardInterrupt as interrupt:
            raise SolveInterrupted(state["phase"]) from interrupt
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["value"] = build(checkpoint)
        except BaseException as err:  # handed to the waiting thread
            outcome["error"] = err

    context = contextvars.copy_context()  # the caller's watcher (tools/progress.py) too
    worker = threading.Thread(
        target=context.run, args=(work,), name="collocnode-nlp-build", daemon=True
    )
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except KeyboardInterrupt as interrupt:
        state["abandoned"] = True
        raise SolveInterrupted(state["phase"]) from interrupt
    err = outcome.get("error")
    if isinstance(err, SolveInterrupted):
        raise err
    if isinstance(err, KeyboardInterrupt):
        raise SolveInterrupted(state["phase"]) from err
    if err is not None:
        raise err
    return outcome["value"]


def check_memory(
    dop: DynamicOptimizationProblem, meshes: list[Mesh], memory: int | None = None
) -> None:
    """Raise a ValueError if the NLP of ``dop`` on ``meshes`` would not fit in ``memory``
    bytes (default: this machine's physical memory), estimated from its dimensions with
    :func:`.assembly.estimated_nonzeros` at :data:`BYTES_PER_NONZERO`."""
    memory = v.physical_memory_bytes() if memory is None else memory
    ng = dop.n_node_constraints
    nr = dop.boundary.n if dop.boundary else 0
    nx, npar = dop.node_width, dop.n_nlp_params
    est = estimated_nonzeros(nx, npar, ng, nr, meshes)
    need = BYTES_PER_NONZERO * (est["jacobian"] + est["hessian"])
    if memory is None or need <= memory:
        return
    raise ValueError(
        f"the NLP would need about {need / 1e9:.3g} GB for its derivatives, more than this "
        f"machine's memory ({memory / 1e9:.3g} GB): {est['nodes']} collocation nodes x "
        f"(n_states = {nx}, n_params = {npar}) give about {est['jacobian']:.3g} Jacobian and "
        f"{est['hessian']:.3g} Hessian nonzeros, of which the node-by-parameter border "
        f"(nodes x n_states x n_params) is {est['hessian_border']:.3g} and the parameter block "
        f"(n_params² / 2) {est['hessian_pp']:.3g}; use fewer nodes or parameters"
    )


def locate_non_finite(nlp: StructuredNLP, z: np.ndarray) -> str:
    """Where the model first produces a NaN/Inf at the iterate ``z``: the variable, node,
    trajectory (when there are several) and time; "" if nowhere."""
    several, layout = len(nlp.meshes) > 1, nlp.layout

    def where(segment: int, local: int, t: float, kind: str) -> str:
        of = f" of trajectory {segment}" if several else ""
        return f"{kind} {local}{of} (t = {t:.6g})"

    if not np.all(np.isfinite(z)):
        i = int(np.flatnonzero(~np.isfinite(z))[0])
        if i >= layout.P0:
            return f"non-finite parameter p[{i - layout.P0}]"
        node, state = divmod(i, layout.nx)
        segment = int(np.searchsorted(layout.node_start, node, side="right")) - 1
        local = node - int(layout.node_start[segment])
        t = float(nlp.meshes[segment].node_times[local])
        nd, na = layout.nd, nlp.dop.n_algebraic
        name = (
            f"state x[{state}]"
            if state < nd
            else f"algebraic state z[{state - nd}]"
            if state < nd + na
            else f"control u_c[{state - nd - na}]"
        )
        return f"non-finite {name} at " + where(segment, local, t, "node")
    vals = nlp.node_values(z)
    coll_start = np.cumsum([0] + [m.n_collocation for m in nlp.meshes])
    for name, what in (("res", "dynamics"), ("g", "path constraints"), ("obj", "loss")):
        arr = vals[name]
        if arr.size and not np.all(np.isfinite(arr)):
            k = int(np.flatnonzero(~np.all(np.isfinite(arr), axis=0))[0])
            segment = int(np.searchsorted(coll_start, k, side="right")) - 1
            local = k - int(coll_start[segment])
            t = float(nlp.t_coll[k])
            return f"non-finite {what} at " + where(segment, local, t, "collocation node")
    return ""
