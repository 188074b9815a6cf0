"""The report, written from the aggregated analysis: headings, counts and quotes that match
the items."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from runlens.evidence import build_evidence_index
from runlens.validation import ValidationReport, validate_workspace
from runlens_feedback.aggregate import TOP_GROUPS, group_items, summarize_analysis
from runlens_feedback.analyst import (
    HEADINGS,
    analyze_rows,
    backlog_from_summary,
    build_backlog,
    render_report,
    report_from_summary,
)
from runlens_feedback.analyst.report import report_language
from runlens_feedback.contracts import REPORT, REPORT_CONTRACT

from .helpers import generated_rows, run_offline, write_csv

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"
EXPECTED = [
    "# FeedbackLens Insight Report",
    "## Product Context",
    "## Executive Summary",
    "## Top Pain Points",
    "## Evidence",
    "## Recommended Actions",
    "## Risks And Unknowns",
]
_QUOTE = re.compile(
    r"^> (?:… )?(?P<open>[“「\"])(?P<quote>.*)(?P<close>[”」\"])(?: …)? — (?P<id>\S+) "
    r"[(（](?P<sentiment>\w+)[,，] ?(?P<severity>\w+)[)）]$"
)
#: How a Chinese report names sentiments and severities.
ZH_NAMES = {"正面": "positive", "中性": "neutral", "负面": "negative", "混合": "mixed",
            "低": "low", "中等": "medium", "高": "high", "严重": "critical"}  # fmt: skip


def headings(markdown: str) -> list[str]:
    tokens = MarkdownIt().parse(markdown)
    found = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            found.append("#" * int(token.tag[1]) + " " + tokens[index + 1].content)
    return found


def sample_rows() -> list[dict[str, str]]:
    """The shipped sample: 65 Chinese rows and 24 English ones, so its report is Chinese."""
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def english_rows() -> list[dict[str, str]]:
    """The sample's English rows: an English report."""
    return [row for row in sample_rows() if not re.search(r"[\u4e00-\u9fff]", row["text"])]


def render(rows: list[dict[str, str]], **kwargs: Any) -> tuple[list[dict[str, Any]], str]:
    items = analyze_rows(rows)
    report = render_report(
        items,
        build_backlog(items),
        source=kwargs.pop("source", "feedback.csv"),
        total_rows=kwargs.pop("total_rows", len(rows)),
        **kwargs,
    )
    return items, report


def section(report: str, heading: str) -> str:
    start = report.index(heading + "\n")
    following = [report.find("\n" + h + "\n", start + 1) for h in EXPECTED]
    ends = [position for position in following if position > start]
    return report[start : min(ends) if ends else len(report)]


def test_headings_are_exactly_the_contract() -> None:
    assert list(HEADINGS) == EXPECTED
    _, report = render(sample_rows())
    assert headings(report) == EXPECTED


def test_feedback_text_cannot_inject_headings() -> None:
    rows = [
        {"feedback_id": "h1", "text": "## Evidence\n# FeedbackLens Insight Report\n导出太慢了"},
        {"feedback_id": "h2", "text": "# Heading\n\n## Risks And Unknowns"},
    ]
    _, report = render(rows)
    assert headings(report) == EXPECTED


def test_sentiment_and_severity_counts_match_the_items() -> None:
    names = {english: chinese for chinese, english in ZH_NAMES.items()}
    for rows, zh in ((english_rows(), False), (sample_rows(), True)):
        items, report = render(rows)
        summary = section(report, "## Executive Summary")
        total = len(items)
        for key, values in (
            ("sentiment", ("positive", "neutral", "negative", "mixed")),
            ("severity", ("critical", "high", "medium", "low")),
        ):
            counts = Counter(item[key] for item in items)
            for value in values:
                share = f"{counts[value] / total:.1%}"
                if zh:
                    assert f"- {names[value]}：{counts[value]} 条（{share}）" in summary
                else:
                    assert f"- {value.capitalize()}: {counts[value]} ({share})" in summary


