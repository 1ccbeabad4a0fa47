"""Guards around building and reading the collocation NLP: the build in a thread that Ctrl-C
can leave at once, the memory and time estimates that refuse an NLP before it is built (its
data terms at sample times included), a free final time's stretched mesh, and where a non-finite
value first appears.
"""

from __future__ import annotations

import contextvars
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ... import _validation as v
from ..._status import SolveInterrupted
from ...tools import _progress as progress
from .._mesh import Mesh
from .._problem import DynamicOptimizationProblem
from .assembly import estimated_nonzeros
from .node_functions import build_sample_functions
from .structured import StructuredNLP

# Peak memory of the NLP build per estimated derivative nonzero [bytes]: measured 220-250 on
# Van der Pol (2,500 and 10,000 nodes, 102 weights; numpy assembly, scatter matrices, MX graph).
# The data terms at sample times cost the same per nonzero of theirs: 230 (Van der Pol,
# loss="samples" on 50 x 3 intervals, 10^4 to 3 x 10^4 samples of 28 nonzeros each).
BYTES_PER_NONZERO = 250
# Wall time of the build per nonzero [s], the fast end of what was measured, so that only a
# build too slow even on a quiet machine is refused: 0.46 us per node nonzero quiet (Van der
# Pol 500 x 5 without JIT: 0.5 s), 2.1 us at a load average of 8 on 2 cores; a sample's
# nonzero 4.0 us at that load (its interval's states gathered sample by sample).
BUILD_S_PER_NONZERO = 0.4e-6
BUILD_S_PER_SAMPLE_NONZERO = 0.8e-6
# a build estimated shorter than this is never refused for a time limit: a solve whose limit
# ends during such a build reports TIME_LIMIT like any other (a nest of strategies hands its
# leaves what is left of its limit, which may be milliseconds)
SHORTEST_REFUSED_BUILD_S = 10.0

# The work of one KKT factorization of an exact-Hessian NLP, nodes x n_states x n_params² (the
# node-by-parameter border folded into the dense parameter block), past which the exact Hessian
# stopped paying, and the range of seconds per IPOPT iteration per unit of it. Measured by
# benchmarks/width_crossover.py on Van der Pol (2 cores at load 4-5; docs/performance.md, "Width
# and trajectory count"): 0.2-1.5e-8 s per unit from 1e6 to 4.4e8; at 8.8e7 (480 nodes, 302
# weights) the exact Hessian took 65 s to its optimum and IPOPT's L-BFGS was within 1.3 % of it
# after 38 s; at 1e7 the exact Hessian won by about 3x, at 4.4e8 L-BFGS by more than 2x. The
# stored slider-crank runs of FNODE Table 13 (4497 nodes x 2 states x 369 weights = 1.2e9, one
# core) took 1.5-2.2e-9 s per unit, training time over iterations: the lower end.
FACTORIZATION_WORK_LIMIT = 1e8
S_PER_FACTORIZATION_WORK = (1.5e-9, 1.5e-8)
# ... and only with this many parameters or more: where the work comes from many nodes and few
# weights, the limited-memory Hessian's iteration costs as much as the exact one's and it needs
# more of them (the quarter vehicle's strategy W, 12,500 nodes x 4 states x 92 weights = 4.2e8:
# 2.3 s per iteration either way, settled after 16 exact against 36 limited-memory iterations,
# 37 against 84 s of IPOPT), while the crossover above was at 302 weights
MIN_WARNED_PARAMS = 200

T = TypeVar("T")


class FactorizationCostWarning(UserWarning):
    """An exact-Hessian collocation NLP whose IPOPT iterations are estimated to be slow: its
    work nodes x n_states x n_params² (the node-by-parameter border that every KKT factorization
    folds into the dense parameter block) passes `FACTORIZATION_WORK_LIMIT`. Its one-line
    message names the nodes, states and parameters, the range of seconds per iteration
    measured so far (`S_PER_FACTORIZATION_WORK` per unit) and what to try instead
    (``hessian="limited-memory"``, consensus ADMM over blocks of trajectories on parallel
    workers, fewer nodes or a narrower network). The solve goes ahead unchanged; silence it
    with ``warnings.simplefilter("ignore", FactorizationCostWarning)``. Measured in
    ``docs/performance.md``, "Width and trajectory count"."""


