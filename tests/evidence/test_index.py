"""EvidenceIndex queries (locate, text, membership) and its file: atomic writes, loading."""

from __future__ import annotations

import hashlib
import json
import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

from runlens.errors import EvidenceIndexError
from runlens.evidence import (
    EvidenceIndex,
    EvidenceItem,
    QuoteSpan,
    build_evidence_index,
    read_input_format,
)
from runlens.evidence._stores import JsonBatch, TableStore

from .conftest import CsvWriter
from .helpers import csv_text

FB_001 = "导出周报太慢了，我们团队每周五都要导出，等三分钟很影响效率。"
CAFE_NFD = "Cafe\u0301 menu is slow; cafe\u0301 again"  # é as e + combining acute


@pytest.fixture
def index(write_csv: CsvWriter) -> EvidenceIndex:
    rows = [
        ["feedback_id", "text", "channel"],
        ["fb_001", FB_001, "app"],
        ["fb_002", 'He said "export, then wait"\nand left.', "email"],
        ["fb_nfd", CAFE_NFD, "web"],
        ["fb_nfc", unicodedata.normalize("NFC", CAFE_NFD), "web"],
    ]
    return build_evidence_index(
        write_csv(csv_text(rows)), id_column="feedback_id", text_column="text"
    )


# -- queries ---------------------------------------------------------------------------------


def test_locate_returns_character_offsets(index: EvidenceIndex) -> None:
    span = index.locate("fb_001", "等三分钟很影响效率")
    assert span == QuoteSpan(FB_001.index("等"), FB_001.index("等") + 9)
    assert FB_001[span.start : span.end] == "等三分钟很影响效率"


def test_full_width_punctuation_must_match_exactly(index: EvidenceIndex) -> None:
    assert index.locate("fb_001", "太慢了，我们团队") is not None
    assert index.locate("fb_001", "太慢了,我们团队") is None  # ASCII comma: not verbatim
    assert index.locate("fb_001", "太慢了， 我们团队") is None


def test_quotes_and_newlines_inside_the_row(index: EvidenceIndex) -> None:
    assert index.locate("fb_002", '"export, then wait"\nand') == QuoteSpan(8, 31)
    assert index.locate("fb_002", '"export, then wait" and') is None


@pytest.mark.parametrize("row", ["fb_nfd", "fb_nfc"])
@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_nfc_and_nfd_quotes_match_either_stored_form(
    index: EvidenceIndex, row: str, form: Literal["NFC", "NFD"]
) -> None:
    quote = unicodedata.normalize(form, "café again")
    span = index.locate(row, quote)
    nfc_text = unicodedata.normalize("NFC", index.text(row))
    assert span is not None
    assert nfc_text[span.start : span.end] == "café again"
    assert span == QuoteSpan(nfc_text.index("café again"), nfc_text.index("café again") + 10)


def test_text_is_returned_unchanged(index: EvidenceIndex) -> None:
    assert index.text("fb_nfd") == CAFE_NFD  # not normalised
    assert index.items["fb_nfd"].text == CAFE_NFD


def test_first_occurrence_wins_and_paraphrase_is_none(index: EvidenceIndex) -> None:
    assert index.locate("fb_001", "导出") == QuoteSpan(0, 2)
    assert index.locate("fb_001", "导出周报很慢") is None


def test_unknown_ids(index: EvidenceIndex) -> None:
    assert "fb_999" not in index
    assert 7 not in index and None not in index and ["fb_001"] not in index
    with pytest.raises(KeyError):
        index.text("fb_999")
    with pytest.raises(KeyError):
        index.locate("fb_999", "x")
    with pytest.raises(KeyError):
        index.items["fb_999"]


def test_items_mapping(index: EvidenceIndex) -> None:
    assert len(index) == len(index.items) == 4
    assert list(index.items) == ["fb_001", "fb_002", "fb_nfd", "fb_nfc"]
    item = index.items["fb_001"]
    assert isinstance(item, EvidenceItem)
    assert len(item.row_hash) == 64 and item.text == FB_001
    assert index.row_hash("fb_001") == item.row_hash
    assert [row[0] for row in index.rows()] == list(index.items)


def test_from_items() -> None:
    items = {"a": EvidenceItem("0" * 64, "alpha"), "b": EvidenceItem("1" * 64, "beta")}
    index = EvidenceIndex.from_items(
        items, source="s.csv", source_hash="f" * 64, id_column="feedback_id", text_column="text"
    )
    assert dict(index.items) == items
    assert index.locate("b", "et") == QuoteSpan(1, 3)


