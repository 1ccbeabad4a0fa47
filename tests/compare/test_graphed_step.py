"""A training step captured as a CUDA graph (``cuda_graph=True``): refused where it cannot
apply, and on a GPU the same updates as the eager loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from collocnode import problems
from collocnode.compare import make_trainer
from collocnode.compare.methods.graphed_step import keep_learning_rate
from collocnode.compare.methods.options import GradientOptions

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_option_must_be_a_bool():
    with pytest.raises(TypeError, match="cuda_graph must be a bool, got 'yes'"):
        GradientOptions(cuda_graph="yes")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_refused_on_the_cpu(device):
    message = f"cuda_graph=True needs a CUDA device, got device='{device}'"
    with pytest.raises(ValueError, match=message):
        make_trainer("lstm", "smsd", device=device, cuda_graph=True)


@pytest.mark.parametrize("method", ["fnode", "mbdnode", "hnn", "node"])
def test_refused_for_a_method_whose_step_is_not_capturable(method):
    with pytest.raises(ValueError, match=f"step of method '{method}' cannot be captured"):
        make_trainer(method, "smsd", device="cpu", cuda_graph=True)


@pytest.mark.parametrize("replace", [False, True])
def test_the_decayed_learning_rate_reaches_the_tensor_a_graph_reads(replace):
    weight = torch.nn.Parameter(torch.zeros(3))
    rate = torch.tensor(1e-3, dtype=torch.float32)
    optimizer = torch.optim.Adam([weight], lr=rate)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
    rates = [rate]
    for epoch in range(1, 4):
        weight.grad = torch.ones(3)
        optimizer.step()
        scheduler.step()
        if replace:  # a scheduler that puts a new value in the group instead of filling it
            optimizer.param_groups[0]["lr"] = float(optimizer.param_groups[0]["lr"])
        keep_learning_rate(optimizer, rates)
        assert optimizer.param_groups[0]["lr"] is rate
        assert float(rate) == pytest.approx(1e-3 * 0.5**epoch, rel=1e-6)


@needs_cuda
@pytest.mark.parametrize(
    ("method", "overrides"),
    [
        ("lstm", {"batch_size": 1}),
        # a batch size that leaves a shorter last batch (run eagerly), with clipping
        ("lstm", {"batch_size": 7, "grad_clip": 0.5}),
        ("fcnn", {"batch_size": 1, "lr_decay": 0.5}),
    ],
)
def test_graph_replays_the_eager_updates(method, overrides):
    system = problems.get("smsd")
    split = system.generate(seed=0)
    runs = {}
    for graph in (False, True):
        trainer = make_trainer(
            method,
            "smsd",
            quick=True,
            device="cuda",
            dtype="float64",
            epochs=3,
            cuda_graph=graph,
            **overrides,
        )
        result = trainer.fit(system, split.train)
        assert result.status == "success", result.message
        losses = [loss for _, _, loss in result.history]
        runs[graph] = (losses, trainer.predict(split.test.t, split.test.x[0]))
    # float64 weights; the graph's learning rate is a float32 tensor (rel. 1e-8 apart)
    np.testing.assert_allclose(runs[True][0], runs[False][0], rtol=1e-5)
    np.testing.assert_allclose(runs[True][1], runs[False][1], rtol=1e-4, atol=1e-6)
