"""What a run writes besides its progress: the events of a validation round's outcome, and
the record files (`runtime/run.json`, the trace, `runtime/citations.json`, the manifest).

`RunRecords` is the part of `Run` (`runlens.runtime.run`) that turns its state into records;
it holds no state of its own.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from runlens.atomic import write_atomic
from runlens.evidence import file_sha256
from runlens.hooks.manager import HookEvent
from runlens.models.base import Model
from runlens.plugins.base import Plugin
from runlens.records.encoding import dumps_compact
from runlens.records.events import EventLog
from runlens.records.io import WrittenRecords, encode_record
from runlens.records.manifest import build_manifest
from runlens.records.metrics import MetricsCollector
from runlens.records.run_record import LoopLimitsRecord, RunRecord
from runlens.records.status import RunStatus
from runlens.records.trace import build_trace
from runlens.runtime.citations import citations_record
from runlens.runtime.lock import WorkspaceLock
from runlens.runtime.plan import PlanTracker
from runlens.runtime.settings import RunSettings
from runlens.tools.workspace import Workspace
from runlens.validation import ValidationReport

if TYPE_CHECKING:
    from runlens.verdict.statement import RunVerdict

#: The ends of a run that was judged: its verdict is signed.
_SIGNED = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})


class RunRecords:
    """The records of one run, written from the state `Run` keeps."""

    run_id: str
    plugin: Plugin
    model: Model
    settings: RunSettings
    workspace: Workspace
    lock: WorkspaceLock
    events: EventLog
    plan: PlanTracker
    metrics: MetricsCollector
    status: RunStatus
    error_message: str | None
    warnings: list[str]
    created_at: str
    finished_at: str | None
    index_sha256: str | None
    input_format: dict[str, Any] | None
    source_lock: dict[str, Any] | None
    input_path: Path
    report: ValidationReport | None
    #: The names of the Stop validators of the last validation round (for the verdict).
    validators_ran: list[str]
    #: Whether `report` judged the deliverables as they are: not once a repair round began.
    verdict_current: bool
    #: What takes the record files the run's end wrote (`records_written` of a subscriber).
    records_taken: list[Callable[[WrittenRecords], None]]
    #: What takes `runtime/run.json` as the run wrote it when it started running
    #: (`record_started` of a subscriber).
    records_started: list[Callable[[bytes], None]]
    _input_relative: str
    _redact_secrets: Callable[[str], str] | None
    _warn: Callable[[str], None]

    def _publish_blocked(self, report: ValidationReport, validation_round: int) -> None:
        blocking = sorted({finding.validator for finding in report.findings})
        self.events.publish(
            "hook.blocked",
            {
                "event": HookEvent.STOP.value,
                "round": validation_round,
                "hooks": blocking,
                "hooks_blocked": len(blocking),
                "reason": report.error_message,
                "finding_count": len(report.findings),
            },
        )

    def _publish_artifacts(self, report: ValidationReport, validation_round: int) -> None:
        for name, status in report.artifacts.items():
            findings = [f for f in report.findings if f.artifact == name]
            contract = self.plugin.contract(name)
            if status == "missing" and not findings and contract and not contract.required:
                # An optional artifact the run did not write: neither validated nor rejected
                # (SPEC section 6: `artifact.rejected` is for artifacts with findings). The
                # verdict and the manifest list it as `missing`.
                continue
            event_type: Literal["artifact.validated", "artifact.rejected"] = (
                "artifact.validated" if status == "validated" else "artifact.rejected"
            )
            self.events.publish(
                event_type,
                {
                    "artifact": name,
                    "status": status,
                    "round": validation_round,
                    "finding_codes": [finding.code for finding in findings],
                },
            )

    def _artifact_statuses(self) -> dict[str, str]:
        if self.report is not None:
            return dict(self.report.artifacts)
        return {
            contract.name: "not_validated"
            if (self.workspace.root / contract.name).is_file()
            else "missing"
            for contract in self.plugin.contracts
        }

    def _run_record(self) -> RunRecord:
        limits = self.settings.limits
        return RunRecord(
            run_id=self.run_id,
            plugin=self.plugin.name,
            model=self.model.spec,
            status=self.status,
            error_message=self.error_message,
            warnings=list(self.warnings),
            input=self._input_relative,
            plan=self.plan.as_records(),
            metrics=self.metrics.snapshot(),
            created_at=self.created_at,
            finished_at=self.finished_at,
            evidence_index_sha256=self.index_sha256,
            input_format=self.input_format,
            source_lock=self.source_lock,
            repair_turns=self.settings.repair_turns,
            limits=LoopLimitsRecord(
                max_turns=limits.max_turns,
                max_tool_calls=limits.max_tool_calls,
                wall_time_seconds=limits.wall_time_seconds,
            ),
            submitted_by=self.settings.submitted_by,
            rerun_of=self.settings.rerun_of,
            review_findings=list(self.settings.review_findings),
        )

    def _write_run_record(self, record: RunRecord | None = None) -> bytes:
        """Write `runtime/run.json` (the run as it is now unless `record` is given); the
        bytes written."""
        if record is None:
            record = self._run_record()
        return self._write_record(self.workspace.run_record, encode_record(record.encode()))

    def _write_record(self, path: Path, encoded: bytes) -> bytes:
        """Secrets blanked out (in the encoded text), then written atomically; the bytes
        written."""
        if self._redact_secrets is not None:
            encoded = self._redact_secrets(encoded.decode("utf-8")).encode("utf-8")
        write_atomic(path, encoded)
        return encoded

    def _finalize(self) -> None:
        """Write the signed verdict, the trace, the manifest and the final run record, and
        hand them as written to `records_taken`; close the event log.

        The verdict and the manifest hash the same files (the deliverables, the input): each
        is read once (`_FileDigests`), the run's own writes being over by now."""
        digests = _FileDigests()
        self._sign_verdict(digests)
        record = self._run_record()
        trace = build_trace(
            self.run_id,
            self.events.events,
            plugin=self.plugin.name,
            model=self.model.spec,
            status=self.status.value,
        )
        self._write_record(self.workspace.trace, dumps_compact(trace.encode()))
        citations: bytes | None = None
        if self.report is not None:
            encoded_citations = encode_record(citations_record(self.report).encode())
            citations = self._write_record(self.workspace.citations, encoded_citations)
        encoded = record.encode()  # read by the manifest, then written as run.json
        manifest = build_manifest(
            run=encoded,
            workspace=self.workspace.root,
            contracts=self.plugin.contracts,
            statuses=self.report.artifacts if self.report else None,
            findings=self.report.findings if self.report else (),
            input_name=self.input_path.name,
            # The input's raw bytes: the index's `source_hash`, without parsing it.
            source_hash=digests(self.input_path),
            sha256=digests,
        )
        manifest_written = self._write_record(
            self.workspace.manifest, encode_record(manifest.encode())
        )
        run_written = self._write_record(self.workspace.run_record, encode_record(encoded))
        written = WrittenRecords(run_written, manifest_written, citations)
        for take in self.records_taken:
            take(written)
        self.events.close()
        self.lock.release()

    def _sign_verdict(self, digests: Callable[[Path], str] = file_sha256) -> None:
        """Write `runtime/verdict.dsse.json` for a run that was judged (SPEC 16): completed,
        failed after validation, or cancelled with a verdict. A key that cannot be loaded
        leaves the run unsigned, never unfinished: a warning says why."""
        if self.report is None or self.status not in _SIGNED:
            return
        if self.status is RunStatus.CANCELLED and not self.verdict_current:
            return  # cancelled in a repair round: no verdict judged the files as they are
        from runlens.verdict.keys import SigningKeyError, signing_key
        from runlens.verdict.statement import write_verdict

        try:
            key = signing_key(self.settings.keys_home)
        except SigningKeyError as error:
            self._warn(f"verdict not signed: {error}")
            return
        try:
            write_verdict(
                self.workspace.root,
                self._verdict(),
                self._input_relative,
                key,
                redact=self._redact_secrets,
                sha256=digests,
            )
        except OSError as error:
            self._warn(f"verdict not signed: {self.workspace.VERDICT} cannot be written: {error}")

    def _verdict(self) -> RunVerdict:
        from runlens.verdict.statement import RunVerdict

        report = self.report
        assert report is not None
        cited = {quote.row_id for quote in report.quotes}
        cited.update(cited_id.row_id for cited_id in report.id_citations)
        return RunVerdict(
            run_id=self.run_id,
            status=self.status.value,
            error_message=self.error_message,
            plugin=self.plugin.name,
            model=self.model.spec,
            contracts=self.plugin.contracts,
            validators=self.validators_ran,
            findings=report.findings,
            artifacts=report.artifacts,
            quotes=len(report.quotes),
            id_citations=len(report.id_citations),
            failed_citations=len(report.failed_spans),
            rows_cited=len(cited),
            source_lock=self.source_lock,
            evidence_index_sha256=self.index_sha256,
            created_at=self.created_at,
            finished_at=self.finished_at,
        )


class _FileDigests:
    """`file_sha256` that reads each file once: the run's end hashes the deliverables and
    the input for its verdict, then again for its manifest."""

    def __init__(self) -> None:
        self._known: dict[Path, str] = {}

    def __call__(self, path: Path) -> str:
        known = self._known.get(path)
        if known is None:
            known = self._known[path] = _sha256(path)
        return known


#: Bytes read at a time (as `file_sha256` reads them).
_READ_CHUNK = 1 << 20


def _sha256(path: Path) -> str:
    """`file_sha256` through the file's descriptor alone: a buffered file object's calls
    (`fstat`, `ioctl`, `lseek`) cost more than hashing a small deliverable."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        digest = hashlib.sha256()
        while chunk := os.read(handle, _READ_CHUNK):
            digest.update(chunk)
    finally:
        os.close(handle)
    return digest.hexdigest()