# -- writing ---------------------------------------------------------------------------------


def test_write_produces_the_spec_shape(index: EvidenceIndex, tmp_path: Path) -> None:
    path = tmp_path / "runtime" / "evidence_index.json"
    digest = index.write(path)
    data = path.read_bytes()
    assert digest == hashlib.sha256(data).hexdigest()
    assert FB_001.encode() in data  # ensure_ascii=False
    document = json.loads(data.decode("utf-8"))
    assert document["source"] == "sample.csv"
    assert document["source_hash"] == index.source_hash
    assert (document["id_column"], document["text_column"]) == ("feedback_id", "text")
    assert document["total_rows"] == 4 and document["encoding"] == "utf-8"
    assert document["columns"] == ["feedback_id", "text", "channel"]
    assert list(document["items"]) == list(index.items)
    for feedback_id, item in document["items"].items():
        assert item == {
            "row_hash": index.row_hash(feedback_id),
            "text": index.text(feedback_id),
            "metadata": {"channel": index.metadata(feedback_id)["channel"]},
        }


def test_write_replaces_atomically_and_leaves_no_temp_files(
    index: EvidenceIndex, tmp_path: Path
) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    path = runtime / "evidence_index.json"
    path.write_text("old", encoding="utf-8")
    index.write(path)
    assert sorted(p.name for p in runtime.iterdir()) == ["evidence_index.json"]
    assert json.loads(path.read_text(encoding="utf-8"))["total_rows"] == 4
    assert path.stat().st_mode & 0o777 == 0o644


