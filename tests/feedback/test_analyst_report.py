"""render_report: headings, counts and quotes that match the items."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

from markdown_it import MarkdownIt

from runlens_feedback.analyst import HEADINGS, analyze_rows, build_backlog, render_report

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
_QUOTE = re.compile(r"^> “(?P<quote>.*)” — (?P<id>\S+) \((?P<sentiment>\w+), (?P<severity>\w+)\)$")


def headings(markdown: str) -> list[str]:
    tokens = MarkdownIt().parse(markdown)
    found = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            found.append("#" * int(token.tag[1]) + " " + tokens[index + 1].content)
    return found


def sample_rows() -> list[dict[str, str]]:
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def render(rows: list[dict[str, str]], **kwargs) -> tuple[list[dict], str]:
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
    items, report = render(sample_rows())
    summary = section(report, "## Executive Summary")
    total = len(items)
    for key, values in (
        ("sentiment", ("positive", "neutral", "negative", "mixed")),
        ("severity", ("critical", "high", "medium", "low")),
    ):
        counts = Counter(item[key] for item in items)
        for value in values:
            share = f"{counts[value] / total:.1%}"
            assert f"- {value.capitalize()}: {counts[value]} ({share})" in summary


def test_theme_table_matches_the_items() -> None:
    items, report = render(sample_rows())
    themes = Counter(item["theme"] for item in items)
    table = section(report, "## Top Pain Points")
    rows = [line for line in table.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert rows
    for line in rows:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        theme = cells[2].strip("`")
        assert int(cells[3]) == themes[theme]
        assert cells[4] == f"{themes[theme] / len(items):.1%}"
        members = [item for item in items if item["theme"] == theme]
        assert int(cells[6]) == sum(1 for m in members if m["sentiment"] == "negative")
        assert int(cells[7]) == sum(1 for m in members if m["sentiment"] == "mixed")
        severe = sum(1 for m in members if m["severity"] in ("high", "critical"))
        assert int(cells[8]) == severe


def test_quotes_are_verbatim_and_cited() -> None:
    rows = sample_rows()
    texts = {row["feedback_id"]: row["text"] for row in rows}
    items, report = render(rows)
    by_id = {item["feedback_id"]: item for item in items}
    quotes = [m for m in map(_QUOTE.match, report.splitlines()) if m]
    assert len(quotes) >= 3
    for match in quotes:
        feedback_id = match["id"]
        assert match["quote"].strip()
        assert match["quote"] in texts[feedback_id]
        assert match["sentiment"] == by_id[feedback_id]["sentiment"]
        assert match["severity"] == by_id[feedback_id]["severity"]


def test_backlog_items_appear_with_priorities() -> None:
    rows = sample_rows()
    items = analyze_rows(rows)
    backlog = build_backlog(items)
    report = render_report(items, backlog, source="s.csv", total_rows=len(rows))
    actions = section(report, "## Recommended Actions")
    for entry in backlog["items"]:
        assert f"**{entry['priority']} — {entry['title']}**" in actions


def test_risks_name_failed_batches_unanalysed_rows_and_small_samples() -> None:
    rows = sample_rows()[:12]
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
    assert "- Failed batches: none." in section(report, "## Risks And Unknowns")
    assert "Small sample" not in report


def test_context_names_the_source_and_row_counts() -> None:
    rows = sample_rows()
    _, report = render(rows, source="sample_feedback.csv")
    context = section(report, "## Product Context")
    assert f"`sample_feedback.csv`, {len(rows)} rows in the file, {len(rows)} analysed" in context


def test_report_of_nothing_still_has_every_heading() -> None:
    report = render_report([], {"items": []}, source="empty.csv", total_rows=0)
    assert headings(report) == EXPECTED


def test_report_is_deterministic() -> None:
    rows = sample_rows()
    assert render(rows)[1] == render(rows)[1]
