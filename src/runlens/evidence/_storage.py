"""The Evidence Index file: written atomically, loaded quickly.

The file is JSON (UTF-8, ensure_ascii=False) of the shape SPEC section 5 gives, laid out with
every id on a line of its own and its item on the next:

    {"source":"x.csv","source_hash":"<hex>",...,"total_rows":N,"items":{    <- header: one line
    "fb_001":
    {"row_hash":"<64 hex>","text":"<text>","metadata":{"channel":"app","rating":"2"}},
    "fb_002":
    {"row_hash":"<64 hex>","text":"<text>","metadata":{"channel":"web","rating":"5"}}
    }}

`metadata` holds the row's other columns (every one but the id and text columns) by name, in
source order, as the CSV parser returned them; files older versions wrote have none (read as
empty).

JSON escaping never leaves a raw newline inside a string, so this split into lines is exact.
It lets `load_index` find every id with C-level bulk operations (one split into lines, one
`json.loads` of all ids as an array) and keep each item's line undecoded until its row is
asked for: checking 100,000 citations against a million-row index decodes 100,000 items, not a
million. The text comes before the metadata, so reading a text never parses the metadata. A
file of the same JSON shape laid out any other way is parsed in full.

Writing streams the rows a batch at a time, as the store hands them over already in JSON
(`RowStore.json_batches`: a table's values were escaped once, when it was read), so memory is
one batch. This module deals in an index's header fields (`IndexHeader`) and its `RowStore`,
never in `EvidenceIndex` itself: `index` builds on it, not the other way round.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import re
import threading
from collections.abc import Callable, Iterator
from json import decoder as _json_decoder
from pathlib import Path
from typing import Any

from runlens.atomic import AtomicFile, atomic_output
from runlens.errors import EvidenceIndexError
from runlens.evidence._ids import FROM_COLUMN, check_id_rule
from runlens.evidence._stores import (
    CSV_FORMAT,
    XLSX_FORMAT,
    EvidenceItem,
    IndexHeader,
    ItemStore,
    JsonBatch,
    Metadata,
    RowStore,
)

#: The header's fields in the order the file has them (then `total_rows` and the items).
_HEADER_ORDER = (
    "source",
    "source_hash",
    "id_column",
    "text_column",
    "columns",
    "encoding",
    "encoding_confidence",
    "encoding_method",
    "delimiter",
    "format",
    "sheet",
    "id_rule",
)
_ITEMS_OPEN = b',"items":{'
_END = b"}}"
_HASH_KEY = '{"row_hash":"'
_HASH_AT = len(_HASH_KEY)
_HASH_END = _HASH_AT + 64
_TEXT_KEY = '","text":"'
_TEXT_AT = _HASH_END + len(_TEXT_KEY) - 1  # where the text's opening quote is
_METADATA_KEY = ',"metadata":'
_METADATA_BYTES = _METADATA_KEY.encode("ascii")
_HEX64 = re.compile("[0-9a-f]{64}")
#: Bytes written between two early syncs of the index file (`_EarlyWriteback`).
_WRITEBACK = 32 << 20
#: Indexes of this many rows on are hashed and written in a thread (`_Writer`), handed over
#: `_HANDOFF` bytes at a time, at most `_QUEUED` handovers behind.
_THREADED_ROWS = 20_000
_QUEUED = 2
_HANDOFF = 2 << 20
_datasync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)
#: The json module's C string decoder (json.loads uses it); absent from typeshed's stubs.
_scanstring: Callable[[str, int], tuple[str, int]] = _json_decoder.scanstring  # type: ignore[attr-defined]


# -- writing ---------------------------------------------------------------------------------


def write_index(path: Path, header: IndexHeader, store: RowStore) -> str:
    """Write an index (its header fields and rows) to `path` atomically; return the SHA-256
    hex of the bytes written.

    The bytes go to a temporary file in the same directory, are flushed to disk, and the
    file is renamed over `path`, so readers see the old file or the new one, never a part.
    Rows are written a batch at a time, as the store holds them: memory is one batch.
    """
    digest = hashlib.sha256()
    # 0644: the index is a record other readers (auditors, a UI) may open.
    with (
        atomic_output(path, mode=0o644, durable=True) as out,
        _EarlyWriteback(out.fileno()) as writeback,
        _Writer(digest, out, writeback, threaded=len(store) >= _THREADED_ROWS) as writer,
    ):
        for data in _index_bytes(header, store):
            writer.write(data)
    return digest.hexdigest()


class _Writer:
    """Hashes and writes the index's bytes in order: in a thread of its own for a large
    index, so that hashing and writing (hashlib and `os.write` let go of the GIL) overlap
    with laying out the next batches. Batches are handed over joined, `_HANDOFF` bytes at a
    time (each handover makes the thread wait for the GIL once), at most `_QUEUED` waiting.
    An error in the thread (a full disk) is raised by a later `write`, or on leaving the
    block."""

    def __init__(
        self, digest: Any, out: AtomicFile, writeback: _EarlyWriteback, *, threaded: bool
    ) -> None:
        self._digest = digest
        self._out = out
        self._writeback = writeback
        self._error: BaseException | None = None
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._queue: queue.Queue[bytes | None] | None = queue.Queue(_QUEUED) if threaded else None
        self._thread: threading.Thread | None = None
        if threaded:
            self._thread = threading.Thread(target=self._run, name="runlens-index-writer")
            self._thread.start()

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, kind: object, *rest: object) -> None:
        if self._thread is not None and self._queue is not None:
            if self._pending and kind is None:
                self._queue.put(b"".join(self._pending))
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        if self._error is not None and kind is None:
            raise self._error

    def write(self, data: bytes) -> None:
        if self._error is not None:
            raise self._error
        if self._queue is None:
            self._write(data)
            return
        self._pending.append(data)
        self._pending_size += len(data)
        if self._pending_size >= _HANDOFF:
            self._queue.put(b"".join(self._pending))
            self._pending.clear()
            self._pending_size = 0

    def _run(self) -> None:
        assert self._queue is not None
        while (data := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._write(data)
                except BaseException as error:  # raised in the writing thread by `write`
                    self._error = error

    def _write(self, data: bytes) -> None:
        self._digest.update(data)
        self._out.write(data)
        self._writeback.wrote(len(data))


def index_sha256(header: IndexHeader, store: RowStore) -> str:
    """The SHA-256 hex of the bytes `write_index` writes for `header` and `store`, computed
    without writing them."""
    digest = hashlib.sha256()
    for data in _index_bytes(header, store):
        digest.update(data)
    return digest.hexdigest()


class _EarlyWriteback:
    """Flushes a large file to disk while it is still being written: every `_WRITEBACK`
    bytes, a thread syncs what is written so far (waiting on the disk releases the GIL), so
    the final fsync waits only for the last part instead of the whole file."""

    def __init__(self, handle: int) -> None:
        self._handle = handle
        self._unsynced = 0
        self._thread: threading.Thread | None = None

    def __enter__(self) -> _EarlyWriteback:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._thread.join()  # before the file is synced for good and closed

    def wrote(self, size: int) -> None:
        self._unsynced += size
        if self._unsynced < _WRITEBACK or (self._thread and self._thread.is_alive()):
            return
        self._unsynced = 0
        self._thread = threading.Thread(target=self._sync, name="runlens-index-writeback")
        self._thread.start()

    def _sync(self) -> None:
        with contextlib.suppress(OSError):  # a failing disk fails the final fsync too
            _datasync(self._handle)


def _index_bytes(header: IndexHeader, store: RowStore) -> Iterator[bytes]:
    given: dict[str, Any] = {**header, "columns": list(header["columns"])}
    fields = {name: given[name] for name in _HEADER_ORDER}
    fields["total_rows"] = len(store)
    head = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
    yield head[:-1].encode("utf-8") + _ITEMS_OPEN
    first = True
    for batch in store.json_batches():
        if batch.ids:
            yield _items_bytes(batch, first)
            first = False
    yield b"\n" + _END + b"\n"


def _items_bytes(batch: JsonBatch, first: bool) -> bytes:
    """`\\n"<id>":\\n{"row_hash":"<hex>","text":"<text>","metadata":{...}}` per row,
    comma-separated (and preceded by a comma unless these are the file's first rows); one
    join for the batch."""
    count = len(batch.ids)
    id_quote = b"" if batch.ids_quoted else b'"'
    text_quote = b"" if batch.texts_quoted else b'"'
    metadata = batch.metadata_parts if batch.metadata_parts is not None else [batch.metadata]
    # Per row: what comes before the id (the end of the previous item), the id, ..., the
    # text, what comes between it and the metadata, the metadata's parts.
    stride = 7 + len(metadata)
    layout: list[bytes] = [b""] * (stride * count)
    layout[0::stride] = [b"},\n" + id_quote] * count
    layout[1::stride] = batch.ids
    layout[2::stride] = [id_quote + b':\n{"row_hash":"'] * count
    layout[3::stride] = batch.hashes
    layout[4::stride] = [b'","text":' + text_quote] * count
    layout[5::stride] = batch.texts
    layout[6::stride] = [text_quote + _METADATA_BYTES] * count
    for at, pieces in enumerate(metadata, start=7):
        layout[at::stride] = pieces
    layout[0] = (b"\n" if first else b",\n") + id_quote
    return b"".join(layout) + b"}"


# -- loading ---------------------------------------------------------------------------------


def load_index(path: Path) -> tuple[IndexHeader, RowStore]:
    """Load an index file: its header fields and its rows. EvidenceIndexError (naming the
    path) if it cannot be used."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise EvidenceIndexError(f"{path}: evidence index does not exist") from None
    except OSError as error:
        raise EvidenceIndexError(f"{path}: cannot read evidence index ({error})") from None
    fast = _load_line_layout(path, raw)
    return fast if fast is not None else _load_any_layout(path, raw)


def _load_line_layout(path: Path, raw: bytes) -> tuple[IndexHeader, RowStore] | None:
    """Load a file laid out as `write_index` lays it out; None if it is laid out otherwise."""
    lines = raw.split(b"\n")
    if len(lines) < 3 or lines[-1] != b"" or lines[-2] != _END or len(lines) % 2 == 0:
        return None
    head = lines[0]
    if not head.endswith(_ITEMS_OPEN):
        return None
    try:
        header = json.loads(head[: -len(_ITEMS_OPEN)] + b"}")
    except ValueError:
        return None
    if not isinstance(header, dict):
        return None
    key_lines, item_lines = lines[1:-2:2], lines[2:-2:2]
    ids = _decode_ids(key_lines)
    if ids is None:
        return None
    store = LineStore(path, dict(zip(ids, item_lines, strict=True)))
    if len(store) != len(ids):
        _raise_duplicate(path, ids)
    return _header(path, header, store), store


def _decode_ids(key_lines: list[bytes]) -> list[str] | None:
    """Decode lines of the form `"<id>":` into ids, all at once; None if any line is not."""
    if not key_lines:
        return []
    # A raw newline cannot occur inside a JSON string, so '":\n' only ever follows a key.
    joined = b"\n".join(key_lines) + b"\n"
    if joined.count(b'":\n') != len(key_lines):
        return None
    try:
        ids: list[str] = json.loads(b"[" + joined.replace(b'":\n', b'",')[:-1] + b"]")
    except ValueError:
        return None
    if len(ids) != len(key_lines) or set(map(type, ids)) != {str}:
        return None
    return ids


def _raise_duplicate(path: Path, ids: list[str]) -> None:
    seen: set[str] = set()
    for row_id in ids:
        if row_id in seen:
            raise EvidenceIndexError(f"{path}: item {row_id!r} appears more than once")
        seen.add(row_id)


def _load_any_layout(path: Path, raw: bytes) -> tuple[IndexHeader, RowStore]:
    try:
        document = json.loads(raw)
    except ValueError as error:
        raise EvidenceIndexError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(document, dict):
        raise EvidenceIndexError(f"{path}: expected a JSON object at the top level")
    items = document.get("items")
    if not isinstance(items, dict):
        raise EvidenceIndexError(f"{path}: 'items' must be an object of id -> item")
    unrecorded = frozenset(
        key for key, value in items.items() if isinstance(value, dict) and "metadata" not in value
    )
    store = ItemStore({key: _item(path, key, value) for key, value in items.items()}, unrecorded)
    return _header(path, document, store), store


def _item(path: Path, row_id: str, value: Any) -> EvidenceItem:
    if not isinstance(value, dict):
        raise EvidenceIndexError(f"{path}: item {row_id!r} must be an object")
    row_hash, text = value.get("row_hash"), value.get("text")
    if not isinstance(row_hash, str) or not isinstance(text, str):
        raise EvidenceIndexError(
            f"{path}: item {row_id!r} needs string 'row_hash' and 'text' fields"
        )
    _check_hash(path, row_id, row_hash)
    metadata = value.get("metadata", {})
    if not _is_metadata(metadata):
        raise EvidenceIndexError(
            f"{path}: item {row_id!r} has 'metadata' that is not an object of strings"
        )
    return EvidenceItem(row_hash, text, metadata)


def _is_metadata(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _check_hash(path: Path, row_id: str, row_hash: str) -> None:
    if not _HEX64.fullmatch(row_hash):
        raise EvidenceIndexError(
            f"{path}: item {row_id!r} has a malformed row_hash (64 lowercase hex digits)"
        )


def _header(path: Path, header: dict[str, Any], store: RowStore) -> IndexHeader:
    """The header's fields, checked (and defaulted, for indexes older versions wrote)."""
    names = ("source", "source_hash", "id_column", "text_column")
    fields = {name: header.get(name) for name in names}
    for name, value in fields.items():
        if not isinstance(value, str):
            raise EvidenceIndexError(f"{path}: {name!r} must be a string")
    columns = header.get("columns", [])
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise EvidenceIndexError(f"{path}: 'columns' must be a list of strings")
    encoding = header.get("encoding")
    if encoding is not None and not isinstance(encoding, str):
        raise EvidenceIndexError(f"{path}: 'encoding' must be a string")
    method = header.get("encoding_method")
    if method is not None and not isinstance(method, str):
        raise EvidenceIndexError(f"{path}: 'encoding_method' must be a string")
    confidence = header.get("encoding_confidence")
    if confidence is not None and (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 <= confidence <= 1
    ):
        raise EvidenceIndexError(f"{path}: 'encoding_confidence' must be a number from 0 to 1")
    delimiter = header.get("delimiter")
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise EvidenceIndexError(f"{path}: 'delimiter' must be one character")
    source_format = header.get("format", CSV_FORMAT)
    if source_format not in (CSV_FORMAT, XLSX_FORMAT):
        raise EvidenceIndexError(f"{path}: 'format' must be {CSV_FORMAT!r} or {XLSX_FORMAT!r}")
    sheet = header.get("sheet")
    if sheet is not None and not isinstance(sheet, str):
        raise EvidenceIndexError(f"{path}: 'sheet' must be a string")
    try:
        id_rule = check_id_rule(header.get("id_rule", FROM_COLUMN))  # older indexes: a column
    except ValueError as error:
        raise EvidenceIndexError(f"{path}: 'id_rule': {error}") from None
    total = header.get("total_rows")
    if total is not None and total != len(store):
        raise EvidenceIndexError(f"{path}: 'total_rows' is {total} but there are {len(store)}")
    return IndexHeader(
        source=str(fields["source"]),
        source_hash=str(fields["source_hash"]),
        id_column=str(fields["id_column"]),
        text_column=str(fields["text_column"]),
        columns=tuple(columns),
        encoding=encoding,
        encoding_confidence=None if confidence is None else float(confidence),
        encoding_method=method,
        delimiter=delimiter,
        format=source_format,
        sheet=sheet,
        id_rule=id_rule,
    )


def read_header(path: Path) -> IndexHeader:
    """The header fields of the index file at `path`, from its header line alone when it is
    laid out as `write_index` writes it (else from the whole file)."""
    try:
        with path.open("rb") as stream:
            head = stream.readline(1 << 20).rstrip(b"\n")
    except OSError as error:
        raise EvidenceIndexError(f"{path}: cannot read evidence index ({error})") from None
    header: Any = None
    if head.endswith(_ITEMS_OPEN):
        try:
            header = json.loads(head[: -len(_ITEMS_OPEN)] + b"}")
        except ValueError:
            header = None
    if not isinstance(header, dict):
        return load_index(path)[0]
    # Checked (and defaulted) as a load checks it, as the header of an index of no rows.
    return _header(path, {**header, "total_rows": 0}, ItemStore({}))


class LineStore(RowStore):
    """Rows of a loaded index file: id -> the item's undecoded line, decoded when read.

    A line damaged in a way the load-time checks cannot see (inside its text) raises
    EvidenceIndexError when that row is read.
    """

    __slots__ = ("_lines", "_path")

    def __init__(self, path: Path, lines: dict[str, bytes]) -> None:
        self._path = path
        self._lines = lines

    def __contains__(self, row_id: object) -> bool:
        return row_id in self._lines

    def __len__(self) -> int:
        return len(self._lines)

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines)

    def text(self, row_id: str) -> str:
        return self._decode(row_id, self._lines[row_id])[1]

    def row_hash(self, row_id: str) -> str:
        row_hash = self._decode(row_id, self._lines[row_id])[0]
        _check_hash(self._path, row_id, row_hash)
        return row_hash

    def metadata(self, row_id: str) -> Metadata:
        return self._metadata(row_id, self._lines[row_id]) or {}

    def metadata_rows(self) -> Iterator[tuple[str, Metadata | None]]:
        for row_id, line in self._lines.items():
            yield row_id, self._metadata(row_id, line)

    def _metadata(self, row_id: str, line: bytes) -> Metadata | None:
        """The item's metadata; None for an item an older version wrote, without.

        Found without decoding the text: inside a JSON string every `"` is escaped, so
        `,"metadata":` occurs in the line only where the text has ended."""
        at = line.find(_METADATA_BYTES, _HASH_END)
        if at < 0:
            return None
        end = len(line) - (2 if line.endswith(b"},") else 1)
        try:
            if line[end] != ord("}"):
                raise ValueError("the item does not end after 'metadata'")
            metadata = json.loads(line[at + len(_METADATA_KEY) : end])
        except ValueError as error:
            raise self._damaged(row_id, error) from None
        if not _is_metadata(metadata):
            raise self._damaged(row_id, ValueError("'metadata' is not an object of strings"))
        return metadata  # type: ignore[no-any-return]

    def rows(self) -> Iterator[tuple[str, str, str]]:
        for row_id, line in self._lines.items():
            row_hash, text = self._decode(row_id, line)
            _check_hash(self._path, row_id, row_hash)
            yield row_id, row_hash, text

    def _decode(self, row_id: str, line: bytes) -> tuple[str, str]:
        """(row_hash, text) from an item line `{"row_hash":"<hex>","text":"<text>"` then `}`
        or `,"metadata":{...}}` [+ ","]; the metadata is not parsed."""
        item = self._item(row_id, line)
        try:
            text, end = _scanstring(item, _TEXT_AT + 1)
        except ValueError as error:
            raise self._damaged(row_id, error) from None
        rest = item[end:].removesuffix(",")
        if rest != "}" and not (rest.startswith(_METADATA_KEY) and rest.endswith("}}")):
            raise self._damaged(row_id, ValueError("unexpected content after 'text'"))
        return item[_HASH_AT:_HASH_END], text

    def _item(self, row_id: str, line: bytes) -> str:
        try:
            item = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise self._damaged(row_id, error) from None
        if not (item.startswith(_HASH_KEY) and item.startswith(_TEXT_KEY, _HASH_END)):
            raise self._damaged(row_id, ValueError('expected {"row_hash":"...","text":"..."}'))
        return item

    def _damaged(self, row_id: str, error: ValueError) -> EvidenceIndexError:
        return EvidenceIndexError(f"{self._path}: item {row_id!r} is damaged ({error})")
