"""The numbers a Markdown document states, and the text around each that may say what it is.

A figure check (`runlens.validation.figures`) reads what a reader reads: the rendered text
of each block (`runlens.validation.rendered`), so `**10**` is 10 and each number has the line
and column where it is written.

What counts as a stated number:

- integers, with or without thousands separators (`89`, `1,234`), decimals (`3.5`) and
  percentages (`11.2%`, `11.2 %`, `11.2％`, `11.2 percent`);
- not digits that are part of a word or an id: a letter, `_`, `#` or `@` next to them, or a
  hyphen that joins them to a letter (`P1`, `fb_001`, `v2`, `5G`, `COVID-19`, `5-star`).
  Letters here are those of scripts that put spaces between words (Latin, Greek, Cyrillic):
  in `共89条` the digits stand next to Chinese characters and are a number;
- not dates or times (`2026-06-01`, `2026-06-01T09:30Z`, `09:30`, `2026/6/1`,
  `2026年6月1日`, `6月1日`, `June 2026`, `1 June 2026`, `June 1, 2026`);
- not a run of digits and dots that is no number (`1.2.3`, a version);
- not inside a quotation, `“…”` or another declared pair of marks (quotes come from source
  rows, and their numbers are the customer's, not the report's); callers pass those spans.

A list of numbers written without spaces (`1,2,3`) is read as separate numbers.

Each number sits in a `Passage`: its block, plus what a reader takes as that block's
context. A table cell's context is its column header and the row's other cells; a cell in a
column headed `#`, `Rank`, `No.`, `排名` or `序号` is a rank, not a figure. Any block's
context also holds its *lead*: the sub-heading it sits under, the text of the list items it
is nested in, and the sentence introducing its list or table when that ends with a colon
(`Billing and pricing:` above `- 10 rows`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal

from markdown_it import MarkdownIt
from markdown_it.token import Token

from runlens.validation.markdown import Heading, parse_required
from runlens.validation.reading import read_markdown
from runlens.validation.rendered import TextBlock, text_blocks

#: An offset range `[start, end)` in a text.
Span = tuple[int, int]

#: The block structure only (tables and lists); the text comes from `rendered.text_blocks`.
_BLOCKS = MarkdownIt("commonmark").enable("table")
_RUN = re.compile(r"[0-9](?:[0-9.,]*[0-9])?")
_PLAIN = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_GROUPED = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")
_PERCENT = re.compile(r" ?[%％]| ?per ?cent\b")
#: Letters of the scripts that put spaces between words (Latin, Greek, Cyrillic), as a
#: character-class body. Words of these scripts have edges; Chinese text has none.
SPACED_LETTERS = "A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff"
#: Those letters and the id characters: next to digits, they make them part of a word or id.
_JOINS = re.compile(f"[_#@{SPACED_LETTERS}]")
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DAY = r"[0-9]{1,2}(?:st|nd|rd|th)?(?![0-9])"
_DATES = re.compile(
    "|".join(
        (
            r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
            r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?",
            r"[0-9]{4}-(?:0[1-9]|1[0-2])(?![0-9])",
            r"[0-9]{4}/[0-9]{1,2}/[0-9]{1,2}",
            r"(?<![0-9])[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?![0-9])",
            r"[0-9]{4} ?年(?: ?[0-9]{1,2} ?月(?: ?[0-9]{1,2} ?[日号])?)?",
            r"(?<![0-9])[0-9]{1,2} ?月(?: ?[0-9]{1,2} ?[日号])?",
            rf"{_MONTH} {_DAY}(?:,? [0-9]{{4}})?",
            rf"{_DAY} {_MONTH}(?:,? [0-9]{{4}})?",
            rf"{_MONTH} [0-9]{{4}}",
        )
    )
)
#: Column headers of rank columns, case-folded.
RANK_HEADERS = frozenset({"#", "rank", "no.", "排名", "序号"})
_COLON = (":", "：")


@dataclass(frozen=True)
class StatedNumber:
    """A number as written: `text` (`11.2%`), its `value` without the percent sign, its
    `decimals`, and where it is in the text it was read from."""

    text: str
    value: Decimal
    decimals: int
    percent: bool
    start: int
    end: int


def stated_numbers(text: str, skip: Sequence[Span] = ()) -> list[StatedNumber]:
    """Every number `text` states (module docstring), outside the `skip` spans."""
    hidden = SpanSet([*skip, *(match.span() for match in _DATES.finditer(text))])
    numbers = []
    for run in _RUN.finditer(text):
        if _joined(text, run.start(), run.end()):
            continue
        for start, end in _parts(run):
            if not hidden.overlaps(start, end):
                numbers.append(_number(text, start, end))
    return numbers


class SpanSet:
    """Spans merged into sorted, disjoint intervals, asked about in logarithmic time: a
    hostile document can hold a hundred thousand quotations and as many numbers."""

    def __init__(self, spans: Iterable[Span]) -> None:
        merged: list[Span] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        self._spans = merged
        self._starts = [start for start, _ in merged]

    @property
    def spans(self) -> list[Span]:
        """The merged spans, in order."""
        return list(self._spans)

    def overlaps(self, start: int, end: int) -> bool:
        """Whether `[start, end)` shares a character with a span."""
        last = bisect.bisect_left(self._starts, end) - 1  # the last span beginning before end
        return last >= 0 and self._spans[last][1] > start

    def contains(self, start: int, end: int) -> bool:
        """Whether `[start, end)` lies inside a span."""
        last = bisect.bisect_right(self._starts, start) - 1
        return last >= 0 and self._spans[last][1] >= end


def _joined(text: str, start: int, end: int) -> bool:
    """Whether the digits at `[start, end)` are part of a word or an id."""
    before, after = text[max(start - 2, 0) : start], text[end : end + 2]
    if before and _JOINS.match(before[-1]):
        return True
    if len(before) == 2 and before[1] == "-" and _JOINS.match(before[0]):
        return True
    if after and _JOINS.match(after[0]):
        return True
    return len(after) == 2 and after[0] == "-" and bool(_JOINS.match(after[1]))


def _parts(run: re.Match[str]) -> Iterator[Span]:
    """The numbers in a run of digits, dots and commas: one, or those between commas."""
    if _GROUPED.fullmatch(run.group()) or _PLAIN.fullmatch(run.group()):
        yield run.span()
        return
    start = run.start()
    for part in run.group().split(","):
        if _PLAIN.fullmatch(part):
            yield start, start + len(part)
        start += len(part) + 1


def _number(text: str, start: int, end: int) -> StatedNumber:
    digits = text[start:end]
    percent = _PERCENT.match(text, end)
    stop = percent.end() if percent else end
    _, _, fraction = digits.partition(".")
    return StatedNumber(
        text[start:stop],
        Decimal(digits.replace(",", "")),
        len(fraction),
        bool(percent),
        start,
        stop,
    )


def quoted_spans(text: str, marks: Iterable[tuple[str, str]]) -> list[Span]:
    """The spans of `text` inside a pair of quotation marks, marks included; an opening mark
    never closed quotes nothing."""
    spans = []
    for opening, closing in marks:
        position = 0
        while (start := text.find(opening, position)) >= 0:
            end = text.find(closing, start + len(opening))
            if end < 0:
                break
            spans.append((start, end + len(closing)))
            position = end + len(closing)
    return spans


# -- passages -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """Where a table cell sits: its column header, the texts of the row's other cells, and
    whether its column holds figures (a rank column does not); `key`, the text of the row's
    first cell (None for a cell of the first column), and `corner`, the first column's
    header: with the table's lead they say which table and which row this is."""

    header: str
    row: tuple[str, ...]
    counted: bool
    key: str | None = None
    corner: str = ""