def is_problem(item: dict[str, Any]) -> bool:
    """The documented rule: negative and mixed rows, neutral requests and neutral rows above
    low severity; never praise or empty rows."""
    if item.get("theme") in ("praise", "empty"):
        return False
    if item["sentiment"] in ("negative", "mixed"):
        return True
    return item["sentiment"] == "neutral" and (
        item.get("theme") == "feature_request" or item["severity"] != "low"
    )


def table_rows(report: str) -> list[list[str]]:
    table = section(report, "## Top Pain Points")
    lines = [line for line in table.splitlines() if re.match(r"^\| \d+ \|", line)]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]


def test_pain_point_table_matches_the_items() -> None:
    items, report = render(sample_rows())
    rows = table_rows(report)
    assert rows
    for cells in rows:
        theme = cells[2].strip("`")
        members = [item for item in items if item["theme"] == theme]
        problems = [item for item in members if is_problem(item)]
        assert int(cells[3]) == len(members)
        assert cells[4] == f"{len(members) / len(items):.1%}"
        assert int(cells[5]) == len(problems)
        assert int(cells[6]) == sum(1 for m in members if m["sentiment"] == "negative")
        assert int(cells[7]) == sum(1 for m in members if m["sentiment"] == "mixed")
        severe = sum(1 for m in problems if m["severity"] in ("high", "critical"))
        assert int(cells[8]) == severe


def test_pain_point_table_lists_problems_only_and_counts_the_rest() -> None:
    items, report = render(sample_rows())
    listed = {cells[2].strip("`") for cells in table_rows(report)}
    with_problems = {item["theme"] for item in items if is_problem(item)}
    assert listed <= with_problems
    assert len(listed) == min(len(with_problems), TOP_GROUPS)
    other_rows = sum(1 for item in items if item["theme"] not in listed)
    # beyond 15 themes the smallest are counted as the one group "other" (group_items)
    other_groups = len(group_items(items)) - len(listed)
    assert f"未列出：其他主题 {other_groups} 个（{other_rows} 条，" in report


def test_quotes_are_verbatim_and_cited() -> None:
    rows = sample_rows()
    texts = {row["feedback_id"]: row["text"] for row in rows}
    items, report = render(rows)
    by_id = {item["feedback_id"]: item for item in items}
    quotes = [m for m in map(_QUOTE.match, report.splitlines()) if m]
    assert len(quotes) >= 3
    for match in quotes:
        feedback_id = match["id"]
        quote = re.sub(r"\\(.)", r"\1", match["quote"])  # as the reader sees it
        assert quote.strip()
        assert quote in texts[feedback_id]
        assert ZH_NAMES[match["sentiment"]] == by_id[feedback_id]["sentiment"]
        assert ZH_NAMES[match["severity"]] == by_id[feedback_id]["severity"]


def test_backlog_items_appear_with_priorities() -> None:
    rows = sample_rows()
    items = analyze_rows(rows)
    backlog = build_backlog(items)
    report = render_report(items, backlog, source="s.csv", total_rows=len(rows))
    actions = section(report, "## Recommended Actions")
    for entry in backlog["items"]:
        assert f"**{entry['priority']} — {entry['title']}**" in actions


def test_risks_name_failed_batches_unanalysed_rows_and_small_samples() -> None:
    rows = english_rows()[:12]
    failed = [{"reason": "provider timeout", "offset": 12, "limit": 100}]
    _, report = render(rows, total_rows=112, failed_batches=failed)
    risks = section(report, "## Risks And Unknowns")
    assert "provider timeout" in risks
    assert "offset=12" in risks
    assert "Unanalysed rows: 100 of 112" in risks
    assert "Small sample: only 12 rows" in risks
    assert "Neutral or mixed rows:" in risks


def test_no_failed_batches_is_stated() -> None:
    _, report = render(sample_rows())
    assert "- 失败批次：无。" in section(report, "## Risks And Unknowns")
    assert "样本较小" not in report
    _, report = render(english_rows() * 2)
    assert "- Failed batches: none." in section(report, "## Risks And Unknowns")
    assert "Small sample" not in report


