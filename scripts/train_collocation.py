#!/usr/bin/env python
"""Train a benchmark problem by Radau IIA collocation + IPOPT.

python scripts/train_collocation.py vdp [--noise 0.1] [--seed 0] [--out DIR] ...
python scripts/train_collocation.py vdp --help
"""

import sys

from collocnode._cli import train_collocation

if __name__ == "__main__":
    sys.exit(train_collocation())
