"""Shared helpers of the CLI tests: invoking `runlens`, and reading a run's records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from runlens.cli import cli


def invoke(*args: object) -> Result:
    return CliRunner(env={"COLUMNS": "200"}).invoke(cli, [*map(str, args)])


def run(path: Path, workspace: Path, *options: object) -> tuple[Result, dict[str, Any]]:
    """`runlens run feedback-analysis PATH --workspace WORKSPACE --json OPTIONS...`: the result
    and its JSON verdict; never a traceback."""
    result = invoke("run", "feedback-analysis", path, "--workspace", workspace, "--json", *options)
    assert "Traceback" not in result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result, json_object(result.stdout)


def json_object(text: str) -> dict[str, Any]:
    """`text` parsed as JSON, which must be an object (every document read here is one)."""
    document = json.loads(text)
    assert isinstance(document, dict), document
    return document


def run_record(workspace: Path) -> dict[str, Any]:
    return json_object((workspace / "runtime" / "run.json").read_text(encoding="utf-8"))


def index_header(workspace: Path) -> dict[str, Any]:
    """The Evidence Index file of `workspace` without its items."""
    document = json_object(
        (workspace / "runtime" / "evidence_index.json").read_text(encoding="utf-8")
    )
    document.pop("items")
    return document
