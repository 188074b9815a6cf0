"""`runlens runs` and `runlens show` on damaged or changed records, and the terminal output a
newcomer sees: ids that stay readable, lookup by part of an id, plan lines that say what
happened, progress in logs, and an input error shown as the error."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import SAMPLE, child_env, runlens, runlens_command

RUN_NAME = "run_20261201T101500Z_0a23ec"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A completed run of the sample, to copy and damage."""
    home = tmp_path_factory.mktemp("home")
    result = runlens(
        "run",
        "feedback-analysis",
        SAMPLE,
        "--workspace",
        home / "run_20261201T101500Z_0a23ec",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    return home / RUN_NAME


def _copy(
    finished: Path, tmp_path: Path, name: str = "run_20261201T101500Z_0a23ec"
) -> tuple[Path, Path]:
    home = tmp_path / "home"
    workspace = home / name
    shutil.copytree(finished, workspace)
    return home, workspace


DAMAGE: dict[str, tuple[str, Callable[[bytes], bytes], str]] = {
    "truncated manifest": ("manifest.json", lambda raw: raw[: len(raw) // 2], "manifest.json"),
    "0xff in events": (
        "runtime/events.jsonl",
        lambda raw: raw.replace(b'"run.started"', b'"run.st\xffrted"', 1),
        "events.jsonl line 2",
    ),
    "run.json holds a list": ("runtime/run.json", lambda raw: b"[1,2]", "runtime/run.json"),
    "run.json truncated": ("runtime/run.json", lambda raw: raw[:40], "runtime/run.json"),
    "run.json not UTF-8": ("runtime/run.json", lambda raw: b"\xff\xfe" + raw, "runtime/run.json"),
    "manifest holds a string": ("manifest.json", lambda raw: b'"x"', "manifest.json"),
    "events line is a list": (
        "runtime/events.jsonl",
        lambda raw: raw + b"[1, 2]\n",
        "events.jsonl line",
    ),
}


@pytest.mark.parametrize("case", DAMAGE, ids=list(DAMAGE))
def test_damaged_records_are_named_and_the_rest_is_shown(
    finished: Path, tmp_path: Path, case: str
) -> None:
    relative, damage, named = DAMAGE[case]
    home, workspace = _copy(finished, tmp_path)
    target = workspace / relative
    target.chmod(0o644)
    target.write_bytes(damage(target.read_bytes()))
    for args in (("runs",), ("runs", "--json"), ("show", workspace), ("show", workspace, "--json")):
        result = runlens(*args, home=home)
        assert result.returncode == 0, (args, result.stderr)
        assert "Traceback" not in result.stderr
        # `runs` reads only each run's record; `show` reads every file.
        if args[0] == "show" or relative.endswith("run.json"):
            assert named in result.stdout, (args, result.stdout)
        if "--json" in args:
            json.loads(result.stdout)


def test_show_finds_a_run_by_a_unique_prefix_or_suffix(finished: Path, tmp_path: Path) -> None:
    home, _ = _copy(finished, tmp_path)
    shutil.copytree(finished, home / "run_20261201T101500Z_ffff01")
    for part in ("0a23ec", "run_20261201T101500Z_0a", "run_20261201T101500Z_0a23ec"):
        result = runlens("show", part, "--json", "--no-events", home=home)
        assert result.returncode == 0, (part, result.stderr)
    ambiguous = runlens("show", "run_2026", home=home)
    assert ambiguous.returncode == 2
    assert "matches 2 runs" in ambiguous.stderr
    missing = runlens("show", "nothing", home=home)
    assert missing.returncode == 2 and "no run 'nothing'" in missing.stderr


def test_run_ids_stay_whole_at_80_columns(finished: Path, tmp_path: Path) -> None:
    home, _ = _copy(finished, tmp_path)
    result = subprocess.run(
        runlens_command("runs"),
        capture_output=True,
        text=True,
        env={**child_env(home), "COLUMNS": "80"},
        timeout=60,
    )
    run_id = json.loads((finished / "runtime" / "run.json").read_text(encoding="utf-8"))["run_id"]
    assert run_id in result.stdout
    assert max(map(len, result.stdout.splitlines())) <= 80


def test_at_80_columns_only_the_input_and_the_model_give_way(
    finished: Path, tmp_path: Path
) -> None:
    """A long model name (a script's path) and input name never push the run's status,
    review, time and findings out of an 80-column terminal; with room, they are whole."""
    home, workspace = _copy(finished, tmp_path)
    record = workspace / "runtime" / "run.json"
    model = "scripted:/home/someone/projects/" + "deeply/nested/" * 6 + "script.json"
    data = json.loads(record.read_text(encoding="utf-8"))
    data["model"] = model
    record.write_text(json.dumps(data, indent=2), encoding="utf-8")
    for columns in ("80", "250"):
        result = subprocess.run(
            runlens_command("runs"),
            capture_output=True,
            text=True,
            env={**child_env(home), "COLUMNS": columns},
            timeout=60,
        )
        header, row = result.stdout.splitlines()[:2]
        assert max(map(len, result.stdout.splitlines())) <= int(columns)
        assert header.split()[:6] == ["run", "status", "review", "created", "took", "findings"]
        assert row.split()[:3] == [data["run_id"], data["status"], "unreviewed"]
        assert row.split()[7] == str(sum(data["metrics"]["findings_by_code"].values()))
        assert (model in row) == (columns == "250")


@pytest.mark.parametrize(
    "change",
    ["edit the backlog", "delete the report", "edit the index", "edit the input"],
)
def test_show_says_when_the_workspace_no_longer_matches_its_record(
    finished: Path, tmp_path: Path, change: str
) -> None:
    home, workspace = _copy(finished, tmp_path)
    targets = {
        "edit the backlog": workspace / "artifacts" / "product_backlog.json",
        "delete the report": workspace / "artifacts" / "insight_report.md",
        "edit the index": workspace / "runtime" / "evidence_index.json",
        "edit the input": workspace / "input" / "sample_feedback.csv",
    }
    target = targets[change]
    target.chmod(0o644)
    if change.startswith("delete"):
        target.unlink()
    else:
        target.write_bytes(target.read_bytes() + b" ")
    shown = runlens("show", workspace, "--no-events", home=home)
    assert "changed since the run" in shown.stdout
    assert target.name in shown.stdout
    data = json.loads(runlens("show", workspace, "--json", home=home).stdout)
    assert any(target.name in line for line in data["changed_since_run"])
    untouched = runlens("show", finished, "--json", home=home)
    assert json.loads(untouched.stdout)["changed_since_run"] == []


def test_plan_lines_of_a_failed_run_say_the_result(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("feedback_id,text\nfb_1,fine\nfb_1,duplicate id\n", encoding="utf-8")
    workspace = tmp_path / "ws"
    result = runlens("run", "feedback-analysis", bad, "--workspace", workspace)
    assert result.returncode == 1
    # The error itself, not a table of three `missing` deliverables.
    assert "duplicate" in result.stdout
    assert "No deliverable was written" in result.stdout
    assert "missing" not in result.stdout.lower().replace("missing column", "")
    shown = runlens("show", workspace)
    plan_lines = [line for line in shown.stdout.splitlines() if line.startswith("  ✗")]
    assert plan_lines and all("—" in line for line in plan_lines), shown.stdout
    assert "(evidence index built)" not in shown.stdout.split("Plan")[1].split("Events")[0]
    assert "turn None" not in shown.stdout


def test_progress_prints_a_line_per_batch_when_not_a_terminal(tmp_path: Path) -> None:
    result = runlens(
        "run", "feedback-analysis", SAMPLE, "--workspace", tmp_path / "ws"
    )  # stderr is a pipe: not a terminal
    assert result.returncode == 0, result.stderr
    batch_lines = [line for line in result.stderr.splitlines() if line.strip().startswith("batch ")]
    assert batch_lines and "1/1" in batch_lines[0]
    shown = runlens("show", tmp_path / "ws")
    assert "turn None" not in shown.stdout
    assert "batch call" in shown.stdout


def test_model_text_cannot_drive_the_terminal(finished: Path, tmp_path: Path) -> None:
    home, workspace = _copy(finished, tmp_path)
    record_path = workspace / "runtime" / "run.json"
    record_path.chmod(0o644)
    record = json.loads(record_path.read_text(encoding="utf-8"))
    record["error_message"] = "boom \x1b[2J\x1b]0;owned\x07 [bold red]markup[/]"
    record_path.write_text(json.dumps(record), encoding="utf-8")
    shown = runlens("show", workspace, "--no-events", home=home)
    assert "\x1b[2J" not in shown.stdout and "\x07" not in shown.stdout
    assert "\\x1b[2J" in shown.stdout
    assert "[bold red]markup[/]" in shown.stdout


def test_no_step_is_shown_running_while_an_earlier_one_still_is(tmp_path: Path) -> None:
    result = runlens("run", "feedback-analysis", SAMPLE, "--workspace", tmp_path / "ws")
    order = ["load_feedback", "analyze_feedback", "build_backlog", "write_report"]
    shown: dict[str, str] = {}
    for line in result.stderr.splitlines():
        step, _, status = line.strip().partition(": ")
        if step not in order:
            continue
        if status == "running":
            earlier = order[: order.index(step)]
            assert all(shown.get(s) in ("completed", "delivered") for s in earlier), (
                step,
                shown,
            )
        shown[step] = status.split(",")[0]
    assert shown == dict.fromkeys(order, "completed")


@pytest.mark.parametrize(
    ("room", "widths"),
    [
        (200, [("input", 19), ("plugin · model", 135)]),  # both whole
        (60, [("input", 19), ("plugin · model", 37)]),  # the wider gives way alone
        (40, [("input", 18), ("plugin · model", 18)]),  # both: each its share
        (19, [("input", 17)]),  # no room for two: the last is left out
        (9, []),  # nor for one
    ],
)
def test_the_columns_that_give_way_share_the_room_left(
    room: int, widths: list[tuple[str, int]]
) -> None:
    from runlens.cli.runs import _flexible_widths

    texts = [("input", ["sample_feedback.csv"]), ("plugin · model", ["m" * 135])]
    assert _flexible_widths(room, texts) == widths
    # What is shown, with a gap before each column, fits in the room.
    assert sum(width + 2 for _, width in widths) <= room
