"""MarkdownSectionValidationHook: required headings, read from a real Markdown parse.

The article's version checked substrings, so a sentence mentioning "Risks And Unknowns" or a
heading inside a code block passed. Here a heading is a heading token of a CommonMark parse
(ATX `## Evidence ##` or setext `Evidence\\n---`) at the document's top level: headings
nested in block quotes or list items are not section headings of the report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from runlens.contracts import ArtifactContract
from runlens.validation.base import (
    Collector,
    ContractValidator,
    Problem,
    ValidationContext,
    ValidatorResult,
)

_REQUIRED = re.compile(r"^\s*(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_PLAIN_TEXT_TOKENS = frozenset({"text", "code_inline", "softbreak", "hardbreak"})


@dataclass(frozen=True)
class Heading:
    """A heading: level 1-6 (0 in a contract means any level) and its plain text."""

    level: int
    text: str
    line: int = 0

    def matches(self, wanted: Heading) -> bool:
        return self.text == wanted.text and wanted.level in (0, self.level)

    def __str__(self) -> str:
        return f"{'#' * self.level} {self.text}" if self.level else self.text


def _normalise(text: str) -> str:
    return " ".join(text.split())


def parse_required(heading: str) -> Heading:
    """`## Evidence ##` -> Heading(2, "Evidence"); `Evidence` (no #'s) matches any level."""
    match = _REQUIRED.match(heading)
    if match is None:
        return Heading(0, _normalise(heading))
    return Heading(len(match.group(1)), _normalise(match.group(2)))


def _plain_text(inline: Token) -> str:
    # `## **Risks** And Unknowns` reads as "Risks And Unknowns": emphasis is not part of it.
    parts = [
        " " if child.type.endswith("break") else child.content
        for child in inline.children or ()
        if child.type in _PLAIN_TEXT_TOKENS
    ]
    return _normalise("".join(parts))


def document_headings(markdown: str) -> list[Heading]:
    """Every top-level heading of the document, in order, with its 1-based line number."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    headings = []
    for position, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0:
            continue
        line = token.map[0] + 1 if token.map else 0
        headings.append(Heading(int(token.tag[1:]), _plain_text(tokens[position + 1]), line))
    return headings


def _first_positions(required: Sequence[Heading], found: Sequence[Heading]) -> dict[int, int]:
    """Required heading index -> position of its first occurrence among the found headings."""
    positions: dict[int, int] = {}
    for index, wanted in enumerate(required):
        position = next((p for p, h in enumerate(found) if h.matches(wanted)), None)
        if position is not None:
            positions[index] = position
    return positions


def _in_order(sequence: Sequence[int]) -> set[int]:
    """Indexes of a longest increasing subsequence: the headings that are already in order.

    Reporting only the rest names the one moved heading rather than everything after it.
    A report has a handful of headings, so the quadratic version is the clear one.
    """
    best: list[list[int]] = []  # best[i]: longest increasing chain ending at i
    for i, value in enumerate(sequence):
        chain: list[int] = []
        for j in range(i):
            if sequence[j] < value and len(best[j]) > len(chain):
                chain = best[j]
        best.append([*chain, i])
    longest: list[int] = max(best, key=len) if best else []
    return set(longest)


class MarkdownSectionValidator(ContractValidator):
    """Reports `missing_heading`, and with `heading_rules` `heading_order`/`duplicate_heading`."""

    name = "MarkdownSectionValidationHook"

    @staticmethod
    def applies_to(contract: ArtifactContract) -> bool:
        return bool(contract.required_headings)

    def validate(self, context: ValidationContext) -> ValidatorResult:
        collector = Collector(self.name)
        for contract in self.contracts:
            path = context.artifact_file(contract.name)
            if path is None:
                continue  # RequiredOutputValidationHook reports it
            # A BOM would hide the first heading; undecodable bytes should not hide the rest.
            markdown = path.read_bytes().decode("utf-8-sig", errors="replace")
            self._check(collector, contract, document_headings(markdown))
        return collector.result()

    def _check(
        self, collector: Collector, contract: ArtifactContract, found: list[Heading]
    ) -> None:
        required = [parse_required(h) for h in contract.required_headings]
        positions = _first_positions(required, found)
        for index, wanted in enumerate(required):
            if index not in positions:
                _report_missing(collector, contract.name, wanted, found)
        rules = contract.heading_rules
        if rules is not None and rules.ordered:
            _check_order(collector, contract.name, required, found, positions)
        if rules is not None and rules.unique:
            _check_unique(collector, contract.name, required, found)


def _report_missing(
    collector: Collector, artifact: str, wanted: Heading, found: Sequence[Heading]
) -> None:
    message = f"{artifact} has no heading {wanted}"
    near = next((h for h in found if h.text.casefold() == wanted.text.casefold()), None)
    if near is not None:
        # The usual near miss: different case or level. Say so, or the finding looks wrong.
        message += f" (line {near.line} has {near}; headings must match exactly)"
    collector.add(
        artifact,
        "missing_heading",
        message,
        Problem("missing headings", str(wanted), f"in {artifact}"),
        details={"heading": str(wanted)},
    )


def _check_order(
    collector: Collector,
    artifact: str,
    required: Sequence[Heading],
    found: Sequence[Heading],
    positions: dict[int, int],
) -> None:
    present = sorted(positions)  # required indexes, contract order
    keep = _in_order([positions[i] for i in present])
    for rank, index in enumerate(present):
        if rank in keep:
            continue
        heading = found[positions[index]]
        after = [present[r] for r in keep if r < rank]
        before = [present[r] for r in keep if r > rank]
        expected = (
            f"expected after {required[max(after)]}"
            if after
            else f"expected before {required[min(before)]}"
        )
        collector.add(
            artifact,
            "heading_order",
            f"{required[index]} at line {heading.line} is out of order ({expected})",
            Problem("headings out of order", str(required[index]), f"in {artifact}"),
            path=f"line {heading.line}",
            details={"heading": str(required[index]), "line": heading.line},
        )


def _check_unique(
    collector: Collector, artifact: str, required: Sequence[Heading], found: Sequence[Heading]
) -> None:
    for wanted in required:
        lines = [h.line for h in found if h.matches(wanted)]
        for line in lines[1:]:
            collector.add(
                artifact,
                "duplicate_heading",
                f"{wanted} appears again at line {line} (first at line {lines[0]})",
                Problem("duplicate headings", str(wanted), f"in {artifact}"),
                path=f"line {line}",
                details={"heading": str(wanted), "line": line, "first_line": lines[0]},
            )
