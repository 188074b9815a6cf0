"""Encodings and delimiters chosen by evidence, refusals of what is not text, ids that must be
printable. Each case runs through both readers (`build_evidence_index` and `SourceTable.open(...)
.evidence_index()`): they choose the same format and report the same errors.

The texts are real customer feedback as people write it (French, German, Spanish, Chinese,
Japanese, Korean, Russian, Polish), written in the encodings spreadsheets export them in.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from runlens.errors import EvidenceIndexError, InputError, UserError
from runlens.evidence import (
    EvidenceIndex,
    SourceTable,
    build_evidence_index,
    check_encoding_name,
    file_sha256,
    read_input_format,
    require_regular_file,
)
from runlens.evidence._detect import detect_delimiter

from .conftest import CsvWriter
from .helpers import build_index, reference_hashes, xlsx_bytes

Reader = Callable[..., EvidenceIndex]


def via_table(path: Path, **options: str) -> EvidenceIndex:
    table = SourceTable.open(path, required_columns=("feedback_id", "text"), **options)
    index = table.evidence_index(id_column="feedback_id", text_column="text")
    assert table.text_format is not None
    assert table.text_format.encoding == index.encoding == table.encoding
    return index


READERS = pytest.mark.parametrize("read", [build_index, via_table], ids=["build", "table"])


def csv_of(rows: list[tuple[str, str]], delimiter: str = ",") -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\r\n")
    writer.writerow(["feedback_id", "text"])
    writer.writerows(rows)
    return out.getvalue()


FRENCH = [
    ("f1", "Le café était froid et le serveur très impoli."),
    ("f2", "Très déçu par la qualité, je ne reviendrai pas."),
    ("f3", "Excellent accueil, à recommander ! L’hôtel était propre, « parfait »."),
]
#: Latin-1 has no curly apostrophe: what an ISO-8859-1 export holds.
FRENCH_LATIN1 = [(key, text.replace("’", "'")) for key, text in FRENCH]
GERMAN = [
    ("d1", "Die Lieferung war pünktlich, aber die Verpackung beschädigt."),
    ("d2", "Größe passt nicht – bitte umtauschen, „sofort“."),
    ("d3", "Sehr gut, 5 € günstiger als im Laden. Süß!"),
]
SPANISH = [
    ("s1", "El envío tardó mucho, ¡qué decepción!"),
    ("s2", "La aplicación no funciona en mi teléfono."),
    ("s3", "Muy buen servicio, señor. ¿Volveré? Sí, año tras año."),
]
CHINESE = [
    ("z1", "导出周报太慢了，每次都要等三分钟。"),
    ("z2", "登录经常失败，提示验证码错误。"),
    ("z3", "仪表盘做得很漂亮，老板很喜欢。"),
    ("z4", "这个月为什么多扣了两个席位的钱？"),
]
TRADITIONAL = [
    ("t1", "匯出週報太慢了，每次都要等三分鐘。"),
    ("t2", "登入經常失敗，提示驗證碼錯誤。"),
    ("t3", "儀表板做得很漂亮，老闆很喜歡。"),
]
JAPANESE = [
    ("j1", "エクスポートが遅すぎます。毎回三分待たされます。"),
    ("j2", "ログインがよく失敗します。"),
    ("j3", "ダッシュボードはとても綺麗です。"),
]
KOREAN = [
    ("k1", "내보내기가 너무 느립니다."),
    ("k2", "로그인이 자주 실패합니다."),
    ("k3", "대시보드가 아주 예쁩니다."),
]
RUSSIAN = [
    ("r1", "Экспорт отчётов работает очень медленно."),
    ("r2", "Отличное приложение, спасибо!"),
]
POLISH = [
    ("p1", "Dostawa była szybka, ale opakowanie uszkodzone."),
    ("p2", "Bardzo dobra obsługa, polecam każdemu. Zażółć gęślą jaźń."),
]

# (rows, the codec the file is written in, the encoding it must be read as, method)
LEGACY = [
    pytest.param(FRENCH_LATIN1, "latin-1", "cp1252", "western-characters", id="french-latin-1"),
    pytest.param(FRENCH, "cp1252", "cp1252", "western-characters", id="french-cp1252"),
    pytest.param(GERMAN, "cp1252", "cp1252", "western-characters", id="german-cp1252"),
    pytest.param(SPANISH, "latin-1", "cp1252", "western-characters", id="spanish-latin-1"),
    pytest.param(CHINESE, "gbk", "gb18030", "gb2312-characters", id="chinese-gbk"),
    pytest.param(CHINESE[:1], "gbk", "gb18030", "gb2312-characters", id="one-gbk-row"),
    pytest.param(
        [*CHINESE, ("z5", "很好用👍，𠀀也能显示")],
        "gb18030",
        "gb18030",
        "gb2312-characters",
        id="gb18030-four-byte-characters",
    ),
    pytest.param(TRADITIONAL, "big5", "big5", "charset-normalizer", id="big5"),
    pytest.param(JAPANESE, "shift_jis", "cp932", "charset-normalizer", id="shift-jis"),
    pytest.param(KOREAN, "euc_kr", "cp949", "charset-normalizer", id="euc-kr"),
    pytest.param(RUSSIAN, "cp1251", "cp1251", "charset-normalizer", id="russian-cp1251"),
    pytest.param(RUSSIAN, "koi8_r", "koi8-r", "charset-normalizer", id="russian-koi8-r"),
    pytest.param(POLISH, "cp1250", "cp1250", "charset-normalizer", id="polish-cp1250"),
]


def assert_reads(index: EvidenceIndex, rows: list[tuple[str, str]], path: Path) -> None:
    assert [(key, index.text(key)) for key in index.items] == rows
    assert index.source_hash == file_sha256(path)  # the raw bytes, not a re-encoding
    assert index.encoding is not None
    expected = reference_hashes(path, encoding=index.encoding)
    assert {key: index.row_hash(key) for key in index.items} == {
        key: row_hash for key, (row_hash, _) in expected.items()
    }


@READERS
@pytest.mark.parametrize(("rows", "codec", "encoding", "method"), LEGACY)
def test_legacy_encodings_are_read_right(
    write_csv: CsvWriter,
    read: Reader,
    rows: list[tuple[str, str]],
    codec: str,
    encoding: str,
    method: str,
) -> None:
    path = write_csv(csv_of(rows), encoding=codec)
    index = read(path)
    assert (index.encoding, index.encoding_method) == (encoding, method)
    assert index.encoding_confidence is not None and index.encoding_confidence >= 0.9
    assert_reads(index, rows, path)


@READERS
def test_a_single_accent_is_read_but_recorded_as_a_guess(
    write_csv: CsvWriter, read: Reader
) -> None:
    # The hostile tester's case: `café` used to become `caf閟` (read as GB18030).
    path = write_csv("feedback_id,text\nfb_1,café\n", encoding="latin-1")
    index = read(path)
    assert index.text("fb_1") == "café"
    assert index.encoding == "cp1252"
    assert index.encoding_confidence == 0.75  # one character of evidence


@READERS
@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
@pytest.mark.parametrize("rows", [FRENCH, CHINESE], ids=["latin", "chinese"])
def test_utf16_and_utf32_without_a_bom(
    write_csv: CsvWriter, read: Reader, codec: str, rows: list[tuple[str, str]]
) -> None:
    path = write_csv(csv_of(rows), encoding=codec)
    index = read(path)
    assert (index.encoding, index.encoding_method) == (codec, "nul-pattern")
    assert index.encoding_confidence is not None and index.encoding_confidence > 0.9
    assert_reads(index, rows, path)


@READERS
@pytest.mark.parametrize(
    ("codec", "encoding"), [("utf-16", "utf-16"), ("utf-8-sig", "utf-8-sig"), ("utf-32", "utf-32")]
)
def test_a_bom_decides(write_csv: CsvWriter, read: Reader, codec: str, encoding: str) -> None:
    path = write_csv(csv_of(CHINESE), encoding=codec)
    index = read(path)
    assert (index.encoding, index.encoding_method, index.encoding_confidence) == (
        encoding,
        "bom",
        1.0,
    )
    assert [index.text(key) for key in index.items] == [text for _, text in CHINESE]


@READERS
def test_utf8_is_certain(write_csv: CsvWriter, read: Reader) -> None:
    index = read(write_csv(csv_of([*CHINESE, *FRENCH])))
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


def big_ascii_file_with(tail_rows: str, codec: str) -> bytes:
    """About 800 KB: ASCII everywhere the samples look (start, middle, end) except `tail_rows`,
    placed between the first 64 KiB and the middle sample."""
    head = "feedback_id,text\n" + "".join(f"a{n},plain ascii feedback {n}\n" for n in range(4_000))
    tail = "".join(f"b{n},plain ascii feedback {n}\n" for n in range(25_000))
    return head.encode() + tail_rows.encode(codec) + tail.encode()


@READERS
def test_latin1_beyond_the_samples_is_found_and_read(write_csv: CsvWriter, read: Reader) -> None:
    path = write_csv(big_ascii_file_with("x1,Très bon café merci\n", "latin-1"))
    index = read(path)
    assert index.text("x1") == "Très bon café merci"
    assert (index.encoding, index.encoding_method) == ("cp1252", "western-characters")
    assert len(index) == 29_001


@READERS
def test_gbk_beyond_the_samples_is_found_and_read(write_csv: CsvWriter, read: Reader) -> None:
    path = write_csv(big_ascii_file_with("x1,导出周报太慢了，每次都要等三分钟。\n", "gbk"))
    index = read(path)
    assert index.text("x1") == "导出周报太慢了，每次都要等三分钟。"
    assert index.encoding == "gb18030"


@READERS
def test_gbk_with_a_long_word_of_pinyin_letters_is_read(write_csv: CsvWriter, read: Reader) -> None:
    """A few Chinese words and one long token of Latin letters with tone marks (GB2312 has
    them): the odd word must not make the only sane reading, GB18030, look unconvincing."""
    token = "twoyebiéegjuczkilkd" * 50
    text = f"feedback_id,text\nx1,闪退 \nx2,很差 \nx3,{token}\nx4,the \n"
    index = read(write_csv(text.encode("gbk")))
    assert [index.text(i) for i in ("x1", "x3")] == ["闪退 ", token]
    assert index.encoding == "gb18030"


@READERS
def test_utf8_then_latin1_is_refused_as_mixed(write_csv: CsvWriter, read: Reader) -> None:
    head = "feedback_id,text\nu1,导出很慢\n" + "".join(f"a{n},ascii {n}\n" for n in range(8_000))
    tail = "".join(f"b{n},ascii {n}\n" for n in range(40_000))
    data = head.encode() + "x1,café\n".encode("latin-1") + tail.encode()
    error = error_of(read, write_csv(data))
    offset = len(head.encode()) + len(b"x1,caf")
    assert error.byte_offset == offset
    assert str(error).startswith(
        f"sample.csv: damaged UTF-8: byte 0xe9 at byte offset {offset} (row 8002, line 8003)"
    )


def error_of(read: Reader, path: Path, **options: str) -> InputError:
    with pytest.raises(InputError) as caught:
        read(path, **options)
    assert caught.value.file == path.name
    return caught.value


# -- what is not text ------------------------------------------------------------------------


def zip_bytes() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("feedback.csv", "feedback_id,text\nfb_1,zipped\n")
    return out.getvalue()


def xlsb_bytes() -> bytes:
    """The start of a binary Excel workbook (.xlsb): xl/workbook.bin, no xl/workbook.xml."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.bin", b"\x83\x01\x00")
    return out.getvalue()


