"""One optimizer step of a gradient trainer, captured as a CUDA graph and replayed
(``GradientOptions.cuda_graph``).

At the FNODE and MBD-NODE papers' batch size of one sample per step, a step on a GPU is a few
dozen small kernels whose launches from Python cost more than their arithmetic
(``benchmarks/epoch_time_devices.py``). Captured once, the whole step (the batch's loss, its
backward pass, the gradient clipping, the fused Adam update and the epoch's loss sum) is one
graph launch (``torch.cuda.CUDAGraph``; the "whole network capture" of PyTorch's CUDA graphs
notes).

The graph is recorded after ``WARMUP`` eager steps on a side stream, as those notes ask (lazily
built library handles and autograd buffers must exist before a capture). They are training
steps on the epoch's own batches, so the sequence of updates is the eager loop's. The
optimizer is built capturable (its step counts live on the device) with the learning rate as a
device tensor that keeps the per-epoch scheduler's value (``keep_learning_rate``), so the
decay reaches the replayed step. A batch of another size than the captured one (the last of an
epoch whose sample count the batch size does not divide) runs eagerly on the same gradient
tensors.

Only methods whose loss is a fixed sequence of device operations (no host synchronisation, no
shape that depends on the data) may be captured; a trainer says so with ``CUDA_GRAPH``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# eager steps before the capture (the number in PyTorch's whole-network capture example)
WARMUP = 3


class GraphedStep:
    """Training steps of one trainer on a CUDA device, replayed from a captured graph.

    Args:
        step: the trainer's training step on a batch of sample indices (a 1-d long tensor on
            the device): loss, backward pass, clipping and update; returns the batch's loss
            times its size as a scalar device tensor, without reading it on the host.
        optimizer: the capturable optimizer ``step`` updates (`capturable_optimizer`).
        batch_size: the batch size to capture.
        device: the CUDA device.
    """

    def __init__(
        self, step: Callable[[Any], Any], optimizer: Any, batch_size: int, device: Any
    ) -> None:
        import torch

        self._step, self._optimizer = step, optimizer
        self._batch, self._device = batch_size, device
        self._stream = torch.cuda.Stream(device)
        self._idx = torch.zeros(batch_size, dtype=torch.long, device=device)
        self._graph: Any = None
        self._eager_steps = 0
        self.total: Any = None  # the sum of batch loss x batch size over the epoch's steps
        # the learning-rate tensors the captured update reads
        self._rates = [group["lr"] for group in optimizer.param_groups]

    def start_epoch(self) -> None:
        """Zero the epoch's loss sum (in place: the graph adds to this tensor)."""
        if self.total is not None:
            self.total.zero_()

    def keep_learning_rate(self) -> None:
        """After a scheduler step: the new learning rate into the tensor the graph reads."""
        keep_learning_rate(self._optimizer, self._rates)

    def __call__(self, idx: Any) -> None:
        """One training step on the samples ``idx`` (a 1-d long tensor on the device)."""
        import torch

        if self._graph is None and self._eager_steps >= WARMUP and idx.numel() == self._batch:
            self._capture()
        if self._graph is not None and idx.numel() == self._batch:
            self._idx.copy_(idx)
            self._graph.replay()
            return
        if self._graph is None:
            # warm-up steps on a side stream, as the capture needs (PyTorch's CUDA graph notes)
            side = self._stream
            side.wait_stream(torch.cuda.current_stream(self._device))
            with torch.cuda.stream(side):
                self._eager(idx, set_to_none=True)
            torch.cuda.current_stream(self._device).wait_stream(side)
            self._eager_steps += 1
            return
        # a batch of another size after the capture: zeroing in place keeps the gradient
        # tensors the graph reads and writes
        self._eager(idx, set_to_none=False)

    def _eager(self, idx: Any, *, set_to_none: bool) -> None:
        self._optimizer.zero_grad(set_to_none=set_to_none)
        weighted = self._step(idx)
        if self.total is None:
            self.total = weighted.clone()
        else:
            self.total.add_(weighted)

    def _capture(self) -> None:
        import torch

        torch.cuda.synchronize(self._device)
        # gradients allocated by the captured backward pass, from the graph's memory pool
        self._optimizer.zero_grad(set_to_none=True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.total.add_(self._step(self._idx))
        self._graph = graph


def keep_learning_rate(optimizer: Any, rates: list[Any]) -> None:
    """Put each parameter group's learning rate into its tensor of ``rates`` (in place) and
    that tensor back into the group: a scheduler may fill the tensor in place or put a new
    value in its place, and a captured update reads only the tensor it was captured with."""
    for group, rate in zip(optimizer.param_groups, rates, strict=True):
        if group["lr"] is not rate:
            rate.fill_(group["lr"])
            group["lr"] = rate


def capturable_optimizer(cls: Any, params: list[Any], lr: float, device: Any, **kw: Any) -> Any:
    """``cls`` (Adam or AdamW) in its fused, capturable form with the learning rate as a
    one-element float32 tensor on ``device`` (the form the fused CUDA kernel reads;
    `keep_learning_rate` keeps the scheduler's value in it)."""
    import torch

    rate = torch.tensor(lr, dtype=torch.float32, device=device)
    return cls(params, lr=rate, fused=True, capturable=True, **kw)
