"""The checks `runlens verify` reports, shared by its two targets: a run's workspace
(`verify.py`) and an exported HTML file (`exported.py`).

`Check` is one named outcome with a detail that names what differs; `VerifyReport` holds
them in order. The rest is what both targets check the same way: that the statement names
the key whose signature holds as its signer, and the review ledger (SPEC section 17), whose
lines both read from somewhere else (`runtime/reviews.jsonl`, the export's `reviews`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Differences listed in one check's detail before "and N more".
SHOWN = 10


@dataclass(frozen=True)
class Check:
    check: str
    ok: bool
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {"check": self.check, "ok": self.ok, "detail": self.detail}


@dataclass
class VerifyReport:
    verified: bool
    checks: list[Check] = field(default_factory=list)
    run_id: str | None = None
    workspace: Path | None = None

    def as_json(self) -> dict[str, Any]:
        return {"verified": self.verified, "checks": [check.as_json() for check in self.checks]}

    @property
    def failed(self) -> list[Check]:
        return [check for check in self.checks if not check.ok]


def listed(items: Sequence[str]) -> str:
    """The first `SHOWN` of `items`, comma-separated, and how many more there are."""
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def named_signer(signature: Check, signed_by: str | None, predicate: Mapping[str, Any]) -> Check:
    """A good signature by another key than the one the statement names as its signer
    fails: the statement would say the wrong key vouched for it."""
    signer = predicate.get("signer")
    named = signer.get("keyid") if isinstance(signer, dict) else None
    if signed_by is None or named == signed_by:
        return signature
    return Check(
        "signature",
        False,
        f"{signature.detail}, but the statement names signer {named or '(none)'}",
    )


def reviews_check(
    entries: Sequence[Any],
    predicate: Mapping[str, Any],
    *,
    run_id: str,
    home: Path | None,
    current: Mapping[str, str],
    later_note: str,
) -> Check:
    """The `reviews` check of the ledger `entries` (`ReviewEntry`) of run `run_id`: every
    line signed by its reviewer's key (the keys the signed statement lists, and the home's
    reviewers'), the chain of lines intact, the statement's reviews the ledger's first lines
    in order, and every line bound to the deliverables' hashes `current`. Lines after the
    signed ones pass when signed and chained (a review recorded where the verdict could not
    be re-signed); the detail says so, with `later_note` (where they are)."""
    signed = predicate.get("reviews")
    if not isinstance(signed, list):
        return Check("reviews", False, "the predicate's reviews is not a list")
    if not entries and not signed:
        return Check("reviews", True, "no reviews")
    keys, names, problems = reviewer_keys(predicate, home)
    problems += review_problems(
        entries, signed, run_id=run_id, keys=keys, names=names, current=current
    )
    if problems:
        more = f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
        return Check("reviews", False, "; ".join(problems[:SHOWN]) + more)
    detail = f"{len(entries)} review(s), signed, chained and bound to the current hashes"
    later = len(entries) - len(signed)
    if later > 0:
        detail += f"; {later} recorded after the statement was last signed ({later_note})"
    return Check("reviews", True, detail)


def review_problems(
    entries: Sequence[Any],
    signed: Sequence[Any],
    *,
    run_id: str,
    keys: Mapping[str, Any],
    names: Mapping[str, str],
    current: Mapping[str, str],
) -> list[str]:
    """What is wrong with the ledger `entries` (`ReviewEntry`) of run `run_id`, whose signed
    statement lists the reviews `signed`, against the deliverables' hashes `current`: each
    line's signature (`keys`, `names`: key id -> key, reviewer name) and place in the chain,
    the signed reviews as the ledger's first lines, and every line's subjects as they are."""
    from runlens.review.entries import REVIEWS_PATH
    from runlens.review.ledger import ledger_problems

    problems = ledger_problems(entries, run_id=run_id, keys=keys, names=names)
    problems += _signed_prefix(signed, entries)
    for number, entry in enumerate(entries, start=1):
        for name, expected in sorted(entry.subjects.items()):
            actual = current.get(name)
            if actual != expected:
                now = f"actual {actual}" if actual else "the file is missing"
                problems.append(
                    f"{REVIEWS_PATH} line {number} ({entry.kind} by {entry.reviewer}) is bound "
                    f"to {name} sha256 {expected}, {now}"
                )
    return problems


def reviewer_keys(
    predicate: Mapping[str, Any], home: Path | None
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """Key id -> public key and key id -> reviewer name, from the statement's `reviewers`
    and the home's reviewer keys (the statement's name wins), and what is wrong with the
    statement's list."""
    from runlens.review.reviewers import home_reviewer_keys
    from runlens.verdict.keys import key_id

    keys: dict[str, Any] = {}
    names: dict[str, str] = {}
    problems: list[str] = []
    for keyid, (name, public) in home_reviewer_keys(home).items():
        keys[keyid], names[keyid] = public, name
    declared = predicate.get("reviewers") or {}
    if not isinstance(declared, dict):
        return keys, names, ["the predicate's reviewers is not an object"]
    for name, entry in sorted(declared.items()):
        pem = entry.get("public_key") if isinstance(entry, dict) else None
        public = _pem_key(pem)
        if public is None:
            problems.append(f"the statement's reviewer {name!r} has no Ed25519 public key")
            continue
        keyid = key_id(public)
        if entry.get("keyid") != keyid:
            problems.append(
                f"the statement's reviewer {name!r} names key id {entry.get('keyid')}, its "
                f"public key has key id {keyid}"
            )
            continue
        keys[keyid], names[keyid] = public, str(name)
    return keys, names, problems


def _pem_key(pem: Any) -> Any:
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if not isinstance(pem, str):
        return None
    try:
        public = serialization.load_pem_public_key(pem.encode("ascii"))
    except (ValueError, UnicodeEncodeError, UnsupportedAlgorithm):
        return None
    return public if isinstance(public, Ed25519PublicKey) else None


def _signed_prefix(signed: Sequence[Any], entries: Sequence[Any]) -> list[str]:
    """The statement's reviews must be the ledger's first lines, in order, as written."""
    from runlens.review.entries import REVIEWS_PATH

    if len(signed) > len(entries):
        return [
            f"the statement signs {len(signed)} review(s), {REVIEWS_PATH} holds "
            f"{len(entries)}: line(s) removed"
        ]
    for number, (review, entry) in enumerate(zip(signed, entries, strict=False), start=1):
        digest = review.get("digest") if isinstance(review, dict) else None
        if digest != entry.digest:
            return [
                f"{REVIEWS_PATH} line {number} is not the review the statement signs as "
                f"review {number} (sha256 {entry.digest}, signed {digest}): a line forged, "
                "removed or re-ordered"
            ]
        if review != entry.as_json():
            return [f"the statement's review {number} is not what line {number} says"]
    return []


__all__ = [
    "SHOWN",
    "Check",
    "VerifyReport",
    "listed",
    "named_signer",
    "review_problems",
    "reviewer_keys",
    "reviews_check",
]
