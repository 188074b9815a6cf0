"""Property tests of the review ledger: any valid ledger (any reviewers, notes of any Unicode,
HTML, Markdown and newlines) round-trips through its file text and verifies; any single-line
mutation of it (a payload forged, a line removed, duplicated, swapped or replaced, a signature
flipped, a line re-signed by a stranger or another reviewer) is caught."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.review.conftest import SignedRun, decision, digest, mark

from runlens.plugins import ReviewPolicy
from runlens.review.entries import (
    MARKS,
    REVIEW_PAYLOAD_TYPE,
    ReviewEntry,
    ReviewError,
    compact_line,
    parse_line,
)
from runlens.review.ledger import ledger_text, parse_ledger
from runlens.review.state import review_state
from runlens.verdict.dsse import sign_envelope
from runlens.verdict.keys import SigningKey, key_id
from runlens.verdict.verify import review_problems

RUN = "run_20261205T000000Z_abcdef"
CURRENT = {
    "artifacts/insight_report.md": digest("report"),
    "artifacts/product_backlog.json": digest("backlog"),
    "artifacts/feedback_analysis.json": digest("analysis"),
}
_KEYS: dict[str, SigningKey] = {}


def key_of(name: str) -> SigningKey:
    """Reviewer NAME's key, made once per test session (in memory: no home needed)."""
    if name not in _KEYS:
        private = Ed25519PrivateKey.generate()
        _KEYS[name] = SigningKey(private, key_id(private.public_key()), name, "test")
    return _KEYS[name]


_HOSTILE = (
    "<script>alert('x')</script>", "<img src=x onerror=alert(1)>", "[l](javascript:x)",
    "**bold** _it_", "line one\nline two\r\n", "}{\"\\", "&amp; &lt;", "\u202e RTL",
    "👨\u200d👩\u200d👧", "中文 备注", "\t", "", "-->", "' OR 1=1 --",
)  # fmt: skip
#: Any Unicode text but NUL and lone surrogates (which no UTF-8 file can hold: refused).
_CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")
NOTES = st.lists(
    st.one_of(
        st.text(_CHARS, max_size=40),
        st.sampled_from(_HOSTILE),
    ),
    max_size=4,
).map("".join)
WORDS = st.text(_CHARS, min_size=1, max_size=30).filter(str.strip)
NAMES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,12}", fullmatch=True).filter(
    lambda name: not name.endswith(".pub")
)


@dataclass(frozen=True)
class Step:
    kind: str
    reviewer: str
    verdict: str
    note: str
    artifact: str | None
    location: str
    row_id: str
    quote: str | None
    correction: dict[str, str] | None


STEPS = st.builds(
    Step,
    kind=st.sampled_from(["decision", "mark"]),
    reviewer=st.one_of(st.sampled_from(["alice", "bob", "carol"]), NAMES),
    verdict=st.sampled_from(["approve", "request-changes", "reject", *MARKS]),
    note=NOTES,
    artifact=st.one_of(st.none(), st.sampled_from(sorted(CURRENT))),
    location=st.one_of(st.sampled_from(["line 21", "items[3]", "items[0].ids"]), WORDS),
    row_id=WORDS,
    quote=st.one_of(st.none(), NOTES),
    correction=st.one_of(st.none(), st.dictionaries(st.just("theme"), WORDS, min_size=1)),
)


def build(steps: list[Step]) -> list[ReviewEntry]:
    entries: list[ReviewEntry] = []
    for step in steps:
        key = key_of(step.reviewer)
        if step.kind == "decision":
            verdict = step.verdict if step.verdict not in MARKS else "approve"
            subjects = (
                {step.artifact: CURRENT[step.artifact]} if step.artifact is not None else CURRENT
            )
            entries.append(
                decision(
                    entries, key, RUN, subjects, verdict, note=step.note, artifact=step.artifact
                )
            )
        else:
            judged = step.verdict if step.verdict in MARKS else "unsure"
            artifact = step.artifact or "artifacts/insight_report.md"
            entries.append(
                mark(
                    entries, key, RUN, {artifact: CURRENT[artifact]}, judged, note=step.note,
                    artifact=artifact, location=step.location, row_id=step.row_id,
                    quote=step.quote, correction=step.correction,
                )
            )  # fmt: skip
    return entries


def trusted(entries: list[ReviewEntry]) -> tuple[dict[str, Any], dict[str, str]]:
    keys = {key_of(e.reviewer).keyid: key_of(e.reviewer).public_key for e in entries}
    names = {key_of(e.reviewer).keyid: e.reviewer for e in entries}
    return keys, names


