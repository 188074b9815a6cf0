"""Command hooks under attack: own timeouts, no surviving processes, settings checked on load,
bounded output, relative commands. Real processes, real sleeps, /proc checks; no mocks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from runlens.cli import cli
from runlens.hooks.command import CommandHook, CommandValidator, load_hooks_file
from runlens.hooks.manager import HookEvent, HookManager
from runlens.hooks.process import OUTPUT_LIMIT, RUNNING, Stopped
from runlens.plugins import load_plugin
from runlens.records.events import read_events
from runlens.runtime.run import RunSettings, run_plugin
from runlens.testing import ScriptedModel
from runlens.validation.base import ValidationContext
from runlens_feedback.contracts import ANALYSIS, BACKLOG, CHART, REPORT

from .conftest import Documents, RunScript, turns_for

PY = sys.executable
FIVE_MB = 5 * 1024 * 1024

# -- helpers ------------------------------------------------------------------------------------


def _members(pgid: int) -> list[tuple[int, str]]:
    """Processes of group `pgid` that are not zombies, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            found.append((int(entry), fields[0]))
    return found


def _alive(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2] not in ("Z", "X")


def _assert_gone(pgid: int, pids: list[int], within: float = 3.0) -> None:
    """No process of the hook's group, nor any child it recorded, is left (zombies aside)."""
    assert pgid != os.getpgrp(), "the hook ran in the test's own process group"
    deadline = time.monotonic() + within
    while True:
        survivors = _members(pgid) + [(pid, "child") for pid in pids if _alive(pid)]
        if not survivors:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, 0)  # only zombies may remain in the group
                assert not _members(pgid)
            return
        if time.monotonic() > deadline:
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.killpg(pgid, signal.SIGKILL)
            raise AssertionError(f"hook processes survived: {survivors}")
        time.sleep(0.05)


def _spawned(marker: Path) -> Iterator[dict[str, Any]]:
    """What each run of the HANG hook recorded: its process group and its children."""
    if marker.exists():
        for line in marker.read_text(encoding="utf-8").splitlines():
            yield json.loads(line)


def _settings(path: Path, event: str, command: str, *, timeout: float, matcher: str = "") -> Path:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
    if matcher:
        group["matcher"] = matcher
    path.write_text(json.dumps({"hooks": {event: [group]}}), encoding="utf-8")
    return path


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


# A hook that starts three `sleep 301` children, records them, then hangs. For Stop it hangs
# only on the report (the other artifacts pass at once), so one timeout is paid, not three.
HANG = """
import json, os, subprocess, sys, time
payload = json.load(sys.stdin)
artifact = payload.get("artifact", {}).get("name", "")
if payload["hook_event_name"] == "Stop" and not artifact.endswith(".md"):
    sys.exit(0)
children = [subprocess.Popen(["sleep", "301"]).pid for _ in range(3)]
with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(json.dumps({"pgid": os.getpgrp(), "pids": children}) + "\\n")
time.sleep(301)
"""

# -- 1. a hook's own timeout --------------------------------------------------------------------

SLOW_ON_REPORT = """
import json, sys, time
payload = json.load(sys.stdin)
if payload["artifact"]["name"].endswith(".md"):
    time.sleep(1.5)
"""


def test_a_stop_hooks_own_timeout_applies_not_the_global_one(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents
) -> None:
    script = tmp_path / "slow.py"
    script.write_text(SLOW_ON_REPORT, encoding="utf-8")
    hook = CommandHook(HookEvent.STOP, f"{PY} {script}", timeout=20)
    settings = RunSettings(hook_timeout=0.5, command_hooks=(hook,), validator_plugins=False)
    result = asyncio.run(
        run_plugin(
            load_plugin("feedback-analysis"),
            feedback_csv,
            ScriptedModel(turns_for(*good_documents)),
            workspace=tmp_path / "ws",
            settings=settings,
        )
    )
    assert result.status == "completed", result.error_message


def test_the_budget_of_a_stop_command_follows_its_timeout_per_artifact(tmp_path: Path) -> None:
    context = ValidationContext(
        workspace=tmp_path, contracts=load_plugin("feedback-analysis").contracts
    )
    validator = CommandValidator(CommandHook(HookEvent.STOP, "true", timeout=120), {})
    assert validator.stop_timeout(context) >= 120 * len(context.contracts)


