"""The insight report's figures on real runs: the offline analyst's reports tie every number
they state to a figure it equals, a changed or invented figure is rejected at its line through
`runlens validate`, and the `report_figures` tool returns the figures the check recomputes."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hostile import MEASURE_WORDS, column_names

from runlens import SOURCE_ROWS
from runlens.cli import cli
from runlens.errors import ToolError
from runlens.evidence import EvidenceIndex, SourceTable
from runlens.plugins import load_plugin
from runlens.runtime.prompt import build_system_prompt
from runlens.runtime.repair import repair_message
from runlens.tools.base import ToolContext
from runlens.tools.workspace import Workspace
from runlens.validation import validate_workspace
from runlens.validation.figures import Statement, check_figures
from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.analyst.backlog import backlog_from_summary
from runlens_feedback.analyst.groups import group_label
from runlens_feedback.analyst.report import report_from_summary
from runlens_feedback.breakdowns import table_metadata
from runlens_feedback.contracts import (
    ANALYSIS,
    BACKLOG,
    CHART,
    CONTRACTS,
    REPORT,
    SENTIMENTS,
    SEVERITIES,
)
from runlens_feedback.figures import SECTIONS, analysis_figures, backlog_figures, report_figures
from runlens_feedback.tools import report_figures as report_figures_tool

from .helpers import OfflineRun, generated_rows, run_offline, write_csv
from .test_offline_runs import INPUT_KINDS, RESTAURANT_AND_GAMES

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"
FIGURE_CODES = {"figure_mismatch", "unsupported_figure"}


def statements(workspace: Path) -> list[Statement]:
    """Every number the workspace's report states, tied and judged against its figures."""
    documents = {
        name: json.loads((workspace / name).read_text(encoding="utf-8"))
        for name in (ANALYSIS, BACKLOG)
    }
    index = EvidenceIndex.load(workspace / "runtime" / "evidence_index.json")
    # The input's own columns, as the figure check reads them, for the breakdown figures.
    documents[SOURCE_ROWS] = table_metadata(
        SourceTable.open(workspace / "input" / index.source, required_columns=()), index
    )
    report = (workspace / REPORT).read_text(encoding="utf-8")
    return check_figures(report, SECTIONS, report_figures(documents, index))


def assert_every_number_is_a_tied_figure(workspace: Path) -> list[Statement]:
    stated = statements(workspace)
    wrong = [(s.line, s.number.text, s.verdict) for s in stated if s.verdict != "agrees"]
    assert wrong == []
    assert [(s.line, s.number.text) for s in stated if not s.tied] == []
    return stated


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> OfflineRun:
    return run_offline(SAMPLE, tmp_path_factory.mktemp("sample") / "workspace")


@pytest.fixture
def workspace(sample_run: OfflineRun, tmp_path: Path) -> Path:
    """A copy of the sample run's workspace, to change one thing in."""
    return Path(shutil.copytree(sample_run.workspace, tmp_path / "workspace"))


# -- no false rejections --------------------------------------------------------------------


def test_the_sample_report_states_only_figures_each_tied_to_its_own(sample_run: OfflineRun) -> None:
    assert sample_run.result["status"] == "completed"
    stated = assert_every_number_is_a_tied_figure(sample_run.workspace)
    assert len(stated) > 80  # the whole table and summary are checked, not skipped
    tied = [(s.line, s.number.text, s.tied[0].key) for s in stated]
    line = line_of(sample_run.report, "文件共")
    assert [(n, key) for n, text, key in tied if n == line] == [
        (line, "rows.file"),
        (line, "rows.analysed"),
    ]
    label, key, _, share = leading_row(sample_run.report)
    line = line_of(sample_run.report, f"| {label} |")
    assert (line, share, f"theme.{key}.share") in tied


