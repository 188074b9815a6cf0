"""build_evidence_index on well-formed input: hashes, texts, encodings, CSV dialect details."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from runlens.evidence import EvidenceIndex, build_evidence_index, file_sha256
from runlens.evidence.build import BATCH_ROWS

from .conftest import CsvWriter
from .helpers import csv_text, reference_hashes

FB_001 = "导出周报太慢了，我们团队每周五都要导出，等三分钟很影响效率。"
SAMPLE = (
    "feedback_id,text,channel,rating\n"
    f"fb_001,{FB_001},app_store,2\n"
    'fb_002,"Login fails with ""invalid token"", every time.",email,1\n'
    'fb_003,"第一行\n第二行，还有\r\n第三行",survey,4\n'
)


def assert_matches_reference(
    path: Path, index: EvidenceIndex, *, encoding: str = "utf-8", **columns: str
) -> None:
    expected = reference_hashes(path, encoding=encoding, **columns)
    assert list(index.items) == list(expected)  # same ids, CSV order
    for feedback_id, (row_hash, text) in expected.items():
        assert index.items[feedback_id].row_hash == row_hash
        assert index.text(feedback_id) == text


def test_indexes_every_row_with_spec_hashes(write_csv: CsvWriter) -> None:
    path = write_csv(SAMPLE)
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")

    assert len(index) == 3
    assert index.source == "sample.csv"
    assert index.source_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (index.id_column, index.text_column) == ("feedback_id", "text")
    assert index.columns == ("feedback_id", "text", "channel", "rating")
    assert index.text("fb_001") == FB_001
    assert index.text("fb_002") == 'Login fails with "invalid token", every time.'
    assert_matches_reference(path, index)


def test_quoted_newlines_and_crlf_inside_fields_are_kept_verbatim(write_csv: CsvWriter) -> None:
    path = write_csv(SAMPLE.replace("\n", "\r\n").replace("\r\r\n", "\r\n"))
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert index.text("fb_003") == "第一行\r\n第二行，还有\r\n第三行"
    assert_matches_reference(path, index)


def test_row_hash_uses_every_column_not_only_the_text(write_csv: CsvWriter) -> None:
    first = build_evidence_index(
        write_csv("feedback_id,text,rating\nfb_1,same,1\n", "a.csv"),
        id_column="feedback_id",
        text_column="text",
    )
    second = build_evidence_index(
        write_csv("feedback_id,text,rating\nfb_1,same,2\n", "b.csv"),
        id_column="feedback_id",
        text_column="text",
    )
    assert first.items["fb_1"].text == second.items["fb_1"].text
    assert first.items["fb_1"].row_hash != second.items["fb_1"].row_hash


def test_header_cells_are_stripped_but_values_are_not(write_csv: CsvWriter) -> None:
    path = write_csv(" feedback_id , text ,note\n  fb_1  , padded text ,  x \n")
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert index.columns == ("feedback_id", "text", "note")
    assert "  fb_1  " in index
    assert "fb_1" not in index
    assert index.text("  fb_1  ") == " padded text "
    assert_matches_reference(path, index)


def test_ids_are_any_string_and_columns_can_be_chosen(write_csv: CsvWriter) -> None:
    path = write_csv('id,body\n42,answer\n"a,b",comma id\n工单-7,中文编号\n')
    index = build_evidence_index(path, id_column="id", text_column="body", source_name="x.csv")
    assert list(index.items) == ["42", "a,b", "工单-7"]
    assert index.source == "x.csv"
    assert_matches_reference(path, index, id_column="id", text_column="body")


def test_blank_lines_and_all_empty_rows_are_skipped(write_csv: CsvWriter) -> None:
    path = write_csv("\nfeedback_id,text\n\nfb_1,a\n\r\n,\nfb_2,b\n\n")
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert list(index.items) == ["fb_1", "fb_2"]
    compact = build_evidence_index(
        write_csv("feedback_id,text\nfb_1,a\nfb_2,b\n", "compact.csv"),
        id_column="feedback_id",
        text_column="text",
    )
    assert dict(index.items) == dict(compact.items)
    assert_matches_reference(path.with_name("compact.csv"), index)


@pytest.mark.parametrize("codec", ["gbk", "gb18030"])
def test_gbk_and_gb18030_files_are_read_as_gb18030(write_csv: CsvWriter, codec: str) -> None:
    text = SAMPLE + "fb_004,“引号”和全角标点：；！,app,5\n"
    path = write_csv(text, encoding=codec)
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert index.encoding == "gb18030"
    assert index.text("fb_001") == FB_001
    assert index.text("fb_004") == "“引号”和全角标点：；！"
    assert index.source_hash == file_sha256(path)  # the raw GBK bytes, not a re-encoding
    assert_matches_reference(path, index, encoding="gb18030")


def test_gb18030_only_characters(write_csv: CsvWriter) -> None:
    path = write_csv("feedback_id,text\nfb_1,𠀀 and €\n", encoding="gb18030")
    assert (
        build_evidence_index(path, id_column="feedback_id", text_column="text").text("fb_1")
        == "𠀀 and €"
    )


def test_gbk_file_whose_first_64k_are_ascii(write_csv: CsvWriter) -> None:
    # UTF-8 is tried first and fails far into the file; the build starts again as GB18030.
    filler = "".join(f"fb_{n:05d},plain ascii feedback number {n}\n" for n in range(3000))
    path = write_csv("feedback_id,text\n" + filler + "fb_last,最后一条\n", encoding="gbk")
    assert path.stat().st_size > 1 << 16
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert index.encoding == "gb18030"
    assert index.text("fb_last") == "最后一条"
    assert index.source_hash == file_sha256(path)


@pytest.mark.parametrize("quoted", [False, True])
def test_utf8_bom_is_removed_from_the_header(write_csv: CsvWriter, quoted: bool) -> None:
    header = '"feedback_id","text"' if quoted else "feedback_id,text"
    path = write_csv("\ufeff" + header + "\nfb_1,你好\n")
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert index.columns == ("feedback_id", "text")
    assert index.encoding == "utf-8-sig"
    assert index.source_hash == file_sha256(path)  # BOM included: raw bytes
    assert_matches_reference(path, index, encoding="utf-8-sig")


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_with_bom(write_csv: CsvWriter, codec: str) -> None:
    data = SAMPLE.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
    path = write_csv(data)
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert index.text("fb_003") == "第一行\n第二行，还有\r\n第三行"
    assert_matches_reference(path, index, encoding=codec.split("-be")[0])


@pytest.mark.parametrize(
    "awkward",
    [
        'tab\there "quote" back\\slash \x02\x1f del\x7f \u2028 é e\u0301',
        "row-separator stand-in \x01 inside a value",
        "a NUL \x00 and \x01 together",
    ],
)
def test_values_with_json_special_characters(write_csv: CsvWriter, awkward: str) -> None:
    rows = [["feedback_id", "text", 'we"ird\\key'], ["fb_1", awkward, "x"], ["fb_2", "plain", ""]]
    path = write_csv(csv_text(rows))
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert index.text("fb_1") == awkward
    assert_matches_reference(path, index)


def test_many_batches(write_csv: CsvWriter) -> None:
    rows = [["feedback_id", "text", "n"]]
    rows += [[f"id{n}", f'第{n}条\n反馈, with "quotes"' * (n % 3), str(n)] for n in range(2500)]
    path = write_csv(csv_text(rows))
    assert len(rows) > 3 * BATCH_ROWS
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    assert len(index) == 2500
    assert_matches_reference(path, index, id_column="feedback_id")


def test_file_sha256(write_csv: CsvWriter) -> None:
    data = bytes(range(256)) * 5000
    path = write_csv(data, name="blob.bin")
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
