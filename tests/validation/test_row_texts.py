"""The rows' texts of a validation round: read from the index once, shared by the validators."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runlens.contracts import ArtifactContract, Coverage, EvidenceQuote
from runlens.evidence import EvidenceIndex, build_evidence_index
from runlens.validation import ValidationContext, validate_workspace
from runlens.validation.base import Collector
from runlens.validation.evidence import check_citations

ROWS = 1_500  # more quotes than the checker looks up one row at a time


def _workspace(tmp_path: Path, items: list[dict[str, Any]]) -> tuple[Path, ArtifactContract]:
    (tmp_path / "input").mkdir()
    (tmp_path / "runtime").mkdir()
    csv_path = tmp_path / "input" / "rows.csv"
    body = "".join(f"r{n},row number {n} says the export is slow\n" for n in range(ROWS))
    csv_path.write_text("id,text\nblank,\n" + body, encoding="utf-8")
    index = build_evidence_index(csv_path, id_column="id", text_column="text")
    index.write(tmp_path / "runtime" / "evidence_index.json")
    (tmp_path / "out.json").write_text(json.dumps({"items": items}), encoding="utf-8")
    contract = ArtifactContract(
        name="out.json",
        evidence_fields=("items.id",),
        evidence_quotes=(EvidenceQuote(text="items.quote", id="items.id", min_length=4),),
        coverage=Coverage(ids="items.id"),
    )
    return tmp_path, contract


def _items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"id": f"r{n}", "quote": f"number {n} says"} for n in range(ROWS - 2)
    ]
    items.append({"id": "r5", "quote": "number 5 says"})  # the same words again
    items.append({"id": "r6", "quote": "number 5 says"})  # another row's words
    items.append({"id": "r7", "quote": "umber 7"})  # a cut word
    return items


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the passes over every row of an index (`EvidenceIndex.rows`, and `texts`: its
    ids and texts alone)."""
    reads: list[int] = []
    for name in ("rows", "texts"):
        monkeypatch.setattr(EvidenceIndex, name, _counted(getattr(EvidenceIndex, name), reads))
    return reads


def _counted(read: Callable[[EvidenceIndex], Any], reads: list[int]) -> Callable[..., Any]:
    def counted(self: EvidenceIndex) -> Any:
        reads.append(1)
        return read(self)

    return counted


def test_row_texts_are_every_rows_text_in_order_read_once(tmp_path: Path) -> None:
    workspace, contract = _workspace(tmp_path, [])
    context = ValidationContext(workspace, (contract,))
    index = context.evidence_index()
    assert isinstance(index, EvidenceIndex)
    texts = context.row_texts(index)
    assert list(texts.items()) == [(row_id, text) for row_id, _, text in index.rows()]
    assert texts["blank"] == ""
    assert context.row_texts(index) is texts


def test_a_round_reads_the_rows_once_and_judges_as_the_items_check_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, contract = _workspace(tmp_path, _items())
    reads = _reads(monkeypatch)
    context = ValidationContext(workspace, (contract,))
    index = context.evidence_index()
    assert isinstance(index, EvidenceIndex)
    reads.clear()  # what the index's own check against its source reads is not the validators'
    report = validate_workspace(workspace, [contract])
    rounds = len(reads)
    assert [(f.code, f.path) for f in report.findings] == [
        ("evidence_text_mismatch", "items[1499].quote"),
        ("weak_evidence_quote", "items[1500].quote"),
        ("rows_not_covered", ""),
    ]
    assert report.findings[-1].details["row_ids"] == ["r1498", "r1499"]
    assert len(report.quotes) == ROWS - 1
    # Without the round's shared texts (a batch's items) the findings and quotes are the same.
    collector = Collector("EvidenceCitationValidationHook")
    check_citations(collector, index, contract, json.loads((workspace / "out.json").read_text()))
    alone = collector.result()
    evidence = [f for f in report.findings if f.code != "rows_not_covered"]
    assert [f.model_dump() for f in alone.findings] == [f.model_dump() for f in evidence]
    assert list(alone.quotes) == report.quotes
    # The evidence quotes and the coverage read the texts in one pass between them.
    assert rounds == 1