@pytest.mark.parametrize(
    ("rows", "encoding"),
    [
        *INPUT_KINDS,
        pytest.param(RESTAURANT_AND_GAMES, "utf-8", id="other-domains"),
        pytest.param(generated_rows(400), "utf-8", id="generated-400"),
    ],
)
def test_every_test_inputs_report_states_only_figures(
    tmp_path: Path, rows: list[dict[str, str]], encoding: str
) -> None:
    run = run_offline(write_csv(tmp_path / "in.csv", rows, encoding=encoding), tmp_path / "ws")
    assert run.result["status"] == "completed", run.result["error_message"]
    assert assert_every_number_is_a_tied_figure(run.workspace)


def test_a_chinese_report_is_checked_too(workspace: Path) -> None:
    """A report in a model's own Chinese phrasing, its figures taken from the analysis."""
    items = json.loads((workspace / ANALYSIS).read_text(encoding="utf-8"))["items"]
    backlog = json.loads((workspace / BACKLOG).read_text(encoding="utf-8"))["items"]
    summary = summarize_analysis(items)
    n, sentiment, severity = len(items), summary["sentiment"], summary["severity"]
    languages = summary["languages"]
    severe = severity["high"] + severity["critical"]
    problems = summary["problem_rows"]
    priorities = Counter(entry["priority"] for entry in backlog)
    billing = summary["pain_points"][0]
    name = group_label(billing)
    billing_severe = billing["problem_severity"]["high"] + billing["problem_severity"]["critical"]
    negative = billing["sentiment"]["negative"]

    def pct(count: int) -> str:
        return f"{count / n:.1%}"

    chinese = {
        "## Product Context": f"- 来源：文件共 {n} 条反馈，已分析 {n} 条，未分析 0 条。\n"
        f"- 语言：中文 {languages['zh']} 条，英文 {languages['en']} 条。",
        "## Executive Summary": f"情感：正面 {sentiment['positive']} 条"
        f"（{pct(sentiment['positive'])}）、负面 {sentiment['negative']} 条"
        f"（{pct(sentiment['negative'])}）、中性 {sentiment['neutral']} 条、混合 "
        f"{sentiment['mixed']} 条。\n\n严重程度：严重 {severity['critical']} 条、高 "
        f"{severity['high']} 条、中等 {severity['medium']} 条、低 {severity['low']} 条；高或严重 "
        f"{severe} 条（{pct(severe)}）。\n\n反映问题的反馈 {problems} 条（{pct(problems)}）。"
        f"待办事项 {len(backlog)} 条，其中 P0 {priorities['P0']} 条、P1 {priorities['P1']} 条。",
        "## Top Pain Points": f"1. {name}：{billing['count']} 条（{pct(billing['count'])}），"
        f"其中负面 {negative} 条，{billing_severe} 条高或严重。",
    }
    for heading, body in chinese.items():
        replace_section(workspace, heading, body)
    assert len(assert_every_number_is_a_tied_figure(workspace)) == 26
    wrong = negative + 1
    replace_section(
        workspace, "## Top Pain Points", f"1. {name}：{billing['count']} 条，其中负面 {wrong} 条。"
    )
    (finding,) = figure_findings(verdict(workspace))
    assert (finding["details"]["stated"], finding["details"]["expected"]) == (
        str(wrong),
        str(negative),
    )
    assert finding["details"]["figure"] == f"theme.{billing['key']}.negative"


# -- through runlens validate ---------------------------------------------------------------


def verdict(workspace: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["validate", str(workspace), "--json", *args])
    payload: dict[str, Any] = json.loads(result.stdout)
    payload["exit_code"] = result.exit_code
    return payload


def figure_findings(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in payload["findings"] if f["code"] in FIGURE_CODES]


def edit_report(workspace: Path, old: str, new: str) -> int:
    """Replace the first `old` in the report; return the 1-based line it is on."""
    path = workspace / REPORT
    report = path.read_text(encoding="utf-8")
    assert old in report
    path.write_text(report.replace(old, new, 1), encoding="utf-8")
    return report[: report.index(old)].count("\n") + 1


