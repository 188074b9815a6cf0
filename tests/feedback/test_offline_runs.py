"""End to end through `runlens run feedback-analysis CSV --json` with the offline model.

Every input here is written by the test itself (nothing depends on the sample data, except
the one test that checks the sample completes). Each run must complete with all three
deliverables validated, account for every row, and write a report whose counts are the
analysis's.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from runlens.validation import QuoteLocation, validate_workspace
from runlens_feedback.batches import NO_TEXT_REASON
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, CONTRACTS, REPORT

from .helpers import OfflineRun, generated_rows, run_offline, write_csv

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"
Rows = list[dict[str, str]]

ENGLISH: Rows = [
    {"feedback_id": "e1", "text": "The export to Excel takes forever, over five minutes."},
    {"feedback_id": "e2", "text": "Login fails every morning with an invalid token error."},
    {"feedback_id": "e3", "text": "Love the new dashboard, it is clean and fast."},
    {"feedback_id": "e4", "text": "We were charged twice this month, please refund us."},
    {"feedback_id": "e5", "text": "Could you add a dark mode?"},
]
CHINESE: Rows = [
    {"feedback_id": "z1", "text": "导出周报太慢了，每次都要等三分钟。"},
    {"feedback_id": "z2", "text": "登录经常失败，提示验证码错误。"},
    {"feedback_id": "z3", "text": "仪表盘做得很漂亮，老板很喜欢。"},
    {"feedback_id": "z4", "text": "这个月为什么多扣了两个席位的钱？"},
]
QUOTED: Rows = [
    {"feedback_id": "q1", "text": 'Export fails with "error 500", always,\nand support is slow.'},
    {"feedback_id": "q2", "text": "第一行：导出失败，\n第二行：客服也很慢，\r\n真的很影响工作。"},
    {"feedback_id": "q3", "text": 'Great app, really. "Best" tool, honestly, we love it.'},
]
#: Markdown characters, every closing quotation mark, quotes the summary cuts.
MARKDOWN_AND_MARKS: Rows = [
    {"feedback_id": "m1", "text": "The *export* [beta] fails_now & <b>x</b>, C:\\tmp | `x`."},
    {"feedback_id": "m2", "text": 'He wrote “it is broken” and "so broken" and 「坏了」 — sync.'},
    {
        "feedback_id": "m3",
        "text": "The Salesforce connector stopped syncing after the last update and we lost "
        "two days of pipeline data, which is unacceptable for us",
    },
    {
        "feedback_id": "m4",
        "text": "Экспорт отчётов работает очень медленно и постоянно зависает на девяноста "
        "девяти процентах, это ужасно",
    },
]
RESTAURANT_AND_GAMES: Rows = [
    {"feedback_id": "r1", "text": "The soup was cold and the waiter ignored us for an hour."},
    {"feedback_id": "r2", "text": "The soup arrived cold again, very disappointing."},
    {"feedback_id": "r3", "text": "Delicious dumplings and friendly staff, we will come back!"},
    {"feedback_id": "r4", "text": "菜太咸了，服务员态度也很差。"},
    {"feedback_id": "r5", "text": "上菜太慢，等了四十分钟，菜都凉了。"},
    {"feedback_id": "g1", "text": "The final boss is impossible unless you pay, total pay-to-win."},
    {"feedback_id": "g2", "text": "Matchmaking puts beginners against veterans, so frustrating."},
    {"feedback_id": "g3", "text": "这个关卡太难了，充值了还是过不去。"},
    {"feedback_id": "g4", "text": "Beautiful graphics and a great soundtrack."},
]


# -- checks ---------------------------------------------------------------------------------


def assert_completed(run: OfflineRun) -> None:
    result = run.result
    assert run.exit_code == 0, result.get("error_message")
    assert result["status"] == "completed"
    assert result["findings"] == []
    assert result["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "validated",  # the offline analyst draws the chart and the report links it
    }


def assert_rows_accounted(run: OfflineRun, rows: Rows) -> None:
    """One item per row, or the row in failed_batches with a reason; never both, never twice."""
    analysis = run.analysis
    analysed = [item["feedback_id"] for item in analysis["items"]]
    failed = [fid for entry in analysis["failed_batches"] for fid in entry["feedback_ids"]]
    assert all(entry["reason"].strip() for entry in analysis["failed_batches"])
    assert sorted(analysed + failed) == sorted(row["feedback_id"] for row in rows)
    texts = {row["feedback_id"]: row["text"] for row in rows}
    for item in analysis["items"]:
        assert item["evidence_text"].strip()
        assert item["evidence_text"] in texts[item["feedback_id"]]


def report_section(report: str, heading: str) -> str:
    start = report.index(heading + "\n")
    end = report.find("\n## ", start + len(heading))
    return report[start : end if end >= 0 else len(report)]


def assert_report_matches_analysis(run: OfflineRun, total_rows: int) -> None:
    items = run.analysis["items"]
    report = run.report
    # The body is in the analysed items' main language (Chinese or English).
    languages = Counter(item.get("language") for item in items).most_common()
    zh = (
        bool(languages)
        and languages[0][0] == "zh"
        and (len(languages) == 1 or languages[1][1] < languages[0][1])
    )
    context = report_section(report, "## Product Context")
    if zh:
        assert f"文件共 {total_rows} 条，已分析 {len(items)} 条" in context
    else:
        assert f"{total_rows} rows in the file, {len(items)} analysed" in context
    summary = report_section(report, "## Executive Summary")
    for key, values in (
        ("sentiment", ("positive", "neutral", "negative", "mixed")),
        ("severity", ("critical", "high", "medium", "low")),
    ):
        counts = Counter(item[key] for item in items)
        for value in values:
            share = f"{counts[value] / len(items):.1%}"
            if zh:
                assert f"- {ZH_NAMES[value]}：{counts[value]} 条（{share}）" in summary
            else:
                assert f"- {value.capitalize()}: {counts[value]} ({share})" in summary
    themes = Counter(item["theme"] for item in items)
    table = report_section(report, "## Top Pain Points")
    for line in table.splitlines():
        if re.match(r"^\| \d+ \|", line):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            assert int(cells[3]) == themes[cells[2].strip("`")]
    cited = {fid for entry in run.backlog["items"] for fid in entry["evidence_feedback_ids"]}
    assert cited <= {item["feedback_id"] for item in items}


#: How a Chinese report names sentiments and severities.
ZH_NAMES = {"positive": "正面", "neutral": "中性", "negative": "负面", "mixed": "混合",
            "low": "低", "medium": "中等", "high": "高", "critical": "严重"}  # fmt: skip


def run_rows(tmp_path: Path, rows: Rows, *, encoding: str = "utf-8") -> OfflineRun:
    csv_path = write_csv(tmp_path / "feedback.csv", rows, encoding=encoding)
    return run_offline(csv_path, tmp_path / "workspace")


# -- tests ----------------------------------------------------------------------------------


def report_quotes(run: OfflineRun) -> list[QuoteLocation]:
    """The report's quotes the validators verified, validating the run's workspace again."""
    record = json.loads((run.workspace / "runtime" / "run.json").read_text(encoding="utf-8"))
    verdict = validate_workspace(
        run.workspace, CONTRACTS, expected_index_sha256=record["evidence_index_sha256"]
    )
    assert verdict.passed, verdict.error_message
    return [quote for quote in verdict.quotes if quote.artifact == REPORT]


def test_the_sample_completes(tmp_path: Path) -> None:
    run = run_offline(SAMPLE, tmp_path / "workspace")
    assert_completed(run)
    assert run.analysis["items"]
    quoted = report_quotes(run)
    assert len(quoted) >= 5
    assert len(quoted) == run.report.count(" — fb_")  # every citation line was verified


#: The inputs every offline run must complete on: (rows, encoding), one per kind of file.
INPUT_KINDS = [
    pytest.param(ENGLISH, "utf-8", id="english-only"),
    pytest.param(CHINESE, "gbk", id="gbk"),
    pytest.param(CHINESE + ENGLISH, "utf-8-sig", id="utf-8-bom"),
    pytest.param(QUOTED, "utf-8", id="quoted-newlines-and-commas"),
    pytest.param(ENGLISH[:1], "utf-8", id="one-row"),
    pytest.param(MARKDOWN_AND_MARKS, "utf-8", id="markdown-characters-and-long-quotes"),
]


@pytest.mark.parametrize(("rows", "encoding"), INPUT_KINDS)
def test_inputs_of_every_kind_complete(tmp_path: Path, rows: Rows, encoding: str) -> None:
    run = run_rows(tmp_path, rows, encoding=encoding)
    assert_completed(run)
    assert report_quotes(run)
    assert_rows_accounted(run, rows)
    assert_report_matches_analysis(run, len(rows))
    assert run.analysis["failed_batches"] == []


@pytest.mark.parametrize(
    "make_id",
    [
        pytest.param(lambda n: f"row {n}", id="spaces"),
        pytest.param(lambda n: str(n), id="numbers"),
        pytest.param(lambda n: f"r]{n}", id="closing-bracket"),
        pytest.param(lambda n: f"REV.{n:04d}.", id="trailing-dot"),
        pytest.param(lambda n: f"_{n}_", id="underscores"),
        pytest.param(lambda n: f"“{n}”", id="quotation-marks"),
        pytest.param(lambda n: f"用户-{n}", id="chinese"),
    ],
)
def test_ids_of_any_format_are_cited_and_verified(
    tmp_path: Path, make_id: Callable[[int], str]
) -> None:
    rows = [{**row, "feedback_id": make_id(n)} for n, row in enumerate(ENGLISH * 4, start=1)]
    run = run_rows(tmp_path, rows)
    assert_completed(run)
    cited = {quote.row_id for quote in report_quotes(run)}
    assert cited and cited <= {row["feedback_id"] for row in rows}


def test_gbk_text_is_quoted_in_its_own_characters(tmp_path: Path) -> None:
    run = run_rows(tmp_path, CHINESE, encoding="gbk")
    quotes = {item["feedback_id"]: item["evidence_text"] for item in run.analysis["items"]}
    assert quotes["z1"] in CHINESE[0]["text"]
    assert "导出" in run.report or "慢" in run.report


def test_a_one_row_file_reports_a_small_sample(tmp_path: Path) -> None:
    run = run_rows(tmp_path, ENGLISH[1:2])
    assert_completed(run)
    risks = report_section(run.report, "## Risks And Unknowns")
    assert "Small sample: only 1 row analysed" in risks


def test_ten_thousand_mixed_rows_complete(tmp_path: Path) -> None:
    rows = generated_rows(10_000, seed=11)
    started = time.perf_counter()
    run = run_rows(tmp_path, rows)
    elapsed = time.perf_counter() - started
    assert_completed(run)
    assert_rows_accounted(run, rows)
    assert_report_matches_analysis(run, len(rows))
    languages = Counter(item["language"] for item in run.analysis["items"])
    assert languages["zh"] > 1000 and languages["en"] > 1000
    assert elapsed < 90, f"10,000 rows took {elapsed:.1f} s"


def test_two_runs_write_byte_identical_artifacts(tmp_path: Path) -> None:
    rows = generated_rows(300, seed=5) + QUOTED
    csv_path = write_csv(tmp_path / "feedback.csv", rows)
    first = run_offline(csv_path, tmp_path / "first")
    second = run_offline(csv_path, tmp_path / "second")
    assert_completed(first)
    assert first.artifact_bytes() == second.artifact_bytes()


def test_unknown_domains_get_themes_of_their_own(tmp_path: Path) -> None:
    run = run_rows(tmp_path, RESTAURANT_AND_GAMES)
    assert_completed(run)
    assert_rows_accounted(run, RESTAURANT_AND_GAMES)
    items = run.analysis["items"]
    themes = Counter(item["theme"] for item in items)
    assert len(themes) >= 2
    assert max(themes.values()) < len(items)
    # the restaurant rows and the game rows never share a theme
    by_domain: dict[str, set[str]] = {}
    for item in items:
        by_domain.setdefault(item["feedback_id"][0], set()).add(item["theme"])
    assert not by_domain["r"] & by_domain["g"], by_domain
    assert not {"uncategorized", "unspecified", "topic:general"} & set(themes)
    texts = " ".join(row["text"].lower() for row in RESTAURANT_AND_GAMES)
    for theme in themes:
        if theme.startswith("topic:"):
            assert theme.removeprefix("topic:") in texts
    assert run.backlog["items"], "complaints about soup and bosses still make backlog items"


def test_a_whitespace_only_row_is_recorded_as_unanalysable(tmp_path: Path) -> None:
    rows = [*ENGLISH[:3], {"feedback_id": "blank", "text": "  \t "}, *CHINESE[:2]]
    run = run_rows(tmp_path, rows)
    assert_completed(run)
    assert_rows_accounted(run, rows)
    analysis = run.analysis
    assert "blank" not in {item["feedback_id"] for item in analysis["items"]}
    (entry,) = analysis["failed_batches"]
    assert entry["feedback_ids"] == ["blank"]
    assert entry["reason"] == NO_TEXT_REASON
    risks = report_section(run.report, "## Risks And Unknowns")
    assert f"{NO_TEXT_REASON}: 1 row in 1 batch" in risks
    assert "Unanalysed rows: 1 of 6" in risks
    assert_report_matches_analysis(run, len(rows))
