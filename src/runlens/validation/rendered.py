"""The text a reader of a Markdown file sees, block by block, with where each character sits.

A check of what a document says (its citations, its figures) must read what the reader reads,
not the source: `\\*` shows as `*`, `&amp;` as `&`, `**slow**` as `slow`, and a heading inside
a code block is code. markdown-it parses the document (CommonMark, with the GFM tables and
strikethrough that readers' renderers show); every paragraph, heading, table cell, code
block and HTML block becomes a `TextBlock`, in document order. Paragraphs inside block quotes
and list items are blocks too.

markdown-it maps blocks to lines, not characters, so each character of a block's text is
aligned back to its source: the block's raw content is found on its lines, and the rendered
characters are matched to it in order, skipping markup and decoding backslash escapes and
entities as the parser does. A finding can then name the line and column where a quotation
mark or a token is written.
"""

from __future__ import annotations

import bisect
import html
import re
import string
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

from runlens.validation.reading import as_read, read_markdown

_PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]*);")
_ESCAPABLE = frozenset(string.punctuation)
_BREAKS = frozenset({"softbreak", "hardbreak"})
#: Blocks shown as written: code, and raw HTML (whose text a browser shows).
_VERBATIM_BLOCKS = frozenset({"fence", "code_block", "html_block"})

#: A source position: (line, column), both 1-based, columns counted in characters.
Position = tuple[int, int]


@dataclass(frozen=True)
class TextBlock:
    """The rendered text of one block and the source position of each of its characters.

    `heading_level` is 1-6 when the block is a top-level heading (one not nested in a block
    quote or list item: a section heading), else 0.
    """

    text: str
    positions: tuple[Position, ...]
    heading_level: int = 0
    #: The spans of `text` that are code: a code block whole, or each inline code span.
    code: tuple[tuple[int, int], ...] = ()

    def in_code(self, offset: int) -> bool:
        """Whether the character at `offset` is code, not prose."""
        return any(start <= offset < end for start, end in self.code)

    def position(self, offset: int) -> Position:
        """Where the character at `offset` of `text` is written."""
        return self.positions[offset]


def text_blocks(markdown: str) -> Iterator[TextBlock]:
    """Every block of `markdown` a reader sees as text, in document order."""
    return iter(_text_blocks(markdown))


@lru_cache(maxsize=8)
def _text_blocks(markdown: str) -> tuple[TextBlock, ...]:
    """`text_blocks`, worked out once per text: a round reads the report's blocks for its
    citations and twice for its figures (the blocks are immutable)."""
    # Normalised as markdown-it normalises its input, so lines and columns agree with it.
    source = read_markdown(markdown)
    lines = _SourceLines(source.split("\n"))
    heading_level = 0
    blocks = []
    for token in _PARSER.parse(source):
        if token.type == "heading_open":
            heading_level = int(token.tag[1:]) if token.level == 0 else 0
        elif token.type == "inline" and token.map:
            blocks.append(_inline_block(token, lines, heading_level))
            heading_level = 0
        elif token.type in _VERBATIM_BLOCKS and token.map:
            blocks.append(_verbatim_block(token, lines))
    return tuple(blocks)


def _inline_block(token: Token, lines: _SourceLines, heading_level: int) -> TextBlock:
    assert token.map is not None
    written, starts = lines.locate(token.map[0], token.content)
    text, offsets, code = _render(token, written)
    return TextBlock(text, _positions(offsets, written, starts), heading_level, code)


def _verbatim_block(token: Token, lines: _SourceLines) -> TextBlock:
    assert token.map is not None
    text = token.content.removesuffix("\n")
    first_line = token.map[0] + (1 if token.type == "fence" else 0)  # after the opening fence
    written, starts = lines.locate(first_line, text)
    code = ((0, len(text)),) if token.type != "html_block" else ()
    return TextBlock(text, _positions(range(len(text)), written, starts), code=code)


def _positions(
    offsets: Iterable[int], raw: str, starts: Sequence[Position]
) -> tuple[Position, ...]:
    """Source positions of raw-content offsets, given where each raw line starts."""
    line_starts = [0] + [match.end() for match in re.finditer("\n", raw)]
    positions = []
    for offset in offsets:
        number = bisect.bisect_right(line_starts, offset) - 1
        line, column = starts[number]
        positions.append((line, column + offset - line_starts[number]))
    return tuple(positions)


class _SourceLines:
    """The document's lines, and how far along each line blocks have been found already.

    Blocks come in document order and never overlap, so each block's content is searched for
    after the previous block's on the same line (the cells of one table row share a line).
    """

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.used: dict[int, int] = {}

    def locate(self, first_line: int, content: str) -> tuple[str, list[Position]]:
        """`content` as written in the source, and the (line, column) where each of its
        lines starts; `first_line` is 0-based."""
        written, starts = [], []
        for number, piece in enumerate(content.split("\n"), start=first_line):
            line = self.lines[number] if number < len(self.lines) else ""
            used = self.used.get(number, 0)
            column = line.find(piece, used)
            if column < 0:  # a table cell's `\|` reaches markdown-it as `|`
                piece = piece.replace("|", "\\|")
                column = line.find(piece, used)
            column = max(column, used)
            self.used[number] = column + len(piece)
            written.append(piece)
            starts.append((number + 1, column + 1))
        return "\n".join(written), starts