NOISE = random.Random(5).randbytes(4000)
SIGNATURES = [
    pytest.param(b"\x89PNG\r\n\x1a\n" + NOISE, "a PNG image", id="png"),
    pytest.param(b"\xff\xd8\xff\xe0" + NOISE, "a JPEG image", id="jpeg"),
    pytest.param(b"%PDF-1.7\n" + NOISE, "a PDF document", id="pdf"),
    pytest.param(
        xlsb_bytes(), "an Excel workbook in a form RunLens cannot read (not .xlsx)", id="xlsb"
    ),
    pytest.param(zip_bytes(), "a ZIP archive", id="zip"),
    pytest.param(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + NOISE, "a legacy Office file", id="xls"),
    pytest.param(b"\x1f\x8b\x08\x00" + NOISE, "a gzip-compressed file", id="gzip"),
    pytest.param(b"SQLite format 3\x00" + NOISE, "an SQLite database", id="sqlite"),
]


@READERS
@pytest.mark.parametrize(("data", "what"), SIGNATURES)
def test_files_that_are_not_text_say_what_they_look_like(
    write_csv: CsvWriter, read: Reader, data: bytes, what: str
) -> None:
    error = error_of(read, write_csv(data))
    assert str(error).startswith(f"sample.csv: looks like {what}")
    assert "not a CSV text file" in str(error)


