"""Property tests: row hashes against an independent recomputation, quote location, file
round trips. Examples are bounded so the whole module runs in a few seconds."""

from __future__ import annotations

import csv
import hashlib
import json
import tempfile
import unicodedata
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from runlens.evidence import EvidenceIndex, EvidenceItem, build_evidence_index
from runlens.evidence._rowhash import DIGEST_SIZE, RowHasher
from runlens.evidence._storage import LineStore

from .helpers import csv_text, reference_hashes

# Any character a decoded file can hold (lone surrogates cannot come out of a decoder).
ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
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
    cells = [*columns, *(value for row in rows for value in row)]
    has_nul = any("\x00" in cell for cell in cells)
    blob = hasher.digests(rows, may_contain_nul=has_nul)
    expected = b"".join(reference_digest(columns, row) for row in rows)
    assert blob == expected
    if not any("\x00" in cell or "\x01" in cell for cell in cells):
        assert hasher._canonical_batch(rows) is not None  # the fast path produced it
    assert len(blob) == DIGEST_SIZE * len(rows)


NAME = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\ufeff"), max_size=8)
# Ids hold no control characters (C0, DEL, C1) nor line separators or bidi controls: refused.
ID_CHAR = st.characters(
    exclude_categories=("Cs", "Cc"),
    exclude_characters="\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
)
FEEDBACK_ID = st.text(ID_CHAR, min_size=1, max_size=10).filter(lambda value: value.strip() != "")


@st.composite
def feedback_files(draw: st.DrawFn) -> tuple[list[str], list[list[str]], str, int]:
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
    newline, quoting = draw(st.sampled_from([("\r\n", csv.QUOTE_MINIMAL), ("\n", csv.QUOTE_ALL)]))
    return columns, rows, newline, quoting


@FAST
@given(feedback_files())
def test_row_hash_equals_dictreader_recomputation(
    file: tuple[list[str], list[list[str]], str, int],
) -> None:
    columns, rows, newline, quoting = file
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "feedback.csv"
        path.write_text(csv_text([columns, *rows], newline, quoting), encoding="utf-8", newline="")
        index = build_evidence_index(path, id_column="feedback_id", text_column="text")
        expected = reference_hashes(path)
    assert list(index.items) == list(expected)
    for feedback_id, (row_hash, text) in expected.items():
        assert index.items[feedback_id] == EvidenceItem(row_hash, text)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@st.composite
def text_and_slice(draw: st.DrawFn) -> tuple[str, int, int]:
    text = draw(st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30))
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
@given(st.text(st.characters(exclude_categories=("Cs",)), max_size=30), ANY_TEXT)
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
        key: EvidenceItem(hashlib.sha256(key.encode()).hexdigest(), t) for key, t in texts.items()
    }
    index = EvidenceIndex.from_items(
        items, source="s.csv", source_hash="ab" * 32, id_column="feedback_id", text_column="text"
    )
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "index.json"
        index.write(path)
        assert json.loads(path.read_text(encoding="utf-8"))["items"] == {
            key: {"row_hash": item.row_hash, "text": item.text} for key, item in items.items()
        }
        loaded = EvidenceIndex.load(path)
    assert isinstance(loaded._store, LineStore)  # the fast loader understood the layout
    assert list(loaded.items) == list(items)
    assert dict(loaded.items) == items
