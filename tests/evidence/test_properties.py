"""Property tests: row hashes against an independent recomputation, quote location, file
round trips. Examples are bounded so the whole module runs in a few seconds."""

from __future__ import annotations

import csv
import hashlib
import json
import tempfile
import unicodedata
from pathlib import Path
from typing import Literal

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from runlens.evidence import EvidenceIndex, EvidenceItem, SourceTable, build_evidence_index
from runlens.evidence._columns import ColumnsBuilder, encode_column
from runlens.evidence._rowhash import DIGEST_SIZE, RowHasher
from runlens.evidence._storage import LineStore

from .helpers import csv_text, reference_hashes, reference_metadata

#: Lone surrogates cannot come out of a decoder; control characters are refused in ids.
SURROGATES: tuple[Literal["Cs"]] = ("Cs",)
SURROGATES_AND_CONTROLS: tuple[Literal["Cs"], Literal["Cc"]] = ("Cs", "Cc")
# Any character a decoded file can hold.
ANY_TEXT = st.text(st.characters(exclude_categories=SURROGATES), max_size=40)
# Characters JSON escaping and the batch hasher's stand-ins care about, to make them common.
AWKWARD = st.sampled_from(['"', "\\", "\x00", "\x01", "\x02", "\n", "\r", "\t", "\x1f", ",", ":"])
VALUE = st.lists(st.one_of(ANY_TEXT, AWKWARD), max_size=6).map("".join)
FAST = settings(max_examples=60, deadline=None)


def reference_digest(columns: list[str], values: list[str]) -> bytes:
    row = dict(zip(columns, values, strict=True))
    canonical = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).digest()


@st.composite
def tables(draw: st.DrawFn, max_rows: int = 8) -> tuple[list[str], list[list[str]]]:
    columns = draw(st.lists(VALUE, min_size=1, max_size=5, unique=True))
    rows = draw(
        st.lists(
            st.lists(VALUE, min_size=len(columns), max_size=len(columns)),
            min_size=1,
            max_size=max_rows,
        )
    )
    return columns, rows


@FAST
@given(tables())
def test_batch_hashes_equal_json_dumps(table: tuple[list[str], list[list[str]]]) -> None:
    columns, rows = table
    hasher = RowHasher(columns)
    expected = b"".join(reference_digest(columns, row) for row in rows)
    assert hasher.digests_of_rows(rows) == expected
    # As the reading pass does it: each column stored raw where it can be, quoted elsewhere.
    builder = ColumnsBuilder(columns)
    builder.add(rows)
    data = builder.finish()
    assert b"".join(data.digest(row) for row in range(len(rows))) == expected
    assert len(expected) == DIGEST_SIZE * len(rows)


@FAST
@given(tables(max_rows=12), st.integers(1, 5))
def test_columns_give_back_every_value(
    table: tuple[list[str], list[list[str]]], batch: int
) -> None:
    columns, rows = table
    builder = ColumnsBuilder(columns)
    for start in range(0, len(rows), batch):
        builder.add(rows[start : start + batch])
    data = builder.finish()
    assert len(data) == len(rows)
    assert data.rows(0, len(rows)) == [tuple(row) for row in rows]
    assert data.rows(1, 3) == [tuple(row) for row in rows[1:3]]
    for position in reversed(range(len(rows))):  # out of order: each row from its chunk
        assert data.row(position) == tuple(rows[position])
        for column in range(len(columns)):
            assert data.value(position, column) == rows[position][column]
    for column in range(len(columns)):
        assert list(data.column(column)) == [row[column] for row in rows]


@FAST
@given(st.lists(VALUE, min_size=1, max_size=10))
def test_a_column_is_raw_only_when_nothing_needs_escaping(values: list[str]) -> None:
    cell, quoted, pieces = encode_column(values)
    escaped = [json.dumps(value, ensure_ascii=False) for value in values]
    if quoted:
        assert list(pieces) == escaped and cell == "\n".join(escaped)
    else:
        assert escaped == [f'"{value}"' for value in values]
        assert cell == "\n".join(values)
    assert cell.count("\n") == len(values) - 1


NAME = st.text(
    st.characters(exclude_categories=SURROGATES, exclude_characters="\ufeff"), max_size=8
)
# Ids hold no control characters (C0, DEL, C1) nor line separators or bidi controls: refused.
ID_CHAR = st.characters(
    exclude_categories=SURROGATES_AND_CONTROLS,
    exclude_characters="\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
)
FEEDBACK_ID = st.text(ID_CHAR, min_size=1, max_size=10).filter(lambda value: value.strip() != "")


#: (header, rows, line terminator, csv quoting) of a generated file.
CsvFile = tuple[list[str], list[list[str]], str, Literal[0, 1, 2, 3]]


