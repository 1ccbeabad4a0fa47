"""The machine facts recorded with measurements: a process's peak memory is its own."""

import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import pytest

from collocnode.tools._machine import describe, peak_memory_mb


def _peak_before_and_after_holding(mib: int) -> tuple[float, float]:
    before = peak_memory_mb()
    block = np.ones(mib * 2**17)  # mib MiB of float64, written
    return before, peak_memory_mb() + 0.0 * block[-1]


def test_the_peak_grows_with_what_the_process_holds():
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        before, after = pool.submit(_peak_before_and_after_holding, 128).result()
    assert after - before == pytest.approx(128.0, abs=12.0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
def test_a_spawned_process_reports_its_own_peak_not_its_parents():
    """A spawned worker (multiprocessing's and Dask's default) inherits its parent's
    ru_maxrss; peak_memory_mb must not."""
    block = np.ones(2**25)  # 256 MiB in this process
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        child = pool.submit(peak_memory_mb).result()
    assert peak_memory_mb() > block.nbytes / 2**20
    assert child < peak_memory_mb() - 200.0


def test_the_machine_is_named():
    assert "cores" in describe() and describe("H100").endswith("GPU H100")
