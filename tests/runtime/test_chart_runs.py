"""The insight chart is an optional deliverable, judged and recorded like the others.

A scripted run that draws it (`write_insight_chart`) shows it `validated` in the verdict, the
events, manifest.json, `runlens show` and `runlens validate`; a tampered number in it rejects
the chart, not the report; a run that draws no chart completes with the chart listed as
`missing` and no finding; a report that links a chart never drawn fails on the chart.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from runlens.cli import cli
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT, REPORT_HEADINGS

from .conftest import Documents, RunOutcome, RunScript, turns_for, write_call

DRAW = {"name": "write_insight_chart", "arguments": {}}
LINK = "![Pain points by rows and sentiment](insight_chart.svg)"
#: The good report, with the chart linked under Executive Summary as the skill asks.
LINKED_REPORT = "".join(
    f"{h}\n\n{LINK if h == '## Executive Summary' else 'About ' + h.lstrip('# ') + '.'}\n\n"
    for h in REPORT_HEADINGS
)


def charted_turns(
    analysis: dict[str, Any], backlog: dict[str, Any], *, chart: str | None = None
) -> list[dict[str, Any]]:
    """Read, write the analysis and backlog, draw the chart (then overwrite it with `chart`,
    as a model that edits the SVG would), write the report linking it, finish."""
    tampering = [write_call(CHART, chart)] if chart is not None else []
    return [
        {"tool_calls": [{"name": "read_feedback_csv", "arguments": {"offset": 0}}]},
        {"tool_calls": [write_call(ANALYSIS, analysis), write_call(BACKLOG, backlog)]},
        {"tool_calls": [DRAW, *tampering, write_call(REPORT, LINKED_REPORT)]},
        {"content": "Done: the deliverables and the chart are written."},
    ]


def invoke(*args: object) -> Any:
    return CliRunner(env={"COLUMNS": "200"}).invoke(cli, [str(a) for a in args])


def validate_json(workspace: Path) -> tuple[int, dict[str, Any]]:
    result = invoke("validate", workspace, "--json")
    return result.exit_code, json.loads(result.stdout)


def manifest_entry(outcome: RunOutcome, name: str) -> dict[str, Any]:
    (entry,) = [a for a in outcome.manifest["artifacts"] if a["name"] == name]
    assert isinstance(entry, dict)
    return entry


def artifact_events(outcome: RunOutcome) -> dict[str, tuple[str, list[str]]]:
    return {
        event["data"]["artifact"]: (event["type"], event["data"]["finding_codes"])
        for event in outcome.events
        if event["type"] in ("artifact.validated", "artifact.rejected")
    }


def chart_row(output: str) -> str:
    """The line of the artifacts table (`runlens validate`, `runlens run`, `runlens show`)
    that carries the chart's label and status."""
    (line,) = [line for line in output.splitlines() if "Insight Chart" in line]
    return line


def test_a_drawn_chart_is_validated_in_every_record(
    run_script: RunScript, good_documents: Documents
) -> None:
    analysis, backlog, _ = good_documents
    outcome = run_script(charted_turns(analysis, backlog))
    assert outcome.exit_code == 0, outcome.output
    assert outcome.json["status"] == "completed"
    assert outcome.json["findings"] == []
    assert outcome.json["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "validated",
    }
    assert artifact_events(outcome)[CHART] == ("artifact.validated", [])
    entry = manifest_entry(outcome, CHART)
    chart_bytes = (outcome.workspace / CHART).read_bytes()
    assert (entry["label"], entry["required"], entry["status"]) == (
        "Insight Chart",
        False,
        "validated",
    )
    assert (entry["size"], entry["sha256"]) == (
        len(chart_bytes),
        hashlib.sha256(chart_bytes).hexdigest(),
    )
    assert entry["findings"] == []

    exit_code, payload = validate_json(outcome.workspace)
    assert (exit_code, payload["artifacts"]) == (0, outcome.json["artifacts"])
    human = invoke("validate", outcome.workspace)
    assert human.exit_code == 0, human.output
    assert CHART in chart_row(human.stdout)
    assert "validated" in chart_row(human.stdout)
    shown = invoke("show", outcome.workspace, "--no-events")
    assert shown.exit_code == 0, shown.output
    assert "validated" in chart_row(shown.stdout)


