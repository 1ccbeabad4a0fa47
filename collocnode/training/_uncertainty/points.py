"""The fitted columns of a training problem and their sensitivities at many time points.

A fitted column q_c is a state or a model output y = ψ(x, u, t, p). At a time t in interval i
of a trajectory's mesh the state is the collocation polynomial Σ_l β_l(t) x_il (a row of a
sparse interpolation matrix over the node states), so with the node sensitivities S = dx/dθ

    dq_c/dθ = β S_c                                  (a state)
    dq_c/dθ = ∂ψ_c/∂x β S + ∂ψ_c/∂p dp/dθ             (an output).

Points are handled in chunks of `CHUNK` (the quarter vehicle has 42,001 samples and 92
fitted weights: the sensitivities of all of them at once would take 124 MB), the outputs and
their Jacobians through one mapped CasADi Function called through a ``FunctionBuffer``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import casadi as ca
import numpy as np
import scipy.sparse as sp

from ...transcription._radau import lagrange_basis, radau_table

#: time points per chunk
CHUNK = 2048


def interpolation_matrix(mesh: Any, t: np.ndarray) -> sp.csr_matrix:
    """B (n_t, n_nodes): row k holds the Lagrange basis of the interval of t_k over its m + 1
    node values, so ``B @ node_values`` is the collocation polynomial at t (the mesh's
    ``interpolate``, as a matrix)."""
    interval, local = mesh.locate(t)
    m_of = mesh.stages[interval]
    rows, cols, vals = [], [], []
    for m in np.unique(m_of):
        sel = np.flatnonzero(m_of == m)
        beta = lagrange_basis(radau_table(int(m)), local[sel])
        rows.append(np.repeat(sel, beta.shape[1]))
        cols.append(
            (mesh.interval_start[interval[sel]][:, None] + np.arange(beta.shape[1])).ravel()
        )
        vals.append(beta.ravel())
    return sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(t.size, mesh.n_nodes),
    )


class OutputJacobians:
    """A model's outputs y (n_y) and their Jacobians ∂y/∂x (n_y, n_x), ∂y/∂p (n_y, n_p) at
    many points, evaluated ``chunk`` points at a time by one mapped Function."""

    def __init__(self, model: Any, chunk: int = CHUNK) -> None:
        x, p = ca.SX.sym("x", model.n_states), ca.SX.sym("p", model.n_params)
        u, t = ca.SX.sym("u", model.n_inputs), ca.SX.sym("t")
        _, y = model.symbolic(x, p, u, t)
        outs = [ca.densify(e) for e in (y, ca.jacobian(y, x), ca.jacobian(y, p))]
        self.model, self.chunk = model, chunk
        # p is shared by the points (not repeated), the rest one column per point
        fn = ca.Function("outputs", [x, p, u, t], outs).map("outputs_map", "serial", chunk, [1], [])
        self._fn = fn
        self._args = [np.zeros(fn.nnz_in(i)) for i in range(fn.n_in())]
        self._res = [np.zeros(fn.nnz_out(i)) for i in range(fn.n_out())]
        self._buffer, self._evaluate = fn.buffer()
        for i, a in enumerate(self._args):
            self._buffer.set_arg(i, memoryview(a))
        for i, r in enumerate(self._res):
            self._buffer.set_res(i, memoryview(r))

    def __call__(
        self, x: np.ndarray, p: np.ndarray, u: np.ndarray, t: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """At n <= chunk points: x (n, n_x), u (n, n_u), t (n,) -> y (n, n_y), ∂y/∂x
        (n, n_y, n_x), ∂y/∂p (n, n_y, n_p)."""
        m, n, c = self.model, t.size, self.chunk
        if n > c:
            raise ValueError(f"at most {c} points per call, got {n}")
        pad = lambda a: np.concatenate([a, np.repeat(a[-1:], c - n, axis=0)]) if n < c else a  # noqa: E731
        self._args[0][:] = pad(x).ravel()  # column-major (n_x, c): points are columns
        self._args[1][:] = p
        self._args[2][:] = pad(u).ravel() if m.n_inputs else 0.0
        self._args[3][:] = pad(t)
        self._evaluate()
        ny, nx, npar = m.n_outputs, m.n_states, m.n_params
        y = self._res[0].reshape(c, ny)[:n]
        # a mapped (ny, k) output is the horizontal concatenation of the points' matrices,
        # stored column-major: per point k columns of ny
        jx = self._res[1].reshape(c, nx, ny).transpose(0, 2, 1)[:n]
        jp = self._res[2].reshape(c, npar, ny).transpose(0, 2, 1)[:n]
        return y.copy(), jx.copy(), jp.copy()


def outputs_at(
    model: Any, x: np.ndarray, p: np.ndarray, u: np.ndarray, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`OutputJacobians` at any number of points: y (n, n_y), ∂y/∂x (n, n_y, n_x),
    ∂y/∂p (n, n_y, n_p)."""
    fn = OutputJacobians(model, min(CHUNK, max(1, t.size)))
    parts = [
        fn(x[a : a + fn.chunk], p, u[a : a + fn.chunk], t[a : a + fn.chunk])
        for a in range(0, t.size, fn.chunk)
    ]
    return tuple(np.concatenate([part[k] for part in parts]) for k in range(3))  # type: ignore[return-value]