def test_a_stop_hook_past_its_own_timeout_blocks_and_leaves_nothing(
    run_script: RunScript, good_documents: Documents, tmp_path: Path
) -> None:
    marker = tmp_path / "spawned.jsonl"
    script = tmp_path / "hang.py"
    script.write_text(HANG, encoding="utf-8")
    hooks = _settings(tmp_path / "hooks.json", "Stop", f"{PY} {script} {marker}", timeout=1)
    started = time.monotonic()
    outcome = run_script(turns_for(*good_documents), "--hooks", str(hooks))
    assert time.monotonic() - started < 15
    assert outcome.exit_code == 1
    assert outcome.json["artifacts"][REPORT] == "rejected"
    assert "timed out after 1s" in outcome.record["error_message"]
    (spawned,) = _spawned(marker)
    _assert_gone(spawned["pgid"], spawned["pids"])


# -- 2. no process survives, whatever the event ------------------------------------------------

EVENTS = [
    ("RunStart", ""),
    ("PreToolUse", "read_feedback_csv"),
    ("PostToolUse", "read_feedback_csv"),
    ("Stop", ""),
    ("RunEnd", ""),
]


@pytest.mark.parametrize(("event", "matcher"), EVENTS, ids=[e for e, _ in EVENTS])
def test_a_timed_out_hook_leaves_no_process_behind(
    run_script: RunScript, good_documents: Documents, tmp_path: Path, event: str, matcher: str
) -> None:
    marker = tmp_path / "spawned.jsonl"
    script = tmp_path / "hang.py"
    script.write_text(HANG, encoding="utf-8")
    command = f"{PY} {script} {marker}"
    hooks = _settings(tmp_path / "hooks.json", event, command, timeout=1, matcher=matcher)
    started = time.monotonic()
    outcome = run_script(turns_for(*good_documents), "--hooks", str(hooks))
    assert time.monotonic() - started < 15
    assert outcome.exit_code in (0, 1)
    spawned = list(_spawned(marker))
    assert len(spawned) == 1, f"the {event} hook ran {len(spawned)} times"
    _assert_gone(spawned[0]["pgid"], spawned[0]["pids"])
    reasons = [json.dumps(e["data"]) for e in outcome.events if e["type"].startswith("hook.")]
    reasons.append(outcome.record.get("error_message") or "")
    assert any("timed out after 1s" in reason for reason in reasons)


