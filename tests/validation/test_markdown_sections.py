"""MarkdownSectionValidationHook: headings from a Markdown parse, their order and uniqueness."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from runlens.validation import ValidationReport
from runlens.validation.markdown import Heading, document_headings, parse_required
from runlens_feedback.contracts import REPORT, REPORT_HEADINGS

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace


RISKS = "## Risks And Unknowns"


def report_without(*headings: str) -> str:
    return "".join(f"{h}\n\nAbout it.\n\n" for h in REPORT_HEADINGS if h not in headings)


def report_with(headings: Iterable[str]) -> str:
    return "".join(f"{h}\n\nAbout it.\n\n" for h in headings)


def test_a_report_without_risks_and_unknowns_is_rejected(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.report = report_without(RISKS)
    report = validate(feedback_workspace.write())
    assert [(f.code, f.artifact) for f in report.findings] == [("missing_heading", REPORT)]
    assert report.error_message == f"missing headings: {RISKS} in {REPORT}"
    assert report.artifacts[REPORT] == "rejected"


def test_a_heading_in_a_code_block_or_a_sentence_does_not_count(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.report = (
        report_without(RISKS)
        + "```markdown\n## Risks And Unknowns\n```\n\n"
        + "    ## Risks And Unknowns\n\n"
        + "The ## Risks And Unknowns section is left for later.\n\n"
        + "> ## Risks And Unknowns\n"
    )
    report = validate(feedback_workspace.write())
    assert [f.code for f in report.findings] == ["missing_heading"]


def test_setext_and_closed_atx_headings_count(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.report = report_without(RISKS).replace(
        "## Evidence\n", "## Evidence ##   \n"
    ) + ("Risks   And Unknowns\n--------------------\n\nNone.\n")
    assert validate(feedback_workspace.write()).passed


def test_a_bom_does_not_hide_the_title(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    (feedback_workspace.root / REPORT).write_bytes(b"\xef\xbb\xbf" + report_without().encode())
    assert validate(feedback_workspace).passed


def test_the_level_must_match(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.report = report_without(RISKS) + "### Risks And Unknowns\n"
    report = validate(feedback_workspace.write())
    (finding,) = report.findings
    assert finding.code == "missing_heading"
    assert "has ### Risks And Unknowns; headings must match exactly" in finding.message


def test_out_of_order_headings_name_the_moved_one(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    headings = list(REPORT_HEADINGS)
    headings.insert(1, headings.pop(headings.index("## Evidence")))
    feedback_workspace.report = report_with(headings)
    report = validate(feedback_workspace.write())
    (finding,) = report.findings
    assert finding.code == "heading_order"
    assert finding.path == "line 5"
    assert "expected after ## Top Pain Points" in finding.message
    assert report.error_message == f"headings out of order: ## Evidence in {REPORT}"


def test_order_is_only_checked_among_present_headings(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.report = report_without("## Product Context")
    report = validate(feedback_workspace.write())
    assert [f.code for f in report.findings] == ["missing_heading"]


def test_duplicate_headings_are_reported_at_the_repeat(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.report = report_with(REPORT_HEADINGS) + "## Evidence\n\nMore.\n"
    report = validate(feedback_workspace.write())
    (finding,) = report.findings
    assert finding.code == "duplicate_heading"
    assert finding.details == {"heading": "## Evidence", "line": 29, "first_line": 17}
    assert report.error_message == f"duplicate headings: ## Evidence in {REPORT}"


def test_document_headings_reads_the_parse_tree() -> None:
    text = "# Title\n\nSub **title** `x`\n---\n\n```\n# not\n```\n- ## in a list\n"
    assert document_headings(text) == [Heading(1, "Title", 1), Heading(2, "Sub title x", 3)]


def test_parse_required() -> None:
    assert parse_required("## Evidence ##") == Heading(2, "Evidence")
    assert parse_required("#  Two   words ") == Heading(1, "Two words")
    # A found heading matches a wanted one; a wanted heading without #'s takes any level.
    assert Heading(1, "Evidence").matches(parse_required("Evidence"))
    assert not Heading(1, "Evidence").matches(parse_required("## Evidence"))
