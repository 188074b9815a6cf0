"""`CsvTable`: the input CSV decoded and checked once, then served page by page.

This is what the model-facing `read_feedback_csv(offset, limit)` tool pages through. It keeps
every row in memory (as lists, not dicts: a dict is made only for the rows of a page), so the
Evidence Index can be built from it without reading the file again.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from itertools import islice
from operator import itemgetter
from pathlib import Path
from typing import Any

from runlens.cancellation import checkpoint
from runlens.evidence import _records
from runlens.evidence._detect import read_decoding
from runlens.evidence._encoding import TextFormat, open_text
from runlens.evidence._rowhash import RowHasher
from runlens.evidence.index import BuiltStore, EvidenceIndex

_HASH_BATCH = 2048
#: Rows parsed between two cancellation checks.
_READ_SLICE = 16_384


class CsvTable:
    """A CSV file's rows, checked for the shape the reading rules require.

    `source` is the file name, `columns` the header's column names (BOM and surrounding
    whitespace removed), `total_rows` the number of data rows (blank rows skipped),
    `encoding` the encoding it was read with, `text_format` how it was read (encoding,
    confidence, method, delimiter), `source_hash` the SHA-256 of its raw bytes.
    """

    __slots__ = (
        "_nul_possible",
        "_path",
        "_rows",
        "columns",
        "encoding",
        "source",
        "source_hash",
        "text_format",
        "total_rows",
    )

    def __init__(
        self,
        *,
        path: Path,
        source: str,
        columns: tuple[str, ...],
        rows: list[list[str]],
        text_format: TextFormat,
        source_hash: str,
        nul_possible: bool,
    ) -> None:
        self._path = path
        self.source = source
        self.columns = columns
        self._rows = rows
        self.total_rows = len(rows)
        self.text_format = text_format
        self.encoding = text_format.encoding
        self.source_hash = source_hash
        self._nul_possible = nul_possible

    @classmethod
    def open(
        cls,
        csv_path: Path,
        *,
        required_columns: Sequence[str],
        source_name: str | None = None,
        encoding: str | None = None,
        delimiter: str | None = None,
    ) -> CsvTable:
        """Decode and check `csv_path` once; InputError (naming file, row, line) if unusable.

        The encoding and the delimiter are detected unless given (see `_detect`: UTF-8 with
        or without BOM, UTF-16/32 with or without BOM, GB18030/GBK, Windows-1252/Latin-1 and
        what charset-normalizer recognises; comma, tab, semicolon or pipe). Checks: a text
        file in a convincing encoding, well-formed CSV, unique header names, every required
        column present, every row as wide as the header, and at least one data row. Ids are
        checked by `evidence_index`. UserError for an unknown `encoding`.
        """
        source = source_name or csv_path.name

        def read(text_format: TextFormat) -> CsvTable:
            try:
                return cls._read(csv_path, source, text_format, required_columns)
            except (csv.Error, _WidthMismatch):
                raise _records.diagnose(
                    csv_path, text_format, source, required=required_columns, id_column=None
                ) from None

        return read_decoding(
            csv_path,
            source,
            encoding=encoding,
            delimiter=delimiter,
            required=required_columns,
            read=read,
        )

    @classmethod
    def _read(
        cls, path: Path, source: str, text_format: TextFormat, required: Sequence[str]
    ) -> CsvTable:
        with open_text(path, text_format.encoding) as (stream, probe):
            reader = _records.new_reader(stream, text_format.delimiter)
            columns = _records.read_header(reader, source)
            _records.require_columns(columns, required, source)
            rows: list[list[str]] = []
            # In slices, so a cancelled run (SIGTERM) stops within one slice of a huge file.
            while chunk := list(islice(reader, _READ_SLICE)):
                checkpoint()
                rows += filter(any, chunk)  # drops blank and all-empty rows
            source_hash = probe.hexdigest
        if not rows:
            raise _records.no_rows(source)
        if set(map(len, rows)) != {len(columns)}:
            raise _WidthMismatch
        return cls(
            path=path,
            source=source,
            columns=columns,
            rows=rows,
            text_format=text_format,
            source_hash=source_hash,
            nul_possible=probe.nul_seen or not text_format.nul_is_byte,
        )

    def page(self, offset: int, limit: int) -> dict[str, Any]:
        """Rows `offset .. offset+limit-1` as `{column: value}` dicts, with paging details.

        Returns `{"source", "total_rows", "columns", "rows", "next_offset"}`; `next_offset`
        is None after the last page. An offset past the end gives no rows.
        """
        if offset < 0:
            raise ValueError(f"offset must be 0 or more, not {offset}")
        if limit < 1:
            raise ValueError(f"limit must be 1 or more, not {limit}")
        stop = min(offset + limit, self.total_rows)
        columns = self.columns
        rows = [dict(zip(columns, row, strict=True)) for row in self._rows[offset:stop]]
        return {
            "source": self.source,
            "total_rows": self.total_rows,
            "columns": list(columns),
            "rows": rows,
            "next_offset": stop if stop < self.total_rows else None,
        }

    def row_values(self, position: int) -> tuple[str, ...]:
        """One row's values in column order (0-based position among the data rows)."""
        return tuple(self._rows[position])

    def evidence_index(
        self, id_column: str = "feedback_id", text_column: str = "text"
    ) -> EvidenceIndex:
        """The Evidence Index of this table, without reading the file again.

        InputError (file, row, line, column) for a missing id/text column or an empty or
        duplicate id, exactly as `build_evidence_index` reports them.
        """
        _records.require_columns(self.columns, (id_column, text_column), self.source)
        ids = list(map(itemgetter(self.columns.index(id_column)), self._rows))
        texts = map(itemgetter(self.columns.index(text_column)), self._rows)
        by_id = dict(zip(ids, texts, strict=True))
        if (
            len(by_id) != len(ids)
            or "" in by_id
            or any(map(str.isspace, by_id))
            or _records.has_control(by_id)
        ):
            raise _records.diagnose(
                self._path,
                self.text_format,
                self.source,
                required=(id_column, text_column),
                id_column=id_column,
            )
        return EvidenceIndex(
            source=self.source,
            source_hash=self.source_hash,
            id_column=id_column,
            text_column=text_column,
            store=BuiltStore(by_id, self._digests()),
            columns=self.columns,
            **self.text_format.index_fields(),
        )

    def _digests(self) -> bytes:
        hasher = RowHasher(self.columns)
        rows = iter(self._rows)
        parts = []
        while batch := list(islice(rows, _HASH_BATCH)):
            checkpoint()
            parts.append(hasher.digests(batch, may_contain_nul=self._nul_possible))
        return b"".join(parts)


class _WidthMismatch(Exception):
    """Some row is not as wide as the header; `diagnose` says which."""
