"""CoverageValidationHook: every source row with text is accounted for (`rows_not_covered`).

An analysis that quietly skips rows looks complete and is not: its counts and shares describe
some other file. A contract with `coverage` names where the artifact lists the ids it analysed
and where it lists the ids it could not analyse (with a reason beside them); every row of the
Evidence Index whose text is not blank must be in one of the two. The rows that are in
neither make one finding on the artifact, listing them.
"""

from __future__ import annotations

from typing import Any

from runlens.contracts import ArtifactContract
from runlens.evidence import EvidenceIndex
from runlens.validation.base import (
    SUMMARY_ITEMS,
    Collector,
    ContractValidator,
    Problem,
    ValidationContext,
    ValidatorResult,
)
from runlens.validation.listed import field_values

#: Row ids kept in a finding's details (the count is always exact).
DETAIL_IDS = 1000


class CoverageValidator(ContractValidator):
    """Reports the rows of the index that a contract's artifact neither analysed nor excused."""

    name = "CoverageValidationHook"

    @staticmethod
    def applies_to(contract: ArtifactContract) -> bool:
        return contract.coverage is not None

    def validate(self, context: ValidationContext) -> ValidatorResult:
        collector = Collector(self.name)
        for contract in self.contracts:
            readable, document = context.load_document(contract.name)
            if not readable:
                continue  # missing or unreadable: the required-file and JSON checks say so
            index = context.evidence_index()
            if not isinstance(index, EvidenceIndex):
                continue  # an untrusted index is the evidence validator's finding
            _check(collector, contract, document, index, context.row_texts(index))
        return collector.result()


def _ids(document: Any, path: str | None) -> set[str]:
    """Every string id at `path` (a field holding one id or a list of ids)."""
    values = field_values(document, path) if path else []
    if all(type(value) is str for value in values):
        return set(values)  # one id per field, every one text: the usual document
    found: set[str] = set()
    for value in values:
        elements = value if isinstance(value, list) else [value]
        found.update(item for item in elements if isinstance(item, str))
    return found


def _check(
    collector: Collector,
    contract: ArtifactContract,
    document: Any,
    index: EvidenceIndex,
    texts: dict[str, str],
) -> None:
    coverage = contract.coverage
    assert coverage is not None
    covered = _ids(document, coverage.ids) | _ids(document, coverage.excused_ids)
    if covered.issuperset(texts.keys()):
        return  # every row covered (the usual deliverable): told by one set operation
    missing = [row_id for row_id, text in texts.items() if text.strip() and row_id not in covered]
    if not missing:
        return
    shown = ", ".join(missing[:SUMMARY_ITEMS])
    more = f" and {len(missing) - SUMMARY_ITEMS} more" if len(missing) > SUMMARY_ITEMS else ""
    excused = f" nor at {coverage.excused_ids}" if coverage.excused_ids else ""
    collector.add(
        contract.name,
        "rows_not_covered",
        f"{len(missing)} of {len(index)} source rows with text are neither analysed (at "
        f"{coverage.ids}){excused}: {shown}{more}",
        Problem("rows not covered", f"{len(missing)} in {contract.name} ({shown}{more})"),
        details={"count": len(missing), "row_ids": missing[:DETAIL_IDS]},
    )
