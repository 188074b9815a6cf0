"""A run's review ledger, `runtime/reviews.jsonl`: one signed review per line, chained.

Line N has `seq` N and names the SHA-256 of line N-1 as `previous`, so a line removed,
inserted or moved breaks the chain where it happened, and a line whose payload was changed
no longer matches its signature. `ledger_problems` names each such line; reading the ledger
checks only its form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from runlens.digests import path_sha256
from runlens.review.entries import (
    REVIEW_PAYLOAD_TYPE,
    REVIEWS_PATH,
    ReviewEntry,
    ReviewError,
    parse_line,
)
from runlens.verdict.dsse import VerdictError, open_envelope
from runlens.verdict.statement import deliverable_files


def read_ledger(workspace: Path) -> list[ReviewEntry]:
    """The reviews of the run in `workspace`, in file order; [] when it has none.
    `ReviewError` naming the line that is no review."""
    path = Path(workspace) / REVIEWS_PATH
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as error:
        raise ReviewError(f"{REVIEWS_PATH} cannot be read: {error.strerror or error}") from error
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReviewError(f"{REVIEWS_PATH} is not UTF-8 (byte {error.start})") from error
    return parse_ledger(text)


def parse_ledger(text: str, source: str = REVIEWS_PATH) -> list[ReviewEntry]:
    """The reviews in `text`, one per line (a blank line is an error: nothing writes one)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    entries = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise ReviewError(f"{source} line {number}: empty line")
        entries.append(parse_line(line.rstrip("\r"), number=number, source=source))
    return entries


def ledger_text(entries: Sequence[ReviewEntry]) -> str:
    """The ledger's file text: each entry's line and a newline."""
    return "".join(entry.line + "\n" for entry in entries)


def next_link(entries: Sequence[ReviewEntry]) -> tuple[int, str | None]:
    """The `seq` and `previous` of a line appended after `entries`."""
    if not entries:
        return 1, None
    last = entries[-1]
    return last.seq + 1, last.digest


def ledger_problems(
    entries: Sequence[ReviewEntry],
    *,
    run_id: str,
    keys: Mapping[str, Ed25519PublicKey],
    names: Mapping[str, str],
) -> list[str]:
    """What is wrong with `entries` as the ledger of run `run_id`, one line each, naming
    the ledger's line: a signature that does not hold or no key for it (`keys`: key id ->
    public key), a reviewer name that is not the key's (`names`: key id -> name), a line
    out of the chain (forged, removed or re-ordered), another run's line."""
    problems = []
    previous: str | None = None
    for number, entry in enumerate(entries, start=1):
        where = f"line {number} ({entry.kind} by {entry.reviewer})"
        if entry.run_id != run_id:
            problems.append(f"{where}: a review of run {entry.run_id}, not of run {run_id}")
        try:
            _, signed_by = open_envelope(entry.envelope, keys, REVIEW_PAYLOAD_TYPE)
        except VerdictError as error:
            problems.append(f"{where}: {error.reason}")
        else:
            if signed_by != entry.keyid:
                problems.append(f"{where}: signed by key {signed_by}, but names key {entry.keyid}")
            elif names.get(signed_by) != entry.reviewer:
                problems.append(
                    f"{where}: signed by the key of reviewer {names.get(signed_by)!r}, but "
                    f"names reviewer {entry.reviewer!r}"
                )
        if entry.seq != number:
            problems.append(
                f"{where}: seq {entry.seq} where {number} belongs (a line forged, removed or "
                "re-ordered)"
            )
        elif entry.previous != previous:
            problems.append(
                f"{where}: its previous is not line {number - 1}'s sha256 (a line forged, "
                "removed or re-ordered)"
            )
        previous = entry.digest
    return problems


def current_digests(workspace: Path) -> dict[str, str]:
    """SHA-256 of every deliverable file (everything under `artifacts/`) as it is now (each
    file hashed once per version of it: `runlens.digests`, as the pages show it)."""
    root = Path(workspace)
    return {name: path_sha256(root / name) for name in deliverable_files(root)}


__all__ = [
    "current_digests",
    "ledger_problems",
    "ledger_text",
    "next_link",
    "parse_ledger",
    "read_ledger",
]