def replace_section(workspace: Path, heading: str, body: str) -> None:
    path = workspace / REPORT
    report = path.read_text(encoding="utf-8")
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## )", re.MULTILINE | re.DOTALL)
    path.write_text(pattern.sub(f"{heading}\n\n{body}\n\n", report, count=1), encoding="utf-8")


def line_of(text: str, fragment: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if fragment in line)


def assert_only_the_report_is_rejected(payload: dict[str, Any]) -> None:
    assert payload["exit_code"] == 1
    assert payload["status"] == "failed"
    assert payload["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "rejected",
        CHART: "validated",  # a wrong figure in the report is the report's alone
    }
    assert {f["code"] for f in payload["findings"]} <= FIGURE_CODES


def test_a_wrong_row_count_is_a_mismatch_at_its_line(workspace: Path) -> None:
    line = edit_report(workspace, "文件共 89 条", "文件共 88 条")
    payload = verdict(workspace)
    assert_only_the_report_is_rejected(payload)
    (finding,) = payload["findings"]
    assert finding["code"] == "figure_mismatch"
    assert (finding["artifact"], finding["path"]) == (REPORT, f"line {line}")
    details = finding["details"]
    assert (details["line"], details["stated"], details["expected"]) == (line, "88", "89")
    assert details["figure"] == "rows.file"
    assert f"figure mismatch: 88 should be 89 (rows.file, line {line})" in payload["error_message"]


def test_the_human_verdict_names_the_code_the_artifact_and_the_line(workspace: Path) -> None:
    line = edit_report(workspace, "文件共 89 条", "文件共 88 条")
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["validate", str(workspace)])
    assert result.exit_code == 1
    for text in ("figure_mismatch", REPORT, f"line {line}", "which is 89", "validated"):
        assert text in result.stdout


def leading_row(report: str) -> tuple[str, str, int, str]:
    """The first pain point of the report's table: its label, key, rows and share."""
    match = re.search(r"^\| 1 \| (.+?) \| `([^`]+)` \| (\d+) \| ([\d.]+%) \|", report, re.M)
    assert match, "the report has a pain-point table"
    return match[1], match[2], int(match[3]), match[4]


def test_a_wrong_theme_row_count_in_the_table_is_a_mismatch(workspace: Path) -> None:
    _, key, rows, _ = leading_row((workspace / REPORT).read_text(encoding="utf-8"))
    line = edit_report(workspace, f"| `{key}` | {rows} |", f"| `{key}` | {rows + 1} |")
    payload = verdict(workspace)
    assert_only_the_report_is_rejected(payload)
    (finding,) = payload["findings"]
    assert (finding["path"], finding["details"]["expected"]) == (f"line {line}", str(rows))
    assert finding["details"]["figure"] == f"theme.{key}.rows"


@pytest.mark.parametrize(
    ("written", "rejected"), [("off", True), ("whole", False), ("finer", False)]
)
def test_a_theme_share_is_compared_at_the_precision_written(
    workspace: Path, written: str, rejected: bool
) -> None:
    _, key, rows, share = leading_row((workspace / REPORT).read_text(encoding="utf-8"))
    analysed = len(json.loads((workspace / ANALYSIS).read_text(encoding="utf-8"))["items"])
    exact = Decimal(rows) / Decimal(analysed) * 100
    shown = {
        "off": f"{Decimal(share[:-1]) + Decimal('0.1')}%",  # a tenth off at the same precision
        "whole": f"{exact.quantize(Decimal(1), ROUND_HALF_UP)}%",
        "finer": f"{exact.quantize(Decimal('0.01'), ROUND_HALF_UP)}%",
    }[written]
    old = f"| `{key}` | {rows} | {share} |"
    line = edit_report(workspace, old, f"| `{key}` | {rows} | {shown} |")
    findings = figure_findings(verdict(workspace))
    if not rejected:
        assert findings == []
        return
    (finding,) = findings
    assert (finding["path"], finding["details"]["expected"]) == (f"line {line}", share)
    assert finding["details"]["figure"] == f"theme.{key}.share"