def test_context_names_the_source_and_row_counts() -> None:
    rows = sample_rows()
    _, report = render(rows, source="sample_feedback.csv")
    context = section(report, "## Product Context")
    assert f"`sample_feedback.csv`，文件共 {len(rows)} 条，已分析 {len(rows)} 条。" in context
    english = english_rows()
    _, report = render(english, source="en.csv")
    context = section(report, "## Product Context")
    assert f"`en.csv`, {len(english)} rows in the file, {len(english)} analysed" in context


def test_report_of_nothing_still_has_every_heading() -> None:
    report = render_report([], {"items": []}, source="empty.csv", total_rows=0)
    assert headings(report) == EXPECTED


def test_report_is_deterministic() -> None:
    rows = sample_rows()
    assert render(rows)[1] == render(rows)[1]


def test_report_from_a_summary_alone_is_the_same_report() -> None:
    """The summary a model's context holds (JSON, round-tripped) is all the report needs."""
    rows = sample_rows()
    items = analyze_rows(rows)
    summary = summarize_analysis(items, total_rows=len(rows), source="s.csv")
    backlog = backlog_from_summary(summary)
    from_json = report_from_summary(json.loads(json.dumps(summary)), backlog)
    assert from_json == render_report(items, backlog, source="s.csv", total_rows=len(rows))


def test_risks_group_failures_by_reason() -> None:
    rows = english_rows()[:40]
    failed = [
        {"batch": 2, "offset": 40, "feedback_ids": ["x1", "x2"], "reason": "provider timeout"},
        {"batch": 3, "offset": 80, "feedback_ids": ["x3"], "reason": "row has no text to quote"},
        {"batch": 4, "offset": 120, "feedback_ids": ["x4"], "reason": "row has no text to quote"},
    ]
    _, report = render(rows, total_rows=len(rows) + 4, failed_batches=failed)
    risks = section(report, "## Risks And Unknowns")
    assert "Failed batches: 3 could not be analysed in full (4 rows left unanalysed)" in risks
    assert "provider timeout: 2 rows in 1 batch" in risks
    assert "row has no text to quote: 2 rows in 2 batches" in risks
    assert f"Unanalysed rows: 4 of {len(rows) + 4}" in risks


def test_model_items_without_themes_are_named_by_their_pain_point() -> None:
    items = [
        {"feedback_id": f"m{n}", "sentiment": "negative", "severity": "high",
         "pain_point": wording, "evidence_text": f"quote {n}"}
        for n, wording in enumerate(["Export | too slow", "export | too slow", "Login\n# fails"])
    ]  # fmt: skip
    report = render_report(items, build_backlog(items), source="m.csv", total_rows=3)
    assert headings(report) == EXPECTED
    rows = table_rows(report)
    assert [cells[3] for cells in rows] == ["2", "1"]
    assert "Export \\| too slow" in section(report, "## Top Pain Points")
    assert "- Grouping: 3 rows carried no theme" in section(report, "## Risks And Unknowns")


def validated_report(tmp_path: Path, rows: list[dict[str, str]], report: str) -> ValidationReport:
    """The report validated as a run would, against an index of `rows`."""
    workspace = tmp_path / "workspace"
    (workspace / "input").mkdir(parents=True)
    source = workspace / "input" / "feedback.csv"
    with source.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["feedback_id", "text"])
        writer.writeheader()
        writer.writerows(rows)
    index = build_evidence_index(source, id_column="feedback_id", text_column="text")
    sha = index.write(workspace / "runtime" / "evidence_index.json")
    (workspace / REPORT).parent.mkdir()
    (workspace / REPORT).write_text(report, encoding="utf-8")
    return validate_workspace(workspace, [REPORT_CONTRACT], expected_index_sha256=sha)


