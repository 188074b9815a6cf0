"""`runlens verify`: re-check a run's signed verdict against its workspace as it is now.

TARGET is a run id, a workspace folder or an exported HTML file; a file is checked by
`exported.verify_export` (SPEC section 18), a workspace here. Each check is named (SPEC
section 16):

    signature        the envelope is signed by one of the keys given (else the home's)
    statement        the statement is about this workspace: its run id, its input, its index
                     (a statement copied from another run fails here)
    subject:<name>   each subject's SHA-256 matches the file; a deliverable on disk that the
                     statement does not list fails too
    evidence_index   the index rebuilt from the input (or `source`) is the workspace's
    source_lock      the signed source lock is run.json's, and it is the lock of the input
                     and the index as they are (bytes hash, rows digest, rows)
    contracts        the plugin's contracts are the ones the run was judged by
    validators       the deterministic Stop validators, re-run, give the same findings
    reviews          runtime/reviews.jsonl: each line signed by its reviewer, the lines
                     chained, the statement's reviews its first lines, each bound to the
                     deliverables as they are now

Nothing is written into the workspace: the index is rebuilt in a temporary folder.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from runlens.errors import RunLensError, UserError
from runlens.evidence import file_sha256
from runlens.records.io import find_workspace, read_json_object
from runlens.tools.workspace import Workspace
from runlens.verdict.checks import (
    Check,
    VerifyReport,
    listed,
    named_signer,
    review_problems,
    reviews_check,
)
from runlens.verdict.dsse import VerdictError, open_envelope
from runlens.verdict.keys import key_names, load_public_keys
from runlens.verdict.statement import (
    VERDICT_PATH,
    canonical_json,
    contracts_digest,
    decode_statement,
    deliverable_files,
    read_envelope,
    subject_digests,
)

#: File names that name an exported file rather than a run id.
_EXPORT_SUFFIXES = frozenset({".html", ".htm"})


def verify_target(
    target: str,
    *,
    home: Path | None = None,
    keys: Sequence[Path] = (),
    source: Path | None = None,
) -> VerifyReport:
    """Verify a run id (resolved as `runlens show` does), a workspace folder, or an exported
    file; `UserError` when TARGET is none of them."""
    path = Path(target)
    if path.is_file():
        from runlens.verdict.exported import verify_export

        return verify_export(path, home=home, keys=keys, source=source)
    if path.suffix.lower() in _EXPORT_SUFFIXES and not path.exists():
        raise UserError(f"{target}: no such file (an exported file to verify)")
    if path.is_dir() and not (path / Workspace.RUN_RECORD).is_file():
        raise UserError(f"{target} is not a run's workspace (it has no {Workspace.RUN_RECORD})")
    return verify_workspace(find_workspace(target, home), home=home, keys=keys, source=source)


def verify_workspace(
    workspace: Path,
    *,
    home: Path | None = None,
    keys: Sequence[Path] = (),
    source: Path | None = None,
) -> VerifyReport:
    """Every check of the verdict of the run in `workspace` (see the module's docstring).
    `UserError` for a key file or `source` that cannot be used."""
    root = Path(workspace)
    if source is not None and not source.is_file():
        raise UserError(f"--source {source}: no such file")
    public = load_public_keys(keys, home)
    record, problem = read_json_object(root / Workspace.RUN_RECORD, Workspace.RUN_RECORD)
    if record is None:
        raise UserError(f"{root}: {problem or f'no {Workspace.RUN_RECORD}'}")
    report = VerifyReport(verified=False, run_id=str(record.get("run_id")), workspace=root)
    checks = report.checks
    try:
        envelope = read_envelope(root)
    except VerdictError as error:
        checks.append(Check("signature", False, error.reason))
        return report
    if envelope is None:
        checks.append(
            Check("signature", False, f"no {VERDICT_PATH}: this run's verdict was never signed")
        )
        return report
    signature, signed_by = _signature(envelope, public, home)
    checks.append(signature)
    try:
        statement = decode_statement(envelope)
    except VerdictError as error:
        checks.append(Check("statement", False, error.reason))
        return report
    predicate: dict[str, Any] = statement["predicate"]
    checks[-1] = named_signer(signature, signed_by, predicate)
    digests = subject_digests(statement)
    checks.append(_statement(record, predicate, digests))
    checks.extend(_subjects(root, digests))
    checks.append(_source_lock(root, record, predicate))
    plugin = _plugin(record)
    if isinstance(plugin, Check):
        checks.extend(Check(name, False, plugin.detail) for name in _PLUGIN_CHECKS)
    else:
        checks.append(_evidence_index(root, record, plugin, source))
        checks.append(_contracts(plugin, predicate))
        checks.append(_validators(root, record, plugin, predicate))
    checks.append(_reviews(root, record, predicate, home))
    report.verified = all(check.ok for check in checks)
    return report


_PLUGIN_CHECKS = ("evidence_index", "contracts", "validators")


def _signature(
    envelope: dict[str, Any], public: Mapping[str, Any], home: Path | None
) -> tuple[Check, str | None]:
    """The signature check, and the id of the key whose signature holds."""
    try:
        _, keyid = open_envelope(envelope, public)
    except VerdictError as error:
        return Check("signature", False, error.reason), None
    name = key_names(home).get(keyid)
    detail = f"signed by key {keyid}" + (f" ({name})" if name else "")
    return Check("signature", True, detail), keyid


def _statement(
    record: Mapping[str, Any], predicate: Mapping[str, Any], digests: Mapping[str, str]
) -> Check:
    run_id = record.get("run_id")
    signed_for = predicate.get("run_id")
    if signed_for != run_id:
        return Check(
            "statement",
            False,
            f"the statement is about run {signed_for!r}, this workspace holds run {run_id!r}",
        )
    wanted = [str(record.get("input") or ""), Workspace.EVIDENCE_INDEX]
    uncovered = [name for name in wanted if name and name not in digests]
    if uncovered:
        return Check("statement", False, f"the statement does not cover {', '.join(uncovered)}")
    signed_index = predicate.get("evidence_index_sha256")
    if signed_index != record.get("evidence_index_sha256"):
        return Check(
            "statement",
            False,
            f"the statement records index sha256 {signed_index}, run.json "
            f"{record.get('evidence_index_sha256')}",
        )
    status = predicate.get("status")
    if status != record.get("status"):
        return Check(
            "statement",
            False,
            f"the statement says the run ended {status!r}, run.json says {record.get('status')!r}",
        )
    return Check("statement", True, f"run {run_id}, {status}, {len(digests)} subjects")


def _subjects(root: Path, digests: Mapping[str, str]) -> Iterator[Check]:
    for name, expected in digests.items():
        yield _subject(root, name, expected)
    for name in deliverable_files(root):
        if name not in digests:
            actual = file_sha256(root / name)
            yield Check(
                f"subject:{name}",
                False,
                f"{name} is on disk but not in the statement (sha256 {actual}): added after "
                "the verdict was signed",
            )


def _subject(root: Path, name: str, expected: str) -> Check:
    label = f"subject:{name}"
    relative = PurePosixPath(name)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        return Check(label, False, f"{name!r} is no path inside a workspace")
    path = root / relative
    if not path.is_file():
        return Check(label, False, f"{name} is missing (expected sha256 {expected})")
    actual = file_sha256(path)
    if actual != expected:
        return Check(label, False, f"{name} changed: expected sha256 {expected}, actual {actual}")
    return Check(label, True, f"sha256 {actual}")


def _source_lock(root: Path, record: Mapping[str, Any], predicate: Mapping[str, Any]) -> Check:
    """The source lock the statement signs: the one `run.json` shows, and the lock of the
    workspace's input and index as they are now."""
    from runlens.evidence import EvidenceIndex
    from runlens.sourcelock.lock import index_rows_digest

    signed = predicate.get("source_lock")
    recorded = record.get("source_lock")
    if signed is None and recorded is None:
        return Check("source_lock", True, "no source lock recorded (a run from before locks)")
    if not isinstance(signed, dict):
        return Check("source_lock", False, "run.json has a source lock the statement does not sign")
    if signed != recorded:
        changed = sorted(
            key
            for key in set(signed) | set(recorded if isinstance(recorded, dict) else {})
            if not isinstance(recorded, dict) or signed.get(key) != recorded.get(key)
        )
        return Check(
            "source_lock",
            False,
            f"{Workspace.RUN_RECORD}'s source lock differs from the signed one: "
            + ", ".join(changed),
        )
    problems = []
    given = root / str(record.get("input") or "")
    if given.is_file() and file_sha256(given) != signed.get("bytes_sha256"):
        problems.append(f"the input's sha256 is not the locked {signed.get('bytes_sha256')}")
    index_path = root / Workspace.EVIDENCE_INDEX
    if index_path.is_file():
        try:
            index = EvidenceIndex.load(index_path)
        except RunLensError as error:
            problems.append(f"{Workspace.EVIDENCE_INDEX} cannot be read: {error}")
        else:
            if len(index) != signed.get("rows"):
                problems.append(f"the index holds {len(index)} rows, the lock {signed.get('rows')}")
            elif index_rows_digest(index) != signed.get("rows_digest"):
                problems.append("the index's rows digest is not the locked one")
    if problems:
        return Check("source_lock", False, "; ".join(problems))
    return Check(
        "source_lock",
        True,
        f"{signed.get('rows')} rows, rows digest {signed.get('rows_digest')}",
    )


def _plugin(record: Mapping[str, Any]) -> Any:
    from runlens.plugins import load_plugin

    name = record.get("plugin")
    if not isinstance(name, str) or not name:
        return Check("plugin", False, f"{Workspace.RUN_RECORD} names no plugin")
    try:
        return load_plugin(name)
    except UserError as error:
        return Check("plugin", False, f"cannot be checked here: {error}")


def _evidence_index(
    root: Path, record: Mapping[str, Any], plugin: Any, source: Path | None
) -> Check:
    """The index rebuilt from the input (or `source`), in a temporary folder, against the
    workspace's: byte for byte from the input, row for row from another file."""
    from runlens.evidence import is_workbook
    from runlens.evidence.rebuild import rebuild_index, recorded_reading

    stored = root / Workspace.EVIDENCE_INDEX
    if not stored.is_file():
        return Check("evidence_index", False, f"{Workspace.EVIDENCE_INDEX} is missing")
    given = source if source is not None else root / str(record.get("input") or "")
    if not given.is_file():
        return Check("evidence_index", False, f"the input {given} is missing: nothing to rebuild")
    reading = dict(recorded_reading(root, dict(record)))
    if not is_workbook(given):
        reading.pop("sheet", None)
    try:
        with tempfile.TemporaryDirectory(prefix="runlens-verify-") as temp:
            rebuilt_path = rebuild_index(Path(temp), given, plugin, reading=reading)
            return _compare_index(stored, rebuilt_path, given.name, from_source=source is not None)
    except RunLensError as error:
        return Check("evidence_index", False, f"cannot rebuild it from {given.name}: {error}")


def _compare_index(stored: Path, rebuilt_path: Path, name: str, *, from_source: bool) -> Check:
    from runlens.evidence import EvidenceIndex

    stored_sha = file_sha256(stored)
    if file_sha256(rebuilt_path) == stored_sha:
        return Check("evidence_index", True, f"rebuilt from {name}: identical to the run's")
    rebuilt, kept = EvidenceIndex.load(rebuilt_path), EvidenceIndex.load(stored)
    if rebuilt.sha256(kept.header) == stored_sha:
        if from_source:
            return Check("evidence_index", True, f"rebuilt from {name}: the same rows as the run's")
        return Check(
            "evidence_index",
            False,
            f"{Workspace.EVIDENCE_INDEX}: same rows as rebuilt from {name}, but its header "
            "(how the input was read) was changed",
        )
    return Check("evidence_index", False, _row_differences(name, rebuilt, kept))


def _row_differences(name: str, rebuilt: Any, kept: Any) -> str:
    fresh = {row_id: row_hash for row_id, row_hash, _ in rebuilt.rows()}
    old = {row_id: row_hash for row_id, row_hash, _ in kept.rows()}
    parts = []
    for word, ids in (
        ("changed", [i for i in old if i in fresh and fresh[i] != old[i]]),
        ("only in the run's index", [i for i in old if i not in fresh]),
        ("only in the rebuilt index", [i for i in fresh if i not in old]),
    ):
        if ids:
            parts.append(f"{len(ids)} row(s) {word}: {listed(ids)}")
    body = "; ".join(parts) or "the same row ids and hashes, in another file layout"
    return f"{Workspace.EVIDENCE_INDEX} differs from the index rebuilt from {name}: {body}"


def _contracts(plugin: Any, predicate: Mapping[str, Any]) -> Check:
    signed = (predicate.get("contracts") or {}).get("sha256")
    current = contracts_digest(plugin.contracts)
    if signed != current:
        return Check(
            "contracts",
            False,
            f"{plugin.name}'s contracts changed since the run: expected sha256 {signed}, "
            f"actual {current}",
        )
    return Check("contracts", True, f"sha256 {current}")


def _validators(
    root: Path, record: Mapping[str, Any], plugin: Any, predicate: Mapping[str, Any]
) -> Check:
    """The Stop validators re-run as `runlens validate` runs them; the same findings?"""
    from runlens.secrets import known_secrets
    from runlens.validation import validate_workspace

    expected = record.get("evidence_index_sha256")
    try:
        report = validate_workspace(
            root,
            plugin.contracts,
            expected_index_sha256=expected if isinstance(expected, str) else None,
            plugin=plugin,
            secrets=known_secrets(),
        )
    except RunLensError as error:
        return Check("validators", False, f"the validators could not run: {error}")
    signed = Counter(_finding_key(f) for f in predicate.get("findings") or ())
    found = Counter(_finding_key(f.model_dump(mode="json")) for f in report.findings)
    if signed == found:
        count = sum(found.values())
        return Check("validators", True, f"re-run: the same {count} finding(s)")
    gone = list((signed - found).elements())
    new = list((found - signed).elements())
    parts = []
    if gone:
        parts.append(f"signed but not found now: {listed([_describe(k) for k in gone])}")
    if new:
        parts.append(f"found now but not signed: {listed([_describe(k) for k in new])}")
    return Check("validators", False, "; ".join(parts))


def _finding_key(finding: Any) -> str:
    return canonical_json(finding).decode("utf-8")


def _describe(key: str) -> str:
    finding = json.loads(key)
    if not isinstance(finding, dict):
        return key
    where = " ".join(str(finding.get(k) or "") for k in ("artifact", "path")).strip()
    return f"{where or '(run)'} [{finding.get('code')}] {finding.get('message')}"


def _reviews(
    root: Path, record: Mapping[str, Any], predicate: Mapping[str, Any], home: Path | None
) -> Check:
    """The review ledger, `runtime/reviews.jsonl`, against the deliverables as they are
    now (`checks.reviews_check`)."""
    from runlens.review.entries import REVIEWS_PATH, ReviewError
    from runlens.review.ledger import current_digests, read_ledger

    try:
        entries = read_ledger(root)
    except ReviewError as error:
        return Check("reviews", False, str(error))
    return reviews_check(
        entries,
        predicate,
        run_id=str(record.get("run_id")),
        home=home,
        current=current_digests(root),
        later_note=f"in {REVIEWS_PATH} only",
    )


__all__ = ["Check", "VerifyReport", "review_problems", "verify_target", "verify_workspace"]