def _render(inline: Token, written: str) -> tuple[str, list[int], tuple[tuple[int, int], ...]]:
    """The text of an inline token, per character its offset in `written` (the token's
    content as the source writes it), and the spans of the text that are inline code."""
    aligner = _Aligner(written)
    code = []
    for child in _leaves(inline.children or ()):
        start = len(aligner.chars)
        _add_leaf(aligner, child)
        if child.type == "code_inline":
            code.append((start, len(aligner.chars)))
    return "".join(aligner.chars), aligner.offsets, tuple(code)


def _add_leaf(aligner: _Aligner, leaf: Token) -> None:
    """Append what the reader sees of one inline leaf: text, code, or a line break."""
    if leaf.type == "text":
        aligner.add(leaf.content, decoded=True)
    elif leaf.type == "code_inline":
        aligner.add(leaf.content, decoded=False)
    elif leaf.type in _BREAKS:
        aligner.add("\n", decoded=False)


class WrittenOffsets:
    """Where a source position (`Position`, of the text as read) is in the text as written:
    the offset a recorded span uses, whatever line ends or NULs the file holds."""

    def __init__(self, markdown: str) -> None:
        self.read = as_read(markdown)
        self.line_starts = [0] + [match.end() for match in re.finditer("\n", self.read.text)]

    def offset(self, position: Position) -> int:
        line, column = position
        read = self.line_starts[min(line, len(self.line_starts)) - 1] + column - 1
        return self.read.written(min(max(read, 0), len(self.read.text)))


class InlineOffsets:
    """Where each character of a document's inline text is written, for a view that parses
    the document again with markdown-it (text tokens are the validator's, whatever the view's
    HTML option): call `text_offsets` for every inline token, in document order."""

    def __init__(self, markdown: str) -> None:
        self.written = WrittenOffsets(markdown)
        self.lines = _SourceLines(self.written.read.text.split("\n"))

    def skip(self, inline: Token) -> list[tuple[int, ...] | None]:
        """Pass over an inline token whose offsets are not needed (blocks are found on their
        lines in order): None for each child."""
        if inline.map is not None:
            self.lines.locate(inline.map[0], inline.content)
        return [None] * len(inline.children or ())

    def text_offsets(self, inline: Token) -> list[tuple[int, ...] | None]:
        """Per child of `inline`: the written offset of each character of a `text` child,
        None for the other children."""
        if inline.map is None:
            return [None] * len(inline.children or ())
        written, starts = self.lines.locate(inline.map[0], inline.content)
        aligner = _Aligner(written)
        ranges: list[tuple[int, int] | None] = []
        for child in inline.children or ():
            begin = len(aligner.chars)
            for leaf in _leaves([child]):
                _add_leaf(aligner, leaf)
            ranges.append((begin, len(aligner.chars)) if child.type == "text" else None)
        positions = _positions(aligner.offsets, written, starts)
        return [
            None
            if bounds is None
            else tuple(self.written.offset(p) for p in positions[bounds[0] : bounds[1]])
            for bounds in ranges
        ]


def _leaves(tokens: Iterable[Token]) -> Iterator[Token]:
    """Inline tokens in reading order, an image's alternative text in its place."""
    for token in tokens:
        if token.children:
            yield from _leaves(token.children)
        else:
            yield token


class _Aligner:
    """Matches rendered text to the raw inline source it came from, left to right."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.cursor = 0
        self.chars: list[str] = []
        self.offsets: list[int] = []

    def add(self, content: str, *, decoded: bool) -> None:
        """Append `content`, aligned from the cursor: markup in between is skipped.

        `decoded`: `content` is text, in which the parser decoded backslash escapes and
        entities; otherwise (code spans) it is literal, except that line ends read as spaces.
        """
        done = 0
        while done < len(content):
            start, raw_width, width = self._next_match(content, done, decoded)
            self.chars.extend(content[done : done + width])
            self.offsets.extend([start] * width)
            self.cursor = start + raw_width
            done += width

    def _next_match(self, content: str, done: int, decoded: bool) -> tuple[int, int, int]:
        """(raw offset, raw characters, content characters) of the next match; a character
        found nowhere (which the parser should not produce) stays at the cursor."""
        for start in range(self.cursor, len(self.raw)):
            widths = self._match(start, content, done, decoded)
            if widths is not None:
                return start, *widths
        return min(self.cursor, max(len(self.raw) - 1, 0)), 0, 1

    def _match(self, start: int, content: str, done: int, decoded: bool) -> tuple[int, int] | None:
        raw, wanted = self.raw[start], content[done]
        if decoded and raw == "\\" and self.raw[start + 1 : start + 2] == wanted:
            return (2, 1) if wanted in _ESCAPABLE else None
        if decoded and raw == "&" and (entity := _ENTITY.match(self.raw, start)):
            value = html.unescape(entity.group())
            if value != entity.group() and content.startswith(value, done):
                return len(entity.group()), len(value)
        if raw == wanted or (not decoded and wanted == " " and raw == "\n"):
            return 1, 1
        return None
