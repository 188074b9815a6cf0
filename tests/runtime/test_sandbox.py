"""Write attacks through the model-facing file tools: every one refused, nothing written out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runlens.errors import ToolError
from runlens.tools.base import ToolContext
from runlens.tools.files import list_files, read_file, write_file
from runlens.tools.workspace import Workspace

from .conftest import Documents, RunScript, write_call


@pytest.fixture
def context(tmp_path: Path) -> ToolContext:
    workspace = Workspace(tmp_path / "ws")
    workspace.create()
    (workspace.input / "in.csv").write_text("a,b\n", encoding="utf-8")
    (workspace.runtime / "run.json").write_text("{}", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, workspace.artifacts / "escape")
    return ToolContext(
        run_id="run_test", workspace=workspace, input_path=workspace.input / "in.csv"
    )


ATTACKS = [
    "../x",
    "/tmp/x",
    "artifacts/../../x",
    "artifacts/escape/x",
    "runtime/run.json",
    "runtime/evidence_index.json",
    "input/in.csv",
    "input/new.csv",
    "manifest.json",
    "artifacts",
    "",
]


@pytest.mark.parametrize("path", ATTACKS)
def test_write_refused_and_nothing_written_outside(
    context: ToolContext, path: str, tmp_path: Path
) -> None:
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(ToolError):
        write_file(context, path, "pwned")
    after = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before
    assert not (tmp_path / "x").exists()
    assert not (tmp_path / "outside" / "x").exists()


def test_write_inside_artifacts_works(context: ToolContext) -> None:
    result = write_file(context, "artifacts/sub/report.md", "# hi")
    assert result == {"path": "artifacts/sub/report.md", "bytes": 4}
    assert read_file(context, "artifacts/sub/report.md") == "# hi"


@pytest.mark.parametrize("path", ["../outside", "/etc/passwd", "artifacts/escape"])
def test_reads_outside_refused(context: ToolContext, path: str) -> None:
    with pytest.raises(ToolError):
        read_file(context, path) if "escape" not in path else list_files(context, path)


def test_reads_of_runtime_and_input_allowed(context: ToolContext) -> None:
    assert read_file(context, "runtime/run.json") == "{}"
    listed = list_files(context)
    files = listed["files"]
    assert isinstance(files, list)
    assert {"path": "input/in.csv", "bytes": 4} in files


def test_attacks_in_a_run_are_recorded_and_the_run_goes_on(
    run_script: RunScript, good_documents: Documents, tmp_path: Path
) -> None:
    from .conftest import turns_for

    attacks = [
        write_call(path, "pwned")
        for path in (
            "../x",
            str(tmp_path / "abs.txt"),
            "runtime/run.json",
            "input/x.csv",
            "artifacts/../../x",
        )
    ]
    turns = turns_for(*good_documents)
    turns.insert(1, {"tool_calls": attacks})
    outcome = run_script(turns)
    assert outcome.exit_code == 0, outcome.output
    failed = [e["data"] for e in outcome.events if e["type"] == "tool.failed"]
    assert len(failed) == len(attacks)
    assert all(event["error_kind"] == "refused" for event in failed)
    assert not (tmp_path / "x").exists() and not (tmp_path / "abs.txt").exists()
    assert outcome.record["metrics"]["tool_failures"] == len(attacks)
