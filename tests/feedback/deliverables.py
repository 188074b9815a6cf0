"""A finished offline workspace with breakdowns and the chart, for the report and chart tests.

`finish_with_chart(workspace)` does to a workspace of an offline run what the offline analyst
does once it writes the chart: the `write_insight_chart` tool draws the chart, and the report
is written again from the analysis with the input's metadata columns and a link to the chart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from runlens.cli import cli
from runlens.tools.base import ToolContext
from runlens.tools.workspace import Workspace
from runlens_feedback.aggregate import summarize_analysis
from runlens_feedback.analyst import report_from_summary
from runlens_feedback.breakdowns import table_metadata
from runlens_feedback.chart import CHART_FILE
from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT
from runlens_feedback.tools import load_input, write_insight_chart


def tool_context(workspace: Path) -> ToolContext:
    (source,) = (workspace / "input").iterdir()
    return ToolContext(run_id="test", workspace=Workspace(workspace), input_path=source)


def finish_with_chart(workspace: Path) -> dict[str, Any]:
    """Write the chart and the report with breakdowns and the chart's link; the summary."""
    context = tool_context(workspace)
    write_insight_chart(context)
    table, index = load_input(context)
    analysis = json.loads((workspace / ANALYSIS).read_text(encoding="utf-8"))
    backlog = json.loads((workspace / BACKLOG).read_text(encoding="utf-8"))
    summary = summarize_analysis(
        analysis["items"],
        total_rows=len(index),
        failed_batches=analysis["failed_batches"],
        source=index.source,
        row_metadata=table_metadata(table, index),
    )
    report = report_from_summary(summary, backlog, chart=CHART_FILE)
    (workspace / REPORT).write_text(report, encoding="utf-8")
    return summary


def verdict(workspace: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["validate", str(workspace), "--json", *args])
    payload: dict[str, Any] = json.loads(result.stdout)
    payload["exit_code"] = result.exit_code
    return payload
