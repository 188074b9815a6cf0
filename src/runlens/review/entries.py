"""One signed review: a decision on a run or a deliverable, or a mark on one citation
(SPEC section 17).

Each is a DSSE envelope, signed by the reviewer's Ed25519 key, written as one line of
`runtime/reviews.jsonl` (compact JSON, sorted keys). Its payload, canonical JSON:

    {"_type": REVIEW_TYPE, "run_id", "seq": 1, 2, ..., "previous": sha256 of the previous
     line (null for seq 1), "kind": "decision" | "mark", "reviewer": {"name", "keyid"},
     "created_at", "note", "subjects": {workspace-relative name: sha256},
     decision: "decision", "artifact" (null: the whole run)
     mark:     "mark", "artifact", "location", "row_id", "quote", "correction"}

`subjects` binds the review to the bytes it judged: every deliverable for a run decision,
the one deliverable for an artifact decision or a mark. `seq` and `previous` chain the lines:
a line removed, inserted or moved breaks the chain. Everything a reviewer wrote (note, quote,
correction) is untrusted text: it is checked for type and size here, escaped where shown.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any, Final

from runlens.errors import UserError
from runlens.verdict.dsse import VerdictError, envelope_payload, sign_envelope
from runlens.verdict.keys import SigningKey
from runlens.verdict.statement import canonical_json

#: A Markdown claim's location (`line 12`).
_LINE: Final = re.compile(r"line \d+")
#: A JSON citation's field at the end of its location (`.evidence_text`, `.ids[2]`).
_FIELD_AT_END: Final = re.compile(r"^(?P<item>.+)\.[^.\[\]]+(?:\[\d+\])*$")

REVIEWS_PATH: Final = "runtime/reviews.jsonl"
REVIEW_PAYLOAD_TYPE: Final = "application/vnd.runlens.review+json"
REVIEW_TYPE: Final = "https://runlens.dev/review/v1"
DECISIONS: Final = ("approve", "request-changes", "reject")
MARKS: Final = ("correct", "wrong", "unsure")
REVIEW_STATES: Final = ("unreviewed", "approved", "changes-requested", "rejected")
KINDS: Final = ("decision", "mark")
#: Where a deliverable's files lie, workspace-relative.
ARTIFACTS_PREFIX: Final = "artifacts/"

#: Longest note, quote, location or correction value a review may hold (characters).
MAX_NOTE: Final = 20_000
MAX_FIELD: Final = 2_000
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


class ReviewError(UserError):
    """A review that cannot be made or read; the message names the file, line and field."""


def check_reviewer_name(name: object) -> str:
    """`name` when it can name a reviewer (1 to 64 letters, digits, '.', '_' or '-', starting
    with a letter or digit: it names key files too); `ReviewError` else."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name.endswith(".pub"):
        raise ReviewError(
            f"reviewer name {name!r}: use 1 to 64 letters, digits, '.', '_' or '-', starting "
            "with a letter or digit (and not ending in '.pub')"
        )
    return name


def artifact_subject(artifact: str) -> str:
    """The workspace-relative name of deliverable `artifact` (a contract name, which may
    already start with `artifacts/`)."""
    return artifact if artifact.startswith(ARTIFACTS_PREFIX) else ARTIFACTS_PREFIX + artifact


