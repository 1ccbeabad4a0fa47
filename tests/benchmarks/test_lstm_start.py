"""The LSTM start diagnostic: its diagonal is the comparison's LSTM row; its off-diagonal cells
change the rollout's start alone."""

from __future__ import annotations

import numpy as np
import pytest
from load_benchmark import load_benchmark

pytest.importorskip("torch")
lstm_start = load_benchmark("lstm_start")


def test_the_diagonal_is_the_comparisons_row():
    from collocnode.compare._run.config import CompareConfig
    from collocnode.compare._run.harness import run

    args = lstm_start.parse_args(["--epochs", "1", "--layers", "1"])
    cells = lstm_start.run_seed(args, seed=1)
    options = {"epochs": 1, "lr": args.lr, "layers": 1}
    cfg = CompareConfig(
        "cart_pole", ("lstm",), preset="mbdnode", device="cpu", seed=1, options={"lstm": options}
    )
    row = run(cfg, progress=False)["rows"][0]
    padded = cells["padded"]["rollouts"]
    for score in lstm_start.SCORES:
        np.testing.assert_allclose(padded["padded"][score], row[score], rtol=1e-9)
    # rolled out from the first true states, the same model scores otherwise on the training
    # window; trained on the full windows only, it is another model
    assert padded["data"]["train_mse"] != padded["padded"]["train_mse"]
    data = cells["data"]["rollouts"]
    assert data["data"]["full_mse"] != padded["data"]["full_mse"]
    assert cells["data"]["status"] == cells["padded"]["status"] == "success"
