"""`runlens verify-source`: is this file the data a run read? (SPEC section 16)

    identical      the file's bytes are the input's (`bytes_sha256`)
    same-rows      other bytes, the same rows (`rows_digest`): re-encoded, re-delimited,
                   reordered, or the same rows in a workbook
    rows-changed   rows were added, removed or changed, each named by row id

The file is read as the run read its input: the same id and text columns and id rule (and
sheet, for a workbook), as the run's `input_format` records them; its encoding and
delimiter are detected, since a copy may differ in both. Its row hashes are compared with
those of the run's own Evidence Index (`runtime/evidence_index.json`), which must still be
the index the run recorded (`evidence_index_sha256`): an index changed since is not a
record of what the run read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from runlens.errors import EvidenceIndexError, InputError, UserError
from runlens.sourcelock.lock import index_lock

if TYPE_CHECKING:
    from runlens.evidence import EvidenceIndex
    from runlens.records.readers import RunRecordView

Result = Literal["identical", "same-rows", "rows-changed"]
Change = Literal["added", "removed", "changed"]


@dataclass(frozen=True, slots=True)
class SourceComparison:
    """What `compare_source` found. `added`, `removed`, `changed` are row ids: added in the
    file's order, removed and changed in the run's input order (all empty unless
    `rows-changed`). `run_lock` is the run's source lock, `file_lock` the file's (without
    `ref`)."""

    result: Result
    file: str
    run_id: str | None
    run_lock: dict[str, Any]
    file_lock: dict[str, Any]
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    def change_of(self) -> dict[str, Change]:
        """Row id -> how it changed, for every row that did."""
        changes: dict[str, Change] = {row_id: "added" for row_id in self.added}
        changes.update((row_id, "removed") for row_id in self.removed)
        changes.update((row_id, "changed") for row_id in self.changed)
        return changes

    def as_json(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "run_id": self.run_id,
            "file": self.file,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
            "run": {key: self.run_lock.get(key) for key in _SHOWN},
            "source": {key: self.file_lock.get(key) for key in _SHOWN},
        }


_SHOWN = ("bytes_sha256", "rows_digest", "rows", "columns", "format", "encoding")


def compare_source(workspace: Path, file: Path, *, encoding: str | None = None) -> SourceComparison:
    """Compare `file` with the input of the run in `workspace`.

    Raises UserError (exit 2 in the CLI) naming the file, row or field for a workspace that
    is not a run's, a run that never indexed its input, a run whose index changed since, or
    a file that cannot be read as the run read its input. `encoding` names the file's text
    encoding instead of detecting it."""
    return compare_indexes(workspace, file, encoding=encoding).comparison


@dataclass(frozen=True, slots=True)
class Compared:
    """`compare_source`'s answer with what it read: the run's record, and for rows that
    changed the run's Evidence Index (`run_index`) and the file's (`file_index`)."""

    comparison: SourceComparison
    record: RunRecordView
    run_index: EvidenceIndex | None = None
    file_index: EvidenceIndex | None = None


def compare_indexes(workspace: Path, file: Path, *, encoding: str | None = None) -> Compared:
    """`compare_source`, keeping the indexes it read (`runlens.sourcelock.drift` needs them)."""
    from runlens.evidence import file_sha256, require_regular_file

    record = _record(workspace)
    require_regular_file(file, "source file")
    run_lock = _run_lock(workspace, record)
    bytes_sha256 = file_sha256(file)
    run_id = record.run_id
    if bytes_sha256 == run_lock.get("bytes_sha256"):
        same = {key: run_lock.get(key) for key in _SHOWN}
        return Compared(SourceComparison("identical", str(file), run_id, run_lock, same), record)
    new_index = _read_like_the_run(workspace, file, record, encoding)
    file_lock = {key: value for key, value in index_lock(new_index).items() if key != "ref"}
    if file_lock["rows_digest"] == run_lock.get("rows_digest"):
        return Compared(
            SourceComparison("same-rows", str(file), run_id, run_lock, file_lock), record
        )
    run_index = _run_index(workspace, record)
    old, new = _row_hashes(run_index), _row_hashes(new_index)
    comparison = SourceComparison(
        "rows-changed",
        str(file),
        run_id,
        run_lock,
        file_lock,
        added=[row_id for row_id in new if row_id not in old],
        removed=[row_id for row_id in old if row_id not in new],
        changed=[row_id for row_id, digest in old.items() if new.get(row_id, digest) != digest],
    )
    return Compared(comparison, record, run_index, new_index)


def _record(workspace: Path) -> RunRecordView:
    from runlens.runtime.recovery import load_run
    from runlens.tools.workspace import Workspace

    if not (workspace / Workspace.RUN_RECORD).is_file():
        raise UserError(f"{workspace} is not a run's workspace (no {Workspace.RUN_RECORD})")
    view = load_run(workspace, settle=False)
    if view.problems and view.record.plugin is None:
        raise UserError(f"{workspace}: {view.problems[0]}")
    return view.record


def _run_lock(workspace: Path, record: RunRecordView) -> dict[str, Any]:
    """The run's source lock; for a run recorded before locks existed, the one its index
    gives (bytes hash and rows; no reference)."""
    if isinstance(record.source_lock, Mapping) and isinstance(
        record.source_lock.get("rows_digest"), str
    ):
        lock = dict(record.source_lock)
        # The lock must describe the input the run's index was built from: a run.json edited
        # since would otherwise vouch for any file.
        header = _run_index_header(workspace, record)
        if lock.get("bytes_sha256") != header.source_hash:
            raise UserError(
                f"runtime/run.json: source_lock.bytes_sha256 {lock.get('bytes_sha256')!r} is "
                f"not the input hash {header.source_hash} the run's Evidence Index records"
            )
        return lock
    return index_lock(_run_index(workspace, record))


def _run_index_header(workspace: Path, record: RunRecordView) -> EvidenceIndex:
    """The run's own Evidence Index without its rows, checked as `_run_index` checks it."""
    from runlens.evidence.index import read_header_only

    try:
        return read_header_only(_checked_index_path(workspace, record))
    except EvidenceIndexError as error:
        raise UserError(str(error)) from None


