"""Reviewers' keys: `$RUNLENS_HOME/reviewers/NAME.pem` (private, 0600) and `NAME.pub.pem`.

Every decision and mark is signed with its reviewer's key; the UI knows a reviewer by a
token, of which only the SHA-256 is kept (the store holds names, key ids and token digests;
this module holds the keys). A reviewer's name is a file name here, so it is checked before
it touches a path.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from runlens.errors import UserError
from runlens.records.io import runs_home
from runlens.review.entries import check_reviewer_name
from runlens.verdict.keys import (
    PRIVATE_SUFFIX,
    PUBLIC_SUFFIX,
    SigningKey,
    SigningKeyError,
    key_id,
    load_private_key,
    load_public_key,
    write_key_pair,
)

REVIEWERS_FOLDER: Final = "reviewers"


def reviewers_folder(home: Path | None = None) -> Path:
    return runs_home(home) / REVIEWERS_FOLDER


def reviewer_private_path(name: str, home: Path | None = None) -> Path:
    return reviewers_folder(home) / f"{check_reviewer_name(name)}{PRIVATE_SUFFIX}"


def reviewer_public_path(name: str, home: Path | None = None) -> Path:
    return reviewers_folder(home) / f"{check_reviewer_name(name)}{PUBLIC_SUFFIX}"


def new_reviewer_key(name: str, home: Path | None) -> SigningKey:
    """A new key pair for reviewer NAME; `UserError` when NAME already has one here."""
    private = reviewer_private_path(name, home)
    if private.exists():
        raise UserError(f"reviewer {name} already has a key ({private}): a key is never replaced")
    try:
        return write_key_pair(private, reviewer_public_path(name, home), name, "reviewer")
    except SigningKeyError as error:
        raise UserError(f"reviewer {name}: {error}") from error


def reviewer_key(name: str, home: Path | None) -> SigningKey:
    """Reviewer NAME's signing key; `UserError` when this home holds none."""
    private = reviewer_private_path(name, home)
    if not private.is_file():
        raise UserError(
            f"no key for reviewer {name} in {private.parent} (runlens reviewers add {name})"
        )
    return load_private_key(private, name, "reviewer")


def new_token() -> str:
    """A UI token: shown once, kept only as its digest."""
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def home_reviewer_keys(home: Path | None) -> dict[str, tuple[str, Ed25519PublicKey]]:
    """Key id -> (reviewer name, public key) for every reviewer key of the home (a file that
    is no key, or is not named as a reviewer can be, is left out)."""
    found: dict[str, tuple[str, Ed25519PublicKey]] = {}
    folder = reviewers_folder(home)
    for path in sorted(folder.glob(f"*{PUBLIC_SUFFIX}")):
        name = path.name.removesuffix(PUBLIC_SUFFIX)
        with contextlib.suppress(UserError):
            check_reviewer_name(name)
            public = load_public_key(path)
            found[key_id(public)] = (name, public)
    return found


def local_reviewers(home: Path | None) -> list[str]:
    """Names of the reviewers whose private key this home holds, sorted."""
    folder = reviewers_folder(home)
    names = []
    for path in sorted(folder.glob(f"*{PRIVATE_SUFFIX}")):
        if path.name.endswith(PUBLIC_SUFFIX):
            continue
        name = path.name.removesuffix(PRIVATE_SUFFIX)
        with contextlib.suppress(UserError):
            names.append(check_reviewer_name(name))
    return names


__all__ = [
    "REVIEWERS_FOLDER",
    "check_reviewer_name",
    "home_reviewer_keys",
    "local_reviewers",
    "new_reviewer_key",
    "new_token",
    "reviewer_key",
    "reviewer_private_path",
    "reviewer_public_path",
    "reviewers_folder",
    "token_digest",
]
