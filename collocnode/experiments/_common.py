"""Output helpers shared by the experiments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..io import write_json
from ..serialize import save_model
from ..training import TrainingSolution


def save_trained(out_dir: Path, sol: TrainingSolution, result: dict[str, Any]) -> None:
    """Write ``model.json`` and a first ``result.json`` (``"evaluation": "pending"``) as soon as
    training ends, so an interrupted or failing evaluation never loses the trained model."""
    save_model(
        out_dir / "model.json",
        sol,
        metadata={"problem": result.get("problem"), "settings": result.get("settings")},
    )
    write_json(out_dir / "result.json", {**result, "evaluation": "pending"})
