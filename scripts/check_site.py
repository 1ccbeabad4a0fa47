#!/usr/bin/env python
"""Check that a built documentation site loads nothing from the network.

python scripts/check_site.py [SITE]     # default: site/

Looks in every HTML, CSS and JavaScript file for what a browser would fetch on its own from
another host: scripts, style sheets, fonts and images (``src=``, ``<link href=``, ``url(...)``,
``@import``). A notebook page's Mermaid module is imported only when the page holds a diagram
(none does), and links a reader clicks (``<a href>``) are fine. Exits 1 naming each file and
reference, 0 with a count of the files checked.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

FETCHED = [
    re.compile(
        r"""<(?:script|img|iframe|source|audio|video)\b[^>]*\ssrc=["'](https?:)?//[^"']+""", re.I
    ),
    re.compile(r"""<link\b[^>]*\shref=["'](https?:)?//[^"']+""", re.I),
    re.compile(r"""url\(\s*["']?(https?:)?//[^)"']+""", re.I),
    re.compile(r"""@import\s+["'](https?:)?//[^"']+""", re.I),
]


def external(text: str) -> list[str]:
    """What ``text`` makes a browser fetch from another host."""
    found = []
    for pattern in FETCHED:
        for m in pattern.finditer(text):
            ref = m.group(0)
            if re.search(r"""rel=["'](?:canonical|alternate)""", ref, re.I):
                continue  # names the page's address; nothing is fetched
            found.append(ref)
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Check a built site for references to other hosts.")
    p.add_argument("site", nargs="?", type=Path, default=Path("site"))
    args = p.parse_args(argv)
    if not args.site.is_dir():
        print(f"{args.site} is not a folder: build the site first (mkdocs build)", file=sys.stderr)
        return 2
    files = [f for f in args.site.rglob("*") if f.suffix in (".html", ".css", ".js")]
    bad = []
    for f in files:
        for ref in external(f.read_text(encoding="utf-8", errors="replace")):
            bad.append(f"{f.relative_to(args.site)}: {ref[:160]}")
    if bad:
        print("the site fetches from other hosts:\n" + "\n".join(bad), file=sys.stderr)
        return 1
    print(f"{args.site}: {len(files)} files, nothing fetched from other hosts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
