"""The insight chart: written by its tool, linked from the report, validated like the report's
figures; a tampered number, a swapped label, hostile text and unsafe SVG are all caught."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from runlens_feedback.chart import SVG_NS, chart_svg, check_chart
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT
from runlens_feedback.tools import write_insight_chart

from .deliverables import finish_with_chart, tool_context, verdict
from .helpers import OfflineRun, run_offline, write_csv

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"
CHART_CODES = {"invalid_chart", "unsafe_chart", "figure_mismatch", "unsupported_figure"}


@pytest.fixture(scope="module")
def charted(tmp_path_factory: pytest.TempPathFactory) -> tuple[OfflineRun, dict[str, Any]]:
    run = run_offline(SAMPLE, tmp_path_factory.mktemp("chart") / "workspace")
    assert run.result["status"] == "completed", run.result["error_message"]
    return run, finish_with_chart(run.workspace)


@pytest.fixture
def workspace(charted: tuple[OfflineRun, dict[str, Any]], tmp_path: Path) -> Path:
    return Path(shutil.copytree(charted[0].workspace, tmp_path / "workspace"))


def chart_findings(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in payload["findings"] if f["artifact"] == CHART]


def edit_chart(workspace: Path, old: str, new: str) -> None:
    path = workspace / CHART
    svg = path.read_text(encoding="utf-8")
    assert old in svg
    path.write_text(svg.replace(old, new, 1), encoding="utf-8")


def test_the_chart_is_written_linked_and_validated(workspace: Path) -> None:
    payload = verdict(workspace)
    assert payload["exit_code"] == 0, payload["error_message"]
    assert payload["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "validated",
    }
    assert chart_findings(payload) == []
    report = (workspace / REPORT).read_text(encoding="utf-8")
    assert re.search(r"^!\[[^\]]+\]\(insight_chart\.svg\)$", report, re.MULTILINE)
    root = ET.fromstring((workspace / CHART).read_bytes())
    assert root.tag == f"{{{SVG_NS}}}svg"
    numbers = [t for t in root.iter(f"{{{SVG_NS}}}text") if t.get("data-figure")]
    assert len(numbers) > 10  # bars, segments and the trend's periods are all labelled
    assert any(t.get("data-figure", "").startswith("breakdown.created_at.") for t in numbers)


def test_the_chart_is_deterministic(charted: tuple[OfflineRun, dict[str, Any]]) -> None:
    _, summary = charted
    assert chart_svg(summary, "zh") == chart_svg(summary, "zh")
    run, _ = charted
    assert (run.workspace / CHART).read_text(encoding="utf-8") == chart_svg(summary, "zh")


def test_a_tampered_number_is_caught_at_its_line(workspace: Path) -> None:
    svg = (workspace / CHART).read_text(encoding="utf-8")
    match = re.search(r'data-figure="(theme\.[^"]+\.rows)">(\d+)<', svg)
    assert match
    key, value = match[1], match[2]
    edit_chart(workspace, match[0], match[0].replace(f">{value}<", f">{int(value) + 3}<"))
    payload = verdict(workspace)
    assert payload["exit_code"] == 1
    assert payload["artifacts"][REPORT] == "validated"
    (finding,) = chart_findings(payload)
    assert finding["code"] == "figure_mismatch"
    assert finding["details"]["figure"] == key
    assert finding["details"]["expected"] == value
    line = svg[: svg.index(match[0])].count("\n") + 1
    assert finding["path"] == f"line {line}"


def test_a_number_without_a_figure_and_a_swapped_label_are_caught(workspace: Path) -> None:
    edit_chart(workspace, "</svg>", '<text x="1" y="1">42% of users churned</text></svg>')
    svg = (workspace / CHART).read_text(encoding="utf-8")
    first, second = re.findall(r'data-label="theme\.[^"]+">([^<]+)<', svg)[:2]
    edit_chart(workspace, f">{first}<", f">{second}<")
    codes = sorted(f["code"] for f in chart_findings(verdict(workspace)))
    assert codes == ["figure_mismatch", "unsupported_figure"]


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        '<rect width="1" height="1" onload="alert(1)"/>',
        '<image href="https://example.com/track.png"/>',
        '<rect width="1" height="1" style="fill: url(https://example.com/x)"/>',
        '<foreignObject><p xmlns="http://www.w3.org/1999/xhtml">hi</p></foreignObject>',
    ],
)
def test_unsafe_svg_is_refused(workspace: Path, hostile: str) -> None:
    edit_chart(workspace, "</svg>", hostile + "</svg>")
    codes = {f["code"] for f in chart_findings(verdict(workspace))}
    assert "unsafe_chart" in codes


def test_entities_and_doctypes_are_refused_without_expansion() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b'<svg xmlns="http://www.w3.org/2000/svg"><text>&b;</text></svg>'
    )
    (problem,) = check_chart(bomb, [])
    assert problem.code == "unsafe_chart"
    external = (
        b'<!DOCTYPE svg SYSTEM "http://example.com/x.dtd"><svg xmlns="http://www.w3.org/2000/svg"/>'
    )
    assert [p.code for p in check_chart(external, [])] == ["unsafe_chart"]
    assert [p.code for p in check_chart(b"<svg><text>1</svg>", [])] == ["invalid_chart"]
    assert [p.code for p in check_chart(b"<html/>", [])] == ["invalid_chart"]


def test_a_linked_chart_that_is_missing_is_a_missing_file(workspace: Path) -> None:
    (workspace / CHART).unlink()
    payload = verdict(workspace)
    (finding,) = chart_findings(payload)
    assert finding["code"] == "missing_file"
    assert payload["exit_code"] == 1
    assert "artifacts/insight_chart.svg" in payload["error_message"]


def test_an_unlinked_chart_may_be_missing(workspace: Path) -> None:
    report = (workspace / REPORT).read_text(encoding="utf-8")
    (workspace / REPORT).write_text(
        re.sub(r"^!\[.*insight_chart\.svg\)\n", "", report, flags=re.MULTILINE), encoding="utf-8"
    )
    (workspace / CHART).unlink()
    payload = verdict(workspace)
    assert payload["exit_code"] == 0, payload["error_message"]
    assert chart_findings(payload) == []


def test_hostile_label_text_is_escaped_and_still_checked(tmp_path: Path) -> None:
    hostile = '</text><script>alert("x")</script>&amp; \x0b\x1b <b>'
    rows = [
        {"feedback_id": f"h{n}", "text": text, "channel": "web"}
        for n, text in enumerate(["Export is slow", "Export fails", "Login is broken"])
    ]
    run = run_offline(write_csv(tmp_path / "in.csv", rows), tmp_path / "ws")
    analysis_path = run.workspace / ANALYSIS
    document = json.loads(analysis_path.read_text(encoding="utf-8"))
    for entry in document["items"]:
        entry["theme"] = None
        entry["pain_point"] = hostile  # a model's words become the group's label
        entry["sentiment"], entry["severity"] = "negative", "high"
    analysis_path.write_text(json.dumps(document), encoding="utf-8")
    write_insight_chart(tool_context(run.workspace))
    svg = (run.workspace / CHART).read_bytes()
    assert b"<script" not in svg and b"\x0b" not in svg and b"\x1b" not in svg
    root = ET.fromstring(svg)  # still well-formed XML
    labels = [t.text for t in root.iter(f"{{{SVG_NS}}}text") if t.get("data-label")]
    assert labels and (labels[0] or "").startswith("</text><script>")  # shown as text, not markup
    assert check_chart(svg, []) == []
    assert chart_findings(verdict(run.workspace)) == []  # its numbers still tie to figures


def test_a_tampered_breakdown_number_in_the_report_is_caught(workspace: Path) -> None:
    path = workspace / REPORT
    report = path.read_text(encoding="utf-8")
    table = report[report.index("按 `channel` 统计：") :]
    match = re.search(r"^\| (\S+) \| (\d+) \|", table, re.MULTILINE)
    assert match
    value, rows = match[1].replace("\\_", "_"), int(match[2])
    path.write_text(report.replace(match[0], f"| {match[1]} | {rows + 1} |", 1), encoding="utf-8")
    payload = verdict(workspace)
    assert payload["artifacts"][REPORT] == "rejected"
    (finding,) = [f for f in payload["findings"] if f["artifact"] == REPORT]
    assert finding["code"] == "figure_mismatch"
    assert finding["details"]["figure"] == f"breakdown.channel.{value}.rows"
    assert finding["details"]["expected"] == str(rows)


def test_the_report_and_the_chart_share_one_computation_of_the_figures(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The figure and chart validators check the same figures: a round computes them once,
    and the next round (a new context: the files may have changed) computes them again."""
    from runlens.validation import ValidationContext, stop_validators
    from runlens_feedback import figures, plugin

    calls: list[int] = []
    compute = figures.analysis_figures

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return compute(*args, **kwargs)

    monkeypatch.setattr(figures, "analysis_figures", counted)
    checking = {"FigureValidationHook", "ChartValidationHook"}
    validators = [v for v in stop_validators(plugin, entry_points=False) if v.name in checking]
    assert {v.name for v in validators} == checking
    for round_number in (1, 2):
        context = ValidationContext(workspace, tuple(plugin.contracts))
        results = [validator.validate(context) for validator in validators]
        assert [result.findings for result in results] == [(), ()]
        assert len(calls) == round_number


