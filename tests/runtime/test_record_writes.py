"""Fewer record writes per run, with nothing lost: `run.json` is written when the run starts
and when it ends; in between, readers see the run as it is from its events."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from runlens.cli import cli
from runlens.contracts import ArtifactContract, JsonRules
from runlens.inputs import TableInput
from runlens.plugins import PlanStep, Plugin, SuccessCriterion
from runlens.records.io import read_json_object
from runlens.records.readers import EventView, RunRecordView
from runlens.records.run_record import live_record
from runlens.records.schemas import record_problems
from runlens.runtime.recovery import load_run
from runlens.runtime.run import RunResult, run_plugin
from runlens.testing import ScriptedModel
from runlens.tools.base import Tool, ToolContext

OUTPUT = "artifacts/out.json"
INPUT_CSV = "ticket,text\nT-1,Login fails every morning\nT-2,Export is slow\n"


class _Renames:
    """Renames into a folder, from Python's audit events (an audit hook stays installed: it
    counts only while `folder` is set)."""

    def __init__(self) -> None:
        self.folder: str | None = None
        self.targets: Counter[str] = Counter()
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "os.rename" and self.folder and str(args[1]).startswith(self.folder):
            self.targets[Path(str(args[1])).relative_to(self.folder).as_posix()] += 1


_RENAMES = _Renames()


def _plugin(seen: dict[str, Any]) -> Plugin:
    """A small plugin whose `note` tool looks at the records mid-run, emits its own event
    and warns."""

    def note(context: ToolContext, text: str) -> str:
        root = context.workspace.root
        seen["on_disk"], _ = read_json_object(context.workspace.run_record, "run.json")
        seen["live"] = load_run(root).record.encode()
        assert context.emit is not None and context.warn is not None
        context.emit("note.taken", {"chars": len(text)})
        context.warn("a note was taken")
        return "noted"

    tool = Tool(
        "note",
        "Take a note.",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        note,
    )
    return Plugin(
        name="notes",
        description="test plugin",
        skill="Take notes.",
        prompt_fragments=(),
        contracts=(ArtifactContract(name=OUTPUT, schema=JsonRules(required_fields=("done",))),),
        plan=(
            PlanStep(
                "read",
                "Read",
                (SuccessCriterion("evidence_index_built"),),
                tools=("read_rows",),
            ),
            PlanStep("work", "Work", (SuccessCriterion("artifact_validated", OUTPUT),)),
        ),
        input=TableInput(tool_name="read_rows", id_column="row_id", text_column="text"),
        tools=lambda context: (tool,),
    )


TURNS: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "read_rows", "arguments": {"offset": 0}}]},
    {"tool_calls": [{"name": "note", "arguments": {"text": "two rows"}}]},
    {
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": OUTPUT, "content": '{"done": true}'}}
        ]
    },
    {"content": "Done."},
]


@pytest.fixture
def finished(tmp_path: Path) -> tuple[RunResult, Path, dict[str, Any], Counter[str]]:
    source = tmp_path / "tickets.csv"
    source.write_text(INPUT_CSV, encoding="utf-8")
    workspace = (tmp_path / "ws").resolve()
    seen: dict[str, Any] = {}
    _RENAMES.targets.clear()
    _RENAMES.folder = str(workspace)
    try:
        result = asyncio.run(
            run_plugin(_plugin(seen), source, ScriptedModel(TURNS), workspace=workspace)
        )
    finally:
        _RENAMES.folder = None
    return result, workspace, seen, Counter(_RENAMES.targets)


def test_run_json_is_written_twice_and_every_record_once(
    finished: tuple[RunResult, Path, dict[str, Any], Counter[str]],
) -> None:
    result, _, _, renames = finished
    assert result.status.value == "completed", result.error_message
    assert renames == {
        "runtime/run.json": 2,  # when it starts running, when it ends
        "runtime/system_prompt.md": 1,
        "runtime/evidence_index.json": 1,
        OUTPUT: 1,
        "runtime/trace.json": 1,
        "runtime/citations.json": 1,  # the verified citations, for the run store
        "runtime/verdict.dsse.json": 1,  # the signed verdict (SPEC 16)
        "manifest.json": 1,
    }


def test_mid_run_the_record_on_disk_is_the_start_and_readers_see_the_events(
    finished: tuple[RunResult, Path, dict[str, Any], Counter[str]],
) -> None:
    _, _, seen, _ = finished
    on_disk, live = seen["on_disk"], seen["live"]
    # Written once, as the run started running: the Evidence Index came later.
    assert on_disk["status"] == "running"
    assert on_disk["evidence_index_sha256"] is None and on_disk["warnings"] == []
    assert {step["id"]: step["status"] for step in on_disk["plan"]} == {
        "read": "pending",
        "work": "pending",
    }
    # What `runlens runs` / `show` see: brought up to date from the events.
    assert live["status"] == "running"
    assert isinstance(live["evidence_index_sha256"], str)
    assert live["input_format"]["id_rule"] == "row-number"
    assert len(live["warnings"]) == 1 and "row number" in live["warnings"][0]
    assert {step["id"]: step["status"] for step in live["plan"]}["read"] == "completed"


def test_the_final_records_hold_everything_and_meet_their_schemas(
    finished: tuple[RunResult, Path, dict[str, Any], Counter[str]],
) -> None:
    result, workspace, seen, _ = finished
    record, _ = read_json_object(workspace / "runtime" / "run.json", "run.json")
    assert record is not None
    assert record["status"] == "completed"
    assert record["evidence_index_sha256"] == seen["live"]["evidence_index_sha256"]
    assert record["warnings"] == [*seen["live"]["warnings"], "a note was taken"]
    assert list(result.warnings) == record["warnings"]
    assert record["metrics"]["plugin_events"] == {"note.taken": 1}
    assert record_problems(workspace) == []


def test_show_describes_a_plugin_event_by_its_name(
    finished: tuple[RunResult, Path, dict[str, Any], Counter[str]],
) -> None:
    _, workspace, _, _ = finished
    shown = CliRunner().invoke(cli, ["show", str(workspace)])
    assert shown.exit_code == 0, shown.output
    line = next(line for line in shown.stdout.splitlines() if "plugin.event" in line)
    assert line.rstrip().endswith("note.taken: chars=8")


def test_the_live_status_follows_the_phase_events() -> None:
    record = RunRecordView(status="running", plan=[], warnings=[])

    def status_after(*types: str) -> Any:
        events = [EventView(type=kind, data={"round": 1}) for kind in types]
        return live_record(record, events).status

    assert status_after("run.started") == "running"
    assert status_after("run.started", "run.validating") == "validating"
    assert status_after("run.started", "run.validating", "repair.requested") == "running"
    # Damaged events are skipped, never raised on.
    assert live_record(record, [EventView(type="run.validating", data=None)]).status == "running"