@dataclass(frozen=True)
class Passage:
    """One block of a checked section, with what a reader takes as its context."""

    block: TextBlock
    lead: tuple[str, ...] = ()
    cell: Cell | None = None


def section_passages(
    markdown: str, sections: Sequence[str], *, outside: bool = False
) -> list[Passage]:
    """The passages under the given headings (each section runs to the next heading of the
    same or a higher level), in document order. Headings inside a section are passages too.
    With `outside`, the passages under none of them instead (the other sections' headings
    and text, and what comes before the first heading)."""
    wanted = [parse_required(heading) for heading in sections]
    layout = _Layout(markdown)
    passages: list[Passage] = []
    section: Heading | None = None
    subheading = ""
    for block in text_blocks(markdown):
        if not block.positions:
            continue  # an empty table cell
        leads = layout.add(block)
        if block.heading_level:
            heading = Heading(block.heading_level, " ".join(block.text.split()))
            if any(heading.matches(w) for w in wanted):
                section, subheading = heading, ""
                continue
            if section is not None and heading.level <= section.level:
                section = None
        if (section is None) != outside:
            continue
        if block.heading_level:
            passages.append(Passage(block))
            subheading = block.text
        else:
            passages.append(Passage(block, tuple(t for t in (subheading, *leads) if t)))
    return [layout.placed(passage) for passage in passages]