@pytest.mark.parametrize(
    "text",
    ["", "plain", "a&b<c>d", 'say "hi"', "it's", "both ' and \"", "a\nb\r\tc", "&amp; \"'<>\n"],
)
def test_the_chart_escapes_text_and_attributes_as_saxutils_does(text: str) -> None:
    from xml.sax import saxutils

    from runlens_feedback.chart import escape, quoteattr

    assert escape(text) == saxutils.escape(text)
    assert quoteattr(text) == saxutils.quoteattr(text)


def _hostile_rows() -> list[dict[str, str]]:
    """Feedback with odd Unicode, empty values, a huge row and repeated wordings, a date and a
    category column, so that the chart has pain points, themes and a trend to draw."""
    lines = [
        "导出报表太慢了，每次都要等十分钟",
        "The export keeps failing with an unknown error",
        "App crashed again and we lost data!!",
        "登录失败，提示未知错误",
        "Would love bulk editing in the dashboard",
        "We were charged twice this month, please refund",
        "e\u0301\u200b\u202e Ｅｘｐｏｒｔ ｆａｉｌｓ 🙂\ufeff",
        "",
        "   ",
        "导出报表太慢了，每次都要等十分钟 " * 400,
    ]
    return [
        {
            "feedback_id": f"fb_{n:03d}",
            "text": lines[n % len(lines)],
            "channel": ("app_store", "", "客服\u00a0热线")[n % 3],
            "created_at": f"2026-{n % 12 + 1:02d}-{n % 28 + 1:02d}",
        }
        for n in range(120)
    ]


