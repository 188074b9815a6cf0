"""EvidenceCitationValidationHook: every cited id and quote traces back to the source CSV.

Two artifacts agreeing with each other proves nothing: both can cite the same invented id.
So every id at a contract's `evidence_fields` is looked up in the Evidence Index the input
tool built from the CSV, and every quote at `evidence_quotes` must be a verbatim fragment of
the text of the row its sibling id names (a fragment of some other row is still a mismatch),
strong enough to be evidence (`runlens.validation.quotes`, shared with Markdown citations).

One pass over each artifact; each lookup is a dict access and a substring search in one row,
so a hundred thousand citations cost linear time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from runlens.contracts import ArtifactContract, EvidenceQuote
from runlens.contracts.paths import found_items, found_pairs, split
from runlens.evidence import EvidenceIndex, QuoteSpan
from runlens.validation.base import (
    Collector,
    ContractValidator,
    IdCitation,
    Problem,
    QuoteLocation,
    ValidationContext,
    ValidatorResult,
    report_untrusted,
    show_value,
)
from runlens.validation.quotes import (
    EMPTY_QUOTE,
    RejectedQuote,
    is_blank,
    judge_quote,
    mismatch,
)
from runlens.validation.trust import UntrustedIndex


class EvidenceCitationValidator(ContractValidator):
    """Reports unknown ids, empty, non-verbatim or weak quotes, and an untrusted index; its
    result lists where each verified quote sits in its row (`quotes`) and each verified id
    cited without a quote (`id_citations`), for the run's `runtime/citations.json`."""

    name = "EvidenceCitationValidationHook"

    @staticmethod
    def applies_to(contract: ArtifactContract) -> bool:
        return bool(contract.evidence_fields or contract.evidence_quotes)

    def validate(self, context: ValidationContext) -> ValidatorResult:
        collector = Collector(self.name)
        present = [c for c in self.contracts if context.artifact_file(c.name)]
        if not present:
            return collector.result()  # nothing cites anything (missing files are reported)
        index = context.evidence_index()
        if isinstance(index, UntrustedIndex):
            report_untrusted(collector, index, present)
            return collector.result()
        for contract in present:
            readable, document = context.load_document(contract.name)
            if readable:  # an unparsable artifact is JsonOutputValidationHook's finding
                texts = partial(context.row_texts, index)
                check_citations(collector, index, contract, document, texts=texts)
        return collector.result()


def check_citations(
    collector: Collector,
    index: EvidenceIndex,
    contract: ArtifactContract,
    document: Any,
    *,
    texts: Callable[[], dict[str, str]] | None = None,
) -> None:
    """The contract's evidence ids and quotes in one parsed document, checked against `index`.

    The validator's checks, also run on the items a batch submits (`runlens.validation.items`).
    `texts` gives every row's text by id when the round shares them (`ValidationContext.
    row_texts`); without it they are read from `index` when enough quotes are checked.
    """
    _Checker(collector, index, contract, texts).check(document)


def _elements(location: str, value: Any) -> Iterator[tuple[str, Any]]:
    """An evidence field holds one id or a list of ids; yield each with its location."""
    if isinstance(value, list):
        for position, element in enumerate(value):
            yield f"{location}[{position}]", element
    else:
        yield location, value


#: Quotes checked one row lookup at a time before every row's text is read in one pass.
_ONE_PASS_AFTER = 1000


def _plain_shape(contract: ArtifactContract) -> tuple[str, str, str] | None:
    """`(list, text key, id key)` when the contract cites rows one way only: one quote rule
    whose text and id are two keys of the elements of one top-level list, its id path the
    one evidence field (`rows.quote` quoting the row `rows.id` names);
    else None."""
    if len(contract.evidence_quotes) != 1:
        return None
    quote = contract.evidence_quotes[0]
    if contract.evidence_fields != (quote.id,):
        return None
    text_path, id_path = split(quote.text), split(quote.id)
    if len(text_path) != 2 or len(id_path) != 2 or text_path[0] != id_path[0]:
        return None
    if text_path[1] == id_path[1]:
        return None
    return text_path[0], text_path[1], id_path[1]


