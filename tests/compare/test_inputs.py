"""compare/methods/inputs.py: known inputs as the torch networks receive them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from collocnode.compare.methods.inputs import InputSignal, StackedInputSignals


def _signals(rng: np.random.Generator) -> list[InputSignal]:
    """Sampled signals on grids of different lengths and spans, one of a single sample."""
    out = []
    for n, t0 in ((101, 0.0), (7, -1.0), (1, 0.5), (40, 2.0)):
        t = np.sort(t0 + rng.uniform(0.0, 10.0, n)) if n > 1 else np.array([t0])
        out.append(InputSignal(2, samples=(t, rng.normal(size=(n, 2)))))
    return out


def test_stacked_signals_give_each_signals_values_to_the_bit():
    rng = np.random.default_rng(0)
    signals = _signals(rng)
    rows = torch.as_tensor(rng.integers(0, len(signals), 500))
    t = torch.as_tensor(rng.uniform(-3.0, 14.0, 500))  # inside and outside each grid
    t[:4] = torch.as_tensor([signals[0]._t[0], signals[0]._t[-1], 0.5, 2.0])
    rows[:4] = torch.as_tensor([0, 0, 2, 3])
    got = StackedInputSignals(signals)(rows, t)
    want = torch.stack([signals[int(k)](tk) for k, tk in zip(rows, t, strict=True)])
    assert got.shape == (500, 2)
    assert torch.equal(got, want)


def test_stacked_signals_interpolate_linearly_between_samples():
    sig = InputSignal(1, samples=(np.array([0.0, 1.0, 3.0]), np.array([[0.0], [2.0], [-2.0]])))
    got = StackedInputSignals([sig])(
        torch.zeros(4, dtype=torch.long), torch.tensor([0.5, 2.0, -1.0, 9.0])
    )
    np.testing.assert_allclose(got[:, 0].numpy(), [1.0, 0.0, 0.0, -2.0], rtol=0, atol=1e-15)


def test_stacked_signals_refuse_a_callable_input():
    sampled = InputSignal(1, samples=(np.array([0.0, 1.0]), np.zeros((2, 1))))
    func = InputSignal(1, func=lambda t: np.zeros((np.size(t), 1)))
    assert sampled.sampled and not func.sampled
    with pytest.raises(ValueError, match="sampled signals"):
        StackedInputSignals([sampled, func])
