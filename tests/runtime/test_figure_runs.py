"""Scripted runs whose report states a wrong figure: the run fails with the report rejected
and the JSON artifacts validated; a repair round that fixes the figure completes, and the
repair message the model reads names the right value."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runlens.models.messages import UserMessage
from runlens.plugins import load_plugin
from runlens.runtime.run import RunSettings, run_plugin
from runlens.testing import ScriptedModel
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT, REPORT_HEADINGS

from .conftest import Documents, RunScript, turns_for, write_call

# The three rows of FEEDBACK_CSV, as the `good_documents` analysis reads them.
SUMMARY = "3 rows analysed: 2 negative (66.7%), 1 neutral. Backlog: 2 items (1 P0, 1 P1)."


def report(summary: str) -> str:
    bodies = {"## Executive Summary": summary}
    return "".join(
        f"{h}\n\n{bodies.get(h, 'About ' + h.lstrip('# '))}\n\n" for h in REPORT_HEADINGS
    )


WRONG = report(SUMMARY.replace("3 rows analysed", "4 rows analysed"))
SUMMARY_LINE = WRONG.splitlines().index(SUMMARY.replace("3 rows", "4 rows")) + 1


def test_a_wrong_figure_fails_the_run_and_rejects_only_the_report(
    run_script: RunScript, good_documents: Documents
) -> None:
    analysis, backlog, _ = good_documents
    outcome = run_script(turns_for(analysis, backlog, WRONG))
    assert outcome.exit_code == 1
    assert outcome.json["status"] == "failed"
    assert outcome.json["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "rejected",
        CHART: "missing",
    }
    assert outcome.record["error_message"].startswith(
        f"figure mismatch: 4 should be 3 (rows.analysed, line {SUMMARY_LINE}) in {REPORT}"
    )
    assert outcome.plan["write_report"] == "failed"


def test_the_right_figures_complete(run_script: RunScript, good_documents: Documents) -> None:
    analysis, backlog, _ = good_documents
    outcome = run_script(turns_for(analysis, backlog, report(SUMMARY)))
    assert outcome.exit_code == 0, outcome.output
    assert outcome.json["status"] == "completed"


def test_a_repair_round_that_fixes_the_figure_completes(
    run_script: RunScript, good_documents: Documents
) -> None:
    analysis, backlog, _ = good_documents
    turns = [
        *turns_for(analysis, backlog, WRONG),
        {"tool_calls": [write_call(REPORT, report(SUMMARY))]},
        {"content": "Fixed the row count."},
    ]
    outcome = run_script(turns, "--repair-turns", "1")
    assert outcome.exit_code == 0, outcome.output
    assert outcome.json["status"] == "completed"
    (requested,) = [e for e in outcome.events if e["type"] == "repair.requested"]
    assert requested["data"]["finding_codes"] == ["figure_mismatch"]


def test_the_repair_message_the_model_reads_names_the_right_value(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    analysis, backlog, _ = good_documents
    model = ScriptedModel([*turns_for(analysis, backlog, WRONG), {"content": "Done."}])
    result = asyncio.run(
        run_plugin(
            load_plugin("feedback-analysis"),
            feedback_csv,
            model,
            workspace=tmp_path / "ws",
            settings=RunSettings(repair_turns=1, validator_plugins=False),
        )
    )
    assert result.status == "failed"
    repairs = [
        m.content
        for messages, _ in model.requests
        for m in messages
        if isinstance(m, UserMessage) and m.content.startswith("Validation failed")
    ]
    assert repairs
    assert f"line {SUMMARY_LINE} [figure_mismatch]" in repairs[-1]
    assert "Write 3 instead of 4 (the figure `rows.analysed`)" in repairs[-1]
