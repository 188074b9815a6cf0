"""A rerun with review (SPEC 17): the model is given the review's findings with the task,
before its first turn; a run without findings sends exactly what it always sent.

The model is `ScriptedModel`, which keeps every request it receives."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.runtime.conftest import Documents, turns_for

from runlens.models.messages import Message, SystemMessage, UserMessage
from runlens.models.scripted import ScriptedModel
from runlens.plugins import load_plugin
from runlens.runtime.run import Run
from runlens.runtime.settings import RunSettings

FINDINGS = (
    "request-changes by alice on the run: The P1 theme is overstated; <b>check</b> it.",
    "wrong mark by bob on report.md line 12, row fb_002, quote “slow export”: not about "
    "exports\nsecond line of the note; correction theme=Performance",
)


def _run(
    tmp_path: Path, csv: Path, documents: Documents, settings: RunSettings
) -> tuple[ScriptedModel, Path, str]:
    model = ScriptedModel(turns_for(*documents))
    workspace = tmp_path / "run"
    run = Run(
        plugin=load_plugin("feedback-analysis"),
        input_path=csv,
        model=model,
        workspace=workspace,
        settings=settings,
        run_id="run_b",
    )
    result = asyncio.run(run.execute())
    return model, workspace, result.status.value


def _first_request(model: ScriptedModel) -> list[Message]:
    assert model.requests, "the model was never called"
    return model.requests[0][0]


def _record(workspace: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((workspace / "runtime" / "run.json").read_bytes())
    return record


def _created(workspace: Path) -> dict[str, Any]:
    first = (workspace / "runtime" / "events.jsonl").read_text(encoding="utf-8").splitlines()[0]
    event: dict[str, Any] = json.loads(first)
    assert event["type"] == "run.created"
    data: dict[str, Any] = event["data"]
    return data


def test_the_first_request_holds_every_review_finding(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    settings = RunSettings(
        validator_plugins=False,
        submitted_by="carol",
        rerun_of="run_a",
        review_findings=FINDINGS,
    )
    model, workspace, status = _run(tmp_path, feedback_csv, good_documents, settings)

    assert status == "completed"
    system, task = _first_request(model)
    assert isinstance(system, SystemMessage) and isinstance(task, UserMessage)
    assert "## Review findings to address" in task.content
    assert "People reviewed run run_a of this same input" in task.content
    assert f"- {FINDINGS[0]}" in task.content
    # A note's later lines stay in its list item.
    first_line, second_line = FINDINGS[1].split("\n")
    assert f"- {first_line}\n  {second_line}" in task.content
    # The findings come after the task itself, which is unchanged.
    assert task.content.startswith(_plain_task(feedback_csv.name))
    # The system prompt is the plugin's, findings or not.
    assert system.content == (workspace / "runtime" / "system_prompt.md").read_text("utf-8")
    assert "Review findings" not in system.content

    record = _record(workspace)
    assert record["submitted_by"] == "carol"
    assert record["rerun_of"] == "run_a"
    assert record["review_findings"] == list(FINDINGS)
    created = _created(workspace)
    assert created["submitted_by"] == "carol" and created["rerun_of"] == "run_a"


def test_a_run_without_findings_sends_what_it_always_sent(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    settings = RunSettings(validator_plugins=False)
    model, workspace, status = _run(tmp_path, feedback_csv, good_documents, settings)

    assert status == "completed"
    system, task = _first_request(model)
    assert task == UserMessage(_plain_task(feedback_csv.name))
    assert isinstance(system, SystemMessage) and "Review findings" not in system.content
    record = _record(workspace)
    assert (record["submitted_by"], record["rerun_of"], record["review_findings"]) == (
        None,
        None,
        [],
    )
    assert set(_created(workspace)) == {"schema_version", "plugin", "model", "input", "workspace"}


def _plain_task(input_name: str) -> str:
    """The first user message of every run before review by people (written out here, not
    taken from the code under test)."""
    plugin = load_plugin("feedback-analysis")
    return (
        f"{plugin.task_prompt}\n\nThe input file is input/{input_name}. "
        "Start by calling read_feedback_csv."
    )
