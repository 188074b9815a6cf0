"""Every input problem is an InputError whose message names the file and the place.

Each case runs through both readers (`build_evidence_index` and `SourceTable.open(...)
.evidence_index()`), which must report the same message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from runlens.errors import InputError
from runlens.evidence import EvidenceIndex, SourceTable

from .conftest import CsvWriter
from .helpers import build_index, csv_text

Reader = Callable[[Path], EvidenceIndex]


def via_table(path: Path) -> EvidenceIndex:
    return SourceTable.open(path, required_columns=("feedback_id", "text")).evidence_index(
        id_column="feedback_id", text_column="text"
    )


READERS = pytest.mark.parametrize("read", [build_index, via_table], ids=["build", "table"])


def error_of(read: Reader, path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        read(path)
    return caught.value


@READERS
def test_missing_column(write_csv: CsvWriter, read: Reader) -> None:
    error = error_of(read, write_csv("feedback_id,body,channel\nfb_1,x,app\n"))
    assert str(error) == "sample.csv: missing column 'text' (found: feedback_id, body, channel)"
    assert (error.file, error.field) == ("sample.csv", "text")


@READERS
@pytest.mark.parametrize(
    "header", ["feedback_id,text,channel,text", "feedback_id, text ,channel,text"]
)
def test_duplicate_column_names(write_csv: CsvWriter, read: Reader, header: str) -> None:
    error = error_of(read, write_csv(header + "\nfb_1,a,b,c\n"))
    assert str(error) == "sample.csv: duplicate column 'text' in the header (columns 2 and 4)"
    assert error.field == "text"


MULTILINE_START = 'feedback_id,text\nfb_1,"two\nlines"\n\nfb_2,ok\n'  # rows 1-2, lines 2-5


@READERS
@pytest.mark.parametrize("blank_id", ["", "   ", "\t"])
def test_empty_or_blank_id(write_csv: CsvWriter, read: Reader, blank_id: str) -> None:
    path = write_csv(MULTILINE_START + csv_text([[blank_id, "no id here"]], "\n"))
    error = error_of(read, path)
    assert str(error) == f"sample.csv, row 3 (line 6): empty feedback_id {blank_id!r}"
    assert (error.file, error.row, error.field) == ("sample.csv", 3, "feedback_id")


@READERS
def test_duplicate_id_names_both_rows(write_csv: CsvWriter, read: Reader) -> None:
    path = write_csv(MULTILINE_START + "\nfb_3,x\nfb_1,again\n")
    error = error_of(read, path)
    assert str(error) == (
        "sample.csv, row 4 (line 8): duplicate feedback_id 'fb_1' (first at row 1, line 2)"
    )
    assert (error.row, error.field) == (4, "feedback_id")


@READERS
@pytest.mark.parametrize(("row", "count"), [("fb_3,a", 2), ("fb_3,a,b,c", 4)])
def test_row_with_wrong_field_count(
    write_csv: CsvWriter, read: Reader, row: str, count: int
) -> None:
    path = write_csv('feedback_id,text,channel\nfb_1,"a\nb",app\nfb_2,b,web\n' + row + "\n")
    error = error_of(read, path)
    assert str(error) == f"sample.csv, row 3 (line 5): {count} fields, but the header has 3"
    assert error.row == 3


@READERS
@pytest.mark.parametrize("content", ["", "\n\n", "\r\n"])
def test_empty_file(write_csv: CsvWriter, read: Reader, content: str) -> None:
    assert str(error_of(read, write_csv(content))) == "sample.csv: empty file (no header row)"


@READERS
@pytest.mark.parametrize("content", ["feedback_id,text\n", "feedback_id,text\n\n\n,\n"])
def test_header_only_means_no_rows(write_csv: CsvWriter, read: Reader, content: str) -> None:
    error = error_of(read, write_csv(content))
    assert str(error) == "sample.csv: no data rows (only a header)"


@READERS
def test_a_stray_byte_in_utf8_text_is_damage_named_by_offset_row_and_line(
    write_csv: CsvWriter, read: Reader
) -> None:
    prefix = "feedback_id,text\nfb_1,好评如潮\nfb_2,".encode()
    error = error_of(read, write_csv(prefix + b"\xff bad\n"))
    assert str(error).startswith(
        "sample.csv: damaged UTF-8: byte 0xff at byte offset "
        f"{len(prefix)} (row 2, line 3) is not valid UTF-8, while the rest of the file reads "
        "as UTF-8"
    )
    assert (error.byte_offset, error.row, error.file) == (len(prefix), 2, "sample.csv")


@READERS
def test_too_little_evidence_for_any_encoding_is_refused(
    write_csv: CsvWriter, read: Reader
) -> None:
    # One UTF-8 character and one stray byte: neither UTF-8, nor anything else, convincingly.
    prefix = "feedback_id,text\nfb_1,好\nfb_2,".encode()
    error = error_of(read, write_csv(prefix + b"\xff bad\n"))
    assert str(error) == (
        "sample.csv: cannot tell its text encoding: it is not UTF-8 (byte 0xff at byte "
        f"offset {len(prefix)} is not valid UTF-8) and no other encoding reads it "
        "convincingly. If you know the encoding, name it with --encoding"
    )
    assert error.byte_offset == len(prefix)


@READERS
def test_damage_in_the_sampled_end_of_a_large_file(write_csv: CsvWriter, read: Reader) -> None:
    prefix = ("feedback_id,text\n" + "".join(f"fb_{n},中文反馈\n" for n in range(20_000))).encode()
    assert len(prefix) > 3 << 16
    error = error_of(read, write_csv(prefix + b"fb_x,\x80\n"))
    assert error.byte_offset == len(prefix) + len(b"fb_x,")
    assert error.row == 20_001
    assert "damaged UTF-8: byte 0x80 at byte offset" in str(error)
    assert "(row 20001, line 20002)" in str(error)


@READERS
def test_damage_between_the_samples_is_found_by_the_full_read(
    write_csv: CsvWriter, read: Reader
) -> None:
    # The bad byte lies after the first 64 KiB and before the middle sample.
    rows = [f"fb_{n},中文反馈\n" for n in range(40_000)]
    rows[6_000] = "fb_6000,\xff\n"
    head = ("feedback_id,text\n" + "".join(rows[:6_000])).encode()
    data = head + b"fb_6000,\xff\n" + "".join(rows[6_001:]).encode()
    assert 1 << 16 < len(head) < len(data) // 2 - (1 << 16)
    error = error_of(read, write_csv(data))
    assert error.byte_offset == len(head) + len(b"fb_6000,")
    assert "(row 6001, line 6002)" in str(error)


@READERS
def test_broken_utf8_after_its_bom(write_csv: CsvWriter, read: Reader) -> None:
    prefix = "\ufefffeedback_id,text\nfb_1,".encode()
    error = error_of(read, write_csv(prefix + b"\xff\n"))
    assert str(error) == (
        "sample.csv: not UTF-8 text despite its byte-order mark: "
        f"undecodable byte 0xff at byte offset {len(prefix)} (row 1, line 2)"
    )
    assert (error.row, error.byte_offset) == (1, len(prefix))


@READERS
def test_broken_utf16_after_its_bom(write_csv: CsvWriter, read: Reader) -> None:
    data = "feedback_id,text\nfb_1,a\n".encode("utf-16")  # BOM + UTF-16-LE
    error = error_of(read, write_csv(data + b"\x00\xdc" + "x\n".encode("utf-16-le")))
    assert str(error).startswith("sample.csv: not UTF-16 text despite its byte-order mark")
    assert error.byte_offset == len(data)


@READERS
@pytest.mark.parametrize(
    ("tail", "detail"),
    [
        (
            'fb_2,"closed"then more\n',
            "',' expected after '\"' (a quoted field is followed by more text before the "
            "next separator)",
        ),
        (
            'fb_2,"never closed\nfb_3,x\n',
            "unexpected end of data (a quoted field opened in this row is never closed)",
        ),
        (
            "fb_2," + "x" * 140_000 + "\n",
            "field larger than field limit (131072) (one field is too long: is a quotation "
            "mark missing?)",
        ),
    ],
    ids=["text-after-quote", "unterminated-quote", "field-too-large"],
)
def test_malformed_csv(write_csv: CsvWriter, read: Reader, tail: str, detail: str) -> None:
    error = error_of(read, write_csv('feedback_id,text\nfb_1,"a\nb"\n' + tail))
    assert str(error) == f"sample.csv, row 2 (line 4): malformed CSV: {detail}"
    assert error.row == 2


@READERS
def test_problems_far_into_the_file_are_placed_exactly(write_csv: CsvWriter, read: Reader) -> None:
    rows = [["feedback_id", "text"]] + [[f"fb_{n:05d}", f"text {n}"] for n in range(1, 1500)]
    rows[1300][0] = "fb_00007"
    error = error_of(read, write_csv(csv_text(rows)))
    assert str(error) == (
        "sample.csv, row 1300 (line 1301): "
        "duplicate feedback_id 'fb_00007' (first at row 7, line 8)"
    )


def test_table_checks_only_its_required_columns(write_csv: CsvWriter) -> None:
    path = write_csv("feedback_id,text\nfb_1,a\nfb_1,b\n")
    table = SourceTable.open(path, required_columns=("feedback_id",))  # ids are not checked here
    assert table.total_rows == 2
    with pytest.raises(InputError, match=r"row 2 \(line 3\): duplicate feedback_id 'fb_1'"):
        table.evidence_index(id_column="feedback_id", text_column="text")
    with pytest.raises(InputError, match="missing column 'body'"):
        table.evidence_index(text_column="body", id_column="feedback_id")
    with pytest.raises(InputError, match="missing column 'rating'"):
        SourceTable.open(path, required_columns=("feedback_id", "rating"))


@READERS
def test_missing_or_unreadable_file(tmp_path: Path, read: Reader) -> None:
    error = error_of(read, tmp_path / "nope.csv")
    assert str(error) == "nope.csv: cannot be read (No such file or directory)"
    assert str(error_of(read, tmp_path)).startswith(f"{tmp_path.name}: cannot be read (")
