"""analyze_in_batches: rows without text never reach the model and are recorded as such;
the submit tool and the item checks come from the analysis contract."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runlens.evidence import SourceTable
from runlens.models.messages import Message, ModelResponse, ToolSpec, UserMessage
from runlens.tools.base import ToolContext
from runlens.tools.workspace import Workspace
from runlens_feedback.batches import NO_TEXT_REASON, SUBMIT_SPEC, analyze_in_batches, check_items
from runlens_feedback.contracts import ANALYSIS, SENTIMENTS, SEVERITIES
from runlens_feedback.offline import OfflineAnalyst

from .helpers import write_csv

ROWS = [
    {"feedback_id": "a", "text": "Export is slow, it takes minutes."},
    {"feedback_id": "blank1", "text": "   "},
    {"feedback_id": "blank2", "text": "\t\n"},
    {"feedback_id": "blank3", "text": " "},
    {"feedback_id": "b", "text": "登录经常失败。"},
]


def run_batches(
    tmp_path: Path, rows: list[dict[str, str]], batch_size: int
) -> tuple[Any, list[Any]]:
    csv_path = write_csv(tmp_path / "in.csv", rows)
    table = SourceTable.open(csv_path, required_columns=("feedback_id", "text"))
    index = table.evidence_index(id_column="feedback_id", text_column="text")
    workspace = Workspace(tmp_path / "ws")
    workspace.create()
    analyst = OfflineAnalyst()
    prompts: list[str] = []

    async def call_model(
        messages: Sequence[Message], tools: Sequence[ToolSpec], purpose: str = "turn"
    ) -> ModelResponse:
        prompts.append(next(m.content for m in messages if isinstance(m, UserMessage)))
        return await analyst.complete(messages, tools)

    context = ToolContext(
        run_id="r", workspace=workspace, input_path=csv_path, call_model=call_model
    )
    summary = asyncio.run(
        analyze_in_batches(
            context,
            table,
            index,
            batch_size=batch_size,
            concurrency=2,
        )
    )
    analysis = json.loads((workspace.root / ANALYSIS).read_text(encoding="utf-8"))
    return summary, [analysis, prompts]


def test_rows_without_text_are_not_sent_and_are_recorded(tmp_path: Path) -> None:
    summary, (analysis, prompts) = run_batches(tmp_path, ROWS, batch_size=2)
    assert [item["feedback_id"] for item in analysis["items"]] == ["a", "b"]
    assert analysis["failed_batches"] == [
        {"batch": 1, "offset": 0, "rows": 2, "feedback_ids": ["blank1"], "reason": NO_TEXT_REASON},
        {
            "batch": 2,
            "offset": 2,
            "rows": 2,
            "feedback_ids": ["blank2", "blank3"],
            "reason": NO_TEXT_REASON,
        },
    ]
    assert len(prompts) == 2  # the batch of two blank rows made no model call
    assert not any("blank" in prompt for prompt in prompts)
    assert summary["unanalysed_rows"] == 3
    assert summary["failed_batches"]["reasons"] == [
        {"reason": NO_TEXT_REASON, "batches": 2, "rows": 3}
    ]


def test_the_tool_result_is_the_summary(tmp_path: Path) -> None:
    summary, (analysis, _) = run_batches(tmp_path, ROWS, batch_size=40)
    assert summary["analysis_path"] == ANALYSIS
    assert summary["total_rows"] == len(ROWS)
    assert summary["analysed_rows"] == len(analysis["items"]) == 2
    assert {"pain_points", "sentiment", "severity", "failed_batches"} <= set(summary)
    declared = set(SUBMIT_SPEC.parameters["properties"]["items"]["items"]["properties"])
    assert all(set(item) <= declared for item in analysis["items"])  # e.g. no "flags"


def test_the_submit_tool_is_derived_from_the_analysis_contract() -> None:
    element = SUBMIT_SPEC.parameters["properties"]["items"]["items"]
    assert SUBMIT_SPEC.name == "submit_batch_analysis"
    assert element["required"] == [
        "feedback_id",
        "sentiment",
        "severity",
        "pain_point",
        "evidence_text",
    ]
    assert element["properties"]["sentiment"]["enum"] == list(SENTIMENTS)
    assert element["properties"]["severity"]["enum"] == list(SEVERITIES)
    assert {"theme", "suggested_action", "language", "sentiment_score"} <= set(
        element["properties"]
    )


def test_items_are_checked_by_the_contracts_rules(tmp_path: Path) -> None:
    csv_path = write_csv(tmp_path / "in.csv", ROWS)
    table = SourceTable.open(csv_path, required_columns=("feedback_id", "text"))
    index = table.evidence_index(id_column="feedback_id", text_column="text")
    good = {
        "feedback_id": "a",
        "sentiment": "negative",
        "severity": "medium",
        "pain_point": "slow export",
        "evidence_text": "Export is slow",
    }
    problems = check_items(
        [
            good,
            {**good, "sentiment": "angry"},
            {**good, "pain_point": "  "},
            {**good, "evidence_text": "Export is fast"},
            {**good, "feedback_id": "b", "evidence_text": "登录经常失败"},
        ],
        index,
    )
    assert problems[0] == [] and problems[4] == []
    assert problems[1] == [
        'items[1].sentiment is "angry"; allowed: positive, neutral, negative, mixed'
    ]
    assert len(problems[2]) == 1 and problems[2][0].startswith("items[2].pain_point:")
    assert problems[3] == ["items[3].evidence_text is not a verbatim fragment of a"]
