#!/usr/bin/env python
"""Fit a PEtab problem by collocation (named fit_petab, not petab: a script beside the
petab package would shadow it): multistart, report, waterfall and fit figures.

python scripts/fit_petab.py PATH/TO/problem.yaml [--starts 10] [--workers 2] [--out DIR]
python scripts/fit_petab.py Boehm_JProteomeRes2014 --collection PATH/Benchmark-Models
"""

import sys

from collocnode._cli.petab_command import petab

if __name__ == "__main__":
    sys.exit(petab())