def test_an_invented_statistic_is_unsupported(workspace: Path) -> None:
    line = edit_report(workspace, "严重程度：", "42% of users churned.\n\n严重程度：")
    payload = verdict(workspace)
    assert_only_the_report_is_rejected(payload)
    (finding,) = payload["findings"]
    assert (finding["code"], finding["path"]) == ("unsupported_figure", f"line {line}")
    assert payload["error_message"].startswith(f"unsupported figures: 42% (line {line})")


def test_claims_outside_the_checked_sections_must_be_figures(workspace: Path) -> None:
    """Outside the figure sections a share or a count of rows is still a claim about the
    data (issue 23, item 11); a year, a version or a duration is not."""
    edit_report(workspace, "## Risks And Unknowns\n", "## Risks And Unknowns\n\n42% churned.\n")
    assert [f["code"] for f in figure_findings(verdict(workspace))] == ["unsupported_figure"]
    edit_report(
        workspace, "42% churned.", "Ship v2.3 in 2026 within 30 days to the top 3 segments."
    )
    assert verdict(workspace)["findings"] == []


def test_an_unreadable_analysis_gets_no_figure_findings(workspace: Path) -> None:
    edit_report(workspace, "文件共 89 条", "文件共 88 条")
    (workspace / ANALYSIS).write_text("{not json", encoding="utf-8")
    payload = verdict(workspace)
    assert payload["artifacts"][ANALYSIS] == "rejected"
    assert figure_findings(payload) == []


def test_the_repair_message_names_the_right_value(workspace: Path) -> None:
    edit_report(workspace, "文件共 89 条", "文件共 88 条")
    plugin = load_plugin("feedback-analysis")
    report = validate_workspace(workspace, CONTRACTS, plugin=plugin)
    message = repair_message(report, CONTRACTS, remaining=1)
    assert "Write 89 instead of 88 (the figure `rows.file`)" in message


# -- the tool, the skill and the prompt ------------------------------------------------------


def tool_context(workspace: Path) -> ToolContext:
    (source,) = (workspace / "input").iterdir()
    return ToolContext(run_id="test", workspace=Workspace(workspace), input_path=source)


def test_the_tool_returns_the_figures_the_check_recomputes(workspace: Path) -> None:
    result = report_figures_tool(tool_context(workspace))
    shown = {figure["key"]: figure for figure in result["figures"]}
    assert result["not_written_yet"] == []
    assert "## Executive Summary" in result["rule"]
    assert shown["rows.file"]["text"] == "89"
    label, key, _, share = leading_row((workspace / REPORT).read_text(encoding="utf-8"))
    leading = shown[f"theme.{key}.share"]
    assert (leading["text"], leading["labels"][0]) == (share, label)
    assert shown[f"theme.{key}.rows"]["labels"][0] == f"{label} + row"
    backlog = json.loads((workspace / BACKLOG).read_text(encoding="utf-8"))["items"]
    for priority in ("P0", "P1", "P2", "P3"):
        given = sum(1 for item in backlog if item["priority"] == priority)
        assert shown[f"backlog.{priority}"]["text"] == str(given)
    assert shown["backlog.P1"]["text"] != "0"
    # A breakdown cell's figure says where it is written: its table, row and column.
    support = shown["breakdown.channel.support_ticket.negative.share"]
    assert support["place"] == {
        "table": "channel",
        "row": "support_ticket",
        "column": "negative share",
    }
    assert (support["text"], support["exact"], support["labels"]) == ("96.6%", "28/29", [])
    checked = {s.tied[0].key: s.number.text for s in statements(workspace) if s.number.text != "0"}
    listed = {key: text for key, text in checked.items() if key in shown}
    assert listed and all(shown[key]["text"] == text for key, text in listed.items())


def test_the_tool_reads_what_is_written_so_far(workspace: Path) -> None:
    (workspace / BACKLOG).unlink()
    result = report_figures_tool(tool_context(workspace))
    assert result["not_written_yet"] == [BACKLOG]
    assert not [f for f in result["figures"] if f["key"].startswith("backlog.")]
    (workspace / ANALYSIS).unlink()
    with pytest.raises(ToolError, match="analyze_feedback_batches"):
        report_figures_tool(tool_context(workspace))


