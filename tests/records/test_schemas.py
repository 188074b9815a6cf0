"""The records' JSON Schemas: published as generated, versioned, and met by real runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from runlens.cli import cli
from runlens.records import schemas
from runlens.records.catalogue import EVENT_TYPES, EVENTS_SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "docs" / "schemas"
SAMPLE = ROOT / "examples" / "sample_feedback.csv"


def _read(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A completed offline run of the sample: batches, the index, every record."""
    workspace = tmp_path_factory.mktemp("offline") / "ws"
    result = CliRunner().invoke(
        cli, ["run", "feedback-analysis", str(SAMPLE), "--workspace", str(workspace), "--json"]
    )
    assert result.exit_code == 0, result.output
    return workspace


def test_the_published_schemas_are_what_the_models_generate() -> None:
    generated = schemas.generate()
    assert sorted(generated) == sorted(p.name for p in PUBLISHED.glob("*.schema.json"))
    for name, schema in generated.items():
        assert (PUBLISHED / name).read_text(encoding="utf-8") == schemas.render(schema), (
            f"docs/schemas/{name} is out of date: python -m runlens.records.schemas docs/schemas"
        )
        Draft202012Validator.check_schema(schema)
    assert schemas.main([str(PUBLISHED), "--check"]) == 0


def test_check_reports_a_stale_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert schemas.main([str(tmp_path)]) == 0
    (tmp_path / "trace.schema.json").write_text("{}\n", encoding="utf-8")
    assert schemas.main([str(tmp_path), "--check"]) == 1
    assert "out of date: trace.schema.json" in capsys.readouterr().out


def test_every_record_carries_its_schema_version() -> None:
    for name in ("run", "manifest", "trace", "citations"):
        schema = _read(PUBLISHED / f"{name}.schema.json")
        assert "schema_version" in schema["required"]
        assert schema["properties"]["schema_version"]["const"] == 1
    events = _read(PUBLISHED / "events.schema.json")
    assert set(events["properties"]["type"]["enum"]) == EVENT_TYPES
    created = events["$defs"]["RunCreated"]
    assert created["properties"]["schema_version"]["const"] == EVENTS_SCHEMA_VERSION


def test_a_real_runs_records_meet_the_published_schemas(offline_run: Path) -> None:
    assert schemas.record_problems(offline_run) == []
    record = _read(offline_run / "runtime" / "run.json")
    assert record["schema_version"] == 1 and record["status"] == "completed"
    lines = (offline_run / "runtime" / "events.jsonl").read_bytes().splitlines()
    events = [json.loads(line) for line in lines]
    assert events[0]["data"]["schema_version"] == EVENTS_SCHEMA_VERSION
    types = {event["type"] for event in events}
    assert {"batch.completed", "evidence.indexed", "validator.completed"} <= types
    # Against the files in docs/, as a reader holding only them would check.
    validator = Draft202012Validator(_read(PUBLISHED / "events.schema.json"))
    assert all(validator.is_valid(event) for event in events)
    manifest = Draft202012Validator(_read(PUBLISHED / "manifest.schema.json"))
    assert manifest.is_valid(_read(offline_run / "manifest.json"))


def test_broken_records_are_named_with_where_and_what(offline_run: Path, tmp_path: Path) -> None:
    import shutil

    workspace = tmp_path / "ws"
    shutil.copytree(offline_run, workspace)
    record_path = workspace / "runtime" / "run.json"
    record_path.chmod(0o644)
    record = _read(record_path)
    record["status"] = "done"
    del record["plan"][0]["title"]
    record_path.write_text(json.dumps(record), encoding="utf-8")
    events_path = workspace / "runtime" / "events.jsonl"
    with events_path.open("a", encoding="utf-8") as stream:
        stream.write(json.dumps({"seq": 99, "ts": "t", "run_id": "r", "type": "x", "data": {}}))
        stream.write("\n")
    problems = schemas.record_problems(workspace)
    assert any(p.startswith("runtime/run.json: status: 'done' is not one of") for p in problems)
    assert any(p.startswith("runtime/run.json: plan/0: 'title' is a required") for p in problems)
    last = len(events_path.read_bytes().splitlines())
    assert any(p.startswith(f"runtime/events.jsonl line {last}: type:") for p in problems)
