"""What machine a run ran on, recorded in its result files so a reported time can be read
against the hardware that produced it."""

from __future__ import annotations

import os
import platform
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _cpu_model() -> str:
    # platform.processor() is empty or just the architecture on Linux; /proc/cpuinfo names it
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() == "model name" and value.strip():
                return value.strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def describe(gpu: str | None = None) -> str:
    """One line such as ``"AMD EPYC 7B13, 2 cores (usable: 2), Linux x86_64"``; ``gpu`` (a
    device name) is appended when a run used one."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    text = (
        f"{_cpu_model()}, {os.cpu_count()} cores (usable: {usable}), "
        f"{platform.system()} {platform.machine()}"
    )
    return f"{text}, GPU {gpu}" if gpu else text


def load_average() -> float | None:
    """The 1-minute load average (runnable processes), None where the system has none. Recorded
    at the start of a run: above the number of cores, its times were shared."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def command_line(script: str, argv: Sequence[str]) -> str:
    """The command that reruns a run, as a shell line: ``python SCRIPT ARGS``."""
    return shlex.join(["python", script, *argv])


def run_record(
    script: str, argv: Sequence[str] | None = None, gpu: str | None = None
) -> dict[str, Any]:
    """The header of a benchmark's result file: ``command`` (``python <script>`` and its
    arguments, ``argv`` or else this process's), ``machine`` (`describe`), ``created``
    (local time, ISO 8601 to the second) and ``load_at_start`` (`load_average`)."""
    return {
        "command": command_line(script, sys.argv[1:] if argv is None else argv),
        "machine": describe(gpu),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "load_at_start": load_average(),
    }


def process_age() -> float | None:
    """Seconds since this process started (the interpreter's start-up and every import
    included), from ``/proc`` (Linux; clock ticks, 10 ms); None where that is not available."""
    try:
        with open("/proc/self/stat") as fh:
            # the command name (field 2) may hold spaces: count the fields after its ")"
            fields = fh.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return max(uptime - started, 0.0)


def peak_memory_mb() -> float:
    """This process's peak resident memory [MB].

    On Linux it is ``VmHWM`` of ``/proc/self/status``, which starts afresh in a new program.
    ``getrusage``'s ``ru_maxrss`` does not: a process started by *spawn* (the default of
    multiprocessing on macOS and of Dask's worker processes) reports at least its parent's
    peak, so a worker started by a large process would seem as large. Elsewhere
    ``ru_maxrss`` (KiB on Linux, bytes on macOS)."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024