@READERS
def test_a_damaged_workbook_is_refused_as_a_workbook(write_csv: CsvWriter, read: Reader) -> None:
    # Named .csv: what the file is comes from its content (a ZIP with xl/workbook.xml).
    error = error_of(read, write_csv(xlsx_bytes()))
    assert str(error).startswith("sample.csv: cannot be read as an Excel workbook (")


@READERS
def test_random_bytes_are_refused(write_csv: CsvWriter, read: Reader) -> None:
    error = error_of(read, write_csv(random.Random(1).randbytes(50_000)))
    assert str(error).startswith("sample.csv: cannot tell its text encoding: it is not UTF-8")
    assert "it looks like binary data" in str(error)
    assert "name it with --encoding" in str(error)


@READERS
@pytest.mark.parametrize(
    "data",
    [bytes(5000), bytes(random.Random(2).randrange(128) for _ in range(5000))],
    ids=["all-nul", "random-7-bit"],
)
def test_utf8_valid_binary_data_is_refused(write_csv: CsvWriter, read: Reader, data: bytes) -> None:
    error = error_of(read, write_csv(data))
    assert str(error).startswith("sample.csv: looks like binary data, not CSV text (")


@READERS
def test_random_bytes_are_refused_even_in_a_named_encoding(
    write_csv: CsvWriter, read: Reader
) -> None:
    error = error_of(read, write_csv(random.Random(3).randbytes(5000)), encoding="latin-1")
    assert "looks like binary data" in str(error)