class _Checker:
    """Checks one artifact's citations against the index, adding to the shared collector."""

    def __init__(
        self,
        collector: Collector,
        index: EvidenceIndex,
        contract: ArtifactContract,
        read_texts: Callable[[], dict[str, str]] | None = None,
    ) -> None:
        self.collector = collector
        self.index = index
        self.artifact = contract.name
        self.id_paths = set(contract.evidence_fields)
        self.contract = contract
        #: The verified quotes of the quote rule being checked, by (quote, row text): the
        #: same words quoted from the same text sit at the same place (a rejection names
        #: its row, so only verified ones are kept).
        self.spans: dict[tuple[str, str], QuoteSpan] = {}
        #: Every row's text by id, read from the index in one pass once enough quotes are
        #: checked (`_row_text`), rather than one lookup and decoding a quote.
        self.texts: dict[str, str] | None = None
        self.read_texts = read_texts
        self.lookups = 0

    def check(self, document: Any) -> None:
        """Check every evidence id, then every quote; record each verified id citation
        unless a verified quote of the same item stands on that very id (its citation
        already names the row, with the words)."""
        if not self.check_plain(document):
            self.check_each(document)

    def check_plain(self, document: Any) -> bool:
        """`check_each` in one pass over the items, for the usual deliverable: one list of
        objects whose every id is a row of the index and every quote verified. True when it
        was that (the collector then holds exactly what `check_each` adds: the quotes'
        locations, and no finding or id citation, as every cited id has its verified quote);
        False, the collector untouched, at the first item that is anything else (`check_each`
        then judges the whole document and words each finding)."""
        shape = _plain_shape(self.contract)
        if shape is None or type(document) is not dict:
            return False
        listed, text_key, id_key = shape
        items = document.get(listed)
        if type(items) is not list or len(items) < _ONE_PASS_AFTER:
            return False  # a short list: the lookups of `check_each` cost less than a pass
        quote = self.contract.evidence_quotes[0]
        texts = self.read_texts() if self.read_texts is not None else dict(self.index.texts())
        spans: dict[tuple[str, str], QuoteSpan] = {}
        artifact, found = self.artifact, []
        for position, item in enumerate(items):
            if type(item) is not dict:
                return False
            row_id, text = item.get(id_key), item.get(text_key)
            if type(row_id) is not str or type(text) is not str:
                return False
            row_text = texts.get(row_id)
            if row_text is None:
                return False
            span = spans.get((text, row_text))
            if span is None:
                if is_blank(text):
                    return False
                verdict = judge_quote(text, row_text, quote, row_id=row_id)
                if isinstance(verdict, RejectedQuote):
                    return False
                span = spans[text, row_text] = verdict
            found.append(
                QuoteLocation(
                    artifact, f"{listed}[{position}].{text_key}", row_id, span.start, span.end, text
                )
            )
        self.texts = texts
        self.collector.quotes.extend(found)
        return True

    def check_each(self, document: Any) -> None:
        """`check`, value by value, whatever the document holds."""
        verified: list[tuple[str, str]] = []  # (location, row id): made citations below
        index = self.index
        for field_path in self.contract.evidence_fields:
            # An absent field is a schema finding, not an evidence one: found values only.
            for location, value in found_items(document, field_path):
                if isinstance(value, str) and value in index:  # one known id: `check_id`'s
                    verified.append((location, value))
                else:
                    for at, element in _elements(location, value):
                        row_id = self.check_id(at, element)
                        if row_id is not None:
                            verified.append((at, row_id))
        quoted: set[str] = set()
        quotes, artifact = self.collector.quotes, self.artifact
        for quote in self.contract.evidence_quotes:
            spans = self.spans = {}
            for location, text, id_location, row_id in found_pairs(document, quote.text, quote.id):
                # A quote and an id that are strings, the id a row's, once the rows' texts
                # are read: `check_quote`'s outcome without its lookups, told by one when the
                # row was verified with the same words.
                texts = self.texts
                if texts is not None and type(row_id) is str and type(text) is str:
                    row_text = texts.get(row_id)
                    if row_text is not None:
                        span = spans.get((text, row_text))
                        if span is None:
                            span = self.judged(quote, text, location, row_id, row_text)
                        if span is not None:
                            quotes.append(
                                QuoteLocation(
                                    artifact, location, row_id, span.start, span.end, text
                                )
                            )
                            quoted.add(id_location)
                        continue
                if self.check_quote(quote, text, location, row_id, id_location):
                    quoted.add(id_location)
        self.collector.id_citations.extend(
            IdCitation(artifact, location, row_id)
            for location, row_id in verified
            if location not in quoted
        )

    def _row_text(self, row_id: Any) -> str | None:
        """The text of the row `row_id` names, None when it names no row of the index."""
        if not isinstance(row_id, str):
            return None
        if self.texts is not None:
            return self.texts.get(row_id)
        if row_id not in self.index:
            return None
        self.lookups += 1
        if self.lookups == _ONE_PASS_AFTER:
            if self.read_texts is not None:
                self.texts = self.read_texts()
            else:
                self.texts = dict(self.index.texts())
        return self.index.text(row_id)

    def check_id(self, location: str, value: Any) -> str | None:
        """The row id `value` names when it is an id of the index; else report it, None."""
        if isinstance(value, str) and value in self.index:
            return value
        if isinstance(value, str):
            source = self.index.source or "the source"
            message = f"{location} cites {show_value(value)}, but no row of {source} has that id"
            problem = Problem("missing evidence ids", value or '""')
        else:
            message = f"{location} is {show_value(value)}, not an evidence id"
            problem = Problem("invalid evidence ids", f"{self.artifact} {location}")
        self.collector.add(
            self.artifact,
            "unknown_evidence_id",
            message,
            problem,
            path=location,
            details={"row_id": value},
        )
        return None

    def check_quote(
        self, quote: EvidenceQuote, text: Any, location: str, row_id: Any, id_location: str
    ) -> bool:
        """Judge one quote (`text` at `location`) against the row its sibling id (`row_id`
        at `id_location`) names; True when it is verified."""
        if isinstance(text, str) and is_blank(text):
            self.reject(location, row_id, text, EMPTY_QUOTE)
            return False
        # An unknown id is reported once: at the evidence field when the contract declares
        # it there, else here. Either way there is no row to compare the quote with.
        row_text = self._row_text(row_id)
        if row_text is None:
            if quote.id not in self.id_paths:
                self.check_id(id_location, row_id)
            return False
        if not isinstance(text, str):
            why = f"is {show_value(text)}, not a quoted string"
            self.reject(location, row_id, text, mismatch(why))
            return False
        span = self.spans.get((text, row_text))
        if span is None:
            span = self.judged(quote, text, location, row_id, row_text)
            if span is None:
                return False
        self.collector.quotes.append(
            QuoteLocation(self.artifact, location, row_id, span.start, span.end, quote=text)
        )
        return True

    def judged(
        self, quote: EvidenceQuote, text: str, location: str, row_id: str, row_text: str
    ) -> QuoteSpan | None:
        """Where the quote `text` sits in `row_text`, the text of the row `row_id` names,
        kept for the same words of the same text; None when it is rejected (reported)."""
        if is_blank(text):
            verdict: QuoteSpan | RejectedQuote = EMPTY_QUOTE
        else:
            verdict = judge_quote(text, row_text, quote, row_id=row_id)
        if isinstance(verdict, RejectedQuote):
            self.reject(location, row_id, text, verdict)
            return None
        self.spans[text, row_text] = verdict
        return verdict

    def reject(self, location: str, row_id: str, quoted: Any, rejected: RejectedQuote) -> None:
        self.collector.add(
            self.artifact,
            rejected.code,
            f"{location} {rejected.reason}",
            Problem(rejected.head, f"{self.artifact} {location} {rejected.reason}"),
            path=location,
            details={"row_id": row_id, "quote": quoted, **rejected.details()},
        )
