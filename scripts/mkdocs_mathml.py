"""MkDocs hook: the pages' LaTeX rendered as MathML when the site is built.

Listed under ``hooks:`` in mkdocs.yml. ``pymdownx.arithmatex`` in its generic mode finds the
math (``$...$`` inline, ``$$...$$`` display, never inside code) and leaves each formula as
``\\(...\\)`` or ``\\[...\\]`` in a ``span`` or ``div`` of class ``arithmatex``; this hook adds
a tree processor that replaces that text by the MathML of latex2mathml. Browsers render MathML
themselves, so the site loads no script for its math (no MathJax or KaTeX, nothing from a CDN)
and its pages still open from disk. A formula latex2mathml cannot convert fails the build,
naming it.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as etree

from latex2mathml.converter import convert
from markdown import Extension, Markdown
from markdown.treeprocessors import Treeprocessor
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

ARITHMATEX = "pymdownx.arithmatex"
# what arithmatex's generic mode wraps a formula in (its default tex_inline_wrap, tex_block_wrap)
WRAPS = {"span": ("\\(", "\\)"), "div": ("\\[", "\\]")}
# an ampersand that is not an entity: latex2mathml copies the column separator of an
# environment it does not know (aligned, alignat) into its output
BARE_AMPERSAND = re.compile(r"&(?!#?\w+;)")
# latex2mathml drops an environment's last row when it ends in an empty cell ("a & \end{...}")
EMPTY_LAST_CELL = re.compile(r"&\s*\\end\{")


def mathml(latex: str, display: bool) -> str:
    """The MathML of ``latex``; ValueError when latex2mathml cannot convert it."""
    if EMPTY_LAST_CELL.search(latex):
        raise ValueError(
            f"latex2mathml drops the last row of {latex.strip()!r}, which ends in an empty "
            "cell: write {} in it"
        )
    try:
        out = convert(latex.strip(), display="block" if display else "inline")
    except Exception as error:  # latex2mathml raises its own exception types per construct
        raise ValueError(f"latex2mathml cannot convert {latex.strip()!r}: {error}") from error
    if '<mstyle displaystyle="true" scriptlevel="0" />' in out:
        raise ValueError(  # as in a cell of an array: it ends up styling nothing
            f"latex2mathml drops the \\displaystyle of {latex.strip()!r}: "
            "write {\\displaystyle ...} around what it applies to"
        )
    if BARE_AMPERSAND.search(out):
        raise ValueError(
            f"latex2mathml does not know an environment of {latex.strip()!r} "
            "(use array, align* or cases)"
        )
    return out


class MathMLTreeprocessor(Treeprocessor):
    """Replaces arithmatex's generic output by MathML (after the inline patterns ran)."""

    def run(self, root: etree.Element) -> None:
        for element in list(root.iter()):
            if element.tag not in WRAPS or "arithmatex" not in element.get("class", "").split():
                continue
            opening, closing = WRAPS[element.tag]
            text = element.text or ""
            if not (text.startswith(opening) and text.endswith(closing)):
                continue  # not arithmatex's generic output
            latex = text[len(opening) : -len(closing)]
            if element.tag == "div":  # arithmatex escapes a block's text, not an inline's
                latex = html.unescape(latex)
            element.text = self.md.htmlStash.store(mathml(latex, display=element.tag == "div"))


class MathMLExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # after the inline patterns (20) made arithmatex's elements, before the table of
        # contents (5) reads the headings
        md.treeprocessors.register(MathMLTreeprocessor(md), "mathml", 15)


@event_priority(10)  # before mkdocstrings (0) copies the extensions for the docstrings
def on_config(config):
    settings = config.mdx_configs.get(ARITHMATEX, {})
    if ARITHMATEX not in config.markdown_extensions or not settings.get("generic"):
        raise PluginError(f"{__name__}: mkdocs.yml must enable {ARITHMATEX} with generic: true")
    config.markdown_extensions.append(MathMLExtension())
    return config
