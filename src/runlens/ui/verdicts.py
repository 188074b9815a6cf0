"""What the run page shows of a run's signed verdict and of its source lock (SPEC section 16).

The envelope (`runtime/verdict.dsse.json`) and the run record (`runtime/run.json`) are read
from the folder `UIContext.files_of` names, opened by `runlens.ui.files` (never through a
link) within `MAX_RECORD_BYTES`: a workspace may have been tampered with, and everything in
these files is shown as text. The page checks the signature only (cheap: the envelope
against the home's public keys); the full check (hashes, the index rebuilt, the validators
re-run) is `POST /api/runs/{run_id}/verify`, which `runlens.verdict.verify` answers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from runlens.tools.workspace import Workspace
from runlens.ui.files import WorkspaceFileError, open_in_workspace

#: Where a run's signed verdict lies in its workspace (`runlens.verdict.statement`).
VERDICT_PATH: Final = "runtime/verdict.dsse.json"
#: The largest envelope or run record read for a page (a bigger one is refused as damaged).
MAX_RECORD_BYTES: Final = 32 * 1024 * 1024


class RecordUnavailable(Exception):
    """A workspace record that cannot be read; `missing` when it is simply not there."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def read_json_record(workspace: Path, name: str) -> Any:
    """The JSON document at the workspace-relative `name`; RecordUnavailable naming why not."""
    try:
        opened = open_in_workspace(workspace, name)
    except WorkspaceFileError as error:
        raise RecordUnavailable(str(error), missing="does not exist" in str(error)) from None
    if opened.size > MAX_RECORD_BYTES:
        opened.close()
        raise RecordUnavailable(f"{name} is {opened.size} bytes: larger than a record can be")
    data = b"".join(opened.chunks())
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise RecordUnavailable(f"{name} is not valid JSON ({error})") from None


def read_verdict(workspace: Path) -> dict[str, Any]:
    """The run's DSSE envelope; RecordUnavailable (`missing`) when the run has none."""
    envelope = read_json_record(workspace, VERDICT_PATH)
    if not isinstance(envelope, dict):
        raise RecordUnavailable(f"{VERDICT_PATH} is not a JSON object")
    return envelope


class OnePerRun:
    """Which runs have a check going (`runlens verify` rebuilds the index and re-runs the
    validators: minutes on a large run), so a second request for the same run is refused
    rather than doubling the work."""

    def __init__(self) -> None:
        self._going: set[str] = set()
        self._lock = threading.Lock()

    def claim(self, run_id: str) -> bool:
        """Whether the caller may check `run_id` now (then it must `release` it)."""
        with self._lock:
            if run_id in self._going:
                return False
            self._going.add(run_id)
            return True

    def release(self, run_id: str) -> None:
        with self._lock:
            self._going.discard(run_id)


@dataclass(frozen=True)
class VerdictPanel:
    """The run page's "Verdict" panel: whether the run is signed and by which key, and
    whether that signature verifies against the home's public keys."""

    signed: bool
    #: Why there is no envelope to show (None when there is one).
    problem: str | None = None
    key_ids: tuple[str, ...] = ()
    #: The key id whose public key verified the signature; None when none did.
    verified_key: str | None = None
    #: Why the signature does not verify (None when it does).
    signature_problem: str | None = None
    subjects: int | None = None
    predicate_type: str | None = None


def verdict_panel(workspace: Path, home: Path | None) -> VerdictPanel:
    """The panel for the run whose files are in `workspace`, checked with `home`'s keys."""
    try:
        envelope = read_verdict(workspace)
    except RecordUnavailable as error:
        if error.missing:
            why = "no signed verdict: the run ended before validating, or is still going"
            return VerdictPanel(signed=False, problem=why)
        return VerdictPanel(signed=False, problem=str(error))
    signatures = envelope.get("signatures")
    key_ids = tuple(
        str(signature.get("keyid", ""))
        for signature in (signatures if isinstance(signatures, list) else [])
        if isinstance(signature, dict)
    )
    subjects, predicate_type = _statement_summary(envelope)
    verified_key, problem = _check_signature(envelope, home)
    return VerdictPanel(
        signed=True,
        key_ids=key_ids,
        verified_key=verified_key,
        signature_problem=problem,
        subjects=subjects,
        predicate_type=predicate_type,
    )


def _statement_summary(envelope: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """How many subjects the statement names and its predicate type (None when unreadable)."""
    from runlens.verdict.statement import decode_statement

    try:
        statement = decode_statement(dict(envelope))
    except Exception:  # a damaged envelope: the signature check names what is wrong
        return None, None
    subject = statement.get("subject") if isinstance(statement, dict) else None
    predicate_type = statement.get("predicateType") if isinstance(statement, dict) else None
    return (
        len(subject) if isinstance(subject, list) else None,
        str(predicate_type) if predicate_type is not None else None,
    )


def _check_signature(
    envelope: Mapping[str, Any], home: Path | None
) -> tuple[str | None, str | None]:
    """(the key id that verified it, None) or (None, why it does not verify)."""
    from runlens.verdict.dsse import open_envelope
    from runlens.verdict.keys import load_public_keys

    try:
        keys = load_public_keys((), home)
    except Exception as error:  # an unreadable key file: say so rather than fail the page
        return None, f"the home's public keys cannot be read ({error})"
    if not keys:
        return None, "this home has no public keys to check it with"
    try:
        _payload, key_id = open_envelope(dict(envelope), keys)
    except Exception as error:  # VerdictError names the reason; anything else is damage
        return None, str(error) or type(error).__name__
    return key_id, None


# -- the source lock ------------------------------------------------------------------------


@dataclass(frozen=True)
class SourcePanel:
    """The run page's "Source" panel: the source lock as (label, text) lines
    (`runlens.sourcelock.render`, as `runlens show` prints them), or why there is none."""

    lines: tuple[tuple[str, str], ...] = ()
    problem: str | None = None


def source_panel(workspace: Path, *, ended: bool = True) -> SourcePanel:
    """The source lock of the run in `workspace`, from its run record (`ended`: the run
    has ended, so a lock missing now will not come)."""
    from runlens.sourcelock.render import source_lock_lines

    try:
        record = read_json_record(workspace, Workspace.RUN_RECORD)
    except RecordUnavailable as error:
        if error.missing and not ended:
            return SourcePanel(problem="recorded once the run has indexed its input")
        return SourcePanel(problem=f"the run record cannot be read: {error}")
    lock = record.get("source_lock") if isinstance(record, dict) else None
    if not isinstance(lock, dict):
        if not ended:
            return SourcePanel(problem="recorded once the run has indexed its input")
        return SourcePanel(problem="no source lock recorded (the run did not index its input)")
    return SourcePanel(lines=tuple(source_lock_lines(lock)))


__all__ = [
    "MAX_RECORD_BYTES",
    "VERDICT_PATH",
    "OnePerRun",
    "RecordUnavailable",
    "SourcePanel",
    "VerdictPanel",
    "read_json_record",
    "read_verdict",
    "source_panel",
    "verdict_panel",
]
