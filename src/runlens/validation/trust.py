"""Which Evidence Index a validation round may trust, worked out once and shared.

Every validator that checks citations (JSON evidence fields and quotes, Markdown citations,
coverage, figures) asks `context.evidence_index()` and gets the same answer: the index, or
why it cannot be trusted. Citing artifacts are rejected when it cannot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from runlens.contracts import ArtifactContract
from runlens.errors import EvidenceIndexError
from runlens.evidence import EvidenceIndex, file_sha256
from runlens.validation.base import EVIDENCE_INDEX, Collector, Problem
from runlens.validation.findings import FindingCode

if TYPE_CHECKING:
    from runlens.validation.base import ValidationContext


@dataclass(frozen=True)
class UntrustedIndex:
    """Why the index cannot be used: the finding code, summary head and reason."""

    code: FindingCode
    head: str
    reason: str


def open_index(context: ValidationContext) -> EvidenceIndex | UntrustedIndex:
    """The round's Evidence Index, or why it cannot be trusted."""
    path = context.evidence_index_path
    if not path.is_file():
        return UntrustedIndex("evidence_index_missing", "evidence index missing", "does not exist")
    expected = (context.expected_index_sha256 or "").lower()
    if expected and (actual := file_sha256(path)) != expected:
        return UntrustedIndex(
            "evidence_index_tampered",
            "evidence index tampered",
            f"has sha256 {actual[:12]}…, not the {expected[:12]}… recorded when the run wrote it",
        )
    try:
        return EvidenceIndex.load(path)
    except EvidenceIndexError as error:
        return UntrustedIndex(
            "evidence_index_missing", "evidence index missing", f"unreadable: {error}"
        )


def report_untrusted(
    collector: Collector, untrusted: UntrustedIndex, citing: Iterable[ArtifactContract]
) -> None:
    """Each citing artifact gets the finding (none of them can be verified, so each is
    rejected); they share one summary entry, so the error message says it once."""
    for contract in citing:
        collector.add(
            contract.name,
            untrusted.code,
            f"{EVIDENCE_INDEX} {untrusted.reason}: the evidence cited in {contract.name} "
            "cannot be traced to the source",
            Problem(untrusted.head, f"{EVIDENCE_INDEX} {untrusted.reason}"),
            details={"index": EVIDENCE_INDEX},
        )