@dataclass(frozen=True)
class ReviewEntry:
    """One line of the ledger, parsed (its signature is checked by `ledger_problems`)."""

    seq: int
    previous: str | None
    kind: str
    run_id: str
    reviewer: str
    keyid: str
    created_at: str
    note: str
    subjects: Mapping[str, str]
    decision: str | None
    mark: str | None
    artifact: str | None
    location: str | None
    row_id: str | None
    quote: str | None
    correction: Mapping[str, str] | None
    #: The signed line as written (no newline) and its SHA-256.
    line: str
    digest: str
    envelope: Mapping[str, Any]

    def payload(self) -> dict[str, Any]:
        """The signed payload, as a value."""
        document: dict[str, Any] = {
            "_type": REVIEW_TYPE,
            "run_id": self.run_id,
            "seq": self.seq,
            "previous": self.previous,
            "kind": self.kind,
            "reviewer": {"name": self.reviewer, "keyid": self.keyid},
            "created_at": self.created_at,
            "note": self.note,
            "subjects": dict(self.subjects),
            "artifact": self.artifact,
        }
        if self.kind == "decision":
            document["decision"] = self.decision
        else:
            document.update(
                mark=self.mark,
                location=self.location,
                row_id=self.row_id,
                quote=self.quote,
                correction=dict(self.correction) if self.correction is not None else None,
            )
        return document

    def as_json(self) -> dict[str, Any]:
        """The payload's fields and the line's `digest` (what the verdict statement lists)."""
        return {**self.payload(), "digest": self.digest}

    @property
    def subject_names(self) -> tuple[str, ...]:
        return tuple(sorted(self.subjects))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def decision_payload(
    *,
    run_id: str,
    seq: int,
    previous: str | None,
    reviewer: str,
    keyid: str,
    decision: str,
    note: str,
    artifact: str | None,
    subjects: Mapping[str, str],
    created_at: str | None = None,
) -> dict[str, Any]:
    """The payload of a decision; `ReviewError` naming the field that cannot be used."""
    payload = {
        "_type": REVIEW_TYPE,
        "run_id": run_id,
        "seq": seq,
        "previous": previous,
        "kind": "decision",
        "reviewer": {"name": reviewer, "keyid": keyid},
        "created_at": created_at or _now(),
        "note": note,
        "subjects": dict(subjects),
        "decision": decision,
        "artifact": artifact,
    }
    _fields(payload, "review")
    return payload


def mark_payload(
    *,
    run_id: str,
    seq: int,
    previous: str | None,
    reviewer: str,
    keyid: str,
    mark: str,
    note: str,
    artifact: str,
    location: str,
    row_id: str,
    quote: str | None = None,
    correction: Mapping[str, str] | None = None,
    subjects: Mapping[str, str],
    created_at: str | None = None,
) -> dict[str, Any]:
    """The payload of a mark; `ReviewError` naming the field that cannot be used."""
    payload = {
        "_type": REVIEW_TYPE,
        "run_id": run_id,
        "seq": seq,
        "previous": previous,
        "kind": "mark",
        "reviewer": {"name": reviewer, "keyid": keyid},
        "created_at": created_at or _now(),
        "note": note,
        "subjects": dict(subjects),
        "mark": mark,
        "artifact": artifact,
        "location": location,
        "row_id": row_id,
        "quote": quote,
        "correction": dict(correction) if correction is not None else None,
    }
    _fields(payload, "review")
    return payload


def compact_line(envelope: Mapping[str, Any]) -> str:
    """An envelope as one ledger line: compact JSON, sorted keys, ASCII only."""
    return json.dumps(envelope, sort_keys=True, separators=(",", ":"))


def sign_entry(payload: Mapping[str, Any], key: SigningKey) -> ReviewEntry:
    """`payload` signed by the reviewer's `key`, as the line to append."""
    if payload.get("reviewer", {}).get("keyid") != key.keyid:
        raise ReviewError(
            f"review: the payload names key {payload.get('reviewer', {}).get('keyid')!r}, "
            f"but is signed with key {key.keyid}"
        )
    envelope = sign_envelope(canonical_json(dict(payload)), key, REVIEW_PAYLOAD_TYPE)
    line = compact_line(envelope)
    return _entry(dict(payload), line, envelope, "review")


