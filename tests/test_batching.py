"""The batch engine on a plugin-neutral task: triaging support tickets, row by row.

The model is a real `FunctionModel`; items are checked by `item_problems`, the contract's own
checks, so the engine is exercised exactly as a plugin would use it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from runlens import (
    NO_TEXT_REASON,
    ArtifactContract,
    Batch,
    BatchResult,
    EvidenceIndex,
    EvidenceQuote,
    JsonRules,
    Message,
    ModelResponse,
    ProviderError,
    SourceTable,
    TaskError,
    ToolCall,
    ToolContext,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    item_problems,
    parse_batch_message,
    run_batches,
    submit_tool_spec,
)
from runlens.batching import artifact_json
from runlens.testing import FunctionModel
from runlens.tools.workspace import Workspace

TRIAGE = "artifacts/triage.json"
CONTRACT = ArtifactContract(
    name=TRIAGE,
    schema=JsonRules(
        required_fields=("items", "failed_batches"), enum_fields={"items.urgency": ("low", "high")}
    ),
    json_schema={
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["row_id", "urgency", "quote"],
                    "properties": {
                        "row_id": {"type": "string", "minLength": 1},
                        "urgency": {"type": "string"},
                        "quote": {"type": "string"},
                    },
                },
            }
        },
    },
    evidence_fields=("items.row_id",),
    evidence_quotes=(EvidenceQuote(text="items.quote", id="items.row_id"),),
)
SUBMIT = submit_tool_spec(CONTRACT, name="submit_triage")
TICKETS = {
    "t1": "Printer is on fire in room 4",
    "t2": "VPN drops every hour",
    "t3": "   ",
    "t4": "Password reset loops forever",
    "t5": "Mouse is a bit sticky",
}


def check(items: Sequence[Any], index: EvidenceIndex) -> list[list[str]]:
    return item_problems(CONTRACT, items, index)


def triage(row: dict[str, Any]) -> dict[str, Any]:
    """A correct item for one row of a batch message: its first three words as the quote."""
    urgency = "high" if "fire" in row["text"] or "drops" in row["text"] else "low"
    quote = " ".join(row["text"].split()[:3])
    return {"row_id": row["row_id"], "urgency": urgency, "quote": quote, "note": "extra"}


def submit(items: list[dict[str, Any]]) -> ModelResponse:
    return ModelResponse(
        content=None, tool_calls=(ToolCall("c1", "submit_triage", {"items": items}),)
    )


def rows_of(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return parse_batch_message(next(m.content for m in messages if isinstance(m, UserMessage)))


class Run:
    """A tool context whose batch calls go to `model`, recording events and warnings."""

    def __init__(self, tmp_path: Path, model: FunctionModel) -> None:
        source = tmp_path / "tickets.csv"
        lines = [f'{key},"{text}"' for key, text in TICKETS.items()]
        source.write_text("ticket_id,body\n" + "\n".join(lines) + "\n", encoding="utf-8")
        self.table = SourceTable.open(source, required_columns=("ticket_id", "body"))
        self.index = self.table.evidence_index("ticket_id", "body")
        self.workspace = Workspace(tmp_path / "ws")
        self.workspace.create()
        self.events: list[tuple[str, Mapping[str, Any]]] = []
        self.warnings: list[str] = []
        self.model = model

        async def call_model(
            messages: Sequence[Message], tools: Sequence[ToolSpec], purpose: str = "turn"
        ) -> ModelResponse:
            assert purpose == "batch"
            return await model.complete(messages, tools)

        self.context = ToolContext(
            run_id="r",
            workspace=self.workspace,
            input_path=source,
            call_model=call_model,
            emit=lambda kind, data: self.events.append((kind, data)),
            warn=self.warnings.append,
        )

    def batches(self, **options: Any) -> BatchResult:
        return asyncio.run(
            run_batches(
                self.context,
                self.table,
                self.index,
                submit=SUBMIT,
                system_prompt="Triage each ticket.",
                check=check,
                artifact=TRIAGE,
                **{"batch_size": 2, "concurrency": 2, **options},
            )
        )

    def artifact(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads((self.workspace.root / TRIAGE).read_text("utf-8"))
        return document


def test_the_submit_tool_is_the_contracts_item_schema_with_its_enums() -> None:
    element = SUBMIT.parameters["properties"]["items"]["items"]
    assert SUBMIT.name == "submit_triage" and SUBMIT.parameters["required"] == ["items"]
    assert element["required"] == ["row_id", "urgency", "quote"]
    assert element["properties"]["urgency"] == {"type": "string", "enum": ["low", "high"]}
    assert CONTRACT.json_schema is not None  # the contract itself is not changed
    assert (
        "enum" not in CONTRACT.json_schema["properties"]["items"]["items"]["properties"]["urgency"]
    )


def test_every_row_is_analysed_in_input_order(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    def model(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        assert [tool.name for tool in tools] == ["submit_triage"]
        rows = rows_of(messages)
        seen.append([row["row_id"] for row in rows])
        return submit([triage(row) for row in reversed(rows)])  # any order is fine

    run = Run(tmp_path, FunctionModel(model))
    result = run.batches()
    assert [item["row_id"] for item in result.items] == ["t1", "t2", "t4", "t5"]
    assert result.items[0] == {"row_id": "t1", "urgency": "high", "quote": "Printer is on"}
    assert sorted(seen) == [["t1", "t2"], ["t4"], ["t5"]]  # the blank row is never sent
    assert result.failed_batches == [
        {"batch": 2, "offset": 2, "rows": 2, "row_ids": ["t3"], "reason": NO_TEXT_REASON}
    ]
    assert run.artifact() == {"items": result.items, "failed_batches": result.failed_batches}
    assert [kind for kind, _ in run.events] == ["batch.completed"] * 3
    assert run.warnings == []


def test_an_item_with_problems_is_sent_back_once_with_the_problems(tmp_path: Path) -> None:
    retries: list[str] = []

    def model(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        rows = rows_of(messages)
        results = [m for m in messages if isinstance(m, ToolResultMessage)]
        if results:
            retries.append(results[-1].content)
            return submit([triage(row) for row in rows])
        wrong = [{**triage(row), "urgency": "urgent", "quote": "not in the ticket"} for row in rows]
        return submit(wrong[:1])

    run = Run(tmp_path, FunctionModel(model))
    result = run.batches(batch_size=5)
    assert [item["row_id"] for item in result.items] == ["t1", "t2", "t4", "t5"]
    [problems] = retries
    assert 't1: items[0].urgency is "urgent"; allowed: low, high' in problems
    assert "t1: items[0].quote is not a verbatim fragment of t1" in problems
    assert "no item for row t2" in problems


def test_a_failing_batch_is_recorded_warned_and_the_others_delivered(tmp_path: Path) -> None:
    def model(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        rows = rows_of(messages)
        if any(row["row_id"] == "t4" for row in rows):
            return ModelResponse(content="I cannot do that.")
        return submit([triage(row) for row in rows])

    run = Run(tmp_path, FunctionModel(model))
    result = run.batches()
    assert [item["row_id"] for item in result.items] == ["t1", "t2", "t5"]
    assert result.failed_batches[1] == {
        "batch": 2,
        "offset": 2,
        "rows": 2,
        "row_ids": ["t4"],
        "reason": "no submit_triage call with an 'items' list was made",
    }
    assert run.model.calls == 3 + 1  # batch 2 was asked twice
    failed = [data for kind, data in run.events if kind == "batch.failed"]
    assert failed == [
        {
            "batch": 2,
            "batches": 3,
            "offset": 2,
            "rows": 2,
            "items": 0,
            "no_text": 1,
            "reason": "no submit_triage call with an 'items' list was made",
            "unanalysed": 1,
        }
    ]
    [warning] = run.warnings
    assert warning.startswith("1 rows were not analysed: 1 of 3 batches failed (batch 2)")
    assert TRIAGE in warning


def test_when_every_batch_fails_the_task_fails_and_the_artifact_stays(tmp_path: Path) -> None:
    def model(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        raise RuntimeError("model crashed")

    run = Run(tmp_path, FunctionModel(model))
    with pytest.raises(TaskError, match=r"every batch failed \(3 of 3; 4 rows not analysed\)"):
        run.batches()
    assert run.model.calls == 0  # FunctionModel counts only answers: every call raised
    artifact = run.artifact()
    assert artifact["items"] == []
    failed_ids = [row_id for entry in artifact["failed_batches"] for row_id in entry["row_ids"]]
    assert failed_ids == ["t1", "t2", "t3", "t4", "t5"]
    assert "analyst error: RuntimeError: model crashed" in artifact["failed_batches"][0]["reason"]


def test_a_provider_error_is_not_retried_a_model_exception_is(tmp_path: Path) -> None:
    attempts: dict[str, int] = {}

    def model(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        rows = rows_of(messages)
        first = rows[0]["row_id"]
        attempts[first] = attempts.get(first, 0) + 1
        if first == "t1":
            raise ProviderError("rate limited after 3 attempts")
        if first == "t4" and attempts[first] == 1:
            raise ValueError("bad JSON from the model")
        return submit([triage(row) for row in rows])

    run = Run(tmp_path, FunctionModel(model))
    result = run.batches()
    assert attempts == {"t1": 1, "t4": 2, "t5": 1}
    assert [item["row_id"] for item in result.items] == ["t4", "t5"]
    assert result.failed_batches[0]["reason"].startswith("model provider error: rate limited")


def test_batches_run_at_most_concurrency_at_once(tmp_path: Path) -> None:
    running = 0
    most = 0

    async def model(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.01)
        running -= 1
        return submit([triage(row) for row in rows_of(messages)])

    run = Run(tmp_path, FunctionModel(model))
    result = run.batches(batch_size=1, concurrency=2)
    assert result.batches == 5 and len(result.items) == 4
    assert most == 2


def test_a_plugin_builds_its_own_batch_message(tmp_path: Path) -> None:
    def message(batch: Batch) -> str:
        return json.dumps({"tickets": dict(zip(batch.row_ids, batch.positions, strict=True))})

    def model(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        content = next(m.content for m in messages if isinstance(m, UserMessage))
        tickets = json.loads(content)["tickets"]
        return submit([triage({"row_id": key, "text": TICKETS[key]}) for key in tickets])

    run = Run(tmp_path, FunctionModel(model))
    result = run.batches(message=message, batch_size=5)
    assert len(result.items) == 4 and result.failed_batches[0]["row_ids"] == ["t3"]


def test_the_artifact_is_json_with_one_entry_per_line() -> None:
    items = [{"row_id": "a", "quote": "好用👍\n第二行"}, {"row_id": "b"}]
    failed = [{"batch": 1, "row_ids": ["c"], "reason": NO_TEXT_REASON}]
    encoded = artifact_json(items, failed)
    assert json.loads(encoded) == {"items": items, "failed_batches": failed}
    lines = encoded.decode("utf-8").splitlines()
    assert len(lines) == 1 + len(items) + 2 + len(failed) + 1
    assert json.loads(artifact_json([], [])) == {"items": [], "failed_batches": []}