@READERS
def test_a_csv_with_a_few_control_characters_in_its_values_is_text(
    write_csv: CsvWriter, read: Reader
) -> None:
    path = write_csv("feedback_id,text\nfb_1,\x00\x01\x02\x03\x04\x05\x06\x07\x08 odd but text\n")
    assert read(path).text("fb_1").endswith("odd but text")


# -- a named encoding ------------------------------------------------------------------------


@READERS
def test_a_named_encoding_is_used_as_it_is(write_csv: CsvWriter, read: Reader) -> None:
    path = write_csv(csv_of(FRENCH_LATIN1), encoding="latin-1")
    index = read(path, encoding="latin-1")
    assert index.input_format == {
        "encoding": "iso8859-1",
        "encoding_confidence": 1.0,
        "encoding_method": "given",
        "delimiter": ",",
        "format": "csv",
        "sheet": None,
        "id_column": "feedback_id",
        "text_column": "text",
        "id_rule": "column",
    }
    assert index.text("f1") == FRENCH_LATIN1[0][1]
    # Even when detection would choose otherwise: a UTF-8 file read as Latin-1 on request.
    mojibake = read(write_csv(csv_of(FRENCH), "utf8.csv"), encoding="latin-1")
    assert mojibake.text("f1") == FRENCH[0][1].encode().decode("latin-1")


@READERS
def test_a_file_not_in_the_named_encoding_names_the_byte_row_and_line(
    write_csv: CsvWriter, read: Reader
) -> None:
    path = write_csv(csv_of(FRENCH_LATIN1), encoding="latin-1")
    offset = csv_of(FRENCH_LATIN1).encode("latin-1").index("é".encode("latin-1"))
    error = error_of(read, path, encoding="utf-8")
    assert str(error) == (
        "sample.csv: not UTF-8 text, the encoding given: undecodable byte 0xe9 at byte offset "
        f"{offset} (row 1, line 2)"
    )
    assert (error.row, error.byte_offset) == (1, offset)