@st.composite
def feedback_files(draw: st.DrawFn) -> CsvFile:
    extra = draw(
        st.lists(NAME, max_size=3, unique_by=str.strip).filter(
            lambda names: all(n.strip() not in ("feedback_id", "text") for n in names)
        )
    )
    padded = [draw(st.sampled_from(["", " ", "\t"])) + name for name in ("feedback_id", "text")]
    columns = [*padded, *extra]
    draw(st.randoms()).shuffle(columns)
    ids = draw(st.lists(FEEDBACK_ID, min_size=1, max_size=8, unique=True))
    rows = []
    for feedback_id in ids:
        row = [draw(VALUE) for _ in columns]
        row[[c.strip() for c in columns].index("feedback_id")] = feedback_id
        rows.append(row)
    # A "\n" terminator needs QUOTE_ALL, or a lone "\r" in a value would go out unquoted.
    styles: list[tuple[str, Literal[0, 1, 2, 3]]] = [
        ("\r\n", csv.QUOTE_MINIMAL),
        ("\n", csv.QUOTE_ALL),
    ]
    newline, quoting = draw(st.sampled_from(styles))
    return columns, rows, newline, quoting


@FAST
@given(feedback_files())
def test_row_hash_equals_dictreader_recomputation(
    file: CsvFile,
) -> None:
    columns, rows, newline, quoting = file
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "feedback.csv"
        path.write_text(csv_text([columns, *rows], newline, quoting), encoding="utf-8", newline="")
        index = build_evidence_index(path, id_column="feedback_id", text_column="text")
        expected = reference_hashes(path)
        metadata = reference_metadata(path)
    assert list(index.items) == list(expected)
    for feedback_id, (row_hash, text) in expected.items():
        assert index.items[feedback_id] == EvidenceItem(row_hash, text, metadata[feedback_id])


@FAST
@given(feedback_files())
def test_the_table_path_writes_the_builders_index_byte_for_byte(
    file: CsvFile,
) -> None:
    columns, rows, newline, quoting = file
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "feedback.csv"
        path.write_text(csv_text([columns, *rows], newline, quoting), encoding="utf-8", newline="")
        built = build_evidence_index(path, id_column="feedback_id", text_column="text")
        table = SourceTable.open(path, required_columns=("feedback_id", "text"))
        from_table = table.evidence_index("feedback_id", "text")
        built_hash = built.write(Path(directory) / "built.json")
        table_hash = from_table.write(Path(directory) / "table.json")
        loaded = EvidenceIndex.load(Path(directory) / "table.json")
        expected = reference_hashes(path)
    assert table_hash == built_hash
    assert list(from_table.rows()) == list(built.rows()) == list(loaded.rows())
    assert [(key, *value) for key, value in expected.items()] == list(loaded.rows())
    assert [table.row_values(n) for n in range(len(rows))] == [tuple(row) for row in rows]


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@st.composite
def text_and_slice(draw: st.DrawFn) -> tuple[str, int, int]:
    text = draw(st.text(st.characters(exclude_categories=SURROGATES), min_size=1, max_size=30))
    size = len(nfc(text))
    assume(size > 0)
    start = draw(st.integers(0, size - 1))
    return text, start, draw(st.integers(start + 1, size))


@FAST
@given(text_and_slice())
def test_every_substring_of_the_nfc_text_is_located(case: tuple[str, int, int]) -> None:
    text, start, end = case
    index = EvidenceIndex.from_items(
        {"r": EvidenceItem("0" * 64, text)},
        source="s",
        source_hash="",
        id_column="feedback_id",
        text_column="text",
    )
    normal = nfc(text)
    quote = normal[start:end]
    span = index.locate("r", quote)
    assert span is not None
    assert normal[span.start : span.end] == nfc(quote)
    if nfc(quote) == quote:
        assert span.start <= start  # the first occurrence
    assert index.locate("r", unicodedata.normalize("NFD", quote)) == span


@FAST
@given(st.text(st.characters(exclude_categories=SURROGATES), max_size=30), ANY_TEXT)
def test_text_not_in_the_row_is_rejected(text: str, quote: str) -> None:
    assume(nfc(quote) not in nfc(text))
    index = EvidenceIndex.from_items(
        {"r": EvidenceItem("0" * 64, text)},
        source="s",
        source_hash="",
        id_column="feedback_id",
        text_column="text",
    )
    assert index.locate("r", quote) is None
    assert index.locate("r", nfc(text) + "\u2603" if "\u2603" not in text else text + "x") is None


@FAST
@given(st.dictionaries(FEEDBACK_ID, VALUE, min_size=0, max_size=8))
def test_write_then_load_round_trips(texts: dict[str, str]) -> None:
    items = {
        key: EvidenceItem(hashlib.sha256(key.encode()).hexdigest(), t, {"note\x01<b>": t})
        for key, t in texts.items()
    }
    index = EvidenceIndex.from_items(
        items, source="s.csv", source_hash="ab" * 32, id_column="feedback_id", text_column="text"
    )
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "index.json"
        index.write(path)
        assert json.loads(path.read_text(encoding="utf-8"))["items"] == {
            key: {"row_hash": item.row_hash, "text": item.text, "metadata": item.metadata}
            for key, item in items.items()
        }
        loaded = EvidenceIndex.load(path)
    assert isinstance(loaded._store, LineStore)  # the fast loader understood the layout
    assert list(loaded.items) == list(items)
    assert dict(loaded.items) == items