def parse_line(line: str, *, number: int, source: str = REVIEWS_PATH) -> ReviewEntry:
    """The review on line `number` of `source` (its signature unchecked); `ReviewError`
    naming the file and line when it is no review."""
    where = f"{source} line {number}"
    try:
        envelope = json.loads(line)
    except ValueError as error:
        raise ReviewError(f"{where}: not JSON ({error})") from error
    try:
        payload_type, raw, _ = envelope_payload(envelope)
    except VerdictError as error:
        raise ReviewError(f"{where}: {error.reason}") from error
    if payload_type != REVIEW_PAYLOAD_TYPE:
        raise ReviewError(f"{where}: payloadType {payload_type!r}, not {REVIEW_PAYLOAD_TYPE}")
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise ReviewError(f"{where}: the payload is not JSON ({error})") from error
    if not isinstance(payload, dict):
        raise ReviewError(f"{where}: the payload is not a JSON object")
    return _entry(payload, line, envelope, where)


def _entry(
    payload: dict[str, Any], line: str, envelope: Mapping[str, Any], where: str
) -> ReviewEntry:
    _fields(payload, where)
    reviewer = payload["reviewer"]
    correction = payload.get("correction")
    return ReviewEntry(
        seq=payload["seq"],
        previous=payload["previous"],
        kind=payload["kind"],
        run_id=payload["run_id"],
        reviewer=reviewer["name"],
        keyid=reviewer["keyid"],
        created_at=payload["created_at"],
        note=payload["note"],
        subjects=dict(payload["subjects"]),
        decision=payload.get("decision"),
        mark=payload.get("mark"),
        artifact=payload.get("artifact"),
        location=payload.get("location"),
        row_id=payload.get("row_id"),
        quote=payload.get("quote"),
        correction=dict(correction) if isinstance(correction, dict) else None,
        line=line,
        digest=hashlib.sha256(line.encode("utf-8")).hexdigest(),
        envelope=dict(envelope),
    )


_DECISION_KEYS = frozenset(
    {"_type", "run_id", "seq", "previous", "kind", "reviewer", "created_at", "note", "subjects"}
)
_KEYS = {
    "decision": _DECISION_KEYS | {"decision", "artifact"},
    "mark": _DECISION_KEYS | {"mark", "artifact", "location", "row_id", "quote", "correction"},
}


def _fields(payload: Mapping[str, Any], where: str) -> None:
    """`ReviewError` naming the first field of `payload` that a review cannot hold."""

    def bad(field: str, why: str) -> ReviewError:
        return ReviewError(f"{where}: {field} {why}")

    if payload.get("_type") != REVIEW_TYPE:
        raise bad("_type", f"is {payload.get('_type')!r}, not {REVIEW_TYPE}")
    kind = payload.get("kind")
    if kind not in KINDS:
        raise bad("kind", f"is {kind!r}, not one of {', '.join(KINDS)}")
    extra = sorted(set(payload) - _KEYS[kind])
    missing = sorted(_KEYS[kind] - set(payload))
    if extra or missing:
        raise bad("fields", f"differ from a {kind}'s: extra {extra}, missing {missing}")
    _text(payload["run_id"], "run_id", where, limit=200)
    seq = payload["seq"]
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise bad("seq", f"must be a whole number from 1, not {seq!r}")
    previous = payload["previous"]
    if seq == 1 and previous is not None:
        raise bad("previous", "must be null on the first line (seq 1)")
    if seq > 1 and not (isinstance(previous, str) and _HEX64.fullmatch(previous)):
        raise bad("previous", f"must be the previous line's sha256 (hex), not {previous!r}")
    reviewer = payload["reviewer"]
    if not isinstance(reviewer, dict) or set(reviewer) != {"name", "keyid"}:
        raise bad("reviewer", "must be {name, keyid}")
    try:
        check_reviewer_name(reviewer["name"])
    except ReviewError as error:
        raise bad("reviewer.name", str(error)) from None
    if not isinstance(reviewer["keyid"], str) or not _HEX64.fullmatch(reviewer["keyid"]):
        raise bad("reviewer.keyid", "must be a key id (64 hex digits)")
    created = payload["created_at"]
    _text(created, "created_at", where, limit=64)
    try:
        datetime.fromisoformat(created)
    except ValueError:
        raise bad("created_at", f"is not an ISO-8601 time: {created!r}") from None
    _text(payload["note"], "note", where, limit=MAX_NOTE, empty=True)
    _subjects(payload["subjects"], where)
    artifact = payload["artifact"]
    if kind == "decision":
        decision = payload["decision"]
        if decision not in DECISIONS:
            raise bad("decision", f"is {decision!r}, not one of {', '.join(DECISIONS)}")
        if artifact is not None:
            _text(artifact, "artifact", where, limit=MAX_FIELD)
        return
    if payload["mark"] not in MARKS:
        raise bad("mark", f"is {payload['mark']!r}, not one of {', '.join(MARKS)}")
    _text(artifact, "artifact", where, limit=MAX_FIELD)
    _text(payload["location"], "location", where, limit=MAX_FIELD)
    _text(payload["row_id"], "row_id", where, limit=MAX_FIELD)
    if payload["quote"] is not None:
        _text(payload["quote"], "quote", where, limit=MAX_NOTE, empty=True)
    correction = payload["correction"]
    if correction is not None:
        if not isinstance(correction, dict) or not correction:
            raise bad("correction", "must be null or an object of name: value")
        for name, value in correction.items():
            _text(name, "correction name", where, limit=64)
            _text(value, f"correction {name!r}", where, limit=MAX_FIELD)