def chunks(
    sol: Any,
    k: int,
    t: np.ndarray,
    node_sensitivity: np.ndarray | None = None,
    p_columns: np.ndarray | None = None,
    outputs: OutputJacobians | None = None,
    columns: Any = None,
) -> Iterator[tuple[slice, np.ndarray, np.ndarray | None]]:
    """The fitted columns of trajectory k at times t, chunk by chunk: (the chunk's slice of t,
    q (n_c, n_fit), dq/dθ (n_c, n_fit, n_θ) or None without ``node_sensitivity``).

    Args:
        node_sensitivity: dx/dθ at the trajectory's mesh nodes, (n_nodes, n_states, n_θ).
        p_columns: for every entry of θ its index into p, -1 for an initial state (n_θ,).
        outputs: the model's `OutputJacobians` (built here when needed).
        columns: other columns than the fitted ones: ``("x", i)`` for state i, ``("y", j)``
            for output j.
    """
    problem, model = sol.problem, sol.model
    mesh = sol.solution.meshes[k]
    B = interpolation_matrix(mesh, t)
    X = sol.solution.segment_states[k]
    p = np.asarray(sol.p, dtype=float)
    columns = problem.columns if columns is None else columns
    with_outputs = any(kind == "y" for kind, _ in columns)
    if with_outputs:
        outputs = outputs or OutputJacobians(model)
        u_fn = problem.input_function(k)
        u_all = u_fn(t) if u_fn is not None else np.zeros((t.size, 0))
    S = None
    if node_sensitivity is not None:
        n_t = node_sensitivity.shape[2]
        S = node_sensitivity.reshape(node_sensitivity.shape[0], -1)
        in_p = np.flatnonzero(p_columns >= 0)
    step = outputs.chunk if with_outputs else CHUNK
    for start in range(0, t.size, step):
        part = slice(start, min(start + step, t.size))
        Bc = B[part]
        x = Bc @ X
        if with_outputs:
            y, jx, jp = outputs(x, p, u_all[part], t[part])
        q = np.column_stack([x[:, i] if kind == "x" else y[:, i] for kind, i in columns])
        if S is None:
            yield part, q, None
            continue
        dx = (Bc @ S).reshape(x.shape[0], model.n_states, n_t)
        g = np.empty((x.shape[0], len(columns), n_t))
        for c, (kind, i) in enumerate(columns):
            if kind == "x":
                g[:, c] = dx[:, i]
            else:
                g[:, c] = np.einsum("nx,nxt->nt", jx[:, i], dx)
                g[:, c, in_p] += jp[:, i, p_columns[in_p]]
        yield part, q, g