def test_failed_write_keeps_the_old_file(
    index: EvidenceIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    path = runtime / "evidence_index.json"
    path.write_text("old", encoding="utf-8")

    def broken_replace(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        index.write(path)
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in runtime.iterdir()] == ["evidence_index.json"]


def test_failure_while_writing_rows_keeps_the_old_file(
    index: EvidenceIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    path = runtime / "evidence_index.json"
    path.write_text("old", encoding="utf-8")

    def rows_then_crash(self: TableStore) -> Iterator[JsonBatch]:
        yield JsonBatch([b"fb_001"], False, [b"0" * 64], [b"partial"], False, [b"{}"])
        raise RuntimeError("interrupted")

    monkeypatch.setattr(TableStore, "json_batches", rows_then_crash)
    with pytest.raises(RuntimeError, match="interrupted"):
        index.write(path)
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in runtime.iterdir()] == ["evidence_index.json"]


# -- loading ---------------------------------------------------------------------------------


def test_load_round_trip(index: EvidenceIndex, tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    index.write(path)
    loaded = EvidenceIndex.load(path)
    assert dict(loaded.items) == dict(index.items)
    assert list(loaded.items) == list(index.items)
    for name in ("source", "source_hash", "id_column", "text_column", "columns", "encoding"):
        assert getattr(loaded, name) == getattr(index, name)
    assert loaded.input_format == index.input_format
    assert index.input_format == {
        "encoding": "utf-8",
        "encoding_confidence": 1.0,
        "encoding_method": "utf-8",
        "delimiter": ",",
        "format": "csv",
        "sheet": None,
        "id_column": "feedback_id",
        "text_column": "text",
        "id_rule": "column",
    }
    assert read_input_format(path) == index.input_format
    assert loaded.locate("fb_nfd", "café") == index.locate("fb_nfd", "café")
    assert loaded.write(tmp_path / "again.json") == index.write(tmp_path / "once.json")


def test_load_any_json_layout_of_the_same_shape(index: EvidenceIndex, tmp_path: Path) -> None:
    path = tmp_path / "pretty.json"
    document = {
        "source": "sample.csv",
        "source_hash": index.source_hash,
        "id_column": "feedback_id",
        "text_column": "text",
        "items": {
            key: {"row_hash": i.row_hash, "text": i.text, "metadata": dict(i.metadata)}
            for key, i in index.items.items()
        },
    }
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    loaded = EvidenceIndex.load(path)
    assert dict(loaded.items) == dict(index.items)
    assert loaded.columns == () and loaded.encoding is None


def test_load_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "runtime" / "evidence_index.json"
    with pytest.raises(EvidenceIndexError, match=str(path)):
        EvidenceIndex.load(path)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "expected a JSON object"),
        ('{"source": "s", "items": []}', "'items' must be an object"),
        ('{"items": {}, "source_hash": "x", "id_column": "i", "text_column": "t"}', "'source'"),
        (
            '{"source":"s","source_hash":"x","id_column":"i","text_column":"t",'
            '"items":{"a":{"row_hash":"' + "0" * 64 + '"}}}',
            "item 'a' needs string 'row_hash' and 'text'",
        ),
        (
            '{"source":"s","source_hash":"x","id_column":"i","text_column":"t",'
            '"items":{"a":{"row_hash":"ABC","text":"t"}}}',
            "item 'a' has a malformed row_hash",
        ),
        (
            '{"source":"s","source_hash":"x","id_column":"i","text_column":"t",'
            '"items":{"a":"just text"}}',
            "item 'a' must be an object",
        ),
    ],
)
def test_load_rejects_bad_json_and_wrong_shapes(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "evidence_index.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EvidenceIndexError) as caught:
        EvidenceIndex.load(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert problem in str(caught.value)


def test_truncated_index_file_is_bad_json(index: EvidenceIndex, tmp_path: Path) -> None:
    path = tmp_path / "evidence_index.json"
    index.write(path)
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(EvidenceIndexError, match="not valid JSON"):
        EvidenceIndex.load(path)


def test_total_rows_must_match(index: EvidenceIndex, tmp_path: Path) -> None:
    path = tmp_path / "evidence_index.json"
    index.write(path)
    path.write_bytes(path.read_bytes().replace(b'"total_rows":4', b'"total_rows":5'))
    with pytest.raises(EvidenceIndexError, match="'total_rows' is 5 but there are 4"):
        EvidenceIndex.load(path)


def test_ids_written_with_other_escapes_are_found(index: EvidenceIndex, tmp_path: Path) -> None:
    path = tmp_path / "evidence_index.json"
    index.write(path)
    data = path.read_bytes().replace(b'"fb_001":\n', b'"\\u0066b_\\u0030\\u00301":\n')
    path.write_bytes(data)
    loaded = EvidenceIndex.load(path)
    assert "fb_001" in loaded
    assert loaded.text("fb_001") == FB_001
    assert list(loaded.items) == list(index.items)
    assert dict(loaded.items) == dict(index.items)


def test_duplicate_ids_in_the_file_are_rejected(index: EvidenceIndex, tmp_path: Path) -> None:
    path = tmp_path / "evidence_index.json"
    index.write(path)
    path.write_bytes(path.read_bytes().replace(b'"fb_nfc":\n', b'"fb_nfd":\n'))
    with pytest.raises(EvidenceIndexError, match="item 'fb_nfd' appears more than once"):
        EvidenceIndex.load(path)


def test_damage_inside_a_row_is_reported_when_the_row_is_read(
    index: EvidenceIndex, tmp_path: Path
) -> None:
    path = tmp_path / "evidence_index.json"
    index.write(path)
    data = path.read_bytes()
    path.write_bytes(data.replace("等三分钟".encode(), b"\\q"))  # an invalid JSON escape
    loaded = EvidenceIndex.load(path)
    assert loaded.text("fb_002") == index.text("fb_002")
    with pytest.raises(EvidenceIndexError, match=r"item 'fb_001' is damaged"):
        loaded.text("fb_001")
    path.write_bytes(data.replace(index.row_hash("fb_002").encode(), b"z" * 64))
    with pytest.raises(EvidenceIndexError, match="item 'fb_002' has a malformed row_hash"):
        EvidenceIndex.load(path).items["fb_002"]


def test_public_api_is_pinned() -> None:
    import runlens.evidence as evidence

    assert sorted(evidence.__all__) == [
        "EvidenceIndex",
        "EvidenceItem",
        "FROM_COLUMN",
        "FROM_ROW_NUMBER",
        "IdRule",
        "MissingColumnError",
        "QuoteSpan",
        "SourceTable",
        "TextFormat",
        "WorkbookLimits",
        "WorkbookTooLarge",
        "build_evidence_index",
        "cell_text",
        "check_encoding_name",
        "check_workbook",
        "file_sha256",
        "is_workbook",
        "read_input_format",
        "require_regular_file",
    ]
    assert all(hasattr(evidence, name) for name in evidence.__all__)