def _run_index(workspace: Path, record: RunRecordView) -> EvidenceIndex:
    """The run's own Evidence Index, checked against the hash the run recorded."""
    from runlens.evidence import EvidenceIndex

    try:
        return EvidenceIndex.load(_checked_index_path(workspace, record))
    except EvidenceIndexError as error:
        raise UserError(str(error)) from None


def _checked_index_path(workspace: Path, record: RunRecordView) -> Path:
    """`runtime/evidence_index.json`, which must still have the hash the run recorded."""
    from runlens.evidence import file_sha256
    from runlens.tools.workspace import Workspace

    path = workspace / Workspace.EVIDENCE_INDEX
    if not path.is_file():
        raise UserError(
            f"{workspace}: the run has no {Workspace.EVIDENCE_INDEX} (it never read its input)"
        )
    expected = record.evidence_index_sha256
    if expected is not None and file_sha256(path) != expected:
        raise UserError(
            f"{path} changed since the run (sha256 is not the recorded {expected}): it no "
            "longer says which rows the run read"
        )
    return path


def _index_reading(workspace: Path) -> dict[str, Any]:
    """How the run read its input, from its index file's header."""
    from runlens.evidence import read_input_format
    from runlens.tools.workspace import Workspace

    try:
        return dict(read_input_format(workspace / Workspace.EVIDENCE_INDEX))
    except EvidenceIndexError:
        return {}


def _read_like_the_run(
    workspace: Path, file: Path, record: RunRecordView, encoding: str | None = None
) -> EvidenceIndex:
    """`file`'s Evidence Index, read with the run's columns, id rule and (workbook) sheet."""
    from runlens.evidence import FROM_COLUMN, build_evidence_index, is_workbook
    from runlens.evidence._ids import check_id_rule

    reading = record.input_format or {}
    if not isinstance(reading.get("id_column"), str):  # a run recorded before input_format
        reading = _index_reading(workspace)
    id_column, text_column = reading.get("id_column"), reading.get("text_column")
    if not isinstance(id_column, str) or not isinstance(text_column, str):
        raise UserError(
            f"runtime/run.json does not record how the run read its input (input_format): "
            f"cannot read {file} the same way"
        )
    try:
        id_rule = check_id_rule(reading.get("id_rule") or FROM_COLUMN)
    except ValueError as error:
        raise UserError(f"runtime/run.json: input_format.id_rule: {error}") from None
    sheet = reading.get("sheet") if is_workbook(file) else None
    try:
        return build_evidence_index(
            file,
            id_column=id_column,
            text_column=text_column,
            id_rule=id_rule,
            sheet=sheet if isinstance(sheet, str) else None,
            source_name=file.name,
            encoding=encoding,
        )
    except (InputError, EvidenceIndexError) as error:
        raise UserError(f"{error}") from None


def _row_hashes(index: EvidenceIndex) -> dict[str, str]:
    return {row_id: row_hash for row_id, row_hash, _ in index.rows()}