def test_a_background_child_does_not_outlive_a_hook_that_exited(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    hook = CommandHook(HookEvent.STOP, f"sleep 301 & echo $$ $! > {pids}; exit 0", timeout=30)
    started = time.monotonic()
    decision = hook.decide({}, tmp_path)
    assert not decision.blocked
    assert time.monotonic() - started < 5, "the verdict waits for the hook, not its child"
    pgid, child = map(int, pids.read_text().split())
    _assert_gone(pgid, [child])


def test_an_abandoned_stop_round_kills_its_command_and_starts_no_more(tmp_path: Path) -> None:
    marker = tmp_path / "spawned.jsonl"
    script = tmp_path / "hang.py"
    script.write_text(HANG, encoding="utf-8")
    hook = CommandHook(HookEvent.STOP, f"{PY} {script} {marker}", timeout=60)
    manager = HookManager()
    # The runner gives up on the validator after 1 s (its thread cannot be stopped); the
    # end of the round must kill the command it is waiting for.
    manager.register_validator(CommandValidator(hook, {}), timeout=1)
    contracts = load_plugin("feedback-analysis").contracts
    report_first = tuple(sorted(contracts, key=lambda c: not c.name.endswith(".md")))
    context = ValidationContext(workspace=tmp_path, contracts=report_first)
    ((result, _),) = asyncio.run(manager.run_stop(context))
    assert result.blocked and "timed out after 1s" in (result.summary or "")
    (spawned,) = _spawned(marker)
    _assert_gone(spawned["pgid"], spawned["pids"])
    with pytest.raises(Stopped):
        RUNNING.start("true", cwd=tmp_path, owner=context)
    again = CommandValidator(hook, {}).validate(context)  # a round that is over fails closed
    assert again.blocked and {f.code for f in again.findings} == {"hook_error"}
    assert "was stopped" in again.findings[0].message
    time.sleep(0.3)
    assert len(list(_spawned(marker))) == 1, "no command starts for a round that is over"


CANCEL_CASES = [
    ("Stop", "", signal.SIGTERM),
    ("Stop", "", signal.SIGINT),
    ("PreToolUse", "write_file", signal.SIGTERM),
    ("PreToolUse", "write_file", signal.SIGINT),
]


@pytest.mark.parametrize(
    ("event", "matcher", "signum"), CANCEL_CASES, ids=[f"{e}-{s.name}" for e, _, s in CANCEL_CASES]
)
def test_cancelling_the_run_kills_the_running_hook(
    tmp_path: Path,
    feedback_csv: Path,
    good_documents: Documents,
    event: str,
    matcher: str,
    signum: signal.Signals,
) -> None:
    marker = tmp_path / "spawned.jsonl"
    script = tmp_path / "hang.py"
    script.write_text(HANG, encoding="utf-8")
    command = f"{PY} {script} {marker}"
    hooks = _settings(tmp_path / "hooks.json", event, command, timeout=120, matcher=matcher)
    model = tmp_path / "script.json"
    model.write_text(json.dumps({"turns": turns_for(*good_documents)}), encoding="utf-8")
    workspace = tmp_path / "ws"
    process = subprocess.Popen(
        [
            *(PY, "-m", "runlens", "run", "feedback-analysis", str(feedback_csv), "--json"),
            *("--model", f"scripted:{model}", "--workspace", str(workspace), "--hooks", str(hooks)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not list(_spawned(marker)):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the hook never started"
            time.sleep(0.05)
        time.sleep(0.2)
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1, stderr
    record = json.loads((workspace / "runtime" / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "cancelled"
    (spawned,) = _spawned(marker)
    _assert_gone(spawned["pgid"], spawned["pids"])


# -- 3. the settings file is checked on load ----------------------------------------------------


def _entry(**fields: Any) -> dict[str, Any]:
    return {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", **fields}]}]}}


ENTRY = "hooks.Stop[0].hooks[0]"
TIMEOUT_RULE = "must be a number of seconds more than 0 and at most 3600"

#: (id, document, the JSON path the message must name, a fragment of the explanation)
BAD_SETTINGS: list[tuple[str, Any, str, str]] = [
    ("timeout-string", _entry(timeout="abc"), f"{ENTRY}.timeout", f'{TIMEOUT_RULE}, not "abc"'),
    ("timeout-numeric-string", _entry(timeout="120"), f"{ENTRY}.timeout", TIMEOUT_RULE),
    ("timeout-negative", _entry(timeout=-5), f"{ENTRY}.timeout", f"{TIMEOUT_RULE}, not -5"),
    ("timeout-zero", _entry(timeout=0), f"{ENTRY}.timeout", TIMEOUT_RULE),
    ("timeout-huge", _entry(timeout=1e9), f"{ENTRY}.timeout", TIMEOUT_RULE),
    ("timeout-just-too-long", _entry(timeout=3600.5), f"{ENTRY}.timeout", TIMEOUT_RULE),
    ("timeout-true", _entry(timeout=True), f"{ENTRY}.timeout", f"{TIMEOUT_RULE}, not true"),
    ("timeout-null", _entry(timeout=None), f"{ENTRY}.timeout", TIMEOUT_RULE),
    (
        "matcher-bad-regex",
        {"hooks": {"PreToolUse": [{"matcher": "write_(file", "hooks": []}]}},
        "hooks.PreToolUse[0].matcher",
        "is not a valid regular expression",
    ),
    (
        "matcher-not-string",
        {"hooks": {"PreToolUse": [{"matcher": ["write_file"], "hooks": []}]}},
        "hooks.PreToolUse[0].matcher",
        "must be a string",
    ),
    (
        "group-list-not-object",
        {"hooks": {"Stop": [[{"command": "true"}]]}},
        "hooks.Stop[0]",
        "must be an object, not a list",
    ),
    (
        "event-object-not-list",
        {"hooks": {"Stop": {"hooks": [{"command": "true"}]}}},
        "hooks.Stop",
        "must be a list, not an object",
    ),
    (
        "entries-object-not-list",
        {"hooks": {"Stop": [{"hooks": {"command": "true"}}]}},
        "hooks.Stop[0].hooks",
        "must be a list, not an object",
    ),
    (
        "entry-list-not-object",
        {"hooks": {"Stop": [{"hooks": [["true"]]}]}},
        f"{ENTRY}",
        "must be an object, not a list",
    ),
    (
        "unknown-event",
        {"hooks": {"BeforeEverything": []}},
        "hooks.BeforeEverything",
        "unknown event (known events: RunStart, PreToolUse, PostToolUse, Stop, RunEnd)",
    ),
    (
        "missing-command",
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "timeout": 5}]}]}},
        f"{ENTRY}.command",
        "is required",
    ),
    ("command-number", _entry(command=42), f"{ENTRY}.command", "must be a string, not 42"),
    ("command-list", _entry(command=["ls", "-l"]), f"{ENTRY}.command", "must be a string"),
    ("command-empty", _entry(command="   "), f"{ENTRY}.command", "must not be empty"),
    ("typo-key", _entry(timout=5), f"{ENTRY}.timout", "unknown key (allowed: type, command"),
    ("type-not-command", _entry(type="prompt"), f"{ENTRY}.type", 'must be "command"'),
    ("top-level-list", [], "top level", "must be an object"),
    ("no-hooks-key", {"permissions": {}}, "hooks", "is required"),
    ("hooks-a-list", {"hooks": []}, "hooks", "must be an object, not a list"),
    (
        "missing-relative-program",
        _entry(command="./missing-check.sh --strict"),
        f"{ENTRY}.command",
        "program ./missing-check.sh",
    ),
]


@pytest.mark.parametrize(
    ("document", "key", "fragment"),
    [case[1:] for case in BAD_SETTINGS],
    ids=[case[0] for case in BAD_SETTINGS],
)
def test_bad_settings_are_a_usage_error_naming_file_and_key(
    tmp_path: Path, feedback_csv: Path, document: Any, key: str, fragment: str
) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = _invoke("run", "feedback-analysis", str(feedback_csv), "--hooks", str(path))
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert f"{path}: {key}: " in result.stderr, result.stderr
    assert fragment in result.stderr, result.stderr


def _not_executable(folder: Path) -> Path:
    script = folder / "check.sh"
    script.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)
    return folder / "hooks.json"


