#!/usr/bin/env python
"""Rewrite the seed papers' tables in docs/results.md from the stored runs' JSON files.

python scripts/reproduction_report.py                 # from benchmarks/results
python scripts/reproduction_report.py --check         # exit 1 if docs/results.md is stale
python scripts/reproduction_report.py --results runs/reproduce
"""

import sys

from collocnode.cli import reproduction_report

if __name__ == "__main__":
    sys.exit(reproduction_report())
