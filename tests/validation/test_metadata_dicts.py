"""Every row's metadata as dicts (`EvidenceIndex.metadata_dicts`, the source's rows of a
validation round) against the row-by-row reading it replaced, kept here as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.feedback.helpers import generated_rows, write_csv

from runlens.evidence import EvidenceIndex, build_evidence_index
from runlens.evidence._ids import FROM_COLUMN, FROM_ROW_NUMBER


def _earlier(index: EvidenceIndex) -> dict[str, dict[str, str]] | None:
    """`runlens.validation.sources._recorded_rows` as it was."""
    rows: dict[str, dict[str, str]] = {}
    for row_id, metadata in index.metadata_rows():
        if metadata is None:
            return None
        rows[row_id] = dict(metadata)
    return rows


def _same(index: EvidenceIndex) -> dict[str, dict[str, str]] | None:
    now, before = index.metadata_dicts(), _earlier(index)
    assert now == before
    assert now is None or before is None or list(now) == list(before)
    if now is not None:
        for row_id, metadata in now.items():
            assert list(metadata.items()) == list(before[row_id].items())  # type: ignore[index]
        assert len({id(metadata) for metadata in now.values()}) == len(now)  # each its own
    return now


@pytest.mark.parametrize("rule", ["column", FROM_ROW_NUMBER])
def test_a_built_index_gives_every_rows_metadata_as_before(tmp_path: Path, rule: str) -> None:
    rows = generated_rows(2_500, seed=5)  # more than one chunk of a table
    rows[7]["channel"] = ' "quoted", with a comma\nand a line '
    rows[8]["channel"] = ""
    path = write_csv(tmp_path / "rows.csv", rows)
    index = build_evidence_index(
        path,
        id_column="feedback_id",
        text_column="text",
        id_rule=FROM_ROW_NUMBER if rule == FROM_ROW_NUMBER else FROM_COLUMN,
    )
    found = _same(index)
    assert found is not None and len(found) == len(rows)
    # Written and loaded again, the file's rows give the same.
    index.write(tmp_path / "index.json")
    assert _same(EvidenceIndex.load(tmp_path / "index.json")) == found


def test_an_index_of_ids_and_texts_alone_gives_empty_metadata(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("id,text\na,one\nb,two\n", encoding="utf-8")
    index = build_evidence_index(path, id_column="id", text_column="text")
    assert _same(index) == {"a": {}, "b": {}}