class _Layout:
    """Which lines hold table rows and list items, from a block-level parse.

    Blocks are matched to that structure by line: a table row is one line, and a list item,
    a list or a table spans a range of lines. A cell's column is the number of unescaped `|`
    written before it on its line.
    """

    def __init__(self, markdown: str) -> None:
        # Normalised as markdown-it (and so `text_blocks`) normalises, so lines agree.
        self.lines = read_markdown(markdown).split("\n")
        self.header_of: dict[int, int] = {}  # table row line -> the table's header line
        self.items: list[Span] = []  # first and last line (1-based) of each list item
        self.containers: list[Span] = []  # the same of each list and table
        for token in _BLOCKS.parse("\n".join(self.lines)):
            self._structure(token)
        self.first_text: dict[int, str] = {}  # line -> text of the first block on it
        self.introductions: dict[int, str] = {}  # container's first line -> its introduction
        self.cells: dict[int, list[tuple[int, str]]] = {}  # row line -> (column, text)
        self.previous = ""

    def _structure(self, token: Token) -> None:
        if token.map is None:
            return
        first, last = token.map[0] + 1, token.map[1]
        if token.type == "list_item_open":
            self.items.append((first, last))
        elif token.type in ("bullet_list_open", "ordered_list_open", "table_open"):
            self.containers.append((first, last))
        elif token.type == "tr_open" and self.containers:
            # The innermost container open is this row's table; its first line is its header.
            self.header_of[first] = self.containers[-1][0]

    def add(self, block: TextBlock) -> tuple[str, ...]:
        """Record a block (blocks come in document order) and return its leads: the
        introduction of each list or table it is in, and the list items it is nested in."""
        line, column = block.positions[0]
        self.first_text.setdefault(line, block.text)
        if line in self.header_of:
            self.cells.setdefault(line, []).append((self._column(line, column), block.text))
        leads = []
        for first, last in self.containers:
            if first <= line <= last:
                if first not in self.introductions:
                    introduces = self.previous.rstrip().endswith(_COLON)
                    self.introductions[first] = self.previous if introduces else ""
                leads.append(self.introductions[first])
        leads += [
            self.first_text.get(first, "") for first, last in self.items if first < line <= last
        ]
        self.previous = block.text
        return tuple(leads)

    def placed(self, passage: Passage) -> Passage:
        """The passage with its table cell, when it is a cell below a table's header."""
        line, column = passage.block.positions[0]
        header_line = self.header_of.get(line)
        if header_line is None or header_line == line:
            return passage
        index = self._column(line, column)
        headers = dict(self.cells.get(header_line, ()))
        header = headers.get(index, "")
        cells = self.cells.get(line, [])
        row = tuple(text for i, text in cells if i != index)
        counted = " ".join(header.split()).casefold() not in RANK_HEADERS
        key = dict(cells).get(0, "") if index else None
        cell = Cell(header, row, counted, key, headers.get(0, ""))
        return Passage(passage.block, passage.lead, cell)

    def _column(self, line: int, column: int) -> int:
        written = self.lines[line - 1][: column - 1]
        pipes = len(re.findall(r"(?<!\\)\|", written))
        return pipes - 1 if written.lstrip().startswith("|") else pipes