def _text(value: Any, field: str, where: str, *, limit: int, empty: bool = False) -> None:
    if not isinstance(value, str):
        raise ReviewError(f"{where}: {field} must be a string, not {type(value).__name__}")
    if not empty and not value.strip():
        raise ReviewError(f"{where}: {field} is empty")
    if len(value) > limit:
        raise ReviewError(f"{where}: {field} is longer than {limit} characters")
    if "\x00" in value:
        raise ReviewError(f"{where}: {field} holds a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ReviewError(
            f"{where}: {field} holds a lone surrogate at character {error.start}: not text"
        ) from None


def _inside_artifacts(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return (
        name.startswith(ARTIFACTS_PREFIX)
        and len(parts) > 1
        and not any(part in ("..", ".") for part in parts)
        and "\\" not in name
    )


def _subjects(subjects: Any, where: str) -> None:
    if not isinstance(subjects, dict) or not subjects:
        raise ReviewError(f"{where}: subjects must name at least one file and its sha256")
    for name, digest in subjects.items():
        if not isinstance(name, str) or not _inside_artifacts(name):
            raise ReviewError(f"{where}: subject {name!r} is not a file under artifacts/")
        if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
            raise ReviewError(f"{where}: subject {name}'s sha256 is not 64 hex digits")


def claim_location(location: str) -> str:
    """The claim a citation at `location` belongs to, as `runlens drift` names claims and as
    a mark records it: `line N` of a Markdown deliverable is itself; a JSON field gives the
    item holding it (`items[3].evidence_text` and `items[0].ids[2]` give `items[3]`,
    `items[0]`); a field of the document itself gives `$`."""
    text = location.strip()
    if _LINE.fullmatch(text):
        return text
    match = _FIELD_AT_END.match(text)
    if match:
        return match.group("item")
    if "." not in text and "[" not in text:
        return "$"
    return text


__all__ = [
    "ARTIFACTS_PREFIX",
    "DECISIONS",
    "MARKS",
    "REVIEWS_PATH",
    "REVIEW_PAYLOAD_TYPE",
    "REVIEW_STATES",
    "REVIEW_TYPE",
    "ReviewEntry",
    "ReviewError",
    "artifact_subject",
    "check_reviewer_name",
    "claim_location",
    "compact_line",
    "decision_payload",
    "mark_payload",
    "parse_line",
    "sign_entry",
]
