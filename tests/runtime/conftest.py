"""Fixtures for runs driven end to end: scripted model files and the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from runlens.cli import cli
from runlens.records.events import read_events
from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT

#: The `good_documents` fixture: analysis, backlog and report.
Documents = tuple[dict[str, Any], dict[str, Any], str]


def write_call(path: str, content: str | dict[str, Any]) -> dict[str, Any]:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"name": "write_file", "arguments": {"path": path, "content": text}}


def turns_for(
    analysis: dict[str, Any] | None, backlog: dict[str, Any] | None, report: str | None
) -> list[dict[str, Any]]:
    """Read the input, write whichever deliverables are given, then finish."""
    writes = [
        write_call(name, document)
        for name, document in ((ANALYSIS, analysis), (BACKLOG, backlog), (REPORT, report))
        if document is not None
    ]
    return [
        {"tool_calls": [{"name": "read_feedback_csv", "arguments": {"offset": 0}}]},
        {"content": "Writing the deliverables.", "tool_calls": writes},
        {"content": "Done: all deliverables written."},
    ]


@dataclass
class RunOutcome:
    exit_code: int
    output: str
    workspace: Path

    @property
    def record(self) -> dict[str, Any]:
        record: dict[str, Any] = json.loads(
            (self.workspace / "runtime" / "run.json").read_text(encoding="utf-8")
        )
        return record

    @property
    def manifest(self) -> dict[str, Any]:
        manifest: dict[str, Any] = json.loads(
            (self.workspace / "manifest.json").read_text(encoding="utf-8")
        )
        return manifest

    @property
    def events(self) -> list[dict[str, Any]]:
        return list(read_events(self.workspace / "runtime" / "events.jsonl"))

    @property
    def types(self) -> list[str]:
        return [event["type"] for event in self.events]

    @property
    def plan(self) -> dict[str, str]:
        return {step["id"]: step["status"] for step in self.record["plan"]}

    @property
    def json(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.output)
        return document


#: The `run_script` fixture: `run_script(turns, *extra_args, csv=None)`.
RunScript = Callable[..., RunOutcome]


@pytest.fixture
def run_script(tmp_path: Path, feedback_csv: Path) -> RunScript:
    """`run_script(turns, *extra_args)` runs feedback-analysis with a scripted model."""
    counter = iter(range(1000))

    def run(turns: list[dict[str, Any]], *args: str, csv: Path | None = None) -> RunOutcome:
        number = next(counter)
        script = tmp_path / f"script_{number}.json"
        script.write_text(json.dumps({"turns": turns}, ensure_ascii=False), encoding="utf-8")
        workspace = tmp_path / f"run_{number}"
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "feedback-analysis",
                str(csv or feedback_csv),
                "--model",
                f"scripted:{script}",
                "--workspace",
                str(workspace),
                "--json",
                *args,
            ],
        )
        return RunOutcome(result.exit_code, result.stdout, workspace)

    return run
