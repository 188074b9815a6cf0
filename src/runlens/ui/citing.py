"""Citations placed in a rendered Markdown deliverable: each quotation and the id after it a
link to the cited row, a failed one styled apart with its reason.

A citation the validator located carries its spans (`CitationRow.span_start`/`span_end`, the
quotation with its marks, and `id_start`/`id_end`, the id): the characters of the page's text
written at those offsets of the file (`runlens.validation.rendered.InlineOffsets`) become the
links, whatever quotation marks the contract declares and however often the same words occur.

A citation recorded before spans were (a run whose `runtime/citations.json` is version 1, or
a store row without them) is found the old way, for those runs only: its quote is searched
in the block's text (as the parser reads it: NUL as U+FFFD, CR LF as LF) with a fixed set of
quotation marks around it, then its id as a token standing alone after it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from runlens.store.rows import CitationRow
from runlens.validation import read_markdown

#: Quotation marks the search for a citation recorded without spans accepts around its quote.
_OPENING_MARKS = frozenset("“\"「『‘'«„")
_CLOSING_MARKS = frozenset("”\"」』’'»“")


@dataclass
class Cited:
    """A citation being placed in its block: whether its quote and its id are linked yet."""

    row: CitationRow
    quote_linked: bool = False
    id_linked: bool = False
    #: A failed one's reason has been shown (after its id, or after its block).
    noted: bool = False

    @property
    def placed(self) -> bool:
        return self.quote_linked or self.id_linked

    @property
    def located(self) -> bool:
        """Whether the validator recorded where it is written (else: the old search)."""
        return self.row.span_start is not None and self.row.span_end is not None


@dataclass(frozen=True)
class Linker:
    """How a citation's links and notes are written on this page."""

    evidence_href: Callable[[str], str]
    #: Lines with a finding of their own (shown beside the block, so a failed citation there
    #: needs no second note).
    finding_lines: frozenset[int] = frozenset()
    #: Row id -> how a newer copy of the input changed it (`added`, `removed`, `changed`):
    #: citations of these rows are stale, marked so and with why (`runlens.ui.drift`).
    stale: Mapping[str, str] = field(default_factory=dict)

    def quote(self, row: CitationRow, shown: str | None, *, anchor: bool = True) -> str:
        """A link to the cited row around the quotation `shown` (or around the id, when the
        quotation is not in the text); `anchor`: the `cite-N` id is on this link (the first
        piece of a quotation that markup splits)."""
        text = shown if shown is not None else row.row_id
        anchored = Markup(' id="cite-{}"').format(row.ordinal) if anchor else Markup("")
        link = Markup('<a class="cite cite-{}{}"{} href="{}" title="{}">{}</a>').format(
            row.status,
            self._stale_class(row),
            anchored,
            self.evidence_href(row.row_id),
            self._title(row),
            text,
        )
        return str(link) + (self.stale_note(row) if anchor else "")

    def id(self, row: CitationRow, shown: str) -> str:
        return str(
            Markup('<a class="cite-id cite-{}{}" href="{}" title="{}">{}</a>').format(
                row.status,
                self._stale_class(row),
                self.evidence_href(row.row_id),
                self._title(row),
                shown,
            )
        )

    def stale_note(self, row: CitationRow) -> str:
        """The visible mark of a citation whose row a newer input changed; "" otherwise."""
        change = self.stale.get(row.row_id)
        if change is None:
            return ""
        return str(
            Markup(
                ' <span class="cite-stale" data-stale-row="{}" data-stale-change="{}">'
                "stale: row {} {} in the newer file</span>"
            ).format(row.row_id, change, row.row_id, change)
        )

    def _stale_class(self, row: CitationRow) -> str:
        return " stale" if row.row_id in self.stale else ""

    def _title(self, row: CitationRow) -> str:
        change = self.stale.get(row.row_id)
        title = _title(row)
        return f"stale (row {row.row_id} {change} in the newer file); {title}" if change else title

    def note(self, row: CitationRow) -> str:
        """The visible reason of a failed citation: nothing for a verified one, nor for one
        whose line has a finding (shown beside the block, with the same reason)."""
        if row.status != "failed" or row.line in self.finding_lines:
            return ""
        return str(Markup(' <span class="cite-note">✕ {}</span>').format(_reason(row)))


