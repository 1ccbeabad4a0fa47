#!/usr/bin/env python
"""The gallery at full size: each script of ``examples/gallery/`` run as a user runs it (a fresh
process, seed 0), its JSON line stored and its figure drawn into ``docs/figures/gallery/``.

    python benchmarks/gallery.py [--examples NAME ...] [--out benchmarks/results/gallery]

docs/gallery.md's table is written from the stored results (``markdown_rows``); a test checks
that it matches them. Run it on an otherwise idle machine: the training times are wall times.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from collocnode.tools._io import write_json
from collocnode.tools._machine import run_record

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "examples" / "gallery"
FIGURES = ROOT / "docs" / "figures" / "gallery"


def run_example(name: str) -> dict[str, Any]:
    """One example at full size in a process of its own: its JSON result."""
    figure = FIGURES / f"{name}.png"
    command = [sys.executable, str(GALLERY / f"{name}.py"), "--figure", str(figure)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode != 0:
        return {"example": name, "status": "crashed", "reason": done.stderr[-300:]}
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = sorted(p.stem for p in GALLERY.glob("*.py"))
    parser.add_argument("--examples", nargs="+", choices=names, default=names)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "gallery")
    args = parser.parse_args(argv)
    for name in args.examples:
        result = run_example(name)
        record = {**run_record("benchmarks/gallery.py", ["--examples", name]), "result": result}
        write_json(args.out / f"{name}.json", record)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
