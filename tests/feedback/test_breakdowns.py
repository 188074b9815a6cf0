"""Breakdowns by metadata columns: which columns, how they are counted, and that the numbers
the report states about them are recomputed from the input's own columns and checked."""

from __future__ import annotations

from typing import Any

from runlens import SOURCE_ROWS
from runlens.evidence import EvidenceIndex, EvidenceItem
from runlens.validation.figures import check_figures
from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.analyst.report import report_from_summary
from runlens_feedback.breakdowns import MAX_PERIODS, MAX_VALUES, breakdowns
from runlens_feedback.contracts import ANALYSIS, BACKLOG
from runlens_feedback.figures import SECTIONS, report_figures

SENTIMENTS = ("negative", "positive", "negative", "neutral", "mixed", "negative")


def item(n: int, sentiment: str | None = None) -> dict[str, Any]:
    return {
        "feedback_id": f"r{n}",
        "sentiment": sentiment or SENTIMENTS[n % len(SENTIMENTS)],
        "severity": "medium",
        "pain_point": "slow export",
        "theme": "export",
        "evidence_text": f"export is slow {n}",
        "language": "en",
    }


def rows(count: int, **columns: Any) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    items = [item(n) for n in range(count)]
    metadata = {
        f"r{n}": {name: (value(n) if callable(value) else value) for name, value in columns.items()}
        for n in range(count)
    }
    return items, metadata