@READERS
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("no-such-codec", "unknown encoding 'no-such-codec'"),
        ("rot13", "'rot13' is not a character encoding"),
        ("base64", "'base64' is not a character encoding"),
        ("unicode_escape", "'unicode_escape' is not a character encoding"),
        ("utf-7", "'utf-7' is not a character encoding"),
    ],
)
def test_a_bad_encoding_name_is_a_user_error(
    write_csv: CsvWriter, read: Reader, name: str, message: str
) -> None:
    with pytest.raises(UserError, match=message):
        read(write_csv(csv_of(FRENCH)), encoding=name)


def test_encoding_names_are_canonical() -> None:
    assert check_encoding_name("Latin-1") == "iso8859-1"
    assert check_encoding_name("GBK") == "gbk"
    assert check_encoding_name("UTF8") == "utf-8"


# -- delimiters ------------------------------------------------------------------------------


@READERS
@pytest.mark.parametrize(
    ("delimiter", "codec"),
    [("\t", "utf-8"), (";", "cp1252"), ("|", "utf-8"), ("\t", "utf-16-le"), (";", "gbk")],
    ids=["tab", "semicolon-cp1252", "pipe", "tab-utf-16", "semicolon-gbk"],
)
def test_tab_semicolon_and_pipe_separated_files(
    write_csv: CsvWriter, read: Reader, delimiter: str, codec: str
) -> None:
    rows = [
        ("x1", "Slow, really slow; and | pipes"),
        ("x2", 'quoted "text"\twith a tab'),
        *(CHINESE if codec == "gbk" else GERMAN),
    ]
    path = write_csv(csv_of(rows, delimiter), encoding=codec)
    index = read(path)
    assert index.delimiter == delimiter
    assert [(key, index.text(key)) for key in index.items] == rows


def test_comma_is_preferred_when_the_header_splits_either_way() -> None:
    text = "feedback_id,text;note\nfb_1,a;b\n"
    assert detect_delimiter(text, ("feedback_id", "text;note")) == ","
    assert detect_delimiter("feedback_id;text\tnote\n", ()) == "\t"  # first of equal widths
    assert detect_delimiter("a,b\tc\td\n", ()) == "\t"  # most fields
    assert detect_delimiter("one column only\n", ()) == ","


ONE_COLUMN = "text\nslow, really slow, and buggy\n"


def one_column_indexes(path: Path) -> list[EvidenceIndex]:
    """The file read by both readers, its one column as ids and text."""
    table = SourceTable.open(path, required_columns=("text",))
    return [
        build_index(path, id_column="text", text_column="text"),
        table.evidence_index(id_column="text", text_column="text"),
    ]


@pytest.mark.parametrize("name", ["one.tsv", "one.TAB"])
def test_a_one_column_tsv_keeps_the_commas_of_its_text(write_csv: CsvWriter, name: str) -> None:
    # No delimiter splits the header: the file name says TAB, so the commas are text.
    for index in one_column_indexes(write_csv(ONE_COLUMN, name)):
        assert index.delimiter == "\t"
        assert list(index.items) == ["slow, really slow, and buggy"]


def test_a_one_column_csv_is_still_comma_separated(write_csv: CsvWriter) -> None:
    with pytest.raises(InputError, match="3 fields, but the header has 1"):
        one_column_indexes(write_csv(ONE_COLUMN, "one.csv"))
    with pytest.raises(InputError, match="3 fields, but the header has 1"):
        build_index(write_csv(ONE_COLUMN, "one.csv"), id_column="text", text_column="text")
    assert detect_delimiter("text\n", ("text",), single_column="\t") == "\t"


@READERS
def test_a_missing_column_lists_the_columns_split_at_the_detected_delimiter(
    write_csv: CsvWriter, read: Reader
) -> None:
    error = error_of(read, write_csv("feedback_id\tbody\tchannel\nfb_1\tx\tapp\n"))
    assert str(error) == "sample.csv: missing column 'text' (found: feedback_id, body, channel)"


# -- ids -------------------------------------------------------------------------------------


