"""One review line: what is signed, what is read back, and what a line cannot hold."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from tests.review.conftest import REPORT, decision, digest, mark, reviewer

from runlens.review.entries import (
    REVIEW_PAYLOAD_TYPE,
    REVIEW_TYPE,
    ReviewError,
    artifact_subject,
    check_reviewer_name,
    decision_payload,
    parse_line,
)
from runlens.review.ledger import ledger_text, next_link, parse_ledger
from runlens.verdict.dsse import open_envelope, pae
from runlens.verdict.statement import canonical_json

SUBJECTS = {REPORT: digest("report"), "artifacts/product_backlog.json": digest("backlog")}


def test_a_signed_decision_reads_back_as_written(tmp_path: Path) -> None:
    key = reviewer(tmp_path, "alice")
    note = "<script>alert(1)</script>\n**bold** «ok» 🙂"
    entry = decision([], key, "run_1", SUBJECTS, "request-changes", note=note)

    back = parse_line(entry.line, number=1)

    assert back == entry
    assert (back.seq, back.previous, back.kind, back.decision) == (
        1,
        None,
        "decision",
        "request-changes",
    )
    assert back.note == note and back.artifact is None and back.mark is None
    assert back.subjects == SUBJECTS
    assert "\n" not in entry.line and entry.line.isascii()
    assert entry.digest == digest(entry.line)
    # a DSSE envelope any implementation can check: the signature is over PAE(type, payload)
    envelope = json.loads(entry.line)
    assert envelope["payloadType"] == REVIEW_PAYLOAD_TYPE
    payload = base64.b64decode(envelope["payload"])
    assert payload == canonical_json(json.loads(payload))
    key.public_key.verify(
        base64.b64decode(envelope["signatures"][0]["sig"]), pae(REVIEW_PAYLOAD_TYPE, payload)
    )
    assert open_envelope(envelope, {key.keyid: key.public_key}, REVIEW_PAYLOAD_TYPE)[1] == key.keyid
    assert entry.as_json() == {**json.loads(payload), "digest": entry.digest}
    assert entry.as_json()["_type"] == REVIEW_TYPE


def test_a_mark_and_the_chain(tmp_path: Path) -> None:
    alice, bob = reviewer(tmp_path, "alice"), reviewer(tmp_path, "bob")
    first = decision([], alice, "run_1", SUBJECTS)
    second = mark(
        [first], bob, "run_1", {REPORT: SUBJECTS[REPORT]}, "unsure", correction={"theme": "billing"}
    )

    entries = parse_ledger(ledger_text([first, second]))

    assert entries == [first, second]
    assert (second.seq, second.previous) == (2, first.digest)
    assert next_link(entries) == (3, second.digest)
    assert next_link([]) == (1, None)
    assert second.as_json()["correction"] == {"theme": "billing"}
    assert (second.artifact, second.location, second.row_id) == (REPORT, "line 21", "fb_005")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"decision": "accept"}, "decision"),
        ({"seq": 0}, "seq"),
        ({"seq": 2, "previous": None}, "previous"),
        ({"previous": digest("x")}, "previous"),
        ({"reviewer": "../alice"}, "reviewer.name"),
        ({"keyid": "abc"}, "reviewer.keyid"),
        ({"subjects": {}}, "subjects"),
        ({"subjects": {"input/feedback.csv": digest("x")}}, "subject"),
        ({"subjects": {"artifacts/../runtime/run.json": digest("x")}}, "subject"),
        ({"subjects": {REPORT: "sha"}}, "subject"),
        ({"note": 5}, "note"),
        ({"note": "x" * 20_001}, "note"),
        ({"created_at": "yesterday"}, "created_at"),
        ({"run_id": " "}, "run_id"),
        ({"note": "a\ud800b"}, "note holds a lone surrogate at character 1"),
        ({"note": "a\x00b"}, "note holds a NUL"),
    ],
)
def test_a_payload_that_cannot_be_a_review_names_its_field(
    change: dict[str, object], field: str
) -> None:
    fields: dict[str, object] = {
        "run_id": "run_1", "seq": 1, "previous": None, "reviewer": "alice", "keyid": "a" * 64,
        "decision": "approve", "note": "", "artifact": None, "subjects": SUBJECTS,
    }  # fmt: skip
    with pytest.raises(ReviewError, match=f"review: {field}"):
        decision_payload(**{**fields, **change})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("not json", "not JSON"),
        ("[]", "not a JSON object"),
        (
            '{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[]}',
            "payloadType",
        ),
        (
            '{"payloadType":"application/vnd.runlens.review+json","payload":"!!","signatures":[]}',
            "base64",
        ),
        (
            '{"payloadType":"application/vnd.runlens.review+json","payload":"e30=","signatures":[]}',
            "_type",
        ),
    ],
)
def test_a_line_that_is_no_review_is_named_by_file_and_line(line: str, says: str) -> None:
    with pytest.raises(ReviewError, match=f"runtime/reviews.jsonl line 7: .*{says}"):
        parse_line(line, number=7)


def test_a_blank_line_in_the_ledger_is_named(tmp_path: Path) -> None:
    entry = decision([], reviewer(tmp_path, "alice"), "run_1", SUBJECTS)
    with pytest.raises(ReviewError, match="line 2: empty line"):
        parse_ledger(f"{entry.line}\n\n{entry.line}\n")


def test_reviewer_names_are_file_names_that_go_nowhere() -> None:
    assert check_reviewer_name("alice.smith-2") == "alice.smith-2"
    for bad in ("", ".", "..", "../x", "a/b", "a b", "x" * 65, "alice.pub", "-a"):
        with pytest.raises(ReviewError):
            check_reviewer_name(bad)


def test_artifact_subjects() -> None:
    assert artifact_subject("report.md") == "artifacts/report.md"
    assert artifact_subject(REPORT) == REPORT
