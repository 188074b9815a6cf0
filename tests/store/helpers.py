"""Runs for the store's tests: made with the library (no store involved) or with the CLI."""

from __future__ import annotations

import asyncio
import copy
import csv
import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from runlens.models.registry import ModelContext, resolve_model
from runlens.plugins import load_plugin
from runlens.runtime.run import RunResult, run_plugin
from runlens.testing import ScriptedModel
from runlens.validation import Finding, ValidationContext, ValidatorResult
from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT, REPORT_HEADINGS

#: A report citing fb_001 rightly (line 3 of its section), then a wrong quote of fb_002, an
#: id no row has, and a quotation with no id under Evidence.
EVIDENCE = (
    "> “导出周报太慢了” — fb_001\n\n"
    "> “Login works perfectly” — fb_002\n\n"
    "> “没有这一行” — fb_999\n\n"
    "> “自定义指标顺序”\n"
)


def report_text(evidence: str = "> “导出周报太慢了” — fb_001\n") -> str:
    parts = []
    for heading in REPORT_HEADINGS:
        body = evidence if heading == "## Evidence" else f"About {heading.lstrip('# ')}."
        parts.append(f"{heading}\n\n{body}\n")
    return "\n".join(parts)


def turns(analysis: dict[str, Any], backlog: dict[str, Any], report: str) -> list[dict[str, Any]]:
    writes = [
        {"name": "write_file", "arguments": {"path": name, "content": content}}
        for name, content in (
            (ANALYSIS, json.dumps(analysis, ensure_ascii=False)),
            (BACKLOG, json.dumps(backlog, ensure_ascii=False)),
            (REPORT, report),
        )
    ]
    return [
        {"tool_calls": [{"name": "read_feedback_csv", "arguments": {"offset": 0}}]},
        {"content": "Writing.", "tool_calls": writes},
        {"content": "Done."},
    ]


def library_run(
    workspace: Path, csv: Path, documents: tuple[dict[str, Any], dict[str, Any], str] | None
) -> RunResult:
    """A run made by `run_plugin` (nothing writes to a store): offline when `documents` is
    None, else a scripted model writing them."""
    plugin = load_plugin("feedback-analysis")
    if documents is None:
        model = resolve_model("offline", ModelContext(plugin=plugin))
    else:
        model = ScriptedModel(turns(*documents))
    return asyncio.run(run_plugin(plugin, csv, model, workspace=workspace))


class CrashingCheck:
    """A plugin validator that raises: the runner turns that into a blocking `hook_error`
    finding about the run as a whole (`artifact` ""), the validator having no verdict."""

    name = "CrashingCheck"

    def validate(self, context: ValidationContext) -> ValidatorResult:
        raise RuntimeError("the check itself is broken")


class RunWideCheck:
    """A plugin validator whose finding is about the run, not about one deliverable."""

    name = "RunWideCheck"

    def validate(self, context: ValidationContext) -> ValidatorResult:
        finding = Finding(
            validator=self.name,
            artifact="",
            code="run_budget_exceeded",
            message="the run made more model calls than its budget allows",
        )
        return ValidatorResult(self.name, (finding,), "run budget exceeded")


#: The findings about the run as a whole that `run_level_run` gets, in report order.
RUN_LEVEL_CODES = ["hook_error", "run_budget_exceeded"]


def run_level_run(
    workspace: Path, csv: Path, documents: tuple[dict[str, Any], dict[str, Any], str]
) -> RunResult:
    """A scripted run of the feedback plugin with `CrashingCheck` and `RunWideCheck` added
    to its validators: it fails with findings about the run as a whole (after those the
    built-in validators find in `documents`)."""
    plugin = load_plugin("feedback-analysis")
    plugin = dataclasses.replace(
        plugin, extra_validators=(*plugin.extra_validators, CrashingCheck(), RunWideCheck())
    )
    model = ScriptedModel(turns(*documents))
    return asyncio.run(run_plugin(plugin, csv, model, workspace=workspace))


def failing_documents(
    good: tuple[dict[str, Any], dict[str, Any], str],
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """Good documents broken in JSON (a quote not in its row) and in Markdown (`EVIDENCE`)."""
    analysis, backlog, _ = copy.deepcopy(good)
    analysis["items"][1]["evidence_text"] = "Login works perfectly"
    return analysis, backlog, report_text(EVIDENCE)


def write_feedback_csv(path: Path, rows: int) -> Path:
    """A feedback CSV of `rows` rows (ids fb_000001...), deterministic."""
    phrases = (
        "Exporting the weekly report takes three minutes and often times out.",
        "导出周报太慢了；我们团队每周五都要导出。",
        "The new dashboard is lovely, thank you!",
        "Login fails with error 500 every morning.",
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["feedback_id", "text", "channel"])
    for number in range(1, rows + 1):
        writer.writerow([f"fb_{number:06d}", f"{phrases[number % len(phrases)]} ({number})", "web"])
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def runlens_command(*args: object) -> list[str]:
    return [sys.executable, "-m", "runlens", *map(str, args)]


def runlens(*args: object, home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        runlens_command(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(home),
    )


def child_env(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1", **extra}
    env["RUNLENS_HOME"] = str(home)
    env.pop("RUNLENS_DATABASE_URL", None)
    return env


def killed_worker_workspace(home: Path, run_id: str) -> Path:
    """The cache workspace of a worker killed mid-run: its record says `running`, no process
    holds its lock."""
    workspace = home / run_id
    (workspace / "runtime").mkdir(parents=True)
    record = {
        "run_id": run_id,
        "plugin": "feedback-analysis",
        "model": "offline",
        "status": "running",
        "created_at": "2026-12-01T10:00:00.000+00:00",
        "plan": [],
    }
    (workspace / "runtime" / "run.json").write_text(json.dumps(record), encoding="utf-8")
    event = {"seq": 1, "ts": record["created_at"], "run_id": run_id, "type": "run.created"}
    (workspace / "runtime" / "events.jsonl").write_text(
        json.dumps({**event, "data": {}}) + "\n", encoding="utf-8"
    )
    return workspace
