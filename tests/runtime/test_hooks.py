"""HookManager semantics and external command hooks, driven through real runs."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from runlens.hooks.manager import HookDecision, HookEvent, HookManager
from runlens.validation.base import ValidationContext, ValidatorResult
from runlens_feedback.contracts import REPORT

from .conftest import Documents, RunScript, turns_for

PY = sys.executable


def test_pre_tool_use_first_block_wins() -> None:
    manager = HookManager()
    calls: list[str] = []

    def first(payload: dict[str, Any]) -> HookDecision:
        calls.append("first")
        return HookDecision.block("no writes on Fridays")

    def second(payload: dict[str, Any]) -> HookDecision:
        calls.append("second")
        return HookDecision.allow()

    manager.register(HookEvent.PRE_TOOL_USE, first)
    manager.register(HookEvent.PRE_TOOL_USE, second)
    outcomes = asyncio.run(manager.dispatch(HookEvent.PRE_TOOL_USE, {"tool_name": "write_file"}))
    assert calls == ["first"]
    assert outcomes[0].decision == HookDecision(True, "no writes on Fridays")


def test_raising_and_slow_blocking_hooks_fail_closed() -> None:
    manager = HookManager(default_timeout=0.05)

    def broken(payload: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    async def slow(payload: dict[str, Any]) -> None:
        await asyncio.sleep(5)

    manager.register(HookEvent.PRE_TOOL_USE, broken)
    outcome = asyncio.run(manager.dispatch(HookEvent.PRE_TOOL_USE, {}))[0]
    assert outcome.decision.blocked and "RuntimeError: boom" in outcome.decision.reason

    manager = HookManager(default_timeout=0.05)
    manager.register(HookEvent.PRE_TOOL_USE, slow)
    outcome = asyncio.run(manager.dispatch(HookEvent.PRE_TOOL_USE, {}))[0]
    assert outcome.decision.blocked and "timed out" in outcome.decision.reason


def test_observing_hooks_do_not_block() -> None:
    manager = HookManager()

    def broken(payload: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    manager.register(HookEvent.POST_TOOL_USE, broken)
    outcome = asyncio.run(manager.dispatch(HookEvent.POST_TOOL_USE, {}))[0]
    assert not outcome.decision.blocked and outcome.error


def _hooks_file(
    tmp_path: Path, event: str, script: str, *, matcher: str | None = None, timeout: float = 10
) -> Path:
    hook_script = tmp_path / f"hook_{event}.py"
    hook_script.write_text(script, encoding="utf-8")
    group: dict[str, Any] = {
        "hooks": [{"type": "command", "command": f"{PY} {hook_script}", "timeout": timeout}]
    }
    if matcher:
        group["matcher"] = matcher
    path = tmp_path / f"hooks_{event}.json"
    path.write_text(json.dumps({"hooks": {event: [group]}}), encoding="utf-8")
    return path


BLOCK_REPORT = """
import json, sys
payload = json.load(sys.stdin)
if payload["tool_input"]["path"].endswith(".md"):
    print("reports need legal review first", file=sys.stderr)
    sys.exit(2)