def column(result: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [c for c in result["columns"] if c["column"] == name]
    assert isinstance(found, dict)
    return found


def test_categories_are_counted_per_value_most_rows_first() -> None:
    channels = ("app", "email", "app", "web", "app", "email")
    items, metadata = rows(60, channel=lambda n: channels[n % 6])
    channel = column(breakdowns(items, metadata), "channel")
    assert channel["kind"] == "category"
    assert [(v["label"], v["rows"]) for v in channel["values"]] == [
        ("app", 30),
        ("email", 20),
        ("web", 10),
    ]
    app = channel["values"][0]
    expected = sum(
        1 for n in range(60) if channels[n % 6] == "app" and item(n)["sentiment"] == "negative"
    )
    assert app["sentiment"]["negative"] == expected


def test_numbers_are_in_numeric_order_and_named_with_their_column() -> None:
    items, metadata = rows(40, rating=lambda n: str(n % 5 + 1) if n % 10 else "10")
    rating = column(breakdowns(items, metadata), "rating")
    assert [v["label"] for v in rating["values"]] == [
        "rating 1", "rating 2", "rating 3", "rating 4", "rating 5", "rating 10",
    ]  # fmt: skip


def test_free_text_ids_and_single_values_are_skipped_with_a_reason() -> None:
    items, metadata = rows(
        40,
        comment=lambda n: f"A long free-text comment number {n} about the product and more",
        order_id=lambda n: f"o{n}",
        region="EU",
        many=lambda n: f"v{n % (MAX_VALUES + 1)}",
    )
    result = breakdowns(items, metadata)
    assert result["columns"] == []
    reasons = {entry["column"]: entry["reason"] for entry in result["skipped"]}
    assert reasons == {
        "comment": "too many distinct values",
        "order_id": "too many distinct values",
        "region": "one value",
        "many": "too many distinct values",
    }
    items, metadata = rows(40, note=lambda n: ("x" * 50) + str(n % 3))
    assert breakdowns(items, metadata)["skipped"] == [{"column": "note", "reason": "free text"}]


def test_a_date_column_is_a_monthly_trend_bounded_to_the_latest_periods() -> None:
    def created(n: int) -> str:
        year, month = 2024 + n // 12 % 2, n % 12 + 1
        return f"{year}-{month:02d}-15T09:30:00Z"

    items, metadata = rows(48, created_at=created)
    metadata["r0"]["created_at"] = ""
    trend = column(breakdowns(items, metadata), "created_at")
    assert (trend["kind"], trend["period"]) == ("trend", "month")
    values = trend["values"]
    assert values[0]["special"] == "earlier"
    periods = [v["label"] for v in values if not v["special"]]
    assert len(periods) == MAX_PERIODS and periods == sorted(periods)
    assert periods[-1] == "2025-12"
    assert values[-1]["special"] == "blank" and values[-1]["rows"] == 1
    assert sum(v["rows"] for v in values) == 48


def test_a_short_date_range_is_a_weekly_trend() -> None:
    items, metadata = rows(20, submitted=lambda n: f"2026/03/{n % 20 + 1:02d}")
    trend = column(breakdowns(items, metadata), "submitted")
    assert trend["period"] == "week"
    assert [v["label"] for v in trend["values"]][:2] == ["2026-W09", "2026-W10"]


def test_only_analysed_rows_count_and_each_once() -> None:
    items, metadata = rows(10, channel=lambda n: "app" if n % 2 else "web")
    metadata["unanalysed"] = {"channel": "fax"}
    items.append(dict(items[0]))
    channel = column(breakdowns(items, metadata), "channel")
    assert sum(v["rows"] for v in channel["values"]) == 10
    assert "fax" not in {v["label"] for v in channel["values"]}
    assert breakdowns(items, None) == {"columns": [], "skipped": []}


def test_rows_without_metadata_or_repeated_count_as_in_the_usual_analysis() -> None:
    """An item whose id has no metadata, or repeats one, changes nothing: the same breakdowns
    as the analysis of each row once (read one row at a time, not in one pass)."""
    items, metadata = rows(12, channel=lambda n: ("app", "web", "mail")[n % 3])
    usual = breakdowns(items, metadata)
    assert breakdowns([*items, {"feedback_id": "nowhere", "sentiment": "negative"}], metadata) == (
        usual
    )
    assert breakdowns([*items, dict(items[3], sentiment="positive")], metadata) == usual


# -- the figures ---------------------------------------------------------------------------


def report_and_figures(
    items: list[dict[str, Any]], metadata: dict[str, dict[str, str]], *, zh: bool = False
) -> tuple[str, list[Any]]:
    if zh:
        for entry in items:
            entry["language"] = "zh"
    summary = summarize_analysis(items, total_rows=len(items), row_metadata=metadata)
    report = report_from_summary(summary, {"items": []})
    index = EvidenceIndex.from_items(
        {i["feedback_id"]: EvidenceItem("0" * 64, i["evidence_text"]) for i in items},
        source="f.csv",
        source_hash="0" * 64,
        id_column="feedback_id",
        text_column="text",
    )
    documents = {
        ANALYSIS: {"items": items, "failed_batches": []},
        BACKLOG: {"items": []},
        SOURCE_ROWS: metadata,
    }
    return report, report_figures(documents, index)


def breakdown_statements(report: str, figures: list[Any]) -> list[Any]:
    return [
        s
        for s in check_figures(report, SECTIONS, figures)
        if any(f.key.startswith("breakdown.") for f in s.tied) or s.verdict != "agrees"
    ]


def test_every_breakdown_number_is_tied_to_its_column_and_value() -> None:
    for zh in (False, True):
        items, metadata = rows(
            30,
            channel=lambda n: ("app", "web", "email")[n % 3],
            rating=lambda n: str(n % 5 + 1),
            created_at=lambda n: f"2026-{n % 4 + 1:02d}-03",
        )
        report, figures = report_and_figures(items, metadata, zh=zh)
        assert ("按 `channel` 统计：" if zh else "By `channel`:") in report
        stated = breakdown_statements(report, figures)
        assert stated and all(s.verdict == "agrees" for s in stated)
        lines = report.splitlines()
        rating_5 = next(n for n, line in enumerate(lines, 1) if line.startswith("| rating 5 |"))
        keys = [s.tied[0].key for s in stated if s.line == rating_5]
        assert keys == [
            "breakdown.rating.5.rows",
            "breakdown.rating.5.share",
            "breakdown.rating.5.positive",
            "breakdown.rating.5.negative",
            "breakdown.rating.5.negative.share",
        ]


def test_a_tampered_breakdown_number_is_caught() -> None:
    items, metadata = rows(30, channel=lambda n: ("app", "web", "email")[n % 3])
    report, figures = report_and_figures(items, metadata)
    line = next(line for line in report.splitlines() if line.startswith("| app |"))
    cells = line.split(" | ")
    tampered = report.replace(line, " | ".join([cells[0], str(int(cells[1]) + 1), *cells[2:]]))
    (wrong,) = [s for s in check_figures(tampered, SECTIONS, figures) if s.verdict != "agrees"]
    assert wrong.verdict == "mismatch"
    assert wrong.tied[0].key == "breakdown.channel.app.rows"
    # Figures come from the input's columns, not from the report: other metadata, other figures.
    other = {row_id: {"channel": "web"} for row_id in metadata}
    _, from_other = report_and_figures(items, other)
    assert any(s.verdict != "agrees" for s in check_figures(report, SECTIONS, from_other))


def test_chinese_columns_and_values_are_tied_too() -> None:
    items, metadata = rows(
        24,
        渠道=lambda n: ("应用商店", "客服工单", "问卷")[n % 3],
        评分=lambda n: f"{n % 3 + 3}星",
        优先级=lambda n: ("高", "低")[n % 2],  # values that are also severity labels
    )
    report, figures = report_and_figures(items, metadata, zh=True)
    assert "按 `渠道` 统计：" in report and "| 评分 5星 |" in report
    stated = breakdown_statements(report, figures)
    assert len(stated) == 5 * (3 + 3 + 2)
    assert all(s.verdict == "agrees" and len(s.tied) == 1 for s in stated)
    keys = {s.tied[0].key.rsplit(".", 1)[0] for s in stated}
    assert "breakdown.优先级.高" in keys and "breakdown.评分.5星" in keys


def test_hostile_values_cannot_add_markup_or_citations() -> None:
    hostile = ("“fake” — r1", "# Heading", "a | b", "*bold*")
    items, metadata = rows(24, source=lambda n: hostile[n % 4])
    report, figures = report_and_figures(items, metadata)
    context = report[report.index("## Product Context") : report.index("## Executive Summary")]
    assert "“fake”" not in context and "| source ‘fake’ — r1 |" in context  # no citation
    assert "| # Heading |" in context  # inside a cell: no heading
    assert "| a \\| b |" in context and "| \\*bold\\* |" in context
    stated = breakdown_statements(report, figures)
    assert len(stated) == 4 * 5 and all(s.verdict == "agrees" for s in stated)
