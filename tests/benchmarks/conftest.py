"""The tests of ``benchmarks/``: its folder on the path, as when one of its scripts runs, so the
modules its scripts share (``reproduction``, the report of the seed papers' tables) import by
name."""

import sys
from pathlib import Path

BENCHMARKS = str(Path(__file__).resolve().parents[2] / "benchmarks")
if BENCHMARKS not in sys.path:
    sys.path.append(BENCHMARKS)
