"""A finished run is freed by reference counting alone: nothing it made waits for the
cyclic garbage collector (whose collections, each walking what is left, a process running
many runs would otherwise pay for)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path
from typing import Any

from runlens.contracts import ArtifactContract, JsonRules
from runlens.inputs import TableInput
from runlens.plugins import PlanStep, Plugin, SuccessCriterion
from runlens.runtime.run import Run
from runlens.testing import ScriptedModel
from runlens.tools.base import Tool, ToolContext

OUTPUT = "artifacts/out.json"


def _plugin() -> Plugin:
    def tools(context: ToolContext) -> tuple[Tool, ...]:
        # A tool that keeps the run's context (as a plugin's tools may).
        def note(called: ToolContext, text: str) -> str:
            context.state["notes"] = [*context.state.get("notes", ()), text]
            return "noted"

        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        return (Tool("note", "Take a note.", schema, note),)

    return Plugin(
        name="notes",
        description="test plugin",
        skill="Take notes.",
        prompt_fragments=(),
        contracts=(ArtifactContract(name=OUTPUT, schema=JsonRules(required_fields=("done",))),),
        plan=(PlanStep("work", "Work", (SuccessCriterion("artifact_validated", OUTPUT),)),),
        input=TableInput(tool_name="read_rows", id_column="row_id", text_column="text"),
        tools=tools,
    )


TURNS: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "note", "arguments": {"text": "one"}}]},
    {"tool_calls": [{"name": "note", "arguments": {"text": "two"}}]},
    {
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": OUTPUT, "content": '{"done": true}'}}
        ]
    },
    {"content": "Done."},
]


def test_a_finished_run_leaves_nothing_for_the_garbage_collector(tmp_path: Path) -> None:
    """No reference cycle holds any of a finished run's objects (with the collector set to
    keep what it finds, a collection after the run finds none of them), and the run is freed
    as soon as the last reference to it goes."""
    source = tmp_path / "rows.csv"
    source.write_text("row_id,text\nr1,hello\n", encoding="utf-8")
    gc.collect()
    flags = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run = Run(
            plugin=_plugin(),
            input_path=source,
            model=ScriptedModel(TURNS),
            workspace=tmp_path / "ws",
        )
        result = asyncio.run(run.execute())
        assert result.status.value == "completed", result.error_message
        assert run.events.events  # the run's own records, in memory until it is freed
        owned = {id(run), id(run.events), *(id(event) for event in run.events.events)}
        gone = weakref.ref(run)
        del run
        # Freed at once: neither a cycle nor a pooled thread (its last call) holds it.
        freed = gone() is None
        gc.collect()
        left = [type(found).__name__ for found in gc.garbage if id(found) in owned]
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
    assert left == []
    assert freed