def _title(row: CitationRow) -> str:
    if row.status == "verified":
        return f"verified quote of row {row.row_id}"
    return f"failed: {_reason(row)}"


def _reason(row: CitationRow) -> str:
    reason = row.reason or "the quote could not be traced to its row"
    return f"{row.code}: {reason}" if row.code else reason


def link_text(
    text: str, offsets: Sequence[int] | None, pending: Sequence[Cited], linker: Linker
) -> str:
    """One text piece of a block as HTML, its citations linked: those with spans where
    `offsets` (the written offset of each character of `text`) fall in them, the others by
    the old search in what is left."""
    located = [c for c in pending if c.located]
    searched = [c for c in pending if not c.located]
    if offsets is None or len(offsets) != len(text) or not located:
        return _search_text(text, searched, linker)
    spans = sorted(
        (start, end, number, cited, is_quote)
        for number, cited in enumerate(located)
        for start, end, is_quote in _spans(cited)
    )
    starts = [span[0] for span in spans]

    def owner(offset: int) -> tuple[Cited, bool] | None:
        before = bisect.bisect_right(starts, offset) - 1
        if before >= 0 and offset < spans[before][1]:
            return spans[before][3], spans[before][4]
        return None

    out: list[str] = []
    position = 0
    while position < len(text):
        current = owner(offsets[position])
        end = position + 1
        while end < len(text) and owner(offsets[end]) == current:
            end += 1
        piece = text[position:end]
        if current is None:
            out.append(_search_text(piece, searched, linker))
        elif current[1]:
            out.append(linker.quote(current[0].row, piece, anchor=not current[0].quote_linked))
            current[0].quote_linked = True
        else:
            cited = current[0]
            note = "" if cited.noted else linker.note(cited.row)
            cited.id_linked = cited.noted = True
            out.append(linker.id(cited.row, piece) + note)
        position = end
    return "".join(out)


def _spans(cited: Cited) -> list[tuple[int, int, bool]]:
    """(start, end, is_quote) of a located citation's quotation and id, as recorded."""
    row = cited.row
    assert row.span_start is not None and row.span_end is not None
    spans = [(row.span_start, row.span_end, True)]
    if row.id_start is not None and row.id_end is not None:
        spans.append((row.id_start, row.id_end, False))
    return spans


def _search_text(text: str, pending: Sequence[Cited], linker: Linker) -> str:
    """`text` with the citations recorded without spans found by searching it."""
    out: list[str] = []
    position = 0
    while pending:
        found = _next_mention(text, position, pending)
        if found is None:
            break
        start, end, cited, is_quote = found
        out.append(str(escape(text[position:start])))
        if is_quote:
            cited.quote_linked = True
            out.append(linker.quote(cited.row, text[start:end]))
        else:
            cited.id_linked = cited.noted = True
            out.append(linker.id(cited.row, text[start:end]) + linker.note(cited.row))
        position = end
    out.append(str(escape(text[position:])))
    return "".join(out)


def _next_mention(
    text: str, position: int, pending: Sequence[Cited]
) -> tuple[int, int, Cited, bool] | None:
    """The earliest unlinked quotation (with its marks) or id, after a linked quotation, in
    `text` from `position`: (start, end, citation, is_quote)."""
    best: tuple[int, int, Cited, bool] | None = None
    for cited in pending:
        # The quote as the parser read the block (NUL as U+FFFD, CR LF as LF): the same
        # reading the validator judged it by (runlens.validation.read_markdown).
        quote = read_markdown(cited.row.quote) if cited.row.quote else cited.row.quote
        if not cited.quote_linked and quote:
            start = text.find(quote, position)
            if start >= 0:
                end = start + len(quote)
                if start > position and text[start - 1] in _OPENING_MARKS:
                    start -= 1
                if end < len(text) and text[end] in _CLOSING_MARKS:
                    end += 1
                if best is None or start < best[0]:
                    best = (start, end, cited, True)
                continue
        if (cited.quote_linked or not quote) and not cited.id_linked:
            start = _find_token(text, cited.row.row_id, position)
            if start >= 0 and (best is None or start < best[0]):
                best = (start, start + len(cited.row.row_id), cited, False)
    return best


def _find_token(text: str, token: str, position: int) -> int:
    """Where `token` stands alone (not inside a longer word) in `text` from `position`."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(token)}(?![\w-])")
    match = pattern.search(text, position)
    return match.start() if match else -1