def factorization_work(dop: DynamicOptimizationProblem, meshes: list[Mesh]) -> int:
    """nodes x n_states x n_params² of the NLP of ``dop`` on ``meshes``: collocation nodes over
    every mesh, unknowns per node (``dop.node_width``), NLP parameters (``dop.n_nlp_params``)."""
    nodes = sum(m.n_collocation for m in meshes)
    return nodes * dop.node_width * dop.n_nlp_params**2


def check_factorization(
    dop: DynamicOptimizationProblem, meshes: list[Mesh], hessian: object
) -> None:
    """Warn ([`FactorizationCostWarning`][collocnode.FactorizationCostWarning]) before an
    exact-Hessian NLP of ``dop`` on ``meshes`` is built if `factorization_work` passes
    `FACTORIZATION_WORK_LIMIT` and the NLP has at least `MIN_WARNED_PARAMS` parameters; other
    Hessian choices never warn."""
    if hessian != "exact":
        return
    work = factorization_work(dop, meshes)
    if work <= FACTORIZATION_WORK_LIMIT or dop.n_nlp_params < MIN_WARNED_PARAMS:
        return
    nodes = sum(m.n_collocation for m in meshes)
    low, high = S_PER_FACTORIZATION_WORK
    several = len(meshes) > 1
    admm = "ConsensusADMM over blocks of trajectories on one worker each, " if several else ""
    warnings.warn(
        f"the exact-Hessian NLP has {nodes} collocation nodes x {dop.node_width} states x "
        f"{dop.n_nlp_params} parameters² = {work:.3g} (above {FACTORIZATION_WORK_LIMIT:.3g}), "
        f"about {low * work:.2g}-{high * work:.2g} s per IPOPT iteration; try "
        f'RadauIIA(hessian="limited-memory") with a looser tol or an iteration limit, '
        f"{admm}fewer nodes or a narrower network",
        FactorizationCostWarning,
        stacklevel=4,
    )


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
    [`SolveInterrupted`][collocnode.SolveInterrupted] with the phase the build was in; the worker
    stops at its next checkpoint. Off the main thread (where Python delivers no Ctrl-C) the build
    runs in place. The watcher of the run (`collocnode.tools._progress`) is told each phase once,
    when the build first enters it (the caller has told it "build"): the rest of the build after a
    JIT compile counts toward "compile".

    Raises:
        SolveInterrupted: Ctrl-C during the build, or a KeyboardInterrupt raised by the
            problem's own functions.
    """
    state = {"phase": "build", "abandoned": False}
    told = {"build"}

    def checkpoint(phase: str) -> None:
        if state["abandoned"]:
            raise _Abandoned
        if phase not in told:
            # the build returns to "build" after a JIT compile: a watcher showing "build" again
            # would list the phase twice
            told.add(phase)
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

    context = contextvars.copy_context()  # the caller's watcher (tools/_progress.py) too
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


def sample_nonzeros(dop: DynamicOptimizationProblem, meshes: list[Mesh]) -> tuple[int, int]:
    """(samples, nonzeros) of the data terms at sample times (``loss="samples"``): per sample
    its Hessian entries over its interval's states and the parameters and its gradient over the
    states, from the exact pattern of one sample's term per stage count (one small symbolic
    function each, as the build makes); (0, 0) without samples."""
    if dop.sample_loss is None:
        return 0, 0
    per_m: dict[int, int] = {}
    for seg, mesh in zip(dop.all_segments(), meshes, strict=True):
        samples = seg.samples
        if samples is None:
            continue
        t = samples.t[samples.weights > 0]
        if not t.size:
            continue
        interval, _ = mesh.locate(t)
        stages, counts = np.unique(mesh.stages[interval], return_counts=True)
        for m, n in zip(stages.tolist(), counts.tolist(), strict=True):
            per_m[m] = per_m.get(m, 0) + n
    nonzeros = 0
    for m, n in per_m.items():
        fn = build_sample_functions(dop, m, second=False)
        nonzeros += n * (fn.hxx[0].size + fn.hxp[0].size + dop.node_width * (m + 1))
    return sum(per_m.values()), nonzeros


def check_memory(
    dop: DynamicOptimizationProblem,
    meshes: list[Mesh],
    memory: int | None = None,
    seconds: float | None = None,
) -> None:
    """Raise a ValueError before anything is built if the NLP of ``dop`` on ``meshes`` would
    not fit in ``memory`` bytes (default: what this process may take,
    `collocnode._validation.memory_limit_bytes`: the machine's memory, or less under an
    address-space or cgroup limit), or if its build would take longer than ``seconds`` (a
    time limit of the solve, e.g. IPOPT's ``max_wall_time``; None: none) and longer than
    `SHORTEST_REFUSED_BUILD_S` (a shorter build goes ahead, and the solve reports its time
    limit as it does for any other stop).

    Estimated from its dimensions (`estimated_nonzeros` for the nodes,
    `sample_nonzeros` for the data terms at sample times) at `BYTES_PER_NONZERO`
    and `BUILD_S_PER_NONZERO` / `BUILD_S_PER_SAMPLE_NONZERO`."""
    memory = v.memory_limit_bytes() if memory is None else memory
    ng = dop.n_node_constraints
    nr = dop.boundary.n if dop.boundary else 0
    nx, npar = dop.node_width, dop.n_nlp_params
    est = estimated_nonzeros(nx, npar, ng, nr, meshes)
    n_samples, sample_nz = sample_nonzeros(dop, meshes)
    node_nz = est["jacobian"] + est["hessian"]
    need = BYTES_PER_NONZERO * (node_nz + sample_nz)
    build_s = BUILD_S_PER_NONZERO * node_nz + BUILD_S_PER_SAMPLE_NONZERO * sample_nz
    sizes = (
        f"{est['nodes']} collocation nodes x (n_states = {nx}, n_params = {npar}) give about "
        f"{est['jacobian']:.3g} Jacobian and {est['hessian']:.3g} Hessian nonzeros, of which "
        f"the node-by-parameter border (nodes x n_states x n_params) is "
        f"{est['hessian_border']:.3g} and the parameter block (n_params² / 2) "
        f"{est['hessian_pp']:.3g}"
    )
    if n_samples:  # named first: where they are many, they are what does not fit
        sizes = (
            f"{n_samples} data terms at sample times (loss='samples') give {sample_nz:.3g} "
            f"nonzeros ({sample_nz / n_samples:.3g} each); {sizes}"
        )
    fewer = "use fewer samples (or loss='nodes'), nodes or parameters"
    if not n_samples:
        fewer = "use fewer nodes or parameters"
    if memory is not None and need > memory:
        raise ValueError(
            f"the NLP would need about {need / 1e9:.3g} GB for its derivatives, more than the "
            f"{memory / 1e9:.3g} GB this process may use: {sizes}; {fewer}"
        )
    if seconds is not None and build_s > max(seconds, SHORTEST_REFUSED_BUILD_S):
        raise ValueError(
            f"building the NLP would take at least {build_s:.3g} s, more than the "
            f"{seconds:.3g} s the solve may take (max_wall_time or a time limit): {sizes}; "
            f"{fewer}"
        )


#: the likely cause of a non-finite evaluation, and the levers against it; appended to the
#: message of a solve that ends with IPOPT's ``Invalid_Number_Detected`` (status
#: ``evaluation_error``)
EVALUATION_ERROR_HINT = (
    "likely cause: a model function evaluated where it or its derivative is infinite or "
    "undefined (sqrt(x) at x = 0: an infinite derivative; log(x) at x <= 0; a division by 0), "
    "at the initial guess (a DynamicOptimizationProblem's states: 0 unless x_guess is given) or "
    "at a trial point; give a state guess away from such points (x_guess, or a "
    "TrainingProblem's state_guess) and state bounds (x_lb, x_ub) that keep the states out of "
    "them"
)


def locate_non_finite(nlp: StructuredNLP, z: np.ndarray) -> str:
    """Where the model first produces a NaN/Inf at the iterate ``z``: the variable, node,
    trajectory (when there are several) and time; "" if nowhere.

    A non-finite unknown of ``z`` is named as it is. A non-finite value of the dynamics, path
    constraints or loss at a collocation node, or a non-finite derivative of them (``sqrt(x)``
    at ``x = 0`` has a finite value and an infinite derivative), is named with the unknown it
    is taken with respect to, followed by `EVALUATION_ERROR_HINT`.
    """
    several, layout = len(nlp.meshes) > 1, nlp.layout

    def where(segment: int, local: int, t: float, kind: str) -> str:
        of = f" of trajectory {segment}" if several else ""
        return f"{kind} {local}{of} (t = {t:.6g})"

    if not np.all(np.isfinite(z)):
        i = int(np.flatnonzero(~np.isfinite(z))[0])
        if i >= layout.P0:
            return f"non-finite parameter p[{i - layout.P0}]"
        node, column = divmod(i, layout.nx)
        segment = int(np.searchsorted(layout.node_start, node, side="right")) - 1
        local = node - int(layout.node_start[segment])
        t = float(nlp.meshes[segment].node_times[local])
        return f"non-finite {_unknown(nlp, column)} at " + where(segment, local, t, "node")
    coll_start = np.cumsum([0] + [m.n_collocation for m in nlp.meshes])

    def at_node(k: int) -> str:
        segment = int(np.searchsorted(coll_start, k, side="right")) - 1
        local = k - int(coll_start[segment])
        return where(segment, local, float(nlp.t_coll[k]), "collocation node")

    with np.errstate(all="ignore"):
        vals = nlp.node_values(z)
    for name, what in (("res", "dynamics"), ("g", "path constraints"), ("obj", "loss")):
        arr = vals[name]
        if arr.size and not np.all(np.isfinite(arr)):
            k = int(np.flatnonzero(~np.all(np.isfinite(arr), axis=0))[0])
            return f"non-finite {what} at {at_node(k)}; {EVALUATION_ERROR_HINT}"
    found = _non_finite_derivative(nlp, z)
    if found is None:
        return ""
    k, text = found
    return f"non-finite derivative of the {text} at {at_node(k)}; {EVALUATION_ERROR_HINT}"


def _unknown(nlp: StructuredNLP, column: int) -> str:
    """The name of a node's unknown ``column`` (of the node's [x, z, u_c]), or of the NLP's
    parameter ``column - node_width``."""
    nd, na, nv = nlp.layout.nd, nlp.dop.n_algebraic, nlp.dop.node_width
    if column >= nv:
        return f"parameter p[{column - nv}]"
    if column < nd:
        return f"state x[{column}]"
    if column < nd + na:
        return f"algebraic state z[{column - nd}]"
    return f"control u_c[{column - nd - na}]"


def _non_finite_derivative(nlp: StructuredNLP, z: np.ndarray) -> tuple[int, str] | None:
    """(collocation node, "what with respect to which unknown") of the first node whose node
    derivatives are not finite at ``z`` (the values being finite), or None."""
    with np.errstate(all="ignore"):
        d = nlp.node_derivatives(z)
    nx, na = nlp.dop.n_states, nlp.dop.n_algebraic
    rows, cols = nlp.node.jac
    candidates = []
    for name in ("jac", "gx", "gp"):
        arr = d[name]
        if arr.size and not np.all(np.isfinite(arr)):
            k = int(np.flatnonzero(~np.all(np.isfinite(arr), axis=0))[0])
            entry = int(np.flatnonzero(~np.isfinite(arr[:, k]))[0])
            candidates.append((k, name, entry))
    if not candidates:
        return None
    k, name, entry = min(candidates)
    if name == "jac":
        row, column = int(rows[entry]), int(cols[entry])
        what = (
            "dynamics"
            if row < nx
            else "algebraic equations"
            if row < nx + na
            else "path constraints"
        )
        return k, f"{what} with respect to {_unknown(nlp, column)}"
    column = entry if name == "gx" else nlp.dop.node_width + entry
    return k, f"loss with respect to {_unknown(nlp, column)}"