def tampered(svg: str) -> tuple[str, str, str]:
    """`svg` with its first row count raised by 3; the figure's key and its true value."""
    match = re.search(r'data-figure="([^"]+\.rows)">(\d+)<', svg)
    assert match, "the chart labels its row counts"
    key, value = match[1], match[2]
    wrong = match[0].replace(f">{value}<", f">{int(value) + 3}<")
    return svg.replace(match[0], wrong, 1), key, value


def test_a_tampered_chart_number_rejects_the_chart_not_the_report(
    run_script: RunScript, good_documents: Documents
) -> None:
    analysis, backlog, _ = good_documents
    honest = run_script(charted_turns(analysis, backlog))
    assert honest.exit_code == 0, honest.output
    svg, key, value = tampered((honest.workspace / CHART).read_text(encoding="utf-8"))

    outcome = run_script(charted_turns(analysis, backlog, chart=svg))

    assert outcome.exit_code == 1
    assert outcome.json["status"] == "failed"
    assert outcome.json["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "rejected",
    }
    (finding,) = outcome.json["findings"]
    assert (finding["validator"], finding["artifact"], finding["code"]) == (
        "ChartValidationHook",
        CHART,
        "figure_mismatch",
    )
    assert (finding["details"]["figure"], finding["details"]["expected"]) == (key, value)
    assert outcome.record["error_message"].startswith("figure mismatch")
    assert CHART in outcome.record["error_message"]
    events = artifact_events(outcome)
    assert events[CHART] == ("artifact.rejected", ["figure_mismatch"])
    assert events[REPORT] == ("artifact.validated", [])
    entry = manifest_entry(outcome, CHART)
    assert entry["status"] == "rejected"
    assert [f["code"] for f in entry["findings"]] == ["figure_mismatch"]
    assert manifest_entry(outcome, REPORT)["findings"] == []
    assert outcome.plan["write_report"] == "completed"  # the report itself is sound
    assert outcome.plan["validate_deliverables"] == "failed"

    # `runlens validate` on the finished workspace judges it the same way.
    exit_code, payload = validate_json(outcome.workspace)
    assert exit_code == 1
    assert payload["artifacts"] == outcome.json["artifacts"]
    assert [(f["artifact"], f["code"]) for f in payload["findings"]] == [(CHART, "figure_mismatch")]
    shown = invoke("show", outcome.workspace, "--no-events")
    assert "rejected" in chart_row(shown.stdout)


def test_a_run_without_a_chart_completes_with_the_chart_missing(
    run_script: RunScript, good_documents: Documents
) -> None:
    outcome = run_script(turns_for(*good_documents))
    assert outcome.exit_code == 0, outcome.output
    assert outcome.json["status"] == "completed"
    assert outcome.json["findings"] == []
    assert outcome.json["artifacts"][CHART] == "missing"
    assert CHART not in artifact_events(outcome)
    entry = manifest_entry(outcome, CHART)
    assert (entry["status"], entry["required"], entry["size"], entry["findings"]) == (
        "missing",
        False,
        None,
        [],
    )
    assert set(outcome.plan.values()) == {"completed"}

    exit_code, payload = validate_json(outcome.workspace)
    assert (exit_code, payload["artifacts"][CHART], payload["findings"]) == (0, "missing", [])
    for command in (("validate", outcome.workspace), ("show", outcome.workspace, "--no-events")):
        result = invoke(*command)
        assert result.exit_code == 0, result.output
        assert "missing (optional)" in chart_row(result.stdout)


def test_a_report_linking_an_undrawn_chart_fails_on_the_chart(
    run_script: RunScript, good_documents: Documents
) -> None:
    analysis, backlog, _ = good_documents
    outcome = run_script(turns_for(analysis, backlog, LINKED_REPORT))
    assert outcome.exit_code == 1
    assert outcome.json["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "missing",
    }
    (finding,) = outcome.json["findings"]
    assert (finding["artifact"], finding["code"]) == (CHART, "missing_file")
    assert outcome.record["error_message"].startswith(f"missing required files: {CHART}")
    assert artifact_events(outcome)[CHART] == ("artifact.rejected", ["missing_file"])
    shown = invoke("show", outcome.workspace, "--no-events")
    row = chart_row(shown.stdout)
    assert "missing" in row and "optional" not in row  # asked for by the report: a problem
