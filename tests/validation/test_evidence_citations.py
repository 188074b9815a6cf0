"""EvidenceCitationValidationHook: cited ids and quotes must trace back to the source CSV."""

from __future__ import annotations

import json
import time
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runlens.contracts import ArtifactContract, EvidenceQuote
from runlens.evidence import build_evidence_index
from runlens.validation import (
    EvidenceCitationValidator,
    IdCitation,
    QuoteLocation,
    ValidationContext,
    ValidationReport,
    validate_workspace,
)
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace


FB_001_TEXT = "导出周报太慢了，我们团队每周五都要导出，等三分钟很影响效率。"
PARAPHRASE = "每周导出报告需要等待很长时间，影响团队协作效率。"


def found(report: ValidationReport) -> list[tuple[str, str, str]]:
    return [(f.code, f.artifact, f.path) for f in report.findings]


def test_a_fabricated_id_cited_by_analysis_and_backlog_rejects_both(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    items = feedback_workspace.analysis["items"]
    items.append({**items[0], "feedback_id": "fb_999"})
    feedback_workspace.backlog["items"][1]["evidence_feedback_ids"] = ["fb_001", "fb_999"]
    report = validate(feedback_workspace.write())
    assert found(report) == [
        ("unknown_evidence_id", ANALYSIS, "items[3].feedback_id"),
        ("unknown_evidence_id", BACKLOG, "items[1].evidence_feedback_ids[1]"),
    ]
    assert report.error_message == "missing evidence ids: fb_999"
    assert report.artifacts == {
        ANALYSIS: "rejected",
        BACKLOG: "rejected",
        REPORT: "validated",
        CHART: "missing",
    }


def test_a_fabricated_id_only_in_the_backlog_rejects_only_the_backlog(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.backlog["items"][0]["evidence_feedback_ids"] = ["fb_999", "fb_998"]
    report = validate(feedback_workspace.write())
    assert {f.artifact for f in report.findings} == {BACKLOG}
    assert report.error_message == "missing evidence ids: fb_999, fb_998"
    assert report.artifacts == {
        ANALYSIS: "validated",
        BACKLOG: "rejected",
        REPORT: "validated",
        CHART: "missing",
    }


def test_the_summary_stays_on_one_line(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.backlog["items"][0]["evidence_feedback_ids"] = ["fb_\n999"]
    report = validate(feedback_workspace.write())
    assert report.error_message == "missing evidence ids: fb_ 999"


def test_an_id_that_is_not_a_string_is_reported(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.backlog["items"][0]["evidence_feedback_ids"] = [2]
    report = validate(feedback_workspace.write())
    assert ("unknown_evidence_id", BACKLOG, "items[0].evidence_feedback_ids[0]") in found(report)
    assert report.error_message is not None
    assert f"invalid evidence ids: {BACKLOG} items[0].evidence_feedback_ids[0]" in (
        report.error_message
    )


def test_a_paraphrase_of_a_real_row_is_a_text_mismatch(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    assert feedback_workspace.analysis["items"][0]["feedback_id"] == "fb_001"
    feedback_workspace.analysis["items"][0]["evidence_text"] = PARAPHRASE
    report = validate(feedback_workspace.write())
    assert found(report) == [("evidence_text_mismatch", ANALYSIS, "items[0].evidence_text")]
    assert report.error_message == (
        f"text mismatch: {ANALYSIS} items[0].evidence_text is not a verbatim fragment of fb_001"
    )
    assert report.findings[0].details == {"row_id": "fb_001", "quote": PARAPHRASE}
    assert report.artifacts[ANALYSIS] == "rejected"
    assert report.artifacts[BACKLOG] == "validated"


def test_a_fragment_of_another_row_is_still_a_mismatch(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    items = feedback_workspace.analysis["items"]
    items[0]["evidence_text"] = items[2]["evidence_text"]  # fb_003's words cited as fb_001
    report = validate(feedback_workspace.write())
    assert found(report) == [("evidence_text_mismatch", ANALYSIS, "items[0].evidence_text")]


def test_empty_and_whitespace_quotes(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    items = feedback_workspace.analysis["items"]
    items[0]["evidence_text"] = ""
    items[1]["evidence_text"] = " \n\t"
    report = validate(feedback_workspace.write())
    assert found(report) == [
        ("empty_evidence_text", ANALYSIS, "items[0].evidence_text"),
        ("empty_evidence_text", ANALYSIS, "items[1].evidence_text"),
    ]
    assert report.error_message is not None
    assert report.error_message.startswith("empty evidence text: ")


def test_accepted_quotes_are_located_in_their_row(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    report = validate(feedback_workspace)
    first = report.quotes[0]
    start = FB_001_TEXT.index("等三分钟很影响效率")
    assert first == QuoteLocation(
        ANALYSIS, "items[0].evidence_text", "fb_001", start, start + 9, quote="等三分钟很影响效率"
    )
    assert [q.row_id for q in report.quotes] == ["fb_001", "fb_002", "fb_003"]


def test_ids_cited_without_a_quote_are_recorded_apart_from_the_quotes(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    report = validate(feedback_workspace)
    assert report.passed, report.error_message
    # The backlog cites rows by id only; each verified id is a citation at its JSON path.
    # The analysis's ids each stand beside a verified quote of theirs: no second citation.
    assert report.id_citations == [
        IdCitation(BACKLOG, "items[0].evidence_feedback_ids[0]", "fb_002"),
        IdCitation(BACKLOG, "items[1].evidence_feedback_ids[0]", "fb_001"),
        IdCitation(BACKLOG, "items[1].evidence_feedback_ids[1]", "fb_003"),
    ]
    assert len(report.quotes) == 3  # what "N evidence quote(s) traced" counts is unchanged
    assert all(isinstance(q, QuoteLocation) and q.quote for q in report.quotes)


def test_an_id_keeps_its_citation_when_its_quote_fails_and_unknown_ids_have_none(
    tmp_path: Path,
) -> None:
    rows = [("r1", "The export is slow every Friday"), ("r2", "Login fails")]
    items = [
        {"id": "r1", "quote": "slow every Friday"},  # verified quote: the id is not repeated
        {"id": "r2", "quote": "Logout works"},  # the quote fails, the id itself is right
        {"id": "nope", "quote": "x"},  # no such row: a finding, not a citation
    ]
    report = _custom_workspace(tmp_path, rows, items)
    assert found(report) == [
        ("unknown_evidence_id", "out.json", "items[2].id"),
        ("evidence_text_mismatch", "out.json", "items[1].quote"),
    ]
    assert report.id_citations == [IdCitation("out.json", "items[1].id", "r2")]
    assert [(q.path, q.row_id) for q in report.quotes] == [("items[0].quote", "r1")]


def _custom_workspace(
    tmp_path: Path,
    rows: Iterable[tuple[str, str]],
    items: list[dict[str, Any]],
    min_length: int = 1,
) -> ValidationReport:
    workspace = tmp_path / "ws"
    (workspace / "runtime").mkdir(parents=True)
    (workspace / "input").mkdir()
    csv_path = workspace / "input" / "rows.csv"  # as a run leaves it: the index's source
    body = "".join(f"{row_id},{text}\n" for row_id, text in rows)
    csv_path.write_text("id,text\n" + body, encoding="utf-8")
    index = build_evidence_index(csv_path, id_column="id", text_column="text")
    sha = index.write(workspace / "runtime" / "evidence_index.json")
    (workspace / "out.json").write_text(json.dumps({"items": items}), encoding="utf-8")
    contract = ArtifactContract(
        name="out.json",
        evidence_fields=("items.id",),
        evidence_quotes=(EvidenceQuote(text="items.quote", id="items.id", min_length=min_length),),
    )
    return validate_workspace(workspace, [contract], expected_index_sha256=sha)


def test_a_quote_shorter_than_min_length_must_be_the_whole_text(tmp_path: Path) -> None:
    rows = [("r1", "The export is slow every Friday"), ("r2", "Great")]
    items = [{"id": "r1", "quote": "slow"}, {"id": "r2", "quote": "Great"}]
    report = _custom_workspace(tmp_path, rows, items, min_length=6)
    assert found(report) == [("weak_evidence_quote", "out.json", "items[0].quote")]
    assert "shorter than the minimum of 6" in report.findings[0].message
    assert [q.row_id for q in report.quotes] == ["r2"]


def test_quotes_compare_in_nfc(tmp_path: Path) -> None:
    decomposed = unicodedata.normalize("NFD", "café")
    report = _custom_workspace(
        tmp_path, [("r1", "Le café est froid")], [{"id": "r1", "quote": decomposed}]
    )
    assert report.passed, report.error_message


def test_a_quote_id_outside_evidence_fields_is_still_checked(tmp_path: Path) -> None:
    contract_items = [{"id": "nope", "quote": "x"}]
    (tmp_path / "input").mkdir()
    csv_path = tmp_path / "input" / "rows.csv"
    csv_path.write_text("id,text\nr1,x y\n", encoding="utf-8")
    (tmp_path / "runtime").mkdir()
    build_evidence_index(csv_path, id_column="id", text_column="text").write(
        tmp_path / "runtime/evidence_index.json"
    )
    (tmp_path / "out.json").write_text(json.dumps({"items": contract_items}), encoding="utf-8")
    contract = ArtifactContract(
        name="out.json", evidence_quotes=(EvidenceQuote(text="items.quote", id="items.id"),)
    )
    report = validate_workspace(tmp_path, [contract])
    assert found(report) == [("unknown_evidence_id", "out.json", "items[0].id")]


def test_a_missing_index_rejects_every_citing_artifact_with_one_summary(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.index_path.unlink()
    report = validate(feedback_workspace)
    assert found(report) == [
        ("evidence_index_missing", ANALYSIS, ""),
        ("evidence_index_missing", BACKLOG, ""),
    ]
    assert report.error_message == (
        "evidence index missing: runtime/evidence_index.json does not exist"
    )
    assert report.artifacts == {
        ANALYSIS: "rejected",
        BACKLOG: "rejected",
        REPORT: "validated",
        CHART: "missing",
    }


def test_an_unreadable_index_is_reported_not_raised(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.index_path.write_text("{not json", encoding="utf-8")
    report = validate(feedback_workspace, expected_index_sha256=None)
    assert {f.code for f in report.findings} == {"evidence_index_missing"}
    assert report.error_message is not None
    assert "unreadable" in report.error_message


def test_a_changed_index_is_tampered(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    index = json.loads(feedback_workspace.index_path.read_text(encoding="utf-8"))
    index["items"]["fb_999"] = {"row_hash": "0" * 64, "text": "invented"}
    index["total_rows"] = len(index["items"])  # a forgery consistent with itself
    feedback_workspace.index_path.write_text(json.dumps(index), encoding="utf-8")
    feedback_workspace.backlog["items"][0]["evidence_feedback_ids"] = ["fb_999"]
    report = validate(feedback_workspace.write())
    assert found(report) == [
        ("evidence_index_tampered", ANALYSIS, ""),
        ("evidence_index_tampered", BACKLOG, ""),
    ]
    assert report.error_message is not None
    assert report.error_message.startswith("evidence index tampered: runtime/evidence_index.json")
    # Without a recorded hash the index is still judged against input/: the forgery is found.
    unrecorded = validate(feedback_workspace, expected_index_sha256=None)
    assert [f.code for f in unrecorded.findings] == ["evidence_index_tampered"] * 2
    assert unrecorded.error_message is not None
    assert "does not match sample_feedback.csv at rows fb_999" in unrecorded.error_message


def test_nothing_to_check_when_no_citing_artifact_exists(tmp_path: Path) -> None:
    contract = ArtifactContract(name="a.json", evidence_fields=("items.id",))
    result = EvidenceCitationValidator([contract]).validate(
        ValidationContext(tmp_path, (contract,))
    )
    assert not result.blocked


def test_a_hundred_thousand_citations_in_linear_time(tmp_path: Path) -> None:
    count = 100_000
    rows = [(f"r{n}", f"row number {n} says the export is slow") for n in range(count)]
    items = [{"id": f"r{n}", "quote": f"number {n} says"} for n in range(count)]
    items[-1]["id"] = "r_missing"
    started = time.perf_counter()
    report = _custom_workspace(tmp_path, rows, items)
    elapsed = time.perf_counter() - started
    assert found(report) == [("unknown_evidence_id", "out.json", f"items[{count - 1}].id")]
    assert len(report.quotes) == count - 1
    assert elapsed < 10, f"{elapsed:.1f}s for {count} citations"


def test_weak_quotes_are_rejected_with_what_would_have_been_accepted(tmp_path: Path) -> None:
    rows = [("r1", "Login fails with an invalid token. Every single time"), ("r2", "导出太慢了")]
    items = [
        {"id": "r1", "quote": "."},
        {"id": "r1", "quote": "ogin fails"},
        {"id": "r2", "quote": "了"},
        {"id": "r2", "quote": "太慢了"},
    ]
    report = _custom_workspace(tmp_path, rows, items, min_length=2)
    assert found(report) == [
        ("weak_evidence_quote", "out.json", f"items[{n}].quote") for n in range(3)
    ]
    assert [f.details.get("accepted") for f in report.findings] == [None, "Login fails", None]
    assert "quote whole words, e.g. “Login fails”" in report.findings[1].message
    assert report.error_message is not None
    assert report.error_message.startswith("weak quotes: out.json items[0].quote is 1 character")
    assert [q.row_id for q in report.quotes] == ["r2"]