@READERS
@pytest.mark.parametrize(
    ("feedback_id", "code"),
    [
        ("fb\x001", "U+0000"),
        ("fb\x01", "U+0001"),
        ("fb\x1b[31m", "U+001B"),
        ("fb\x7f", "U+007F"),
        ("fb\x85", "U+0085"),
        ("fb\t1", "U+0009"),
        ("fb\n1", "U+000A"),
        ("fb\r1", "U+000D"),
        ("fb\u202e1", "U+202E"),
        ("fb\u20281", "U+2028"),
    ],
    ids=["nul", "soh", "escape", "del", "c1-nel", "tab", "newline", "cr", "bidi-override", "ls"],
)
def test_ids_with_control_characters_are_refused_with_the_row(
    write_csv: CsvWriter, read: Reader, feedback_id: str, code: str
) -> None:
    rows = [("fb_1", "fine"), ("fb_2", "fine too"), (feedback_id, "the bad id"), ("fb_4", "x")]
    error = error_of(read, write_csv(csv_of(rows)))
    assert str(error).startswith(
        f"sample.csv, row 3 (line 4): feedback_id {feedback_id!r} contains the control "
        f"character {code}"
    )
    assert (error.row, error.field) == (3, "feedback_id")


@READERS
def test_control_characters_in_the_text_are_kept(write_csv: CsvWriter, read: Reader) -> None:
    index = read(write_csv(csv_of([("fb_1", "tab\there, nul\x00 and \x1b too")])))
    assert index.text("fb_1") == "tab\there, nul\x00 and \x1b too"


# -- the index records the format ------------------------------------------------------------


def test_the_index_file_records_the_format(write_csv: CsvWriter, tmp_path: Path) -> None:
    path = write_csv(csv_of(GERMAN, ";"), encoding="cp1252")
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    target = tmp_path / "index.json"
    index.write(target)
    header = json.loads(target.read_text(encoding="utf-8"))
    assert (header["encoding"], header["encoding_method"], header["delimiter"]) == (
        "cp1252",
        "western-characters",
        ";",
    )
    assert 0.9 <= header["encoding_confidence"] <= 1
    loaded = EvidenceIndex.load(target)
    assert read_input_format(target) == index.input_format == loaded.input_format


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("encoding_confidence", 1.5, "'encoding_confidence' must be a number from 0 to 1"),
        ("encoding_confidence", True, "'encoding_confidence' must be a number from 0 to 1"),
        ("encoding_method", 3, "'encoding_method' must be a string"),
        ("delimiter", ";;", "'delimiter' must be one character"),
    ],
)
def test_a_malformed_format_field_is_an_index_error(
    write_csv: CsvWriter, tmp_path: Path, field: str, value: object, message: str
) -> None:
    target = tmp_path / "index.json"
    build_evidence_index(
        write_csv(csv_of(FRENCH)), id_column="feedback_id", text_column="text"
    ).write(target)
    document = json.loads(target.read_text(encoding="utf-8"))
    document[field] = value
    target.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(EvidenceIndexError, match=message):
        EvidenceIndex.load(target)


def test_rebuilding_with_the_recorded_format_reproduces_the_index(write_csv: CsvWriter) -> None:
    path = write_csv(csv_of(CHINESE, "\t"), encoding="utf-16-le")
    index = build_evidence_index(path, id_column="feedback_id", text_column="text")
    again = build_evidence_index(
        path,
        encoding=index.encoding,
        delimiter=index.delimiter,
        id_column="feedback_id",
        text_column="text",
    )
    assert list(again.rows()) == list(index.rows())
    assert again.encoding_method == "given"
    with pytest.raises(UserError, match="unsupported delimiter"):
        build_evidence_index(path, delimiter=":", id_column="feedback_id", text_column="text")


# -- paths -----------------------------------------------------------------------------------


def test_a_directory_or_a_missing_file_is_named_as_such(tmp_path: Path) -> None:
    with pytest.raises(
        UserError, match=f"^input file is a directory, not a file: {re.escape(str(tmp_path))}$"
    ):
        require_regular_file(tmp_path)
    with pytest.raises(UserError, match=r"^input file not found: "):
        require_regular_file(tmp_path / "nope.csv")
    if os.path.exists("/dev/null"):
        with pytest.raises(UserError, match=r"^source CSV is not a regular file: /dev/null$"):
            require_regular_file(Path("/dev/null"), "source CSV")
    require_regular_file(Path(__file__))
