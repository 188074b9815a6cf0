"""Hypothesis strategies for hostile-but-valid inputs: texts, ids, column names and values,
and whole input files (CSV in several encodings and delimiters, XLSX).

Nothing here comes from a corpus RunLens is measured on: the words are a small generic pool
in English and Chinese, and everything else is drawn from Unicode at large. What makes the
inputs hostile is their shape: metadata columns whose names and values are the words a report
uses for its measures (`label`, `negative`, `high`, `P1`, `rows`, `5`), ids of any format,
row counts whose shares fall half-way between two rounded values, texts of one character or
ten thousand, one long word, emoji and combining marks, both scripts in one cell.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

# -- texts ----------------------------------------------------------------------------------

_EN_WORDS = (
    "the", "app", "is", "so", "slow", "and", "it", "crashes", "every", "time", "I", "love",
    "new", "screen", "but", "battery", "dies", "fast", "support", "never", "answered", "not",
    "bad", "great", "service", "was", "terrible", "food", "cold", "book", "film", "plot",
    "delivery", "late", "refund", "please", "add", "dark", "mode", "don't", "can't", "e-mail",
    "3.5", "v1.2", "09:30", "100%", "café", "naïve", "Ünïcode", "x²", "½", "①",
)  # fmt: skip
_ZH_WORDS = (
    "手机", "电池", "太慢了", "经常", "闪退", "很好用", "客服", "不回复", "退款", "物流",
    "服务员", "态度", "很差", "这本书", "电影", "剧情", "不错", "登录", "失败", "屏幕",
)  # fmt: skip
_GLUE = (" ", " ", " ", ", ", ". ", "! ", "? ", "; ", "，", "。", "！", "？", "；", "", "\n",
         "...", " — ", "\r\n", "…")  # fmt: skip
#: Characters that stress quoting: combining marks, emoji sequences and modifiers, a flag,
#: zero-width joiners, Hangul jamo that compose, right-to-left text, quotation marks.
_ODD = (
    "e\u0301", "a\u0308", "❤\ufe0f", "👍🏽", "👨\u200d👩\u200d👧", "🇨🇳", "\u1100\u1161", "한국어",
    "مرحبا", "שלום", "“", "”", '"', "「", "」", "«", "»", "*", "_", "`", "|", "<b>", "&amp;",
    "\\", "#", "[x](y)", "\u2028", "\u00a0", "\u200b", "\t", "😀😀😀",
    # What exports of posts and reviews carry: mentions, tags, links, HTML entities and breaks.
    "@user_42", "#fail", "RT", "http://t.co/x1Y2", "&#039;", "&quot;", "<br /><br />", ":)",
    "fb_001", "P1", "5/10", "10/10", "$9.99", "3am",
)  # fmt: skip

#: Any character a text cell of an export holds: no control characters (a file full of them
#: is binary data, and refused as such), no surrogates (no encoding writes them), no
#: unassigned code points.
_ANY_CHARACTER = st.characters(blacklist_categories=("Cc", "Cs", "Cn"))
#: Any character of an id or a column name: printable, as the reader requires of ids.
_PRINTABLE = st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


@st.composite
def sentences(draw: st.DrawFn, max_pieces: int = 40) -> str:
    """Words of both languages and odd characters joined by every kind of punctuation."""
    pool = st.sampled_from(_EN_WORDS + _ZH_WORDS + _ODD)
    pieces = draw(st.lists(st.tuples(pool, st.sampled_from(_GLUE)), min_size=1, max_size=40))
    return "".join(word + glue for word, glue in pieces[:max_pieces])


@st.composite
def long_texts(draw: st.DrawFn) -> str:
    """Texts of 1,000 to 10,000 characters: many sentences, or one word without spaces."""
    size = draw(st.integers(1_000, 10_000))
    if draw(st.booleans()):
        letters = draw(st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzé"), min_size=1))
        return (letters * (size // len(letters) + 1))[:size]
    sentence = draw(sentences())
    repeated = (sentence + " ") * (size // (len(sentence) + 1) + 1)
    return repeated[:size]


def texts() -> st.SearchStrategy[str]:
    """Feedback texts with at least one visible character, of any shape (module docstring)."""
    return st.one_of(
        sentences(),
        sentences(max_pieces=2),
        st.text(_ANY_CHARACTER, min_size=1, max_size=300),
        st.lists(st.sampled_from(_ODD), min_size=1, max_size=5).map("".join),
        long_texts(),
    ).filter(lambda text: bool(text.strip()))


#: Control characters and line ends a cell of a CSV file can hold, which `texts` leaves out.
CONTROLS = ("\0", "\r", "\r\n", "\n", "\x01", "\x1b", "\x7f", "\x85", "\x0b", "\x0c", "\t")


@st.composite
def texts_with_controls(draw: st.DrawFn, controls: Sequence[str] = CONTROLS) -> str:
    """A text of `texts` with one to six of `controls` spliced in, often near its start
    (where a report's quote of it begins): every code point a text cell of a CSV file can
    hold."""
    text = draw(texts())
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.one_of(st.integers(0, min(len(text), 30)), st.integers(0, len(text))))
        text = text[:at] + draw(st.sampled_from(controls)) + text[at:]
    return text


# -- columns and values ---------------------------------------------------------------------

#: Column names a report also uses for its measures, in both languages, and other traps.
MEASURE_WORDS = (
    "label", "sentiment", "severity", "priority", "status", "rating", "score", "rows", "row",
    "share", "negative", "positive", "neutral", "mixed", "high", "low", "critical", "medium",
    "file", "analysed", "theme", "themes", "backlog", "problem", "P1", "5", "rank", "#", "key",
    "no value", "earlier", "no date", "By", "Negative share", "条数", "占比", "负面", "正面",
    "主题", "未填写", "更早", "情感", "严重程度",
)  # fmt: skip
_VALUE_WORDS = (
    "positive", "negative", "neutral", "mixed", "high", "low", "critical", "medium", "P0", "P1",
    "P2", "P3", "1", "2", "3", "4", "5", "4.5", "-1", "0", "yes", "no", "rows", "share", "file",
    "no value", "earlier", "正面", "负面", "高", "严重", "未填写", "更早", "Rows", "Negative",
    "negative share", "100%", "1,000", "2026-03-01", "N/A", "“quoted”", "a|b", "*bold*",
)  # fmt: skip


@st.composite
def column_names(draw: st.DrawFn) -> str:
    """A column name: a measure word, or any short text without line breaks."""
    drawn = draw(
        st.one_of(
            st.sampled_from(MEASURE_WORDS),
            st.text(_PRINTABLE, min_size=1, max_size=20),
        )
    )
    name = " ".join(drawn.split())
    return name or "column"


def ids() -> st.SearchStrategy[str]:
    """A row id of any format (an id has no surrounding whitespace: a reader trims it)."""
    return st.one_of(
        st.integers(-(10**12), 10**12).map(str),
        st.uuids().map(str),
        st.from_regex(r"[A-Za-z]{1,3}[-_]?[0-9]{1,6}", fullmatch=True),
        st.text(_PRINTABLE, min_size=1, max_size=24),
    ).map(lambda text: " ".join(text.split()))


# -- whole inputs ---------------------------------------------------------------------------

#: Row counts whose shares fall half-way at one decimal (1/16 = 6.25%, 1/80 = 1.25%) or at
#: none (1/40 = 2.5%), and a few others.
ROW_COUNTS = (1, 2, 3, 8, 16, 40, 80)
#: Excel's own exports: UTF-8 with or without a BOM, GBK (Chinese Windows), UTF-16 text, and
#: workbooks. A GBK file holds GBK's characters only: other inputs are written as UTF-8.
FORMATS = ("csv:utf-8", "csv:utf-8-sig", "csv:gbk", "tsv:utf-8", "semicolon:utf-16", "xlsx")


@dataclass
class HostileInput:
    """A whole input file as a user might export it: which column is the id and which the
    text, the rows (every cell a string), and the file format."""

    id_column: str
    text_column: str
    columns: list[str]
    rows: list[dict[str, str]] = field(default_factory=list)
    format: str = "csv:utf-8"

    @property
    def suffix(self) -> str:
        return (
            ".xlsx" if self.format == "xlsx" else ".tsv" if self.format == "tsv:utf-8" else ".csv"
        )

    def write(self, folder: Path, stem: str = "export") -> Path:
        """The file, written as its format says."""
        path = folder / f"{stem}{self.suffix}"
        if self.format == "xlsx":
            _write_xlsx(path, self.columns, self.rows)
            return path
        kind, encoding = self.format.split(":")
        delimiter = {"csv": ",", "tsv": "\t", "semicolon": ";"}[kind]
        out = io.StringIO()
        writer = csv.DictWriter(
            out, fieldnames=self.columns, delimiter=delimiter, lineterminator="\r\n"
        )
        writer.writeheader()
        writer.writerows(self.rows)
        path.write_bytes(out.getvalue().encode(encoding))
        return path


def _write_xlsx(path: Path, columns: Sequence[str], rows: Sequence[dict[str, str]]) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(list(columns))
    for row in rows:
        # A worksheet cell holds text as text: a leading `=` would make it a formula.
        sheet.append([_xlsx_text(row[column]) for column in columns])
    book.save(path)


def _xlsx_text(value: str) -> str | None:
    return value if value else None


@st.composite
def hostile_inputs(draw: st.DrawFn, row_counts: Sequence[int] = ROW_COUNTS) -> HostileInput:
    """A whole input (module docstring): `row_counts` rows (1 to 80), an id column and a
    text column of any names, up to four metadata columns named by measure words or anything
    else, holding measure words, numbers, dates, blanks and id-like values."""
    count = draw(st.sampled_from(row_counts))
    names = draw(st.lists(column_names(), min_size=2, max_size=6, unique_by=str.casefold))
    id_column, text_column, *metadata = names
    row_ids = draw(
        st.lists(ids(), min_size=count, max_size=count, unique=True).filter(
            lambda drawn: all(drawn) and len(set(drawn)) == len(drawn)
        )
    )
    row_texts = draw(st.lists(texts(), min_size=count, max_size=count))
    # Metadata values: measure words, numbers, dates, blanks, and values shaped like ids
    # (a `parent` column's `fb_17`), some of them ids of other rows.
    value = st.one_of(st.sampled_from((*_VALUE_WORDS, "")), ids(), st.sampled_from(row_ids))
    values = {column: draw(st.lists(value, min_size=1, max_size=4)) for column in metadata}
    rows = []
    for row_id, text in zip(row_ids, row_texts, strict=True):
        row = {id_column: row_id, text_column: text}
        for column, pool in values.items():
            row[column] = draw(st.sampled_from(pool))
        rows.append(row)
    fmt = draw(st.sampled_from(FORMATS))
    cells = [*names, *(value for row in rows for value in row.values())]
    if fmt == "xlsx" and any(map(_unwritable_in_xlsx, cells)):
        fmt = "csv:utf-8"
    if fmt == "csv:gbk" and not _encodable("".join(cells), "gbk"):
        fmt = "csv:utf-8"
    return HostileInput(id_column, text_column, names, rows, fmt)


def _encodable(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def _unwritable_in_xlsx(value: str) -> bool:
    """Control characters a worksheet cannot hold, and text a worksheet reads as a formula."""
    return value.startswith("=") or any(ord(char) < 0x20 and char not in "\t\n\r" for char in value)
