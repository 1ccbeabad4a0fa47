"""What a trained block sees and gives at the collocation nodes: the regression data of discovery.

After training, the collocated states at every node are a denoised trajectory that the model's
right-hand side matches exactly (the collocation equations hold there), so the inputs and outputs
of a block at the nodes are the pairs a sparse regression needs, with no finite differences of
noisy data. The block's inputs are whatever the user's physics feeds it (``blocks["friction"](dv)``
with ``dv`` a function of the states), so they are found by evaluating the physics once on
symbols with a `Blocks` mapping that records every call of the
named block: each call gives one (input, output) pair per node.

Only the collocation nodes count (not the initial node ``x_00``, where no collocation equation
holds); their Radau quadrature weights ``h_i b_j`` (paper eq. 10) weight the regression so that
its sum approximates the integral over the horizon, as the training loss does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from ...models._hybrid import Blocks, HybridModel

#: the block name that stands for the whole right-hand side of the model
RHS = None


class DiscoveryWarning(UserWarning):
    """Discovery ran on a doubtful model (one that failed its consistency check), or it or its
    re-fit did not give a closed-form model (the trained network is then kept)."""


class DiscoveryError(ValueError):
    """Discovery cannot give a closed form for this block with these settings (the message
    names the block, the output or the term); the trained model is untouched."""


@dataclass(frozen=True)
class BlockSamples:
    """A block's inputs and outputs at the collocation nodes of a trained model.

    Attributes:
        block: the block's name, or None for the model's whole right-hand side.
        inputs: the block's inputs, shape (n_samples, n_in) (units of the inputs).
        outputs: its outputs, shape (n_samples, n_out).
        weights: the Radau quadrature weight of each sample's node, shape (n_samples,) [s]
            (summing to the horizons' total length, times the calls per node).
        times: the node time of each sample, shape (n_samples,) [s].
        input_names, output_names: labels (a state's name where an input is that state).
        n_measured: the measured samples behind the fit (all trajectories'), the sample size
            the model-selection criteria count: the nodes interpolate the data, they add no
            independent observations.
        calls: how many times the physics calls the block per node.
    """

    block: str | None
    inputs: np.ndarray
    outputs: np.ndarray
    weights: np.ndarray
    times: np.ndarray
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    n_measured: int
    calls: int = 1

    @property
    def n_samples(self) -> int:
        return int(self.inputs.shape[0])

    @property
    def label(self) -> str:
        return "the right-hand side" if self.block is None else f"block {self.block!r}"


class _Recording(Blocks):
    """`Blocks` that records the input and output expression of every call of one
    block while evaluating it as usual."""

    def __init__(self, blocks: Mapping[str, Any], weights: Mapping[str, Any], name: str) -> None:
        super().__init__(blocks, weights)
        self._name = name
        self.calls: list[tuple[Any, Any]] = []

    def __getitem__(self, name: str) -> Any:
        evaluate = super().__getitem__(name)
        if name != self._name:
            return evaluate

        def recorded(x: Any) -> Any:
            out = evaluate(x)
            self.calls.append((ca.vertcat(x), out))
            return out

        return recorded


def _labels(given: Sequence[str], prefix: str, n: int) -> tuple[str, ...]:
    return tuple(given) if given else tuple(f"{prefix}{i}" for i in range(n))


def trace_block(model: HybridModel, block: str | None) -> tuple[ca.Function, int, tuple[str, ...]]:
    """``io(x, p, u, t) -> (inputs (n_in, calls), outputs (n_out, calls))`` of the block, its
    number of calls per node and the names of its inputs."""
    x = ca.SX.sym("x", model.n_states)
    p = ca.SX.sym("p", model.n_params)
    u = ca.SX.sym("u", model.n_inputs)
    t = ca.SX.sym("t")
    states = _labels(model.state_names, "x", model.n_states)
    inputs = _labels(model.input_names, "u", model.n_inputs)
    if block is RHS:
        xdot, _ = model.symbolic(x, p, u, t)
        return ca.Function("io", [x, p, u, t], [ca.vertcat(x, u), xdot]), 1, states + inputs
    offsets = [0, *(s.stop for s in model.slices.values())]
    parts = dict(zip(model.slices, ca.vertsplit(p, offsets), strict=True))
    weights = {name: parts[name] for name in model.blocks}
    params = {
        name: (parts[name] if par.fit else par.value) for name, par in model.parameters.items()
    }
    recording = _Recording(model.blocks, weights, block)
    model.rhs(x, u, t, recording, params)
    n_rhs = len(recording.calls)
    if model.outputs is not None:  # a block used only in the outputs still has samples
        model.outputs(x, u, t, recording, params)
    calls = recording.calls if n_rhs == 0 else recording.calls[:n_rhs]
    if not calls:
        raise DiscoveryError(
            f"block {block!r} is never called by the model's physics, so it has no samples"
        )
    z = ca.horzcat(*(c[0] for c in calls))
    y = ca.horzcat(*(c[1] for c in calls))
    symbols = [*(x[i] for i in range(model.n_states)), *(u[i] for i in range(model.n_inputs))]
    names = []
    for k in range(z.size1()):
        # an input that is a state or a known input (in every call) keeps that column's name
        same = [
            i
            for i, s in enumerate(symbols)
            if all(ca.is_equal(z[k, c], s) for c in range(z.size2()))
        ]
        names.append((states + inputs)[same[0]] if same else f"z{k}")
    return ca.Function("io", [x, p, u, t], [z, y]), len(calls), tuple(names)


def node_points(trained: Any) -> Iterator[tuple[Any, np.ndarray, np.ndarray, np.ndarray]]:
    """Per trajectory of a trained model: its mesh, the collocation node times (n,), the
    states there (n, n_states) and the known inputs there (n, n_inputs)."""
    problem, solution = trained.problem, trained.solution
    for k in range(problem.n_trajectories):
        mesh = solution.meshes[k]
        nodes = mesh.collocation_index
        t = mesh.node_times[nodes]
        u_fn = problem.input_function(k)
        u = np.zeros((t.size, 0)) if u_fn is None else np.asarray(u_fn(t), dtype=float)
        yield mesh, t, solution.segment_states[k][nodes], u


def evaluate_traced(
    io: ca.Function, calls: int, p: np.ndarray, t: np.ndarray, x: np.ndarray, u: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A traced block's inputs and outputs (`trace_block`) at n points: times ``t`` (n,), states
    ``x`` (n, n_states), inputs ``u`` (n, n_inputs), parameters ``p`` (n_params,); shapes
    (n · calls, n_in) and (n · calls, n_out), point by point, call by call."""
    p = np.asarray(p, dtype=float)
    z, y = io.map(t.size)(x.T, np.repeat(p[:, None], t.size, axis=1), u.T, t[None, :])
    # (n_in, calls · n) column blocks per call -> samples ordered point by point, call by call
    n_in, n_out = io.size1_out(0), io.size1_out(1)
    z = np.asarray(z).reshape(n_in, t.size, calls).transpose(1, 2, 0).reshape(-1, n_in)
    y = np.asarray(y).reshape(n_out, t.size, calls).transpose(1, 2, 0).reshape(-1, n_out)
    return z, y


def block_samples(trained: Any, block: str | None = RHS) -> BlockSamples:
    """The inputs and outputs of ``block`` (None: the whole right-hand side, whose inputs are
    the states and the known inputs) at the collocation nodes of every trajectory of a
    [`TrainingSolution`][collocnode.TrainingSolution], with the nodes' quadrature weights.

    Raises:
        DiscoveryError: ``block`` is not a block of the model, or the physics never calls it.
    """
    model: HybridModel = trained.model
    if block is not RHS:
        if not isinstance(block, str):
            raise TypeError(f"block must be a block name or None, got {block!r:.60}")
        if block not in model.blocks:
            known = ", ".join(repr(b) for b in model.blocks) or "none"
            raise DiscoveryError(
                f"unknown block {block!r}; the model's blocks: {known} (or None for the whole "
                f"right-hand side)"
            )
    io, calls, input_names = trace_block(model, block)
    problem = trained.problem
    zs, ys, ws, ts = [], [], [], []
    for mesh, t, x, u in node_points(trained):
        z, y = evaluate_traced(io, calls, trained.p, t, x, u)
        zs.append(z)
        ys.append(y)
        ws.append(np.repeat(mesh.quadrature_weights, calls))
        ts.append(np.repeat(t, calls))
    n_measured = 0
    for k, (t0, tf) in enumerate(problem.horizons()):
        t = problem.trajectories[k].t
        inside = (t >= t0) & (t <= tf)
        n_measured += int(np.count_nonzero(problem.observed(k)[inside].any(axis=1)))
    if block is RHS:
        out_names = tuple(f"{s}'" for s in _labels(model.state_names, "x", model.n_states))
    else:
        out_names = tuple(f"{block}[{j}]" for j in range(model.blocks[block].n_out))
    return BlockSamples(
        block=block,
        inputs=np.vstack(zs),
        outputs=np.vstack(ys),
        weights=np.concatenate(ws),
        times=np.concatenate(ts),
        input_names=input_names,
        output_names=out_names,
        n_measured=n_measured,
        calls=calls,
    )
