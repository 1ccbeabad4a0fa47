"""The one ``device`` option of the PyTorch side, and the dtype that goes with it."""

from __future__ import annotations

from typing import Any

from ... import _validation as v

DTYPES = ("float64", "float32")


def resolve_device(device: str = "auto") -> Any:
    """A ``torch.device`` for the option value ``device``.

    ``"auto"`` picks CUDA when it is available and the CPU otherwise; ``"cpu"``, ``"cuda"`` and
    ``"cuda:N"`` are taken literally, and asking for CUDA on a machine without it is an error
    rather than a silent fallback (a comparison run on the wrong device would be mislabelled).
    """
    import torch

    if not isinstance(device, str):
        raise TypeError(f"device must be a string, got {device!r}")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        return torch.device("cpu")
    if device == "cuda" or device.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r} was requested but CUDA is not available")
        try:
            dev = torch.device(device)
        except RuntimeError:
            raise ValueError(f"device {device!r} is not a valid CUDA device name") from None
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(
                f"device {device!r} does not exist; {torch.cuda.device_count()} CUDA device(s)"
            )
        return dev
    raise ValueError(f"unknown device {device!r}; valid: auto, cpu, cuda, cuda:N")


def check_device_name(device: str) -> str:
    """Validate the spelling of a device option without importing torch."""
    if not isinstance(device, str):
        raise TypeError(f"device must be a string, got {device!r}")
    if device in ("auto", "cpu", "cuda") or (device.startswith("cuda:") and device[5:].isdigit()):
        return device
    raise ValueError(f"unknown device {device!r}; valid: auto, cpu, cuda, cuda:N")


def resolve_dtype(dtype: str = "float64") -> Any:
    """``torch.float64`` or ``torch.float32`` for the option value ``dtype``."""
    import torch

    return getattr(torch, v.choice("dtype", dtype, DTYPES))
