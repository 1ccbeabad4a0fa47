#!/usr/bin/env python
"""Execute the example notebooks and store them with their outputs for the documentation site.

python scripts/execute_notebooks.py                 # CI size, into docs/notebooks/
python scripts/execute_notebooks.py --full          # the sizes the notebooks are written with
python scripts/execute_notebooks.py --out DIR quickstart.ipynb

The notebooks in examples/ are committed without outputs; the site renders the executed copies
(docs/notebooks/ is not committed). At CI size a notebook whose full run takes minutes runs on
smaller settings, and a first cell says which, so every number on the page comes from the run it
shows.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# per notebook: the settings cell's values at CI size (the settings are the notebook's second
# cell; a notebook not listed runs as written)
CI_SIZE = {
    "active_suspension.ipynb": {"TRAIN_S": "2.1", "HORIZON_S": "1.0", "INTERVALS": "100"},
}


def sized(nb, settings: dict[str, str]):
    """``nb`` with its settings cell's values replaced, and a note saying so."""
    import nbformat

    cell = nb.cells[1]
    for name, value in settings.items():
        cell.source, count = re.subn(
            rf"^{name} = \S+", f"{name} = {value}", cell.source, flags=re.M
        )
        if count != 1:
            raise ValueError(f"the settings cell does not set {name} once")
    listed = ", ".join(f"`{k} = {v}`" for k, v in settings.items())
    note = nbformat.v4.new_markdown_cell(
        f"*This page was executed at a reduced size ({listed}) so that the documentation builds "
        "in minutes; the figures and numbers below come from that run. The notebook in "
        "`examples/` runs at the full size as written.*"
    )
    note.id = "ci-size-note"
    nb.cells.insert(1, note)
    return nb


def execute(name: str, out: Path, full: bool = False, timeout: int = 900) -> float:
    """Execute ``examples/name`` into ``out/name``; returns the wall time [s]."""
    import nbclient
    import nbformat

    nb = nbformat.read(EXAMPLES / name, as_version=4)
    if not full and name in CI_SIZE:
        nb = sized(nb, CI_SIZE[name])
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:  # the files a notebook writes land here
        client = nbclient.NotebookClient(
            nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": work}}
        )
        client.execute()
    nbformat.write(nb, out / name)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Execute the example notebooks (CI size unless --full) and store them with "
        "their outputs, for the documentation site."
    )
    p.add_argument("names", nargs="*", help="notebooks of examples/ (default: all)")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "notebooks")
    p.add_argument("--full", action="store_true", help="run at the sizes the notebooks set")
    args = p.parse_args(argv)
    names = args.names or sorted(f.name for f in EXAMPLES.glob("*.ipynb"))
    for name in names:
        seconds = execute(name, args.out, full=args.full)
        print(f"{name}: executed in {seconds:.0f} s -> {args.out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