#: (id, bytes of the file or a builder, a fragment naming where or what)
BAD_FILES: list[tuple[str, Any, str]] = [
    ("invalid-json", b'{"hooks": {\n  "Stop": [,]\n}}',
     "is not valid JSON: Expecting value at line 2 column 12"),
    ("truncated-json", b'{"hooks": {"Stop": [', "is not valid JSON"),
    ("empty-file", b"", "is not valid JSON: Expecting value at line 1 column 1"),
    ("not-utf8", b'{"hooks": {}}\n{"x": "\xff\xfe"}',
     "is not UTF-8 text: byte 0xff at line 2 column 8"),
    ("nan-timeout", b'{"hooks": {"Stop": [{"hooks": [{"command": "true", "timeout": NaN}]}]}}',
     "NaN is not a JSON number"),
    ("duplicate-event", b'{"hooks": {"Stop": [], "Stop": []}}', 'key "Stop" appears twice'),
    ("deep-nesting", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ("missing-file", None, "hooks settings file not found"),
    ("directory", "dir", "is a directory"),
    ("fifo", "fifo", "is not a regular file"),
    ("program-not-executable", "noexec", "is not executable"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("content", "fragment"), [case[1:] for case in BAD_FILES], ids=[case[0] for case in BAD_FILES]
)
def test_unusable_settings_files_are_a_usage_error_naming_the_file(
    tmp_path: Path, feedback_csv: Path, content: Any, fragment: str
) -> None:
    path = tmp_path / "hooks.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content == "dir":
        path.mkdir()
    elif content == "fifo":
        os.mkfifo(path)  # reading it would block forever
    elif content == "noexec":
        path = _not_executable(tmp_path)
        path.write_text(json.dumps(_entry(command="./check.sh")), encoding="utf-8")
    result = _invoke("run", "feedback-analysis", str(feedback_csv), "--hooks", str(path))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert str(path) in result.stderr and fragment in result.stderr, result.stderr


def test_every_problem_is_listed_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    document = {
        "hooks": {
            "Bogus": [],
            "Stop": [{"hooks": [{"command": "true", "timeout": "abc"}, {"timeout": -1}]}],
        }
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(Exception) as caught:
        load_hooks_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: 4 problems: ")
    for where in (
        "hooks.Bogus: unknown event",
        f"{ENTRY}.timeout: {TIMEOUT_RULE}",
        "hooks.Stop[0].hooks[1].command: is required",
        "hooks.Stop[0].hooks[1].timeout",
    ):
        assert where in message


def test_good_settings_load_with_their_timeouts(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_bytes(
        "\ufeff".encode()
        + json.dumps(
            {
                "permissions": {"allow": []},  # another runtime's key: ignored
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "write_.*", "hooks": [{"command": "true", "timeout": 1}]}
                    ],
                    "Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": 3600}]}],
                },
            }
        ).encode()
    )
    pre, stop = load_hooks_file(path)
    assert (pre.event, pre.timeout, pre.matcher) == (HookEvent.PRE_TOOL_USE, 1.0, "write_.*")
    assert (stop.event, stop.timeout, stop.base_dir) == (HookEvent.STOP, 3600.0, tmp_path)


