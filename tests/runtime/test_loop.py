"""The loop survives whatever the model sends, and stops at its limits."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runlens.models.messages import Message, ToolSpec
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

from .conftest import Documents, RunScript, turns_for


def test_model_mistakes_become_tool_errors(
    run_script: RunScript, good_documents: Documents
) -> None:
    mistakes = {
        "tool_calls": [
            {"name": "delete_everything", "arguments": {}},
            {"name": "read_feedback_csv", "arguments": {"offset": -5}},
            {"name": "read_feedback_csv", "arguments": "{not json"},
            {"name": "write_file", "arguments": {"path": "artifacts/x.md"}},
            {"name": "read_file", "arguments": {"path": "artifacts/nope.md"}},
        ]
    }
    turns = turns_for(*good_documents)
    turns.insert(1, mistakes)
    outcome = run_script(turns)
    assert outcome.exit_code == 0, outcome.output
    failed = [e["data"] for e in outcome.events if e["type"] == "tool.failed"]
    kinds = [event["error_kind"] for event in failed]
    assert kinds == [
        "unknown_tool",
        "invalid_arguments",
        "invalid_arguments",
        "invalid_arguments",
        "refused",
    ]
    assert "unknown tool 'delete_everything'" in failed[0]["error"]
    assert "offset" in failed[1]["error"]


def test_max_turns_limit(run_script: RunScript) -> None:
    looping = [{"tool_calls": [{"name": "list_files", "arguments": {}}]}] * 50
    outcome = run_script(looping, "--max-turns", "5")
    assert outcome.exit_code == 1
    assert outcome.record["status"] == "failed"
    message = outcome.record["error_message"]
    assert message.startswith("loop limit: max turns (5) reached; missing required files: ")
    # What the model delivered before the limit is still validated and recorded.
    assert "run.validating" in outcome.types
    assert outcome.json["artifacts"]["artifacts/insight_report.md"] == "missing"
    assert outcome.plan["validate_deliverables"] == "failed"
    assert outcome.types[-1] == "run.failed"
    assert outcome.record["metrics"]["turns"] == 5


def test_max_tool_calls_limit(run_script: RunScript) -> None:
    many = [{"tool_calls": [{"name": "list_files", "arguments": {}}] * 4}] * 10
    outcome = run_script(many, "--max-tool-calls", "6")
    assert outcome.record["error_message"].startswith("loop limit: max tool calls (6) reached")
    assert outcome.record["metrics"]["tool_calls"] == 6


def test_empty_answers_are_nudged_then_fail(run_script: RunScript) -> None:
    outcome = run_script([{"content": ""}])
    assert outcome.exit_code == 1
    assert outcome.record["error_message"].startswith("the model gave 3 empty answers in a row")


def test_input_error_fails_at_the_input_step(
    run_script: RunScript, tmp_path: Path, good_documents: Documents
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("feedback_id,body\nfb_001,hello\n", encoding="utf-8")
    outcome = run_script(turns_for(*good_documents), csv=bad)
    assert outcome.exit_code == 1
    message = outcome.record["error_message"]
    assert message.startswith("input error:") and "text" in message and "bad.csv" in message
    assert outcome.plan["load_feedback"] == "failed"
    assert outcome.types[-1] == "run.failed"
    assert (outcome.workspace / "manifest.json").is_file()


def test_limit_with_valid_deliverables_still_fails(
    run_script: RunScript, good_documents: Documents
) -> None:
    turns = (
        turns_for(*good_documents)[:2]
        + [{"tool_calls": [{"name": "list_files", "arguments": {}}]}] * 10
    )
    outcome = run_script(turns, "--max-turns", "4")
    assert outcome.exit_code == 1
    assert outcome.record["error_message"] == "loop limit: max turns (4) reached"
    assert outcome.json["artifacts"] == {
        ANALYSIS: "validated",
        BACKLOG: "validated",
        REPORT: "validated",
        CHART: "missing",  # optional and not drawn: listed, no finding
    }
    assert outcome.plan["validate_deliverables"] == "failed"
    assert "hook.blocked" not in outcome.types


def test_wall_time_stops_a_model_call_in_flight(tmp_path: Path, feedback_csv: Path) -> None:
    import asyncio

    from runlens.plugins import load_plugin
    from runlens.runtime.loop import LoopLimits
    from runlens.runtime.run import RunSettings, run_plugin
    from runlens.testing import FunctionModel

    async def stuck(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        await asyncio.sleep(60)
        return {"content": "Done."}

    settings = RunSettings(limits=LoopLimits(wall_time_seconds=0.5), validator_plugins=False)
    result = asyncio.run(
        run_plugin(
            load_plugin("feedback-analysis"),
            feedback_csv,
            FunctionModel(stuck),
            workspace=tmp_path / "ws",
            settings=settings,
        )
    )
    assert result.status == "failed"
    assert result.error_message is not None
    assert result.error_message.startswith("loop limit: wall time (0.5s) exceeded")


def test_a_plugin_with_a_broken_validator_fails_the_run_cleanly(
    tmp_path: Path, feedback_csv: Path
) -> None:
    import asyncio
    import dataclasses

    from runlens.plugins import load_plugin
    from runlens.runtime.run import run_plugin
    from runlens.testing import ScriptedModel

    # A plugin whose author ignored the types still gets a clear error, not a crash.
    not_a_validator: tuple[Any, ...] = ("oops",)
    plugin = dataclasses.replace(load_plugin("feedback-analysis"), extra_validators=not_a_validator)
    result = asyncio.run(
        run_plugin(
            plugin, feedback_csv, ScriptedModel([{"content": "Done."}]), workspace=tmp_path / "ws"
        )
    )
    assert result.status == "failed"
    assert result.error_message is not None
    assert result.error_message.startswith("configuration error: 'oops' is not a validator")