def problems_of(text: str, signed: list[dict[str, Any]], keys: Any, names: Any) -> list[str]:
    """What verify's reviews check finds in the ledger TEXT (a line that does not parse is
    a problem too)."""
    try:
        entries = parse_ledger(text)
    except ReviewError as error:
        return [str(error)]
    return review_problems(entries, signed, run_id=RUN, keys=keys, names=names, current=CURRENT)


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(STEPS, min_size=1, max_size=6))
def test_a_valid_ledger_round_trips_and_verifies(steps: list[Step]) -> None:
    entries = build(steps)
    text = ledger_text(entries)

    back = parse_ledger(text)

    assert back == entries
    assert [parse_line(e.line, number=e.seq) for e in entries] == entries
    assert [(e.note, e.quote, e.correction) for e in back] == [
        (e.note, e.quote, e.correction) for e in entries
    ]
    keys, names = trusted(entries)
    signed = [e.as_json() for e in entries]
    assert problems_of(text, signed, keys, names) == []
    # a statement signed before the last lines were written still verifies them
    assert problems_of(text, signed[: len(signed) // 2], keys, names) == []
    summary = review_state(back, CURRENT, ReviewPolicy(), None)
    assert summary.state in ("unreviewed", "approved", "changes-requested", "rejected")


def _forge(line: str) -> str:
    envelope = json.loads(line)
    payload = json.loads(base64.b64decode(envelope["payload"]))
    payload["note"] += " (approved by all)"
    envelope["payload"] = base64.b64encode(json.dumps(payload).encode()).decode()
    return compact_line(envelope)


def _resign(line: str, key: SigningKey) -> str:
    """The line's payload signed by KEY instead."""
    payload = base64.b64decode(json.loads(line)["payload"])
    return compact_line(sign_envelope(payload, key, REVIEW_PAYLOAD_TYPE))


def _flip_signature(line: str) -> str:
    envelope = json.loads(line)
    raw = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    raw[0] ^= 0x01
    envelope["signatures"][0]["sig"] = base64.b64encode(bytes(raw)).decode()
    return compact_line(envelope)


MUTATIONS: dict[str, Callable[[list[str], int], list[str] | None]] = {
    "forge": lambda lines, at: [*lines[:at], _forge(lines[at]), *lines[at + 1 :]],
    "remove": lambda lines, at: [*lines[:at], *lines[at + 1 :]],
    "duplicate": lambda lines, at: [*lines[: at + 1], lines[at], *lines[at + 1 :]],
    "swap": lambda lines, at: (
        None
        if at + 1 >= len(lines) or lines[at] == lines[at + 1]
        else [*lines[:at], lines[at + 1], lines[at], *lines[at + 2 :]]
    ),
    "stranger": lambda lines, at: [
        *lines[:at], _resign(lines[at], key_of("mallory-unknown")), *lines[at + 1 :]
    ],
    "another reviewer": lambda lines, at: [
        *lines[:at], _resign(lines[at], key_of("zz-other-reviewer")), *lines[at + 1 :]
    ],
    "flipped signature": lambda lines, at: [
        *lines[:at], _flip_signature(lines[at]), *lines[at + 1 :]
    ],
    "line of another ledger": lambda lines, at: [
        *lines[:at],
        decision([], key_of("alice"), "run_other", CURRENT, note="elsewhere").line,
        *lines[at + 1 :],
    ],
}  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(
    steps=st.lists(STEPS, min_size=1, max_size=5),
    mutation=st.sampled_from(sorted(MUTATIONS)),
    where=st.integers(min_value=0, max_value=10),
)
def test_any_single_line_mutation_is_caught(steps: list[Step], mutation: str, where: int) -> None:
    entries = build(steps)
    lines = [e.line for e in entries]
    mutated = MUTATIONS[mutation](lines, where % len(lines))
    if mutated is None or mutated == lines:
        return  # nothing to swap with
    keys, names = trusted(entries)
    other = key_of("zz-other-reviewer")  # a reviewer everyone knows, who wrote no line here
    keys[other.keyid], names[other.keyid] = other.public_key, "zz-other-reviewer"
    signed = [e.as_json() for e in entries]

    problems = problems_of("".join(f"{line}\n" for line in mutated), signed, keys, names)

    assert problems, f"{mutation} of line {where % len(lines) + 1} went unnoticed"


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_each_mutation_is_caught_by_runlens_verify(
    mutation: str, fresh_copy: Callable[[], SignedRun]
) -> None:
    """The same mutations on a real run's ledger, re-signed into its verdict, through
    `verify_workspace`: the `reviews` check fails and names a line."""
    from tests.review.conftest import append_decision, append_mark, reviewer, write_lines
    from tests.verdict.test_reviews import resign

    from runlens.verdict.verify import verify_workspace

    run = fresh_copy()
    run_id = run.record["run_id"]
    append_decision(run.workspace, run_id, reviewer(run.home, "alice"), note="<b>ok</b>\nyes")
    append_mark(run.workspace, run_id, reviewer(run.home, "bob"), note="# wrong\n<i>row</i>")
    append_decision(run.workspace, run_id, reviewer(run.home, "bob"), verdict="request-changes")
    assert resign(run)
    lines = (run.workspace / "runtime" / "reviews.jsonl").read_text(encoding="utf-8").splitlines()
    mutated = MUTATIONS[mutation](lines, 1)
    assert mutated is not None and mutated != lines
    write_lines(run.workspace, mutated)

    report = verify_workspace(run.workspace, home=run.home)

    failed = {check.check: check.detail for check in report.failed}
    assert list(failed) == ["reviews"], failed
    assert "line " in failed["reviews"]
