"""The pieces of review by people the pages and the API share, without a server: where a
claim is (as `runlens drift` names it), the claims of a deliverable, the marks export's CSV,
and where a page's form may send the browser back to."""

from __future__ import annotations

import csv
import io

import pytest

from runlens.review.record import MARK_COLUMNS, marks_text
from runlens.store.rows import CitationRow
from runlens.ui.reviewing import claim_location, claims_of, local_path


def citation(ordinal: int, location: str, row_id: str, **extra: object) -> CitationRow:
    return CitationRow.model_validate(
        {
            "ordinal": ordinal,
            "artifact": extra.pop("artifact", "artifacts/insight_report.md"),
            "location": location,
            "row_id": row_id,
            "status": "verified",
            **extra,
        }
    )


@pytest.mark.parametrize(
    ("location", "line", "claim"),
    [
        ("line 12", 12, "line 12"),
        ("items[3].evidence_text", None, "items[3]"),
        ("items[3].feedback_id", None, "items[3]"),
        ("items[0].evidence_feedback_ids[2]", None, "items[0]"),
        ("themes[1].items[4].ids", None, "themes[1].items[4]"),
        ("feedback_id", None, "$"),
    ],
)
def test_a_claim_is_named_as_drift_names_it(location: str, line: int | None, claim: str) -> None:
    assert claim_location(citation(1, location, "fb_001", line=line)) == claim


def test_a_json_item_citing_a_row_twice_is_one_claim_with_its_quote() -> None:
    claims = claims_of(
        "artifacts/analysis.json",
        [
            citation(1, "items[0].feedback_id", "fb_001", artifact="artifacts/analysis.json"),
            citation(
                2,
                "items[0].evidence_text",
                "fb_001",
                quote="too slow",
                artifact="artifacts/analysis.json",
            ),
            citation(3, "items[1].feedback_id", "fb_002", artifact="artifacts/analysis.json"),
        ],
    )
    assert [(c.location, c.row_id, c.quote) for c in claims] == [
        ("items[0]", "fb_001", "too slow"),
        ("items[1]", "fb_002", None),
    ]
    assert claims[0].anchor == "claim-1" and claims[0].key == (
        "artifacts/analysis.json",
        "items[0]",
        "fb_001",
    )


def test_markdown_claims_follow_the_text() -> None:
    claims = claims_of(
        "artifacts/insight_report.md",
        [
            citation(2, "line 20", "fb_002", line=20, quote="b"),
            citation(1, "line 9", "fb_001", line=9, quote="a"),
        ],
    )
    assert [c.location for c in claims] == ["line 9", "line 20"]


def test_the_marks_csv_keeps_formulas_out_of_spreadsheets() -> None:
    rows = [
        {
            "run_id": "r",
            "artifact": "artifacts/insight_report.md",
            "location": "line 3",
            "row_id": "fb_001",
            "quote": '=HYPERLINK("http://evil")',
            "reviewer": "alice",
            "mark": "wrong",
            "note": "+1 <b>x</b>",
            "correction": {"theme": "Billing"},
            "created_at": "2026-12-05T00:00:00Z",
            "digest": "ab",
        }
    ]
    parsed = list(csv.DictReader(io.StringIO(marks_text(rows, "csv"))))
    assert list(parsed[0]) == list(MARK_COLUMNS)
    assert parsed[0]["quote"] == '\'=HYPERLINK("http://evil")'
    assert parsed[0]["note"] == "'+1 <b>x</b>"
    assert parsed[0]["correction"] == '{"theme": "Billing"}'


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("/runs/r/report#claim-3", True),
        ("//evil.example/x", False),
        ("https://evil.example/", False),
        ("/\\evil.example", False),
        ("/runs/r\r\nSet-Cookie: x=1", False),
        ("", False),
    ],
)
def test_a_form_goes_back_only_to_a_path_of_this_server(given: str, kept: bool) -> None:
    assert (local_path(given, "/default") == given) is kept


def test_a_reviewer_cookie_is_this_server_s_recent_signature(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import hashlib
    import time

    from runlens.ui.security import ReviewerSessions

    digest = hashlib.sha256(b"token").hexdigest()
    sessions = ReviewerSessions(max_age=60)
    value = sessions.issue(digest)
    assert "token" not in value and sessions.digest_of(value) == digest
    issued, _, mac = value.split(".")
    other = hashlib.sha256(b"other").hexdigest()
    assert sessions.digest_of(f"{issued}.{other}.{mac}") is None  # another reviewer's digest
    assert ReviewerSessions().digest_of(value) is None  # another server, or after a restart
    assert sessions.digest_of(digest) is None and sessions.digest_of("") is None
    later = time.time() + 61
    monkeypatch.setattr(time, "time", lambda: later)
    assert sessions.digest_of(value) is None  # too old