def test_the_chart_tool_reuses_the_batch_summary_and_draws_the_same_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a run, the chart tool draws from the summary the batch tool returned (the analysis
    file is the one it wrote): the same bytes as the chart drawn from the file alone."""
    from runlens_feedback import tools

    computed: list[int] = []
    summary = tools._summary

    def counted(*args: Any, **kwargs: Any) -> Any:
        computed.append(1)
        return summary(*args, **kwargs)

    monkeypatch.setattr(tools, "_summary", counted)
    source = write_csv(tmp_path / "hostile.csv", _hostile_rows())
    run = run_offline(source, tmp_path / "run")
    assert run.result["status"] == "completed", run.result["error_message"]
    assert computed == []  # the run's chart came from the batch tool's summary
    drawn = (run.workspace / CHART).read_bytes()
    (run.workspace / CHART).unlink()
    write_insight_chart(tool_context(run.workspace))  # a new run's context: from the file
    assert computed == [1]
    assert (run.workspace / CHART).read_bytes() == drawn
    assert b"data-figure" in drawn and b"breakdown.created_at." in drawn


def test_the_remembered_summary_is_only_used_for_the_file_it_was_made_from(
    workspace: Path,
) -> None:
    from runlens_feedback.batches import _SUMMARY_STATE, _analysis_digest, remembered_summary

    context = tool_context(workspace)
    summary = {"pain_points": [], "breakdowns": {"columns": []}, "languages": {}}
    assert remembered_summary(context, 10) is None  # nothing remembered
    context.state[_SUMMARY_STATE] = (_analysis_digest(context), 10, summary)
    assert remembered_summary(context, 10) is summary
    assert remembered_summary(context, 11) is None  # another input's row count
    path = workspace / ANALYSIS
    path.write_bytes(path.read_bytes().replace(b"\n]", b"\n ]", 1))  # rewritten
    assert remembered_summary(context, 10) is None
    path.unlink()
    assert remembered_summary(context, 10) is None
    path.mkdir()  # not a regular file
    assert remembered_summary(context, 10) is None
