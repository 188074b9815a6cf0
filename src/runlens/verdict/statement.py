"""A run's verdict as an in-toto Statement v1 (SPEC section 16), and its envelope on disk.

    {"_type": "https://in-toto.io/Statement/v1",
     "subject": [{"name": "artifacts/report.md", "digest": {"sha256": "..."}}, ...],
     "predicateType": "https://runlens.dev/verdict/v1",
     "predicate": {"run_id", "status", "plugin": {name, version}, "runlens": {version},
                   "model", "contracts": {sha256}, "validators", "findings", "artifacts",
                   "coverage", "citations", "source_lock", "evidence_index_sha256",
                   "created_at", "finished_at", "reviews", "reviewers", "review_state",
                   "signer"}}

The subjects are every file under `artifacts/` on disk, the input (`input/<name>`) and the
Evidence Index (`runtime/evidence_index.json`), each named by its workspace-relative path,
sorted by name. The statement is written, in its DSSE envelope, to `runtime/verdict.dsse.json`.

A run is signed unreviewed (`reviews` [], `reviewers` {}, `review_state` "unreviewed"); each
review recorded later re-signs the statement with the review ledger's entries, the reviewers'
public keys and the new state (`resign_with_reviews`), everything else left as signed.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

import orjson
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from runlens.atomic import write_atomic
from runlens.contracts import ArtifactContract
from runlens.evidence import file_sha256
from runlens.tools.workspace import ARTIFACTS, Workspace
from runlens.validation.findings import Finding
from runlens.verdict.dsse import VerdictError, envelope_payload, open_envelope, sign_envelope
from runlens.verdict.keys import SigningKey, key_id

VERDICT_PATH: Final = Workspace.VERDICT
STATEMENT_TYPE: Final = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE: Final = "https://runlens.dev/verdict/v1"


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: the same bytes for the same value, in any process."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


#: What orjson writes as `json.dumps(..., indent=2)` does (ensure_ascii): printable ASCII and
#: the indent's newlines. orjson writes DEL and non-ASCII text as they are, json escapes them.
_PLAIN_ASCII: Final = re.compile(rb"[\n -~]*")


def envelope_json(envelope: Mapping[str, Any]) -> bytes:
    """The envelope's file: `json.dumps(envelope, indent=2)` in ASCII and a newline. orjson
    writes the same bytes for objects and lists of printable ASCII text (an envelope's
    base64, hex and type), in a fraction of the time of json's indenting encoder, which
    writes anything else (numbers, whose text the two write differently, among it)."""
    if _texts_only(envelope):
        try:
            fast = orjson.dumps(envelope, option=orjson.OPT_INDENT_2)
        except orjson.JSONEncodeError:  # a lone surrogate, too deep a nesting: json decides
            pass
        else:
            if _PLAIN_ASCII.fullmatch(fast):
                return fast + b"\n"
    return json.dumps(envelope, indent=2).encode("ascii") + b"\n"


def _texts_only(value: Any) -> bool:
    """Whether `value` is `str`s in `dict`s (with `str` keys) and `list`s, nothing else
    (no subclass either)."""
    kind = type(value)
    if kind is str:
        return True
    if kind is dict:
        return all(type(key) is str and _texts_only(item) for key, item in value.items())
    if kind is list:
        return all(_texts_only(item) for item in value)
    return False


def contracts_digest(contracts: Iterable[ArtifactContract]) -> str:
    """SHA-256 of the contracts' canonical JSON, in the plugin's order."""
    documents = [contract.model_dump(mode="json") for contract in contracts]
    return hashlib.sha256(canonical_json(documents)).hexdigest()


def deliverable_files(root: Path) -> list[str]:
    """Every regular file under `artifacts/`, workspace-relative, sorted (symbolic links
    are no deliverables: the file tools never write one, and a linked folder is not
    entered). One `scandir` per folder: what `Path.rglob` lists, without a `stat` per file."""
    found: list[str] = []
    _regular_files(os.path.join(root, ARTIFACTS), ARTIFACTS, found)
    return sorted(found)


def _regular_files(folder: str, relative: str, found: list[str]) -> None:
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
    except OSError:  # missing, not a folder, or unreadable: nothing listed, as by `rglob`
        return
    for entry in entries:
        name = f"{relative}/{entry.name}"
        try:
            if entry.is_dir(follow_symlinks=False):
                _regular_files(entry.path, name, found)
            elif entry.is_file(follow_symlinks=False):
                found.append(name)
        except OSError:
            continue


def collect_subjects(
    root: Path, input_relative: str, *, sha256: Callable[[Path], str] = file_sha256
) -> list[dict[str, Any]]:
    """The statement's subjects: the deliverables, the input and the index, as on disk.
    `sha256` hashes a file (the run passes one that remembers, as its manifest hashes the
    same files)."""
    names = [*deliverable_files(root), input_relative, Workspace.EVIDENCE_INDEX]
    paths = ((name, root / name) for name in sorted(dict.fromkeys(names)))
    return [
        {"name": name, "digest": {"sha256": sha256(path)}} for name, path in paths if path.is_file()
    ]


@dataclass(frozen=True)
class RunVerdict:
    """What the predicate says of a run, gathered by the run as it ends."""

    run_id: str
    status: str
    error_message: str | None
    plugin: str
    model: str
    contracts: Sequence[ArtifactContract]
    validators: Sequence[str]
    findings: Sequence[Finding]
    artifacts: Mapping[str, str]
    quotes: int
    id_citations: int
    failed_citations: int
    rows_cited: int
    source_lock: Mapping[str, Any] | None
    evidence_index_sha256: str | None
    created_at: str
    finished_at: str | None

    def predicate(self, signer: Mapping[str, str]) -> dict[str, Any]:
        not_covered = sum(
            int(finding.details.get("count", 0))
            for finding in self.findings
            if finding.code == "rows_not_covered"
        )
        return {
            "run_id": self.run_id,
            "status": self.status,
            "error_message": self.error_message,
            "plugin": {"name": self.plugin, "version": plugin_version(self.plugin)},
            "runlens": {"version": runlens_version()},
            "model": self.model,
            "contracts": {"sha256": contracts_digest(self.contracts)},
            "validators": list(self.validators),
            "findings": [finding.model_dump(mode="json") for finding in self.findings],
            "artifacts": dict(self.artifacts),
            "coverage": {"rows_cited": self.rows_cited, "rows_not_covered": not_covered},
            "citations": {
                "quotes": self.quotes,
                "ids": self.id_citations,
                "failed": self.failed_citations,
            },
            "source_lock": dict(self.source_lock) if self.source_lock is not None else None,
            "evidence_index_sha256": self.evidence_index_sha256,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "reviews": [],
            "reviewers": {},
            "review_state": "unreviewed",
            "signer": dict(signer),
        }


def build_statement(subjects: list[dict[str, Any]], predicate: dict[str, Any]) -> dict[str, Any]:
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    }


def write_verdict(
    root: Path,
    verdict: RunVerdict,
    input_relative: str,
    key: SigningKey,
    *,
    redact: Callable[[str], str] | None = None,
    sha256: Callable[[Path], str] = file_sha256,
) -> Path:
    """Sign the statement of `verdict` over the workspace at `root` as it is now; write its
    envelope to `runtime/verdict.dsse.json` and return that path. `redact` blanks known
    secrets out of the statement before it is signed, as out of every record; `sha256`
    hashes each subject (`collect_subjects`)."""
    subjects = collect_subjects(root, input_relative, sha256=sha256)
    payload = canonical_json(build_statement(subjects, verdict.predicate(key.signer())))
    if redact is not None:
        payload = redact(payload.decode("utf-8")).encode("utf-8")
    envelope = sign_envelope(payload, key)
    target = root / VERDICT_PATH
    write_atomic(target, envelope_json(envelope))
    return target


def resign_with_reviews(
    root: Path,
    entries: Sequence[Any],
    reviewers: Mapping[str, str],
    state: str,
    key: SigningKey,
    trusted: Mapping[str, Ed25519PublicKey],
) -> bool:
    """Re-sign the verdict of the workspace at `root` with `reviews` = each of `entries`
    (`ReviewEntry`) as JSON, `reviewers` = name -> {keyid, public_key} from `reviewers`
    (name -> public key PEM) and `review_state` = `state`, signed by `key`; the subjects and
    the rest of the predicate as they were. Only a statement whose envelope verifies with
    `trusted` (key id -> key) is re-signed: False, and nothing written, otherwise (a verdict
    nobody here can vouch for is not signed again)."""
    try:
        envelope = read_envelope(root)
        if envelope is None:
            return False
        open_envelope(envelope, trusted)
        statement = decode_statement(envelope)
    except VerdictError:
        return False
    predicate = statement["predicate"]
    predicate["reviews"] = [entry.as_json() for entry in entries]
    predicate["reviewers"] = {
        name: {"keyid": key_id(_public_key(pem, name)), "public_key": pem}
        for name, pem in sorted(reviewers.items())
    }
    predicate["review_state"] = state
    predicate["signer"] = key.signer()
    # Not redacted again (the run redacted what it signed): a review's text is signed by its
    # reviewer as written, and `runlens verify` compares it with the ledger's line.
    signed = sign_envelope(canonical_json(statement), key)
    write_atomic(root / VERDICT_PATH, envelope_json(signed))
    return True


def _public_key(pem: str, name: str) -> Ed25519PublicKey:
    try:
        public = serialization.load_pem_public_key(pem.encode("ascii"))
    except (ValueError, UnicodeEncodeError, UnsupportedAlgorithm) as error:
        raise VerdictError(f"reviewer {name}'s public key is not a PEM public key") from error
    if not isinstance(public, Ed25519PublicKey):
        raise VerdictError(f"reviewer {name}'s public key is not an Ed25519 key")
    return public


def read_envelope(workspace: Path) -> dict[str, Any] | None:
    """The envelope of `workspace`'s verdict; None when there is none; `VerdictError` when
    the file is not a JSON object."""
    path = workspace / VERDICT_PATH
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise VerdictError(f"{VERDICT_PATH} cannot be read: {error.strerror or error}") from error
    try:
        envelope = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise VerdictError(f"malformed envelope: {VERDICT_PATH} is not JSON ({error})") from error
    if not isinstance(envelope, dict):
        raise VerdictError(f"malformed envelope: {VERDICT_PATH} holds no JSON object")
    return envelope


def decode_statement(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """The in-toto Statement an envelope carries, without checking its signature;
    `VerdictError` when it carries none."""
    _, payload, _ = envelope_payload(dict(envelope))
    try:
        statement = json.loads(payload)
    except (ValueError, UnicodeDecodeError, binascii.Error) as error:
        raise VerdictError(f"malformed statement: the payload is not JSON ({error})") from error
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        raise VerdictError(f"malformed statement: not an in-toto Statement ({STATEMENT_TYPE})")
    if statement.get("predicateType") != PREDICATE_TYPE:
        raise VerdictError(
            f"malformed statement: predicateType {statement.get('predicateType')!r}, not "
            f"{PREDICATE_TYPE}"
        )
    if not isinstance(statement.get("predicate"), dict) or not isinstance(
        statement.get("subject"), list
    ):
        raise VerdictError("malformed statement: subject must be a list, predicate an object")
    return statement


def subject_digests(statement: Mapping[str, Any]) -> dict[str, str]:
    """Subject name -> its SHA-256, as the statement says (malformed entries left out)."""
    digests: dict[str, str] = {}
    for subject in statement.get("subject") or ():
        if not isinstance(subject, dict):
            continue
        name, digest = subject.get("name"), subject.get("digest")
        if isinstance(name, str) and isinstance(digest, dict):
            value = digest.get("sha256")
            if isinstance(value, str):
                digests[name] = value
    return digests


@functools.cache
def plugin_version(name: str) -> str | None:
    """The version of the distribution that registers plugin `name`, when one does (read
    once per process, as the plugin itself is loaded once)."""
    from runlens._entry_points import group_entry_points

    for entry in group_entry_points("runlens.plugins"):
        if entry.name == name and entry.dist is not None:
            return str(entry.dist.version)
    return None


@functools.cache
def runlens_version() -> str:
    try:
        return version("runlens")
    except PackageNotFoundError:
        return "0"


__all__ = [
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "VERDICT_PATH",
    "RunVerdict",
    "canonical_json",
    "collect_subjects",
    "contracts_digest",
    "decode_statement",
    "deliverable_files",
    "read_envelope",
    "resign_with_reviews",
    "subject_digests",
    "write_verdict",
]
