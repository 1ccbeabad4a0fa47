"""The allocator policy: freed large blocks stay in the process (glibc), measured by the
resident memory of a fresh interpreter after a 200 MB array is freed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = """
import sys
import numpy as np
from collocnode.tools._allocator import keep_freed_memory

def resident_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

if sys.argv[1] == "keep":
    assert keep_freed_memory()
before = resident_mb()
block = np.ones(25 * 2**20)  # 200 MB, touched
del block
print(resident_mb() - before)
"""


@pytest.mark.skipif(
    not hasattr(os, "confstr") or not os.path.exists("/proc/self/statm"),
    reason="glibc on Linux only",
)
def test_freed_memory_is_kept_only_when_asked():
    def held(mode):
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, check=True
        )
        return float(out.stdout)

    assert held("keep") > 150  # the freed block stays resident, ready for the next one
    assert held("return") < 50  # glibc's default: a block this large goes back at once
