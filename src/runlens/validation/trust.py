"""Which Evidence Index a validation round may trust, worked out once and shared.

Every validator that checks citations (JSON evidence fields and quotes, Markdown citations,
coverage, figures) asks `context.evidence_index()` and gets the same answer: the index, or
why it cannot be trusted. Citing artifacts are rejected when it cannot.

The index is judged against the source, not against a hash stored next to it: the source
file (the workspace's `input/` copy, or the CSV given to `runlens validate --source`) is read
again, in the encoding and with the delimiter the index records (for a workbook: the sheet),
with its id and text columns and its id rule, and the index must match it
exactly: its `source_hash`, and every row's id, `row_hash`
and `text`. So deleting `runtime/run.json`, nulling its `evidence_index_sha256` or rewriting
that hash cannot make a forged index pass. The one shortcut is for the process that built the
index itself (`ValidationContext.index_built_in_process`): it holds the hash of the bytes it
wrote in memory, and a file with that hash is the index it built from the source.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from runlens.errors import EvidenceIndexError, InputError, UserError
from runlens.evidence import EvidenceIndex, build_evidence_index, file_sha256
from runlens.evidence.index import read_header_only
from runlens.tools.workspace import INPUT
from runlens.validation.findings import FindingCode


class IndexRound(Protocol):
    """What judging the index needs of a validation round (`ValidationContext` is one)."""

    @property
    def workspace(self) -> Path: ...

    @property
    def evidence_index_path(self) -> Path: ...

    @property
    def expected_index_sha256(self) -> str | None: ...

    @property
    def index_built_in_process(self) -> bool: ...

    @property
    def source(self) -> Path | None: ...


@dataclass(frozen=True)
class UntrustedIndex:
    """Why the index cannot be used: the finding code, summary head and reason."""

    code: FindingCode
    head: str
    reason: str


#: Differing rows named in a tamper finding before "and N more".
_ROWS_NAMED = 5


def open_index(context: IndexRound) -> EvidenceIndex | UntrustedIndex:
    """The round's Evidence Index, or why it cannot be trusted."""
    path = context.evidence_index_path
    if not path.is_file():
        return UntrustedIndex("evidence_index_missing", "evidence index missing", "does not exist")
    expected = (context.expected_index_sha256 or "").lower()
    actual = file_sha256(path)
    if expected and actual != expected:
        return _tampered(
            f"has sha256 {actual[:12]}…, not the {expected[:12]}… recorded when the run wrote it"
        )
    if not (context.index_built_in_process and expected):
        rebuilt = _rebuilt_as_written(context, path, actual)
        if rebuilt is not None:
            return rebuilt
    try:
        index = EvidenceIndex.load(path)
    except EvidenceIndexError as error:
        return UntrustedIndex(
            "evidence_index_missing", "evidence index missing", f"unreadable: {error}"
        )
    if context.index_built_in_process and expected:
        return index  # the very bytes this process built from the source and wrote
    source = source_file(context, index)
    if source is None:
        return UntrustedIndex(
            "evidence_source_missing",
            "evidence source missing",
            "cannot be checked: the workspace's input/ holds no source file "
            "(give it with runlens validate --source)",
        )
    return _judged_against(index, source, actual)


def source_file(context: IndexRound, index: EvidenceIndex) -> Path | None:
    """The file the index is judged against: `context.source`, else the file of `input/`
    the index names, else its only file; None when there is no such file."""
    if context.source is not None:
        return context.source
    folder = context.workspace / INPUT
    named = folder / index.source
    if index.source and named.parent == folder and named.is_file():
        return named
    try:
        files = [entry for entry in folder.iterdir() if entry.is_file()]
    except OSError:
        return None
    return files[0] if len(files) == 1 else None


def _rebuilt_as_written(context: IndexRound, path: Path, file_digest: str) -> EvidenceIndex | None:
    """The index rebuilt from its source when the file at `path` is byte for byte that
    index under its own header, read from the header line alone (the usual case: the file
    is then a valid index, and the whole of it need not be loaded only to learn how its
    source was read); None otherwise, and the whole file is loaded and judged
    (`_judged_against`), which names what is wrong."""
    try:
        claimed = read_header_only(path)
        source = source_file(context, claimed)
        if source is None or claimed.source_hash.lower() != file_sha256(source):
            return None
        rebuilt = _rebuild(claimed, source)
        return rebuilt if rebuilt.sha256(claimed.header) == file_digest else None
    except Exception:  # any failure: the whole file is loaded and judged, as before
        return None


def _rebuild(index: EvidenceIndex, source: Path) -> EvidenceIndex:
    """The index of `source`, read as `index` says its source was read (older indexes say
    nothing: detected), with the same columns, id rule and sheet."""
    return build_evidence_index(
        source,
        id_column=index.id_column,
        text_column=index.text_column,
        source_name=index.source,
        encoding=index.encoding,
        delimiter=index.delimiter,
        id_rule=index.id_rule,
        sheet=index.sheet,
    )


def _judged_against(
    index: EvidenceIndex, source: Path, file_digest: str
) -> EvidenceIndex | UntrustedIndex:
    """`index` when it is exactly the index of `source`, else why not. `file_digest` is the
    SHA-256 of the index file `index` was loaded from."""
    source_hash = file_sha256(source)
    if index.source_hash.lower() != source_hash:
        return _tampered(
            f"records source_hash {index.source_hash[:12]}…, but {source.name} has "
            f"sha256 {source_hash[:12]}…"
        )
    try:
        rebuilt = _rebuild(index, source)
    except (InputError, UserError) as error:  # UserError: an encoding no codec reads
        return _tampered(f"cannot be rebuilt from {source.name}: {error}")
    if rebuilt.sha256(index.header) == file_digest:
        # The file is byte for byte the rebuilt rows under its own header: every row's id,
        # hash, text and metadata are the source's, so there is no row to compare one by one.
        return rebuilt
    changed = _changed_rows(index, rebuilt)
    if changed:
        shown = ", ".join(changed[:_ROWS_NAMED])
        more = f" and {len(changed) - _ROWS_NAMED} more" if len(changed) > _ROWS_NAMED else ""
        return _tampered(f"does not match {source.name} at rows {shown}{more}")
    return rebuilt


def _changed_rows(index: EvidenceIndex, rebuilt: EvidenceIndex) -> list[str]:
    """Ids whose row hash or text differ, then ids only one side has (source order first);
    when there are none, ids whose metadata differ."""
    claimed = {row_id: (row_hash, text) for row_id, row_hash, text in index.rows()}
    changed = [
        row_id
        for row_id, row_hash, text in rebuilt.rows()
        if claimed.pop(row_id, None) != (row_hash, text)
    ]
    changed.extend(claimed)  # rows the source does not have
    return changed or _changed_metadata(index, rebuilt)


def _changed_metadata(index: EvidenceIndex, rebuilt: EvidenceIndex) -> list[str]:
    """Ids whose recorded metadata (the row's other columns) differ from the source's, for
    indexes whose rows match already: the pages show metadata as the source's own. An index
    an older version wrote records none, which is no mismatch."""
    source = rebuilt.metadata_rows()
    changed: list[str] = []
    for row_id, claimed in index.metadata_rows():
        source_id, actual = next(source)
        if source_id != row_id:  # the index lists its rows in another order
            actual = rebuilt.metadata(row_id)
        if claimed is not None and dict(claimed) != dict(actual or {}):
            changed.append(row_id)
    return changed


def _tampered(reason: str) -> UntrustedIndex:
    return UntrustedIndex("evidence_index_tampered", "evidence index tampered", reason)