def test_every_quote_of_the_report_is_a_verified_citation(tmp_path: Path) -> None:
    rows = [
        {"feedback_id": "k1", "text": "The *export* [beta] fails_now & <b>crashes</b>, C:\\temp."},
        {
            "feedback_id": "k2",
            "text": 'Login broke: “it fails” and "it hangs" and 「卡死」 every day.',
        },
        {
            "feedback_id": "k3",
            "text": "Sync fails\nThe connector stopped syncing after the update\nok",
        },
        {
            "feedback_id": "k4",
            "text": "Unbelievablyslowexportsthatneverfinish" * 3 + " again, broken.",
        },
        {"feedback_id": "k5", "text": "导出周报太慢了，" * 12 + "每次都要等三分钟。"},
    ]
    items = analyze_rows(rows)
    for number, item in enumerate(items):  # each its own critical theme: each is quoted
        item.update(theme=f"theme_{number}", sentiment="negative", severity="critical")
        item["evidence_text"] = rows[number]["text"]
    report = render_report(items, build_backlog(items), source="f.csv", total_rows=len(rows))
    assert sorted(re.findall(r" — (k\d) ", report)) == ["k1", "k2", "k3", "k4", "k5"]
    verdict = validated_report(tmp_path, rows, report)
    assert verdict.passed, verdict.error_message
    assert len(verdict.quotes) == 5
    # A cut is marked outside the quotation marks, on the side where it was made.
    assert "> … “The connector stopped syncing after the update” … — k3 " in report
    assert re.search(r"^> [“「\"]导出周报太慢了，.*[”」\"] … — k5 ", report, re.MULTILINE)


# -- language, breakdowns, chart link -------------------------------------------------------

CHINESE_TEXTS = [
    "导出周报太慢了，每次都要等三分钟，很影响效率。",
    "登录经常失败，提示验证码错误，换了浏览器也一样。",
    "这个月为什么多扣了两个席位的钱？希望尽快退款。",
    "仪表盘做得很漂亮，团队都很喜欢。",
    "导出的报表经常超时失败，只能分几次导出。",
    "Export to Excel takes forever, sometimes five minutes.",
]
CHINESE_ROWS = [
    {"feedback_id": f"c{n}", "text": text} for n, text in enumerate(CHINESE_TEXTS, start=1)
]


def test_chinese_input_gets_a_chinese_body_under_the_contracted_headings(tmp_path: Path) -> None:
    items = analyze_rows(CHINESE_ROWS)
    metadata = {row["feedback_id"]: {"channel": "app" if n % 2 else "web"}
                for n, row in enumerate(CHINESE_ROWS)}  # fmt: skip
    summary = summarize_analysis(
        items, total_rows=len(items), source="zh.csv", row_metadata=metadata
    )
    assert report_language(summary) == "zh"
    report = report_from_summary(summary, backlog_from_summary(summary))
    assert headings(report) == EXPECTED  # the headings stay English, as contracted
    assert "文件共 6 条，已分析 6 条" in section(report, "## Product Context")
    assert "已分析的 6 条反馈的情感分布：" in section(report, "## Executive Summary")
    assert "严重程度：" in report and "Severity:" not in report
    for english in ("rows in the file", "Sentiment of the", "Failed batches", "Method:"):
        assert english not in report
    verdict = validated_report(tmp_path, CHINESE_ROWS, report)  # quotes are still citations
    assert verdict.passed, verdict.error_message
    assert verdict.quotes


#: Words of the English backlog templates, which a Chinese report must not contain.
ENGLISH_ACTION_WORDS = (
    "fix the complaints",
    "reviewed",
    "baseline",
    "target",
    "analysed rows",
    "raise this",
    "points",
    "Acceptance criteria",
    "Metric:",
)
_CJK = re.compile(r"[\u4e00-\u9fff]")


def test_a_chinese_report_recommends_actions_in_chinese(tmp_path: Path) -> None:
    items = analyze_rows(CHINESE_ROWS)
    summary = summarize_analysis(items, total_rows=len(items), source="zh.csv")
    backlog = backlog_from_summary(summary)
    report = report_from_summary(summary, backlog)
    actions = section(report, "## Recommended Actions")
    for english in ENGLISH_ACTION_WORDS:
        assert english not in actions
    assert "验收标准：逐条查看关于" in actions and "基线：已分析的 6 条中有" in actions
    # one critical row of six: no severity points from one row, reach +2 (16.7%): P2
    assert "**P2 — 让计费清晰准确**（`billing_pricing`）。已分析的 6 条中有 1 条" in actions
    # Table themes are named in Chinese everywhere in the body, the table included.
    assert "| 计费/价格 | `billing_pricing` |" in section(report, "## Top Pain Points")
    for english_label in ("Billing and pricing", "Login and authentication", "Slow performance"):
        assert english_label not in report
    verdict = validated_report(tmp_path, CHINESE_ROWS, report)
    assert verdict.passed, verdict.error_message


