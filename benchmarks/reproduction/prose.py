"""The numbers of the report's hand-written text, and where each comes from.

Everything between the markers ``<!-- generated: KEY -->`` and ``<!-- end generated: KEY -->``
is written by :mod:`reproduction.report` from stored runs. The text around the blocks is typed;
every number it holds must be one that :data:`HAND_COPIED` lists for its paragraph, with the
stored runs (folders of ``benchmarks/results``) or the other source it was copied from.
:func:`untracked` names each number that is not listed and each listed one that is gone, so a
number typed into the report without a source fails the test suite
(``tests/benchmarks/test_reproduction_report.py``).

Not counted as numbers: code (fenced blocks, indented blocks and inline ``code``), HTML
comments, link targets, headings, digits inside a word (``H100``, ``float32``, ``θ1``), and
references whose digits name rather than measure:
``Table 4``, ``Fig. 10``, ``eq. 19``, ``§5.1``, ``App. C.4``, ``reference [2]``, years and dates,
and seed numbers (``seed 1``, ``seeds 0, 1 and 2``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .hand_copied import HAND_COPIED, Entry

_BEGIN = re.compile(r"^<!-- generated: (\S+) -->$")
_END = re.compile(r"^<!-- end generated: (\S+) -->$")
_SUPERSCRIPT = str.maketrans({c: f"^{d}" for d, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")})
# a number: digits with optional thousands, decimals and exponent, not part of a word
NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?:e[−-]?\d+)?(?!\w)")
# digits that name rather than measure: references into the papers, dates and seeds
_REFERENCE = re.compile(
    r"(?:\b(?:Tables?|Figs?\.|Figures?|[Ee]qs?\.|App\.|Appendix|Section|Algorithm)\s?"
    r"|§|reference \[)"
    r"(?:[A-Z]\.)?\d+(?:\.\d+)*(?:\s?(?:[–,-]|and)\s?(?:[A-Z]\.)?\d+(?:\.\d+)*)*"
    r"|\b(?:19|20)\d\d(?:-\d\d-\d\d(?:T[\d:]+)?)?\b"
    r"|\bseeds? \d+(?![.\d])(?:(?:, | and |–)\d+(?![.\d]))*"
)


@dataclass(frozen=True)
class Paragraph:
    """A paragraph, list item or table of the hand-written text: its first line (``anchor``
    is matched against its start), the line it starts on and its countable numbers."""

    text: str
    line: int
    numbers: tuple[str, ...]


def _hand_written_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of the text outside the generated blocks and code; a blank line
    where a block, code or a heading was, so that it separates paragraphs."""
    block = fence = indented = False
    previous = ""
    for number, line in enumerate(text.splitlines(), 1):
        if _BEGIN.match(line):
            block = True
        if block:
            block = not _END.match(line)
            yield number, ""
            continue
        if line.startswith("```"):
            fence = not fence
            yield number, ""
            continue
        indented = (
            (indented or not previous.strip()) and line.startswith("    ") and bool(line.strip())
        )
        previous = line
        if fence or indented or line.startswith("#"):
            yield number, ""
            continue
        yield number, line


def _countable(text: str) -> str:
    """``text`` without what does not count: inline code, comments, link targets, and the
    digits of references, dates and seeds."""
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"<!--.*?-->", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"\s+", " ", text)  # a reference wrapped over two lines is one reference
    text = _REFERENCE.sub(" ", text)
    # a unit or factor written onto its number ("12x", "5s", "8GB") does not hide it
    text = re.sub(r"(\d)(?!e[−-]?\d)([A-Za-z]{1,3})\b", r"\1 \2", text)
    return text.translate(_SUPERSCRIPT)


def paragraphs(text: str) -> list[Paragraph]:
    """The hand-written paragraphs of ``text`` (a list item and a table count as one each)."""
    out: list[Paragraph] = []
    lines: list[str] = []
    start = 0

    def flush() -> None:
        if lines:
            body = "\n".join(lines)
            found = tuple(NUMBER.findall(_countable(re.sub(r"<!--.*?-->", " ", body, flags=re.S))))
            out.append(Paragraph(body, start, found))
            lines.clear()

    for number, line in _hand_written_lines(text):
        new_item = line.startswith("- ") or (
            line.startswith("|") and lines and not lines[-1].startswith("|")
        )
        if not line.strip() or new_item:
            flush()
        if line.strip():
            if not lines:
                start = number
            lines.append(line)
    flush()
    return out


def _entry_for(paragraph: Paragraph, entries: Sequence[Entry]) -> Entry | None:
    found = [e for e in entries if paragraph.text.startswith(e.anchor)]
    return max(found, key=lambda e: len(e.anchor)) if found else None


def untracked(text: str, entries: Sequence[Entry] = HAND_COPIED) -> list[str]:
    """What the hand-written text of ``text`` and the ledger ``entries`` disagree on, one
    line each (empty when every number is listed): a number its paragraph's entry does not
    list (or a paragraph with numbers and no entry), and an entry or number that is gone."""
    problems = []
    used: set[str] = set()
    for paragraph in paragraphs(text):
        entry = _entry_for(paragraph, entries)
        if entry is None:
            if paragraph.numbers:
                problems.append(
                    f"line {paragraph.line}: {', '.join(paragraph.numbers)} typed in a "
                    f"paragraph the ledger does not list ({paragraph.text[:60]!r})"
                )
            continue
        used.add(entry.anchor)
        listed = entry.numbers.split()
        extra = _minus(paragraph.numbers, listed)
        gone = _minus(listed, paragraph.numbers)
        if extra:
            problems.append(
                f"line {paragraph.line}: {', '.join(extra)} not among the numbers the ledger "
                f"lists for {entry.anchor!r}"
            )
        if gone:
            problems.append(
                f"line {paragraph.line}: the ledger lists {', '.join(gone)} for "
                f"{entry.anchor!r}, which the paragraph no longer holds"
            )
    problems += [
        f"the ledger's entry {e.anchor!r} matches no paragraph"
        for e in entries
        if e.anchor not in used
    ]
    return problems


def _minus(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """The items of ``a`` left after removing one occurrence of each item of ``b``."""
    left = list(a)
    for x in b:
        if x in left:
            left.remove(x)
    return left
