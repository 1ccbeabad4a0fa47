"""The one device option: "auto" picks CUDA when present, else the CPU; bad names are errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from collocnode.compare.methods.device import check_device_name, resolve_device, resolve_dtype

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "compare.py"


def test_auto_follows_cuda_availability():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert resolve_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_cuda_is_an_error_not_a_silent_fallback():
    with pytest.raises(ValueError, match="CUDA is not available"):
        resolve_device("cuda")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_cuda_stops_trainers_and_the_script_before_any_work():
    from collocnode.compare import make_trainer

    with pytest.raises(ValueError, match="'cuda:99' was requested but CUDA is not available"):
        make_trainer("fnode", "smsd", device="cuda:99")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "vdp", "--device", "cuda:99", "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "compare.py: error: device 'cuda:99' was requested but CUDA is not available"
    ]


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "", "CPU"])
def test_bad_device_names(bad):
    with pytest.raises(ValueError, match="unknown device"):
        check_device_name(bad)
    with pytest.raises(ValueError):
        resolve_device(bad)


def test_dtype_option():
    assert resolve_dtype("float64") is torch.float64
    assert resolve_dtype("float32") is torch.float32
    with pytest.raises(ValueError, match="unknown dtype 'float16'"):
        resolve_dtype("float16")


def test_float32_training_runs_in_float32():
    from collocnode import problems
    from collocnode.compare import make_trainer

    system = problems.get("vdp")
    trainer = make_trainer("fnode", epochs=1, hidden=(8,), dtype="float32", device="cpu")
    trainer.fit(system, system.generate(n_steps=20, n_train=20).train)
    assert next(trainer.field.parameters()).dtype is torch.float32
