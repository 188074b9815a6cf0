"""MarkdownCitationValidationHook: every quote a reader sees in a report traces to its row.

A contract's `citations` (`MarkdownCitations`) declares how its Markdown cites source rows.
The grammar, applied to the text the reader sees in each paragraph, list item, block quote,
table cell, heading and code block (`runlens.validation.rendered`: escapes and entities
decoded, emphasis markers dropped):

    citation    = quotation spaces? (ellipsis spaces?)? attribution
    quotation   = OPEN quote CLOSE           one of the contract's `quote_marks` pairs
    attribution = dash spaces? ID | "[" ID "]" | "(" ID ")" | "（" ID "）"   (spaces in
                  brackets: `[row 17]`)
    dash        = "—" | "–" | "--" | "-"
    ellipsis    = "…" | "..."                a quote cut at its end, marked outside the marks

    > “导出周报太慢了” — fb_001
    The export complaints (“takes three minutes” — fb_001, “stuck at 99%” — fb_017) ...

Spaces may include a line break inside the paragraph. ID is the run of characters up to the
next space (punctuation after it, as in `fb_001,` or `fb_017)`, is stripped when the run
itself is not an id) and counts as an id when it fits the ids' shape (`id_shapes`): a
quotation followed by "— the top complaint" is prose, not a citation.

Each citation is checked as a JSON quote is (`runlens.validation.quotes`): the id is in the
Evidence Index (`unknown_evidence_id`), the quote is a verbatim fragment of that row
(`evidence_text_mismatch`, `empty_evidence_text`) and strong (`weak_evidence_quote`). Under
the `evidence_sections` headings (a section runs to the next heading of the same or a higher
level) every quotation must be a citation (`unsourced_quote`). Anywhere in the document, a
token of a distinctive id shape that names no row is `unknown_reference`, unless it is one of
the contract's `own_words` (a priority `P1`) or a value of the input's other columns (the
input's data, which a document may write). Findings name the
line and column of the opening quotation mark or the token.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass

from runlens.contracts import ArtifactContract, MarkdownCitations
from runlens.errors import ContractError
from runlens.evidence import EvidenceIndex
from runlens.validation.base import (
    CitedSpan,
    Collector,
    ContractValidator,
    Problem,
    QuoteLocation,
    TextSpan,
    ValidationContext,
    ValidatorResult,
    report_untrusted,
)
from runlens.validation.id_shapes import IdShape, named_id
from runlens.validation.markdown import Heading, parse_required
from runlens.validation.quotes import RejectedQuote, judge_quote, show
from runlens.validation.rendered import TextBlock, WrittenOffsets, text_blocks
from runlens.validation.sources import source_rows
from runlens.validation.trust import UntrustedIndex

#: What may stand between a quotation and the id it cites: a dash, or brackets around the id.
DASHES = ("—", "–", "--", "-")
#: An ellipsis after the closing mark (a quote cut at its end), before the attribution.
ELLIPSES = "(?:…|\\.\\.\\.)"
BRACKETS = (("[", "]"), ("(", ")"), ("（", "）"))
_TOKEN = re.compile(r"\S+")


class MarkdownCitationValidator(ContractValidator):
    """Reports unverifiable citations, unsourced quotations and unknown id-shaped tokens."""

    name = "MarkdownCitationValidationHook"

    def __init__(self, contracts: Iterable[ArtifactContract]) -> None:
        super().__init__(contracts)
        self.grammars = {c.name: _Grammar(c) for c in self.contracts}

    @staticmethod
    def applies_to(contract: ArtifactContract) -> bool:
        return contract.citations is not None

    def validate(self, context: ValidationContext) -> ValidatorResult:
        collector = Collector(self.name)
        documents = [(c, _read(context, c.name)) for c in self.contracts]
        present = [(c, markdown) for c, markdown in documents if markdown is not None]
        if not present:
            return collector.result()  # a missing or unreadable file is reported elsewhere
        index = context.evidence_index()
        if isinstance(index, UntrustedIndex):
            # A document that quotes nothing cites nothing the index could vouch for.
            quoting = [c for c, markdown in present if self.grammars[c.name].quotes(markdown)]
            report_untrusted(collector, index, quoting)
            return collector.result()
        derived: IdShape | None = None  # worked out once, for the contracts that need it
        for contract, markdown in present:
            grammar = self.grammars[contract.name]
            shape = grammar.shape
            if shape is None:
                shape = derived = derived or IdShape.of_ids(index.items)
            data = _InputValues(context, index)
            _Document(collector, index, contract.name, grammar, shape, data).check(markdown)
        return collector.result()


def _read(context: ValidationContext, artifact_name: str) -> str | None:
    path = context.artifact_file(artifact_name)
    try:
        # A BOM is not text; undecodable bytes should not hide the citations around them.
        return None if path is None else path.read_bytes().decode("utf-8-sig", errors="replace")
    except OSError:
        return None


@dataclass(frozen=True)
class Quotation:
    """A quotation in a block's text: `text[start:end]` with its marks, `quote` between them;
    `cited` is where the id of the row it cites stands in the text, when it cites one."""

    start: int
    end: int
    quote: str
    marks: tuple[str, str]
    cited: tuple[int, int] | None = None


class _Grammar:
    """The citation grammar of one contract (module docstring), compiled once."""

    def __init__(self, contract: ArtifactContract) -> None:
        citations = contract.citations
        assert citations is not None
        if not citations.quote_marks or not all(all(pair) for pair in citations.quote_marks):
            raise ContractError(f"{contract.name}: citations.quote_marks needs non-empty pairs")
        self.rules: MarkdownCitations = citations
        #: A document a user reads: its quotations must cite rows in every section.
        self.everywhere = contract.audience == "user"
        self.closing = dict(reversed(citations.quote_marks))  # the first pair of an opening wins
        self.sections = tuple(parse_required(heading) for heading in citations.evidence_sections)
        openings = sorted(self.closing, key=len, reverse=True)
        self.opening = re.compile("|".join(map(re.escape, openings)))
        not_id = re.escape("".join(sorted(set("".join(openings)))))
        dashed = "|".join(map(re.escape, DASHES))
        # In brackets an id may hold spaces (`[row 17]`): the closing bracket ends it.
        bracketed = "|".join(
            f"{re.escape(left)}\\s*(?P<id{n}>[^\\s{re.escape(right)}]"
            f"(?:[^{re.escape(right)}\\n]*[^\\s{re.escape(right)}])?)\\s*{re.escape(right)}"
            for n, (left, right) in enumerate(BRACKETS)
        )
        # An ellipsis may stand between the quotation and its id: it marks a quote cut at
        # its end (`“… we lost two” … — fb_3`), outside the marks, where it belongs.
        self.attribution = re.compile(
            f"\\s*(?:{ELLIPSES}\\s*)?(?:(?:{dashed})\\s*(?P<dashed>[^\\s{not_id}]+)|{bracketed})"
        )
        try:
            self.shape = IdShape.declared(citations.id_pattern) if citations.id_pattern else None
        except re.error as error:
            raise ContractError(
                f"{contract.name}: citations.id_pattern {citations.id_pattern!r} is not a "
                f"regular expression: {error}"
            ) from error

    def quotations(
        self, text: str, row_id: Callable[[str], str | None] = lambda token: None
    ) -> Iterator[tuple[Quotation, str | None, int]]:
        """Each quotation in `text`, the row id it cites (None when it cites none) and where
        it ends. `row_id` says which row a token in citation position names, if any.

        Scanning goes on after a citation's id, so quotation marks inside an id (`[“4”]`)
        are not read as a quotation; after a quotation that cites nothing it goes on right
        after the quotation, so `“a” (“b” — fb_1)` still finds the citation inside."""
        position = 0
        unclosed: set[str] = set()  # closing marks that no longer occur: linear, not quadratic
        while (opening := self.opening.search(text, position)) is not None:
            closing = self.closing[opening.group()]
            end = -1 if closing in unclosed else text.find(closing, opening.end())
            if end < 0:
                unclosed.add(closing)
                position = opening.end()  # an unclosed mark quotes nothing
                continue
            quotation = Quotation(
                opening.start(),
                end + len(closing),
                text[opening.end() : end],
                (opening.group(), closing),
            )
            attribution = self.attribution.match(text, quotation.end)
            token, token_at = None, -1
            if attribution is not None:
                name, token = next((n, g) for n, g in attribution.groupdict().items() if g)
                token_at = attribution.start(name)
            cited = None if token is None else row_id(token)
            if attribution is None or token is None or cited is None:
                yield quotation, None, quotation.end
                position = quotation.end
            else:
                id_at = token_at + max(token.find(cited), 0)
                yield (
                    dataclasses.replace(quotation, cited=(id_at, id_at + len(cited))),
                    cited,
                    attribution.end(),
                )
                position = attribution.end()

    def quotes(self, markdown: str) -> bool:
        """Whether the document holds any quotation."""
        return any(next(self.quotations(b.text), None) for b in text_blocks(markdown))

    def evidence_section(self, block: TextBlock, current: Heading | None) -> Heading | None:
        """The evidence section in force after heading `block`: this heading when it is
        one, none when it closes the current one, else still the current one."""
        heading = Heading(block.heading_level, " ".join(block.text.split()))
        if any(heading.matches(wanted) for wanted in self.sections):
            return heading
        if current is not None and heading.level <= current.level:
            return None
        return current


#: Words that say someone's words follow: a quotation after one is a quotation, however short.
_REPORTING = re.compile(
    r"\b(?:said|says|say|told|tells|wrote|writes|write|complain(?:s|ed)?|ask(?:s|ed)?|"
    r"mention(?:s|ed)?|report(?:s|ed)?|comment(?:s|ed)?|put it|quote[sd]?|quoting|"
    r"in (?:their|his|her|your) (?:own )?words)\b|说|表示|写道|抱怨|提到|反映|称|原话|评论道",
    re.IGNORECASE,
)
_SPACED_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*|[0-9]+", re.UNICODE)
_SENTENCE_INSIDE = re.compile(r"[.!?。！？](?=\s*\S)")
#: The most words (in a script with spaces) or other letters a quotation may hold and still
#: be a name or a term (a UI label “Export to CSV”, a feature “dark mode”, 「导出」).
_LABEL_WORDS = 3
_LABEL_CHARACTERS = 8
_INCH_MARKS = '"″'
#: Where the scripts without spaces between words begin (CJK radicals onwards; Thai and the
#: others count as spaced words here, which errs towards a quotation).
_UNSPACED_FROM = 0x2E80


def is_quotation(block: TextBlock, quotation: Quotation) -> bool:
    """Whether a quotation outside the evidence sections gives someone's words (and so must
    cite a row) rather than a name, a term or a measure (docs/validation.md):

    - code (a code block or an inline code span) quotes nothing;
    - a straight `"` right after a digit is an inch or seconds mark (`27" monitor`), so a
      "quotation" that opens or closes with one is none;
    - a quotation that a reporting word introduces in its sentence (`said`, `told us`,
      `wrote`, `complained`, `说`, `表示`, ...) gives someone's words, however short;
    - otherwise a quotation of at most three words (or eight characters of a script without
      spaces) and no sentence inside is a name or a term; a longer one is a quotation.
    """
    text = block.text
    if block.in_code(quotation.start) or block.in_code(quotation.end - 1):
        return False
    opening, closing = quotation.marks
    closes_at = quotation.end - len(closing)
    for mark, at in ((opening, quotation.start), (closing, closes_at)):
        if mark in _INCH_MARKS and at > 0 and text[at - 1].isdigit():
            return False
    sentence_start = max(
        (m.end() for m in re.finditer(r"[.!?。！？]\s|\n\n", text[: quotation.start])), default=0
    )
    if _REPORTING.search(text, sentence_start, quotation.start):
        return True
    if _SENTENCE_INSIDE.search(quotation.quote.strip()):
        return True
    words = _SPACED_WORD.findall(quotation.quote)
    spaced = sum(1 for word in words if all(ord(char) < _UNSPACED_FROM for char in word))
    unspaced = sum(1 for char in quotation.quote if char.isalpha() and ord(char) >= _UNSPACED_FROM)
    return spaced > _LABEL_WORDS or unspaced > _LABEL_CHARACTERS


class _InputValues:
    """The values of the input's other columns (and its column names), read only when a
    document holds an id-shaped token that names no row: such a token may be the input's
    own data (a `parent` column's `fb_17`), which a document may write."""

    def __init__(self, context: ValidationContext, index: EvidenceIndex) -> None:
        self.context = context
        self.index = index
        self._values: frozenset[str] | None = None

    def __contains__(self, token: object) -> bool:
        if self._values is None:
            rows = source_rows(self.context, self.index) or {}
            values = {value.strip() for row in rows.values() for value in row.values()}
            values.update(self.index.columns)
            self._values = frozenset(values)
        return token in self._values


class _Document:
    """Checks one Markdown document's citations, adding to the shared collector."""

    def __init__(
        self,
        collector: Collector,
        index: EvidenceIndex,
        artifact: str,
        grammar: _Grammar,
        shape: IdShape,
        data: Container[str] = frozenset(),
    ) -> None:
        self.collector = collector
        self.index = index
        self.artifact = artifact
        self.grammar = grammar
        self.shape = shape
        self.data = data
        self.own_words = frozenset(grammar.rules.own_words)
        self.longest = max(map(len, index.items), default=0)
        self.written = WrittenOffsets("")

    def check(self, markdown: str) -> None:
        self.written = WrittenOffsets(markdown)
        section: Heading | None = None
        for block in text_blocks(markdown):
            if block.heading_level:
                section = self.grammar.evidence_section(block, section)
            cited = list(self.check_quotations(block, section))
            self.check_references(block, cited)

    def check_quotations(
        self, block: TextBlock, section: Heading | None
    ) -> Iterator[tuple[int, int]]:
        """Check every quotation of the block; yield the spans of its citations."""
        for quotation, row_id, end in self.grammar.quotations(block.text, self.row_id):
            if row_id is not None:
                self.check_citation(block, quotation, row_id)
                yield quotation.start, end
            elif section is not None:
                self.unsourced(block, quotation, f"under {section}", section)
            elif self.grammar.everywhere and is_quotation(block, quotation):
                self.unsourced(block, quotation, "in a document for users")

    def row_id(self, token: str) -> str | None:
        """The row a token in citation position names, or None when it is prose."""
        row_id = named_id(token, self.index, self.longest)
        return row_id if row_id and self.cites(row_id) else None

    def cites(self, token: str) -> bool:
        """Whether a token in citation position is meant as a row id: an id of the index, or
        of the ids' shape. A bracketed token with spaces (`(and more)`) is prose unless the
        ids' own shape has spaces (`row 17`): shapeless ids would take any words for one."""
        if token in self.index:
            return True
        if any(char.isspace() for char in token):
            return self.shape.matches(token)
        return self.shape.fits(token)

    def span(self, block: TextBlock, start: int, end: int) -> TextSpan:
        """Characters `start` to `end` of the block's text, as a span of the file as written
        (it ends right after the first written character of the last one)."""
        first = block.position(start)
        last = self.written.offset(block.position(end - 1)) + 1
        return TextSpan(self.written.offset(first), last, first[0])

    def check_citation(self, block: TextBlock, quotation: Quotation, row_id: str) -> None:
        line, column = block.position(quotation.start)
        where = f"line {line}, column {column}: {show(quotation.quote)}"
        details = {"line": line, "column": column, "row_id": row_id}
        span = self.span(block, quotation.start, quotation.end)
        id_span = None if quotation.cited is None else self.span(block, *quotation.cited)
        failed = CitedSpan(self.artifact, line, column, row_id, span, id_span)
        if row_id not in self.index:
            self.collector.failed_spans.append(failed)
            source = self.index.source or "the source"
            self.collector.add(
                self.artifact,
                "unknown_evidence_id",
                f"{where} cites {row_id}, but no row of {source} has that id",
                Problem("missing evidence ids", row_id),
                path=f"line {line}",
                details=details,
            )
            return
        verdict = judge_quote(
            quotation.quote,
            self.index.text(row_id),
            self.grammar.rules,
            row_id=row_id,
            as_markdown=True,
        )
        if isinstance(verdict, RejectedQuote):
            self.collector.failed_spans.append(failed)
            self.collector.add(
                self.artifact,
                verdict.code,
                f"{where} {verdict.reason}",
                Problem(
                    verdict.head,
                    f"{self.artifact} line {line} {show(quotation.quote)} {verdict.reason}",
                ),
                path=f"line {line}",
                details={**details, "quote": quotation.quote, **verdict.details()},
            )
            return
        self.collector.quotes.append(
            QuoteLocation(
                self.artifact,
                f"line {line}",
                row_id,
                verdict.start,
                verdict.end,
                quote=quotation.quote,
                line=line,
                column=column,
                span=span,
                id_span=id_span,
            )
        )

    def unsourced(
        self, block: TextBlock, quotation: Quotation, where: str, section: Heading | None = None
    ) -> None:
        line, column = block.position(quotation.start)
        opening, closing = quotation.marks
        self.collector.add(
            self.artifact,
            "unsourced_quote",
            f"line {line}, column {column}: {show(quotation.quote)} {where} cites no "
            f"row: follow it with the id of the row it quotes, as in {opening}…{closing} — ID",
            Problem("unsourced quotes", f"{self.artifact} line {line} {show(quotation.quote)}"),
            path=f"line {line}",
            details={
                "line": line,
                "column": column,
                "quote": quotation.quote,
                **({} if section is None else {"section": str(section)}),
            },
        )

    def check_references(self, block: TextBlock, cited: Sequence[tuple[int, int]]) -> None:
        """Report each id-shaped token outside the block's citations that names no row."""
        starts = [start for start, _ in cited]  # in order, not overlapping
        for match in _TOKEN.finditer(block.text):
            before = bisect.bisect_left(starts, match.end()) - 1  # the last one starting before
            if before >= 0 and cited[before][1] > match.start():
                continue
            token = named_id(match.group(), self.index, self.longest)
            if not token or token in self.index or not self.shape.stands_out(token):
                continue
            if token in self.own_words or token in self.data:
                continue  # the document's own word, or the input's data
            line, column = block.position(match.start() + match.group().find(token))
            source = self.index.source or "the source"
            self.collector.add(
                self.artifact,
                "unknown_reference",
                f"line {line}, column {column}: {token} looks like a row id, but no row of "
                f"{source} has that id",
                Problem("unknown references", token),
                path=f"line {line}",
                details={"line": line, "column": column, "token": token},
            )
