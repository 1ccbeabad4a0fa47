#!/usr/bin/env python
"""Rewrite the seed papers' tables in docs/results.md from the stored runs' JSON files.

python scripts/reproduction_report.py                 # from benchmarks/results
python scripts/reproduction_report.py --check         # exit 1 if docs/results.md is stale
python scripts/reproduction_report.py --results runs/reproduce

The report's code is repository bookkeeping, not part of the installed package: it lives in
benchmarks/reproduction/, imported with the repository's benchmarks/ folder on the path.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from reproduction.command import reproduction_report

if __name__ == "__main__":
    sys.exit(reproduction_report())
