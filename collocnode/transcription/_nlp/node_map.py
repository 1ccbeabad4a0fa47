"""Evaluating a node function over thousands of nodes: chunked, threaded, summed in bounded memory.

`NodeMap` maps a CasADi Function over N nodes (or samples) for
`collocnode.transcription._nlp.graph`; some of its outputs are summed over the nodes
(``reduce_out``: the objective, the p-gradient, the p-p Hessian block) and the rest are kept per
node.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import casadi as ca

#: bytes that one map may hold for the per-node copies of a summed output: CasADi sums a mapped
#: output (``reduce_out``) only after every node's copy exists, so a network's parameter-block
#: Hessian (n_params² / 2 per node) over 30,000 nodes would need tens of GB
REDUCE_BUFFER_BYTES = 64 * 2**20


def _square_side(n: int) -> int:
    """The smallest b with b² ≥ n: the block size of a map nested as blocks of blocks."""
    return math.isqrt(n - 1) + 1 if n > 1 else 1


class NodeMap:
    """Evaluates a node function over N nodes in ``threads`` chunks of serial maps.

    CasADi's "thread" map starts one thread per evaluation, which is ruinous for thousands of
    cheap node evaluations; so the nodes are split into one serial map per thread and only the
    outer map is threaded. When the summed outputs are large (``reduced_nnz`` numbers per node),
    each chunk is itself a serial map over blocks of at most REDUCE_BUFFER_BYTES worth of nodes,
    so that no buffer holds every node's copy. A map with summed outputs is nested as about
    √N blocks of √N nodes whatever their size: CasADi's construction of a summing map of a
    compiled function takes time per node that grows faster than linearly (the quarter
    vehicle's compiled regression Hessian, 92 parameters: 0.3 s for 500 samples, 1.4 s for
    2,000, 3.7 s for 4,201; as 64 blocks of 66, 0.04 s). N is padded to a multiple of the
    chunk size with neutral nodes (h = w = 0 and zero multipliers, so they add nothing to any
    reduced output); padded outputs are dropped.
    """

    def __init__(self, n: int, threads: int, reduced_nnz: int = 0) -> None:
        self.n = n
        self.threads = max(1, min(threads, n))
        per_thread = -(-n // self.threads)
        nested = _square_side(per_thread) if reduced_nnz else per_thread
        self.block = max(
            1, min(per_thread, nested, REDUCE_BUFFER_BYTES // (8 * max(1, reduced_nnz)))
        )
        self.chunk = self.block * -(-per_thread // self.block)
        self.pad = self.threads * self.chunk - n

    def pad_data(self, data: list) -> list:
        """Pad [Xc, P, U, T, H, W]: states repeat the last node, h and w get zeros."""
        if not self.pad:
            return data
        Xc, P, U, T, H, W = data
        last = lambda a: ca.repmat(a[:, -1], 1, self.pad)  # noqa: E731
        return [
            ca.horzcat(Xc, last(Xc)),
            P,
            ca.horzcat(U, last(U)) if U.shape[0] else ca.DM(0, self.n + self.pad),
            ca.horzcat(T, last(T)),
            ca.horzcat(H, ca.DM.zeros(1, self.pad)),
            ca.horzcat(W, ca.DM.zeros(1, self.pad)),
        ]

    def pad_zeros(self, a):
        return ca.horzcat(a, ca.MX.zeros(a.shape[0], self.pad)) if self.pad else a

    def pad_columns(self, data: list, shared: tuple[int, ...], zero: tuple[int, ...]) -> list:
        """Pad every input but the ``shared`` ones: the ``zero`` ones with zeros (weights, so
        padded entries add nothing to a reduced output), the others by repeating their last
        column."""
        if not self.pad:
            return data
        out = []
        for k, a in enumerate(data):
            if k in shared:
                out.append(a)
            elif a.shape[0] == 0:
                out.append(ca.DM(0, self.n + self.pad))
            elif k in zero:
                out.append(ca.horzcat(a, ca.DM.zeros(a.shape[0], self.pad)))
            else:
                out.append(ca.horzcat(a, ca.repmat(a[:, -1], 1, self.pad)))
        return out

    def function(self, f: ca.Function, reduce_in: list[int], reduce_out: list[int]) -> ca.Function:
        """``f`` mapped over all (padded) nodes: blocks, chunks of blocks, threads of chunks."""
        g = f
        for name, mode, count in (
            ("serial", "serial", self.block),
            ("blocks", "serial", self.chunk // self.block),
            ("threads", "thread", self.threads),
        ):
            if count > 1:
                g = g.map(f"{f.name()}_{name}", mode, count, reduce_in, reduce_out, {})
        return g

    def wrap(self, f: ca.Function, reduce_in: list[int], reduce_out: list[int]) -> Callable:
        """``f`` over all nodes as a call on the (padded) inputs that returns a list of outputs:
        the summed ones, and the others without the padded columns."""
        g = self.function(f, reduce_in, reduce_out)

        def call(*args):
            outs = g(*args)
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            return [
                o if k in reduce_out or not self.pad else o[:, : self.n] for k, o in enumerate(outs)
            ]

        return call


def summed_nnz(functions: Sequence[tuple[ca.Function, tuple[int, ...]]]) -> int:
    """The largest number of nonzeros that one node adds to the summed outputs of a function."""
    return max(sum(f.nnz_out(k) for k in outputs) for f, outputs in functions)