# -- 4. bounded output --------------------------------------------------------------------------

FLOOD_STDERR = f"""
import json, sys
payload = json.load(sys.stdin)
if payload["artifact"]["name"].endswith(".md"):
    sys.stderr.write("E" * {FIVE_MB})
    sys.exit(2)
"""


def test_five_megabytes_of_stderr_stay_out_of_the_records(
    run_script: RunScript, good_documents: Documents, tmp_path: Path
) -> None:
    script = tmp_path / "flood.py"
    script.write_text(FLOOD_STDERR, encoding="utf-8")
    hooks = _settings(tmp_path / "hooks.json", "Stop", f"{PY} {script}", timeout=30)
    outcome = run_script(turns_for(*good_documents), "--hooks", str(hooks))
    assert outcome.exit_code == 1
    finding = next(f for f in outcome.json["findings"] if f["code"] == "hook_blocked")
    assert finding["artifact"] == REPORT
    assert finding["message"].endswith(f"… [truncated, {FIVE_MB} bytes in all]")
    assert len(finding["message"]) < OUTPUT_LIMIT + 100
    events = outcome.workspace / "runtime" / "events.jsonl"
    assert events.stat().st_size < 1024 * 1024, events.stat().st_size
    assert (outcome.workspace / "runtime" / "run.json").stat().st_size < 1024 * 1024


def test_a_hook_flooding_both_pipes_does_not_hang(tmp_path: Path) -> None:
    flood = f"import sys; sys.stdout.write('o' * {FIVE_MB}); sys.stderr.write('e' * {FIVE_MB})"
    command = f'{PY} -c "{flood}"'
    started = time.monotonic()
    decision = CommandHook(HookEvent.PRE_TOOL_USE, command, timeout=20).decide({}, tmp_path)
    assert not decision.blocked
    assert time.monotonic() - started < 10


