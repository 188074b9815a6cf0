"""MarkdownCitationValidationHook: the report's quotes and ids, as the reader sees them,
trace back to the source rows; findings name the line and column."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runlens.contracts import ArtifactContract, MarkdownCitations
from runlens.errors import ContractError
from runlens.evidence import build_evidence_index
from runlens.validation import (
    MarkdownCitationValidator,
    QuoteLocation,
    ValidationReport,
    validate_workspace,
)
from runlens.validation.base import TextSpan
from runlens.validation.id_shapes import IdShape, named_id
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT, REPORT_HEADINGS

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace

#: The `check` fixture: validate the fixture workspace with a given report.
Check = Callable[[str], ValidationReport]

FB_001 = "导出周报太慢了，我们团队每周五都要导出，等三分钟很影响效率。"


def report_with(**sections: str) -> str:
    """The seven headings, each followed by its text in `sections` (keyed by the heading's
    words, `Evidence`, `Executive_Summary`) or a plain sentence."""
    parts = []
    for heading in REPORT_HEADINGS:
        key = heading.lstrip("# ").replace(" ", "_")
        parts.append(f"{heading}\n\n{sections.get(key, f'About {key}.')}\n")
    return "\n".join(parts)


def line_of(markdown: str, text: str) -> int:
    return next(n for n, line in enumerate(markdown.splitlines(), start=1) if text in line)


def column_of(markdown: str, text: str) -> int:
    line = markdown.splitlines()[line_of(markdown, text) - 1]
    return line.index(text) + 1


@pytest.fixture
def check(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> Check:
    """`check(markdown)`: validate the fixture workspace with `markdown` as its report."""

    def run(markdown: str) -> ValidationReport:
        feedback_workspace.report = markdown
        return validate(feedback_workspace.write())

    return run


def report_findings(report: ValidationReport) -> list[tuple[str, str, int, int]]:
    return [
        (f.code, f.path, f.details["line"], f.details["column"])
        for f in report.findings
        if f.artifact == REPORT
    ]


def report_quotes(report: ValidationReport) -> list[QuoteLocation]:
    return [quote for quote in report.quotes if quote.artifact == REPORT]


# -- forms that pass ------------------------------------------------------------------------


def test_a_blockquote_citation_is_verified_and_located(
    check: Check,
) -> None:
    markdown = report_with(Evidence="> “导出周报太慢了” — fb_001")
    report = check(markdown)
    assert report.passed, report.error_message
    line = line_of(markdown, "导出周报太慢了")
    # Located in the report too: the line and column of the opening quotation mark.
    quotation, cited = markdown.index("“导出周报太慢了”"), markdown.index("fb_001")
    assert report_quotes(report) == [
        QuoteLocation(
            REPORT,
            f"line {line}",
            "fb_001",
            0,
            7,
            quote="导出周报太慢了",
            line=line,
            column=3,
            span=TextSpan(quotation, quotation + 9, line),
            id_span=TextSpan(cited, cited + 6, line),
        )
    ]


def test_an_ellipsis_after_the_closing_mark_marks_a_cut_at_the_end(
    check: Check,
) -> None:
    markdown = report_with(
        Evidence="> “导出周报太慢了，我们团队” … — fb_001\n\n> … “等三分钟” ... [fb_001]"
    )
    report = check(markdown)
    assert report.passed, report.error_message
    assert [q.start for q in report_quotes(report)] == [0, FB_001.index("等三分钟")]


def test_several_inline_citations_share_a_paragraph(
    check: Check,
) -> None:
    markdown = report_with(
        Executive_Summary="The complaints (“等三分钟很影响效率” — fb_001, “every single time” — "
        "fb_002) are the loudest, and “自定义指标顺序” — fb_003."
    )
    report = check(markdown)
    assert report.passed, report.error_message
    assert [q.row_id for q in report_quotes(report)] == ["fb_001", "fb_002", "fb_003"]


@pytest.mark.parametrize(
    "citation",
    [
        "> “等三分钟很影响效率” — fb_001",
        '> "等三分钟很影响效率" — fb_001',
        "> 「等三分钟很影响效率」 — fb_001",
        "> “等三分钟很影响效率” – fb_001",
        "> “等三分钟很影响效率” -- fb_001",
        "> “等三分钟很影响效率”-fb_001",
        "> “等三分钟很影响效率” [fb_001]",
        "> “等三分钟很影响效率” (fb_001)",
        "> “等三分钟很影响效率”（fb_001）",
        "> “等三分钟很影响效率”\n> — fb_001",
        "Users wait (“等三分钟很影响效率” — fb_001).",
        "- “等三分钟很影响效率” — fb_001;",
        "| Quote |\n| --- |\n| “等三分钟很影响效率” — fb_001 |",
    ],
)
def test_every_declared_form_is_a_verified_citation(check: Check, citation: str) -> None:
    report = check(report_with(Evidence=citation))
    assert report.passed, report.error_message
    assert [q.row_id for q in report_quotes(report)] == ["fb_001"]


def test_a_quote_with_straight_quotes_inside_curly_ones(
    check: Check,
) -> None:
    report = check(report_with(Evidence='> “Login fails with "invalid token"” — fb_002'))
    assert report.passed, report.error_message


def test_emphasis_around_a_citation_is_not_part_of_the_quote(
    check: Check,
) -> None:
    report = check(report_with(Evidence="> **“导出周报太慢了”** — *fb_001*"))
    assert report.passed, report.error_message


# -- what is rejected -----------------------------------------------------------------------


def test_a_fabricated_id_is_an_unknown_evidence_id_at_the_quotation_mark(
    check: Check,
) -> None:
    markdown = report_with(Evidence="Also: “全部都很好” — fb_999")
    report = check(markdown)
    line = line_of(markdown, "fb_999")
    assert report_findings(report) == [("unknown_evidence_id", f"line {line}", line, 7)]
    assert report.error_message == "missing evidence ids: fb_999"
    assert report.artifacts == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "rejected",
        CHART: "missing",
    }


def test_a_paraphrase_is_a_text_mismatch(check: Check) -> None:
    markdown = report_with(Evidence="> “Exports are instant and we love them” — fb_001")
    report = check(markdown)
    line = line_of(markdown, "Exports are instant")
    assert report_findings(report) == [("evidence_text_mismatch", f"line {line}", line, 3)]
    assert report.error_message == (
        f"text mismatch: {REPORT} line {line} “Exports are instant and we love them” is not a "
        "verbatim fragment of fb_001"
    )
    finding = report.findings[0]
    assert finding.message.startswith(f"line {line}, column 3: “Exports are instant")
    assert finding.details["quote"] == "Exports are instant and we love them"


def test_a_quote_attributed_to_the_wrong_row_is_a_mismatch(
    check: Check,
) -> None:
    report = check(report_with(Evidence="> “自定义指标顺序” — fb_001"))  # fb_003's words
    assert [f[0] for f in report_findings(report)] == ["evidence_text_mismatch"]


def test_a_quotation_in_the_evidence_section_must_cite_a_row(
    check: Check,
) -> None:
    markdown = report_with(
        Executive_Summary="Users call exports “painfully slow” — the top complaint.",
        Evidence="Users say “导出周报太慢了” every week.\n\n### Details\n\n> “自定义指标顺序”",
        Recommended_Actions="Make exports “fast enough”.",
    )
    report = check(markdown)
    first, second = line_of(markdown, "every week"), line_of(markdown, "> “自定义")
    assert report_findings(report) == [
        ("unsourced_quote", f"line {first}", first, 11),
        ("unsourced_quote", f"line {second}", second, 3),
    ]
    assert report.findings[0].details["section"] == "## Evidence"
    assert "— ID" in report.findings[0].message
    assert report.error_message is not None
    assert report.error_message.startswith(
        f"unsourced quotes: {REPORT} line {first} “导出周报太慢了”"
    )


def test_an_id_shaped_token_that_names_no_row_is_an_unknown_reference(
    check: Check,
) -> None:
    markdown = report_with(
        Executive_Summary="Rows fb_001, fb_002 and (fb_042) agree; P0 first, 3 rows, `fb_043`.",
        Top_Pain_Points="| Pain | Rows |\n| --- | --- |\n| exports | fb_003, fb_077 |",
    )
    report = check(markdown)
    summary, table = line_of(markdown, "fb_042"), line_of(markdown, "fb_077")
    assert report_findings(report) == [
        ("unknown_reference", f"line {summary}", summary, column_of(markdown, "fb_042")),
        ("unknown_reference", f"line {summary}", summary, column_of(markdown, "fb_043")),
        ("unknown_reference", f"line {table}", table, column_of(markdown, "fb_077")),
    ]
    assert report.error_message == "unknown references: fb_042, fb_043, fb_077"


@pytest.mark.parametrize(
    ("citation", "phrase", "accepted"),
    [
        ("“了” — fb_001", "at least 2 characters", None),
        ("“,” — fb_002", "at least 2 characters", None),
        ("“ogin fails” — fb_002", "quote whole words, e.g. “Login fails”", "Login fails"),
        ("“every sin” — fb_002", "quote whole words, e.g. “every single”", "every single"),
    ],
)
def test_weak_quotes_say_what_would_have_been_accepted(
    check: Check, citation: str, phrase: str, accepted: str | None
) -> None:
    markdown = report_with(Evidence=f"> {citation}")
    report = check(markdown)
    line = line_of(markdown, citation)
    assert report_findings(report) == [("weak_evidence_quote", f"line {line}", line, 3)]
    (finding,) = report.findings
    assert phrase in finding.message
    assert finding.details.get("accepted") == accepted
    assert report.error_message is not None
    assert report.error_message.startswith(f"weak quotes: {REPORT} line {line}")


@pytest.mark.parametrize(
    ("block", "column"),
    [
        ("```\n“Exports are instant” — fb_001\n```", 1),
        ("    “Exports are instant” — fb_001", 5),
        ("<div>\n“Exports are instant” — fb_001\n</div>", 1),
    ],
)
def test_a_citation_in_a_code_or_html_block_is_still_checked(
    check: Check, block: str, column: int
) -> None:
    markdown = report_with(Evidence=f"Code and HTML show as written:\n\n{block}")
    report = check(markdown)
    line = line_of(markdown, "Exports are instant")
    assert report_findings(report) == [("evidence_text_mismatch", f"line {line}", line, column)]


def test_columns_count_characters_after_container_markers(
    check: Check,
) -> None:
    markdown = report_with(
        Evidence="- first\n  - nested “导出周报太慢了” — fb_001 and “没有” — fb_001"
    )
    report = check(markdown)
    line = line_of(markdown, "nested")
    assert report_findings(report) == [("evidence_text_mismatch", f"line {line}", line, 35)]


# -- Markdown characters in quotes ------------------------------------------------------------

MARKUP_ROW = "The *export* [beta] fails_now & <b> crashes, see C:\\temp | ok"


def markup_workspace(tmp_path: Path, markdown: str) -> ValidationReport:
    workspace = tmp_path / "ws"
    (workspace / "input").mkdir(parents=True)
    csv_path = workspace / "input" / "rows.csv"
    csv_path.write_text(f'id,text\nm1,"{MARKUP_ROW}"\n', encoding="utf-8")
    index = build_evidence_index(csv_path, id_column="id", text_column="text")
    sha = index.write(workspace / "runtime" / "evidence_index.json")
    (workspace / "report.md").write_text(markdown, encoding="utf-8")
    contract = ArtifactContract(
        name="report.md", citations=MarkdownCitations(evidence_sections=("## Evidence",))
    )
    return validate_workspace(workspace, [contract], expected_index_sha256=sha)


def test_escaped_markdown_characters_quote_the_row_exactly(tmp_path: Path) -> None:
    escaped = r"The \*export\* \[beta\] fails\_now \& \<b\> crashes, see C:\\temp \| ok"
    report = markup_workspace(tmp_path, f"## Evidence\n\n> “{escaped}” — m1\n")
    assert report.passed, report.error_message
    assert len(report.quotes) == 1


def test_an_entity_reads_as_its_character(tmp_path: Path) -> None:
    report = markup_workspace(tmp_path, "## Evidence\n\n> “fails\\_now &amp; &lt;b&gt;” — m1\n")
    assert report.passed, report.error_message


def test_unescaped_markup_is_not_what_the_reader_sees(tmp_path: Path) -> None:
    report = markup_workspace(tmp_path, "## Evidence\n\n> “The *export* [beta]” — m1\n")
    assert [f.code for f in report.findings] == ["evidence_text_mismatch"]
    assert report.findings[0].details["quote"] == "The export [beta]"  # emphasis dropped


# -- the index ------------------------------------------------------------------------------


def test_an_untrusted_index_rejects_a_report_that_quotes(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.index_path.unlink()
    feedback_workspace.report = report_with(Evidence="> “导出周报太慢了” — fb_001")
    report = validate(feedback_workspace.write())
    assert (REPORT, "evidence_index_missing") in {(f.artifact, f.code) for f in report.findings}
    assert report.error_message is not None
    assert report.error_message.count("evidence index missing") == 1  # said once


def test_an_untrusted_index_leaves_a_report_that_quotes_nothing(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.index_path.unlink()
    report = validate(feedback_workspace)
    assert report.artifacts[REPORT] == "validated"


def test_a_missing_report_is_not_this_validators_finding(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    feedback_workspace.remove(REPORT)
    report = validate(feedback_workspace)
    assert [f.code for f in report.findings if f.artifact == REPORT] == ["missing_file"]


# -- id shapes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ids", "token", "fits", "stands_out"),
    [
        (["fb_001", "fb_002"], "fb_999", True, True),
        (["fb_001", "fb_002"], "P0", False, False),
        (["A-17", "B-3"], "A-99", True, True),
        (["A-17", "B-3"], "C-9", False, False),  # few shapes: their letters are literal
        (["REV.0042"], "REV.7", True, True),
        (["用户-3"], "用户-12", True, True),
        (["1", "2", "3"], "17", True, False),  # numbers: only in citation position
        (["e1", "z2"], "P0", False, False),
        ([chr(65 + n) + f"-{n}" for n in range(26)], "Q-99", True, True),
        (["a" + "-1" * n for n in range(20)], "anything", True, False),  # no shape
        # Digits and punctuation only: decimals, ranges and dates would look like ids.
        (["1.5", "2.5"], "12.5", True, False),
        (["1-2", "3-4"], "2026-06", True, False),
        (["2026-01-05"], "2026-02-01", True, False),
        (["#12"], "#3", True, False),
    ],
)
def test_the_id_shape_is_derived_from_the_index(
    ids: list[str], token: str, fits: bool, stands_out: bool
) -> None:
    shape = IdShape.of_ids(ids)
    assert (shape.fits(token), shape.stands_out(token)) == (fits, stands_out)


def _with_source(ws: FeedbackWorkspace, csv_text: str) -> FeedbackWorkspace:
    """The fixture workspace on another source (its input copy, index and run record)."""
    import json

    ws.csv.write_text(csv_text, encoding="utf-8")
    ws.write_text(f"input/{ws.csv.name}", csv_text)
    index = build_evidence_index(ws.csv, id_column="feedback_id", text_column="text")
    ws.index_sha256 = index.write(ws.index_path)
    record = {"plugin": "feedback-analysis", "evidence_index_sha256": ws.index_sha256}
    ws.write_text("runtime/run.json", json.dumps(record))
    return ws


def test_the_contracts_own_words_are_never_ids_in_prose(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    ws = _with_source(feedback_workspace, "feedback_id,text\nP0,Export is slow\nP7,Login fails\n")
    ws.analysis = {"items": [], "failed_batches": []}
    ws.backlog = {"items": []}
    ws.report = "Backlog: 2 items (1 P1, 1 P3); row P9 too.\n"
    plain = ArtifactContract(name=REPORT, citations=MarkdownCitations())
    own = ArtifactContract(name=REPORT, citations=MarkdownCitations(own_words=("P1", "P3")))
    tokens = [f.details.get("token") for f in validate(ws.write(), contracts=[plain]).findings]
    assert tokens == ["P1", "P3", "P9"]
    tokens = [f.details.get("token") for f in validate(ws.write(), contracts=[own]).findings]
    assert tokens == ["P9"]


def test_a_value_of_the_inputs_other_columns_is_its_data_not_a_reference(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    ws = _with_source(
        feedback_workspace,
        "feedback_id,text,duplicate_of\nfb_001,Export is slow,fb_999\nfb_002,Login fails,\n",
    )
    ws.analysis = {"items": [], "failed_batches": []}
    ws.backlog = {"items": []}
    ws.report = "Rows marked duplicate of fb_999 (not in this export); fb_998 is invented.\n"
    contract = ArtifactContract(name=REPORT, citations=MarkdownCitations())
    report = validate(ws.write(), contracts=[contract])
    assert [(f.code, f.details.get("token")) for f in report.findings] == [
        ("unknown_reference", "fb_998")
    ]


def test_a_declared_id_pattern_replaces_the_derived_shape(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    contract = ArtifactContract(name=REPORT, citations=MarkdownCitations(id_pattern=r"FB-\d+"))
    feedback_workspace.report = "Row FB-12 and fb_999 and “导出周报太慢了” — fb_001\n"
    report = validate(feedback_workspace.write(), contracts=[contract])
    assert [(f.code, f.details.get("token")) for f in report.findings] == [
        ("unknown_reference", "FB-12")
    ]


@pytest.mark.parametrize(
    ("citations", "field"),
    [
        (MarkdownCitations(id_pattern="(["), "id_pattern"),
        (MarkdownCitations(quote_marks=()), "quote_marks"),
        (MarkdownCitations(quote_marks=(("“", ""),)), "quote_marks"),
    ],
)
def test_an_unusable_citation_rule_is_a_contract_error(
    citations: MarkdownCitations, field: str
) -> None:
    contract = ArtifactContract(name=REPORT, citations=citations)
    with pytest.raises(ContractError, match=field):
        MarkdownCitationValidator([contract])


def test_punctuation_is_stripped_from_an_id_only_when_needed() -> None:
    ids = {"fb_001", "A-17.", "x"}
    assert named_id("fb_001,", ids) == "fb_001"
    assert named_id("(fb_001)", ids) == "fb_001"
    assert named_id("A-17.", ids) == "A-17."
    assert named_id("fb_999).", ids) == "fb_999"
    assert named_id("“x”", ids) == "x"
    # With the longest id's length known, longer candidates are never looked up, so a
    # megabyte of punctuation costs one pass; the answer is the same.
    longest = max(map(len, ids))
    assert named_id("“" * 1000 + "fb_001" + "”" * 1000, ids, longest) == "fb_001"
    assert named_id("“" * 1000, ids, longest) == ""


def test_unclosed_quotation_marks_quote_nothing_and_do_not_hide_later_citations(
    check: Check,
) -> None:
    markdown = report_with(Evidence="“" * 5000 + " and then “导出周报太慢了” [fb_001]")
    report = check(markdown)
    # The first unclosed mark pairs with the only closing one: not a verbatim quote of fb_001.
    assert [f.code for f in report.findings] == ["evidence_text_mismatch"]
    markdown = report_with(Evidence="> “导出周报太慢了” — fb_001\n\n" + "「" * 5000)
    report = check(markdown)
    assert report.passed, report.error_message
    assert len(report_quotes(report)) == 1


def test_prose_in_brackets_after_a_quotation_does_not_hide_the_citation_inside(
    check: Check,
) -> None:
    markdown = report_with(
        Executive_Summary="The “export” (“等三分钟很影响效率” — fb_001) is slow (see above)."
    )
    report = check(markdown)
    assert report.passed, report.error_message
    assert [q.row_id for q in report_quotes(report)] == ["fb_001"]


def test_a_bracketed_id_may_hold_spaces_when_the_ids_do(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "input").mkdir(parents=True)
    csv_path = workspace / "input" / "rows.csv"
    csv_path.write_text("id,text\nrow 1,The export is slow\nrow 2,Login fails\n", "utf-8")
    build_evidence_index(csv_path, id_column="id", text_column="text").write(
        workspace / "runtime" / "evidence_index.json"
    )
    (workspace / "report.md").write_text(
        "“The export is slow” [row 1], “Login fails” (row 2), “Login fails” [row 9].\n",
        encoding="utf-8",
    )
    contract = ArtifactContract(name="report.md", citations=MarkdownCitations())
    report = validate_workspace(workspace, [contract])
    assert [q.row_id for q in report.quotes] == ["row 1", "row 2"]
    assert [(f.code, f.details["row_id"]) for f in report.findings] == [
        ("unknown_evidence_id", "row 9")
    ]


def test_a_prose_dash_after_a_quotation_is_not_a_citation(
    check: Check,
) -> None:
    markdown = report_with(Executive_Summary="Exports are “painfully slow” — the top complaint.")
    assert check(markdown).passed