def test_the_prompt_and_the_skill_teach_the_figure_rule() -> None:
    plugin = load_plugin("feedback-analysis")
    prompt = build_system_prompt(plugin)
    assert "Figures under ## Product Context, ## Executive Summary, ## Top Pain Points are" in (
        " ".join(prompt.split())
    )
    assert "report_figures" in plugin.skill
    (step,) = [step for step in plugin.plan if step.step_id == "write_report"]
    assert "report_figures" in step.tools


def test_a_theme_named_like_a_measure_does_not_claim_its_figures() -> None:
    # Uncategorised topics are named by their own keyword, which can be any word of the data:
    # a topic "file" must not take "rows in the file" for itself, nor "negative" the
    # sentiment count.
    items = [
        {"feedback_id": f"r{n}", "sentiment": "negative", "severity": "medium",
         "pain_point": "file upload fails", "evidence_text": "upload fails", "theme": theme}
        for n, theme in enumerate(["topic:file", "topic:file", "topic:negative"])
    ]  # fmt: skip
    index = EvidenceIndex.from_items(
        {}, source="f.csv", source_hash="0" * 64, id_column="feedback_id", text_column="text"
    )
    documents = {ANALYSIS: {"items": items, "failed_batches": []}, BACKLOG: {"items": []}}
    figures = report_figures(documents, index)
    text = "- Source: `f.csv`, 0 rows in the file, 3 analysed.\n- Negative: 3 (100.0%)."
    statements = check_figures(f"# R\n\n## Product Context\n\n{text}\n", SECTIONS, figures)
    assert [(s.number.text, s.verdict, [f.key for f in s.tied]) for s in statements] == [
        ("0", "agrees", ["rows.file"]),
        ("3", "agrees", ["rows.analysed"]),
        ("3", "agrees", ["sentiment.negative"]),
        ("100.0%", "agrees", ["sentiment.negative.share"]),
    ]


def test_a_measure_word_inside_a_theme_name_is_part_of_the_name() -> None:
    # A topic keyed `topic:mixed` names "mixed" in every cell of its table row: the row's
    # "Rows" cell is still its rows, not its mixed rows.
    items = [
        {"feedback_id": f"x{n}", "sentiment": "negative", "severity": "medium",
         "pain_point": "mixed up", "evidence_text": "mixed up", "theme": "topic:mixed"}
        for n in range(2)
    ]  # fmt: skip
    index = EvidenceIndex.from_items(
        {}, source="f.csv", source_hash="0" * 64, id_column="feedback_id", text_column="text"
    )
    documents = {ANALYSIS: {"items": items, "failed_batches": []}, BACKLOG: {"items": []}}
    table = (
        "| # | Pain point | Key | Rows | Mixed | High or critical |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        "| 1 | About “mixed” | `topic:mixed` | 2 | 0 | 0 |\n"
    )
    markdown = f"# R\n\n## Top Pain Points\n\n{table}"
    stated = check_figures(markdown, SECTIONS, report_figures(documents, index))
    assert [(s.number.text, s.verdict, [f.key for f in s.tied]) for s in stated] == [
        ("2", "agrees", ["theme.topic:mixed.rows"]),
        ("0", "agrees", ["theme.topic:mixed.mixed"]),
        ("0", "agrees", ["theme.topic:mixed.high_or_critical"]),
    ]


# -- breakdowns by any column of any values -------------------------------------------------