"""


def test_command_hook_that_blocks(
    run_script: RunScript, good_documents: Documents, tmp_path: Path
) -> None:
    hooks = _hooks_file(tmp_path, "PreToolUse", BLOCK_REPORT, matcher="write_file")
    outcome = run_script(turns_for(*good_documents), "--hooks", str(hooks))
    assert outcome.exit_code == 1
    blocked = [e["data"] for e in outcome.events if e["type"] == "hook.blocked"]
    assert blocked[0]["event"] == "PreToolUse"
    assert blocked[0]["reason"] == "reports need legal review first"
    failed = next(e["data"] for e in outcome.events if e["type"] == "tool.failed")
    assert failed["error_kind"] == "blocked"
    assert not (outcome.workspace / REPORT).exists(), "a blocked tool does not run"
    assert "missing required files: artifacts/insight_report.md" in outcome.record["error_message"]


def test_command_hook_that_passes(
    run_script: RunScript, good_documents: Documents, tmp_path: Path
) -> None:
    hooks = _hooks_file(tmp_path, "PreToolUse", "import sys, json; json.load(sys.stdin)")
    outcome = run_script(turns_for(*good_documents), "--hooks", str(hooks))
    assert outcome.exit_code == 0, outcome.output
    assert "hook.blocked" not in outcome.types


def test_command_hook_that_hangs_blocks(
    run_script: RunScript, good_documents: Documents, tmp_path: Path
) -> None:
    hooks = _hooks_file(
        tmp_path,
        "PreToolUse",
        "import time; time.sleep(30)",
        matcher="read_feedback_csv",
        timeout=0.5,
    )
    outcome = run_script(turns_for(*good_documents), "--hooks", str(hooks))
    blocked = next(e["data"] for e in outcome.events if e["type"] == "hook.blocked")
    assert "timed out after 0.5s" in blocked["reason"]
    assert outcome.exit_code == 1  # the input was never read, so no evidence index


def test_command_hook_exiting_1_is_a_blocking_hook_error(
    run_script: RunScript, good_documents: Documents, tmp_path: Path
) -> None:
    hooks = _hooks_file(
        tmp_path,
        "PreToolUse",
        "import sys; print('crashed', file=sys.stderr); sys.exit(1)",
        matcher="write_file",
    )
    outcome = run_script(turns_for(*good_documents), "--hooks", str(hooks))
    blocked = next(e["data"] for e in outcome.events if e["type"] == "hook.blocked")
    assert blocked["reason"].startswith("hook error:")
    assert "exited with code 1: crashed" in blocked["reason"]
    assert outcome.exit_code == 1


STOP_HOOK = """
import json, sys
payload = json.load(sys.stdin)
artifact = payload["artifact"]
if artifact["name"].endswith(".md") and "TODO" in open(artifact["path"], encoding="utf-8").read():
    print("report still has a TODO", file=sys.stderr)
    sys.exit(2)
"""


def test_stop_command_hook_rejects_only_its_artifact(
    run_script: RunScript, good_documents: Documents, tmp_path: Path
) -> None:
    analysis, backlog, report = good_documents
    hooks = _hooks_file(tmp_path, "Stop", STOP_HOOK)
    outcome = run_script(turns_for(analysis, backlog, report + "\nTODO\n"), "--hooks", str(hooks))
    assert outcome.exit_code == 1
    assert outcome.json["artifacts"][REPORT] == "rejected"
    assert "report still has a TODO" in outcome.record["error_message"]
    finding = next(f for f in outcome.json["findings"] if f["code"] == "hook_blocked")
    assert finding["artifact"] == REPORT


def test_hooks_file_errors_are_usage_errors(
    run_script: RunScript, tmp_path: Path, good_documents: Documents
) -> None:
    bad = tmp_path / "hooks.json"
    bad.write_text('{"hooks": {"BeforeEverything": []}}', encoding="utf-8")
    outcome = run_script(turns_for(*good_documents), "--hooks", str(bad))
    assert outcome.exit_code == 2


@pytest.mark.parametrize("content", ["{", "[]"])
def test_unreadable_hooks_file(
    run_script: RunScript, tmp_path: Path, good_documents: Documents, content: str
) -> None:
    bad = tmp_path / "hooks.json"
    bad.write_text(content, encoding="utf-8")
    assert run_script(turns_for(*good_documents), "--hooks", str(bad)).exit_code == 2


class _Hung:
    name = "HungValidator"

    def validate(self, context: ValidationContext) -> ValidatorResult:
        import time

        time.sleep(30)
        return ValidatorResult(validator=self.name, findings=(), summary=None)


class _Passing:
    name = "PassingValidator"

    def validate(self, context: ValidationContext) -> ValidatorResult:
        return ValidatorResult(validator=self.name, findings=(), summary=None)


def test_a_hung_validator_blocks_after_its_timeout_and_does_not_hold_the_process(
    tmp_path: Path,
) -> None:
    import time

    manager = HookManager()
    manager.register_validator(_Hung(), timeout=0.3)
    manager.register_validator(_Passing(), timeout=5)
    context = ValidationContext(workspace=tmp_path, contracts=())
    started = time.monotonic()
    results = asyncio.run(manager.run_stop(context))  # returns without joining the hung thread
    assert time.monotonic() - started < 5
    (hung, _), (passing, _) = results
    assert hung.blocked and hung.findings[0].code == "hook_error"
    assert hung.summary is not None
    assert "timed out after 0.3s" in hung.summary
    assert not passing.blocked, "validators after a hung one still run"
