#!/usr/bin/env python
"""Train several methods on one problem with one data set and compare them.

    python scripts/compare.py smsd --methods fnode,mbdnode --quick
    python scripts/compare.py double_pendulum --methods fnode,mbdnode,lstm,fcnn --out runs/dp
    python scripts/compare.py qvm --quick     # collocation, node, fnode, mbdnode, mnn, snde

Writes compare.json and compare.md into --out (default runs/compare-<problem>-<timestamp>).
Bad input exits with code 2 and one line on stderr (a traceback only with --debug); a failed
method exits with 1, Ctrl-C with 130.
"""

import sys

from collocnode._cli import compare

if __name__ == "__main__":
    sys.exit(compare())
