"""Text a run recorded (a model's, a file's) is printed inert by every command that shows it:
markup shown as written, control characters and lone UTF-16 surrogates (a JSON `"\\ud800"`
escape a model wrote, a file name that is not UTF-8) as escapes. A terminal takes no lone
surrogate: printed as it is, it stops the command with an encoding error."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from click.testing import CliRunner
from rich.console import Console

from runlens.cli import cli
from runlens.cli.progress import RunProgress
from runlens.cli.render import render_run_verdict, render_verdict
from runlens.plugins.base import PlanStep, SuccessCriterion
from runlens.records.events import Event
from runlens.store import open_store
from runlens.validation.findings import Finding

#: Lone surrogates, and markup that must show as written.
LONE = "lone \ud800 \udfff \udcff [bold]not bold[/]"
SHOWN = "lone \\ud800 \\udfff \\udcff [bold]not bold[/]"


def _terminal() -> tuple[Console, io.TextIOWrapper]:
    """A console writing UTF-8 as a terminal does: a lone surrogate is an encoding error."""
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    return Console(file=stream, force_terminal=False, width=300), stream


def _written(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")


def _finding(artifact: str) -> Finding:
    return Finding(validator="v", artifact=artifact, code="bad_value", path=LONE, message=LONE)


def test_validate_s_verdict_prints_recorded_text_inert() -> None:
    console, stream = _terminal()
    report = SimpleNamespace(
        passed=False,
        findings=[_finding(LONE), _finding("")],
        artifacts={LONE: LONE, "artifacts/b.md": "validated"},
        error_message=LONE,
        quotes=[SimpleNamespace(artifact=LONE)],
    )
    render_verdict(console, report)
    out = _written(stream)
    assert f"1 in {SHOWN}" in out  # the quotes counted by artifact
    assert f"Findings: {SHOWN}" in out  # a findings table's title
    assert out.count(SHOWN) >= 7


def test_run_s_verdict_and_progress_print_recorded_text_inert() -> None:
    console, stream = _terminal()
    result = SimpleNamespace(
        passed=False,
        findings=[],
        artifacts={LONE: "not_validated"},
        error_message=LONE,
        quotes=[],
        status="failed",
        defect=LONE,
        warnings=[LONE],
    )
    render_run_verdict(console, result, SimpleNamespace(contracts=()))
    out = _written(stream)
    assert f"Written but not validated: {SHOWN}" in out
    assert out.count(SHOWN) == 4

    console, stream = _terminal()
    steps = (PlanStep("s", LONE, (SuccessCriterion("stop_passed"),)),)
    progress = RunProgress(console, steps)
    events: list[tuple[str, dict[str, Any]]] = [
        ("plan.step.updated", {"step_id": "s", "status": "failed", "reason": LONE}),
        ("tool.called", {"name": LONE}),
        ("batch.failed", {"batch": 1, "batches": 2, "items": 0, "rows": 5, "reason": LONE}),
        ("plugin.event", {"name": LONE, "data": {"k": LONE}}),
    ]
    for seq, (kind, data) in enumerate(events, start=1):
        progress(Event(seq, "2026-12-01T10:00:00.000000+00:00", "run_x", kind, data))
    console.print(progress._render())  # the live view a terminal redraws
    out = _written(stream)
    assert f"  s: failed ({SHOWN})" in out
    assert f"failed: {SHOWN}" in out
    assert f"  {SHOWN}: k={SHOWN}" in out
    assert out.count(SHOWN) >= 6


def test_runs_and_show_print_a_stored_run_s_text_inert(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'runlens.db'}")
    try:
        store.upsert_run(
            "run_20261201T100000Z_aaaaaa", plugin=LONE, model=LONE, status="failed",
            workspace="/not/on/this/machine", created_at=LONE,
            finished_at="2026-12-01T10:00:04Z", input_name=LONE, warnings=[LONE],
            problems=[LONE], error_message=LONE, plan=[{"id": "s", "title": LONE,
            "status": "failed", "reason": LONE}],
        )  # fmt: skip
    finally:
        store.close()
    runner = CliRunner(env={"COLUMNS": "300", "RUNLENS_HOME": str(tmp_path)})
    for args in (["runs"], ["show", "aaaaaa"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert SHOWN in result.output
        assert "\ud800" not in result.output