def test_a_cut_in_a_multibyte_character_is_clean(tmp_path: Path) -> None:
    command = f"{PY} -c \"import sys; sys.stderr.write('é' * 100_000); sys.exit(2)\""
    reason = CommandHook(HookEvent.STOP, command, timeout=20).decide({}, tmp_path).reason
    assert reason.endswith("… [truncated, 200000 bytes in all]")
    assert "\ufffd" not in reason
    assert reason.startswith("é" * (OUTPUT_LIMIT // 2))


def test_stdout_is_the_reason_when_stderr_is_empty(tmp_path: Path) -> None:
    hook = CommandHook(HookEvent.STOP, "echo use the template; exit 2", timeout=20)
    assert hook.decide({}, tmp_path).reason == "use the template"


@pytest.mark.parametrize("reads", [False, True], ids=["ignores-stdin", "reads-stdin"])
def test_a_large_payload_is_no_problem_whether_read_or_not(tmp_path: Path, reads: bool) -> None:
    command = f'{PY} -c "import sys; sys.stdin.buffer.read()"' if reads else "exit 0"
    payload = {"tool_input": {"content": "x" * FIVE_MB}}
    started = time.monotonic()
    decision = CommandHook(HookEvent.PRE_TOOL_USE, command, timeout=20).decide(payload, tmp_path)
    assert not decision.blocked, decision.reason
    assert time.monotonic() - started < 10


# -- 5. relative commands ------------------------------------------------------------------------

RECORDER = """
import json, os, sys
payload = json.load(sys.stdin)
with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(json.dumps({
        "cwd": os.getcwd(),
        "payload_cwd": payload["cwd"],
        "workspace": os.environ["RUNLENS_WORKSPACE"],
        "hooks_dir": os.environ["RUNLENS_HOOKS_DIR"],
        "artifact": payload.get("artifact"),
    }) + "\\n")
"""


def test_relative_commands_resolve_against_the_settings_folder(
    tmp_path: Path, feedback_csv: Path, good_documents: Documents, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "project" / "config"
    (config / "hooks").mkdir(parents=True)
    (config / "hooks" / "record.py").write_text(RECORDER, encoding="utf-8")
    check = config / "check.sh"
    check.write_text(f'#!/bin/sh\nexec "{PY}" hooks/record.py seen-by-check.jsonl\n')
    check.chmod(0o755)
    settings = {
        "hooks": {
            "RunStart": [{"hooks": [{"command": "./check.sh"}]}],
            "Stop": [{"hooks": [{"command": f"{PY} hooks/record.py seen-by-python.jsonl"}]}],
        }
    }
    (config / "hooks.json").write_text(json.dumps(settings), encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns_for(*good_documents)}), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    workspace = tmp_path / "ws"
    result = _invoke(
        "run", "feedback-analysis", str(feedback_csv), "--json",
        "--model", f"scripted:{script}", "--workspace", str(workspace),
        "--hooks", "../project/config/hooks.json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # The Stop hook runs once per contract, the optional chart (not drawn here) included.
    for name, runs in (("seen-by-check.jsonl", 1), ("seen-by-python.jsonl", 4)):
        lines = (config / name).read_text(encoding="utf-8").splitlines()
        assert len(lines) == runs
        for seen in map(json.loads, lines):
            assert Path(seen["cwd"]) == config
            assert Path(seen["hooks_dir"]) == config
            assert Path(seen["workspace"]) == Path(seen["payload_cwd"]) == workspace.resolve()
    stop_lines = (config / "seen-by-python.jsonl").read_text(encoding="utf-8").splitlines()
    described = [json.loads(line)["artifact"] for line in stop_lines]
    assert [(a["name"], a["required"], a["exists"]) for a in described] == [
        (ANALYSIS, True, True),
        (BACKLOG, True, True),
        (REPORT, True, True),
        (CHART, False, False),
    ]
    events = list(read_events(workspace / "runtime" / "events.jsonl"))
    assert "hook.blocked" not in [e["type"] for e in events]


def test_a_hook_in_code_without_a_settings_folder_runs_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / ANALYSIS).parent.mkdir(parents=True)
    (tmp_path / ANALYSIS).write_text("{}", encoding="utf-8")
    hook = CommandHook(HookEvent.STOP, f"test -f {ANALYSIS} || exit 2", timeout=20)
    assert not hook.decide({}, tmp_path).blocked


def test_the_settings_models_are_built_when_a_file_is_first_read(tmp_path: Path) -> None:
    # Not at import: a run without a settings file does not pay for their validators.
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"command": "true"}]}]}}))
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "from runlens.hooks import settings as s\n"
        "models = (s.CommandEntry, s.MatcherGroup, s.HookTable, s.HooksSettings)\n"
        "print([m.__pydantic_complete__ for m in models])\n"
        "read = s.read_settings(Path(sys.argv[1]))\n"
        "print(read.hooks.Stop[0].hooks[0].command, s.HooksSettings.__pydantic_complete__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(settings)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.stdout.splitlines() == [
        "[False, False, False, False]",
        "true True",
    ]