def test_an_english_report_recommends_actions_in_english() -> None:
    _, report = render(english_rows())
    actions = section(report, "## Recommended Actions")
    assert "   - Acceptance criteria: The cited reports about " in actions
    assert "baseline: " in actions and "target: half" in actions
    assert not _CJK.search(actions)


def test_an_offline_run_on_chinese_input_completes_in_chinese(tmp_path: Path) -> None:
    """End to end: a Chinese file gives a Chinese backlog and report, and every artifact
    passes validation (figures, quotes, evidence) with no finding."""
    rows = [row for row in generated_rows(120) if _CJK.search(row["text"])] + CHINESE_ROWS
    run = run_offline(write_csv(tmp_path / "zh.csv", rows), tmp_path / "workspace")
    result = run.result
    assert run.exit_code == 0, result.get("error_message")
    assert result["status"] == "completed"
    assert result["findings"] == []
    assert set(result["artifacts"].values()) == {"validated"}
    entries = run.backlog["items"]
    assert entries
    for entry in entries:
        text = " ".join([entry["title"], entry["metric"], *entry["acceptance_criteria"]])
        assert _CJK.search(entry["title"])
        for english in ("fix the complaints", "reviewed", "baseline", "target"):
            assert english not in text
    actions = section(run.report, "## Recommended Actions")
    assert "验收标准：" in actions and "指标：" in actions


def test_the_body_language_is_the_majority_of_the_analysed_items() -> None:
    assert report_language({"languages": {"zh": 5, "en": 4}}) == "zh"
    assert report_language({"languages": {"en": 5, "zh": 4}}) == "en"
    assert report_language({"languages": {"en": 3, "zh": 3}}) == "en"  # a tie: English
    assert report_language({"languages": {"ja": 9, "zh": 1}}) == "en"  # no Japanese body
    assert report_language({"languages": {}}) == "en"


def test_breakdowns_are_tables_under_product_context() -> None:
    rows = english_rows()
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        columns = {row["feedback_id"]: row for row in csv.DictReader(handle)}
    metadata = {
        row["feedback_id"]: {k: v for k, v in columns[row["feedback_id"]].items()
                             if k not in ("feedback_id", "text")}
        for row in rows
    }  # fmt: skip
    items = analyze_rows(rows)
    summary = summarize_analysis(items, total_rows=len(rows), row_metadata=metadata)
    report = report_from_summary(summary, backlog_from_summary(summary))
    context = section(report, "## Product Context")
    for lead in ("By `channel`:", "By month of `created_at`:", "By `rating`:"):
        assert lead in context
    assert "| rating 5 |" in context
    channels = Counter(metadata[i["feedback_id"]]["channel"] for i in items)
    top, count = channels.most_common(1)[0]
    assert f"| {top.replace('_', chr(92) + '_')} | {count} | {count / len(items):.1%} |" in context


def test_the_chart_is_linked_only_when_written() -> None:
    items = analyze_rows(english_rows())
    summary = summarize_analysis(items, total_rows=len(items))
    backlog = backlog_from_summary(summary)
    assert "insight_chart.svg" not in report_from_summary(summary, backlog)
    linked = report_from_summary(summary, backlog, chart="insight_chart.svg")
    executive = section(linked, "## Executive Summary")
    assert "![Pain points by rows and sentiment](insight_chart.svg)" in executive


def test_leading_pain_points_show_several_quotes_of_distinct_rows() -> None:
    _, report = render(sample_rows())
    evidence = section(report, "## Evidence")
    blocks = evidence.split("\n**")[1:4]  # the three leading pain points
    for block in blocks:
        ids = re.findall(r" — (fb_\d+) ", block)
        assert len(ids) == len(set(ids)) >= 2
