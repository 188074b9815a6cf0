"""`runlens show` names a missing `runtime/events.jsonl` instead of showing an empty
timeline in silence, and `runlens runs` lists the problem (real processes)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import SAMPLE, runlens


def test_show_names_a_missing_event_log(tmp_path: Path) -> None:
    home = tmp_path / "home"
    workspace = home / "run_no_events"
    made = runlens("run", "feedback-analysis", SAMPLE, "--workspace", workspace, home=home)
    assert made.returncode == 0, made.stderr
    (workspace / "runtime" / "events.jsonl").unlink()
    shown = runlens("show", workspace, home=home)
    assert shown.returncode == 0, shown.stderr
    assert "runtime/events.jsonl is missing" in " ".join(shown.stdout.split())
    as_json = json.loads(runlens("show", workspace, "--json", home=home).stdout)
    assert any("events.jsonl is missing" in problem for problem in as_json["problems"])
    listed = json.loads(runlens("runs", "--json", home=home).stdout)
    assert any("events.jsonl is missing" in p for p in listed[0].get("problems", []))
