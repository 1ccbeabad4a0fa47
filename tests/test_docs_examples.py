"""Every code block of README.md and docs/**/*.md runs as written.

A page's Python blocks run top to bottom in one namespace (a tutorial builds on its earlier
blocks), in a temporary directory. Shell blocks run with bash from the repository root. A block
that cannot run here (an install, a training of minutes, a fragment that names a problem it does
not build) carries a marker on the line right before its fence, with the reason:

    <!-- not-run: trains for about an hour on 8 cores -->

Blocks in a display language (``text``, ``json``, ...) are output and are not run; a fence
without a language is refused, so that no code goes unchecked by accident. New pages are picked up
without any change here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON = {"python", "py"}
SHELL = {"bash", "sh", "shell"}
DISPLAY = {"text", "console", "json", "yaml", "toml", "ini", "csv", "output", "diff"}
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
NOT_RUN = re.compile(r"^\s*<!--\s*not-run:\s*(?P<reason>.*?)\s*-->\s*$")
PAGE_SECONDS = 60  # a page's blocks together, on 2 cores


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    skip: str | None  # the reason given by a not-run marker

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, with the not-run marker before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m["indent"], m["fence"]
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        inner = lines[i + 1 : j]
        body = [line[len(indent) :] if line.startswith(indent) else line for line in inner]
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = NOT_RUN.match(lines[k]) if k >= 0 else None
        reason = marker["reason"] if marker else None
        out.append(Block(path, i + 1, m["lang"].lower(), "\n".join(body) + "\n", reason))
        i = j + 1
    return out


PAGES = [p for p in pages() if blocks(p)]
IDS = [str(p.relative_to(ROOT)) for p in PAGES]


def test_the_pages_hold_blocks_that_run():
    runnable = [b for p in PAGES for b in blocks(p) if b.skip is None and b.lang in PYTHON]
    assert len(runnable) >= 20, "the documentation should show code that runs"


@pytest.mark.parametrize("path", PAGES, ids=IDS)
def test_every_block_says_what_it_is(path):
    problems = []
    for b in blocks(path):
        if not b.lang:
            problems.append(f"{b.where}: a code fence without a language (python, bash, text, ...)")
        elif b.lang not in PYTHON | SHELL | DISPLAY:
            problems.append(f"{b.where}: unknown language {b.lang!r}")
        if b.skip is not None and not b.skip:
            problems.append(f"{b.where}: a not-run marker needs a reason")
        if b.skip is not None and b.lang in DISPLAY:
            problems.append(f"{b.where}: a not-run marker on a {b.lang} block, which never runs")
    assert not problems, "\n".join(problems)


def run_python(block: Block, namespace: dict) -> None:
    try:
        code = compile(block.code, block.where, "exec")
        exec(code, namespace)
    except Exception as exc:
        tb = "".join(traceback.format_exception(exc))
        pytest.fail(
            f"{block.where}: the python block fails as written "
            f"(mark it <!-- not-run: reason --> if it cannot run):\n{tb}",
            pytrace=False,
        )


def run_shell(block: Block) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    bindir = Path(sys.executable).parent
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=PAGE_SECONDS,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"{block.where}: the bash block exits {proc.returncode} "
            f"(mark it <!-- not-run: reason --> if it cannot run):\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}",
            pytrace=False,
        )


@pytest.mark.parametrize("path", PAGES, ids=IDS)
def test_every_block_runs(path, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    with warnings.catch_warnings():
        # the pages show warnings where they arise (an inconsistent model after a short
        # training); they are not errors of the page
        warnings.simplefilter("default")
        for b in blocks(path):
            if b.skip is not None or b.lang in DISPLAY:
                continue
            if b.lang in PYTHON:
                run_python(b, namespace)
            elif b.lang in SHELL:
                run_shell(b)
            ran += 1
            plt.close("all")
    if not ran:
        pytest.skip("every block of this page is marked not-run or is output")