@st.composite
def breakdown_cases(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    """Analysis items and their rows' metadata: columns named by measure words or anything,
    holding measure words, numbers and blanks, over row counts whose shares fall half-way."""
    count = draw(st.sampled_from([2, 3, 8, 16, 40, 80, 400]))
    columns = draw(st.lists(column_names(), min_size=1, max_size=4, unique_by=str.casefold))
    pools = {c: draw(st.lists(st.sampled_from(_VALUES), min_size=1, max_size=5)) for c in columns}
    items, metadata = [], {}
    for n in range(count):
        row_id = f"r{n}"
        items.append(
            {
                "feedback_id": row_id,
                "sentiment": draw(st.sampled_from(SENTIMENTS)),
                "severity": draw(st.sampled_from(SEVERITIES)),
                "pain_point": "slow export",
                "theme": draw(st.sampled_from(["export", "login", "billing"])),
                "evidence_text": "the export is slow",
            }
        )
        metadata[row_id] = {c: draw(st.sampled_from(pools[c])) for c in columns}
    return items, metadata


_VALUES = (*MEASURE_WORDS, "1", "2", "5", "4.5", "-1", "P0", "P3", "", "2026-03-01", "100%")


@settings(max_examples=200, deadline=None)
@given(case=breakdown_cases())
def test_breakdown_tables_by_any_column_of_any_values_verify(
    case: tuple[list[dict[str, Any]], dict[str, dict[str, str]]],
) -> None:
    items, metadata = case
    summary = summarize_analysis(
        items, total_rows=len(items), source="export.csv", row_metadata=metadata
    )
    backlog = backlog_from_summary(summary)
    report = report_from_summary(summary, backlog)
    analysis = {"items": items, "failed_batches": []}
    figures = analysis_figures(analysis, len(items), row_metadata=metadata)
    figures += backlog_figures(backlog)
    stated = check_figures(report, SECTIONS, figures)
    wrong = [(s.line, s.number.text, s.verdict) for s in stated if s.verdict != "agrees"]
    assert wrong == [], report


@pytest.mark.parametrize(
    "header",
    [
        "| Channel | Count | % of rows | Positive | Negative | Negative % |",
        "| 渠道 | 数量 | 比例 | 正面 | 负面 | 负面比例 |",
    ],
)
def test_a_breakdown_table_with_a_models_own_headers_verifies(workspace: Path, header: str) -> None:
    """A model writing its own table calls the measures "Count" or "% of rows": still their
    places, and a wrong cell is still caught."""
    edit_report(workspace, "| channel | 条数 | 占比 | 正面 | 负面 | 负面占比 |", header)
    assert figure_findings(verdict(workspace)) == []
    line = edit_report(
        workspace, "| support\\_ticket | 29 | 32.6% |", "| support\\_ticket | 29 | 33.6% |"
    )
    (finding,) = figure_findings(verdict(workspace))
    assert (finding["path"], finding["details"]["figure"]) == (
        f"line {line}",
        "breakdown.channel.support_ticket.share",
    )


@pytest.mark.parametrize("other", ["By", "by", "By x", "Region"])
def test_a_column_named_like_a_leads_words_does_not_take_another_tables_rows(other: str) -> None:
    """ "By `x`:" leads the table of column `x` and says "By": the rows of `x`'s table are
    `x`'s figures even when another column is called `By` (the first column's header names
    its own table before a lead does)."""
    items = [
        {
            "feedback_id": f"r{i}",
            "sentiment": "positive",
            "severity": "low",
            "pain_point": "slow export",
            "theme": "export",
            "evidence_text": "the export is slow",
        }
        for i in range(8)
    ]
    metadata = {f"r{i}": {"x": "a", other: "a"} for i in range(8)}
    metadata["r7"]["x"] = "b"
    metadata["r6"][other] = metadata["r7"][other] = "b"
    summary = summarize_analysis(items, total_rows=8, source="export.csv", row_metadata=metadata)
    backlog = backlog_from_summary(summary)
    report = report_from_summary(summary, backlog)
    assert "By `x`:" in report and f"By `{other}`:" in report
    figures = analysis_figures({"items": items, "failed_batches": []}, 8, row_metadata=metadata)
    stated = check_figures(report, SECTIONS, figures + backlog_figures(backlog))
    wrong = [(s.line, s.number.text, s.verdict) for s in stated if s.verdict != "agrees"]
    assert wrong == [], report
