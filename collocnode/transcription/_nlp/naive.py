"""The same NLP written the naive way: one CasADi graph handed to ``nlpsol``.

This is what a careful CasADi user writes first (CasADi's ``direct_collocation.py`` example): a loop
over nodes that builds every constraint symbolically, then ``nlpsol`` discovers the Jacobian and the
Hessian of the whole graph by AD and graph colouring. It is kept as the reference the structured
transcription is benchmarked against (and tested to agree with): with thousands of nodes sharing
the network weights, the colouring of the dense border dominates the build time.
"""

from __future__ import annotations

import casadi as ca

from .._mesh import Mesh
from .._problem import DynamicOptimizationProblem
from .._radau import radau_table


def naive_nlp(dop: DynamicOptimizationProblem, mesh: Mesh) -> dict[str, ca.MX]:
    """``{"x": z, "f": objective, "g": constraints}`` with the same variable and constraint
    order as `StructuredNLP` (so both can be compared entry by entry); problems without
    controls, algebraic states or a free final time."""
    if dop.node_width > dop.n_states or dop.free_final_time:
        raise ValueError("the naive transcription covers ODE problems with a fixed horizon only")
    nx, npar = dop.n_states, dop.n_params
    x, p = ca.SX.sym("x", nx), ca.SX.sym("p", npar)
    u, t = ca.SX.sym("u", dop.n_inputs), ca.SX.sym("t")
    nom = dop.x_nominal  # the NLP works with x / x_nominal, as the structured one does
    xn = x * nom
    f = ca.Function("f", [x, p, u, t], [dop.dynamics(xn, p, u, t) / nom])
    L = ca.Function("L", [x, p, u, t], [dop.lagrange(xn, p, u, t) if dop.lagrange else 0])
    g = ca.Function("g", [x, p, u, t], [dop.path.fn(xn, p, u, t) if dop.path else ca.SX(0, 1)])
    z = ca.MX.sym("z", mesh.n_nodes * nx + npar)
    X = [z[k * nx : (k + 1) * nx] for k in range(mesh.n_nodes)]
    P = z[mesh.n_nodes * nx :]
    times = mesh.node_times
    U = dop.inputs(times)
    cons, obj = [], 0
    for i in range(mesh.n_intervals):
        m = int(mesh.stages[i])
        D, b = radau_table(m).D, radau_table(m).b
        start = int(mesh.interval_start[i])
        for j in range(1, m + 1):
            k = start + j
            args = (X[k], P, ca.DM(U[k]), times[k])
            cons.append(
                sum(D[j - 1, l] * X[start + l] for l in range(m + 1)) - mesh.h[i] * f(*args)
            )
            cons.append(g(*args))
            obj += mesh.h[i] * b[j - 1] * L(*args)
    if dop.boundary:
        cons.append(dop.boundary.fn(X[0] * nom, X[-1] * nom, P))
    if dop.mayer is not None:
        obj += dop.mayer(X[0] * nom, X[-1] * nom, P)
    return {"x": z, "f": obj, "g": ca.vertcat(*cons)}


def naive_solver(
    dop: DynamicOptimizationProblem, mesh: Mesh, ipopt: dict | None = None, expand: bool = True
) -> ca.Function:
    """``nlpsol`` on `naive_nlp` (``expand=True`` turns the graph into SX first)."""
    return ca.nlpsol(
        "naive",
        "ipopt",
        naive_nlp(dop, mesh),
        {"expand": expand, "ipopt": ipopt or {}, "print_time": False},
    )
