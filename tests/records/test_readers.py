"""The lenient readers: a record read back typed, whatever it holds, never raised on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runlens.records.citations import read_citations
from runlens.records.io import parse_json_object, read_json_object
from runlens.records.manifest import Manifest, ManifestInput
from runlens.records.readers import (
    EventView,
    ManifestView,
    PlanStepView,
    RunRecordView,
    event_views,
    read_events,
    read_manifest,
    read_run_record,
)
from runlens.records.run_record import RunRecord
from runlens.records.status import RunStatus


def _record() -> RunRecord:
    return RunRecord.model_validate(
        {
            "run_id": "run_1",
            "plugin": "feedback",
            "model": "offline",
            "status": "completed",
            "error_message": None,
            "warnings": ["w"],
            "input": "input/reviews.csv",
            "plan": [
                {
                    "id": "read",
                    "title": "Read",
                    "status": "completed",
                    "success_criteria": ["rows read"],
                }
            ],
            "metrics": {
                "turns": 1,
                "model_calls": 1,
                "model_retries": 0,
                "model_failures": 0,
                "tool_calls": 2,
                "tool_failures": 0,
                "tool_calls_by_name": {"read": 2},
                "input_tokens": None,
                "output_tokens": None,
                "validation_rounds": 1,
                "repair_rounds": 0,
                "hooks_blocked": 0,
                "findings_by_code": {"missing_file": 1},
                "batches_completed": 0,
                "batches_failed": 0,
                "plugin_events": {},
                "phase_seconds": {"running": 1.5},
            },
            "created_at": "2026-11-30T07:15:00.000+00:00",
            "finished_at": None,
            "evidence_index_sha256": None,
            "input_format": None,
            "repair_turns": 2,
            "limits": {"max_turns": 5, "max_tool_calls": 9, "wall_time_seconds": 60},
        }
    )


def test_a_record_as_written_reads_back_whole(tmp_path: Path) -> None:
    record = _record()
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record.encode()))
    read = read_run_record(path)
    assert read.problems == [] and read.damaged == []
    assert read.view is not None
    assert read.view.encode() == record.encode()
    assert read.view.status == RunStatus.COMPLETED.value
    assert read.view.plan[0].success_criteria == ["rows read"]
    assert read.view.metrics is not None and read.view.metrics.findings_by_code == {
        "missing_file": 1
    }
    assert read.view.input_name == "reviews.csv"


def test_every_model_field_has_a_view_field() -> None:
    """Adding a field to a record means adding it to its view: this says where."""
    assert list(RunRecordView.model_fields) == list(RunRecord.model_fields)
    assert list(ManifestView.model_fields) == list(Manifest.model_fields)


def test_an_older_record_reads_with_defaults_and_keeps_unknown_keys() -> None:
    view, damaged = RunRecordView.lenient({"run_id": "run_0", "status": "running", "old": 1})
    assert damaged == []
    assert view.warnings == [] and view.plan == [] and view.metrics is None
    assert view.model_extra == {"old": 1}
    assert view.encode() == {"run_id": "run_0", "status": "running", "old": 1}


def test_damaged_keys_are_named_and_left_at_their_default() -> None:
    view, damaged = RunRecordView.lenient(
        {
            "run_id": 7,
            "status": "completed",
            "warnings": ["kept", 3],
            "plan": [{"id": "a", "title": 5}, "not a step"],
            "metrics": {"turns": True, "findings_by_code": {"x": 2, "y": "3"}},
        },
        "runtime/run.json: ",
    )
    assert view.run_id is None and view.status == "completed"
    assert view.warnings == ["kept"]
    assert view.plan == [PlanStepView(id="a")]
    assert view.metrics is not None
    assert view.metrics.turns is None and view.metrics.findings_by_code == {"x": 2}
    assert damaged == [
        "runtime/run.json: run_id: number 7 is not a string",
        "runtime/run.json: warnings[1]: number 3 is not a string",
        "runtime/run.json: plan[0].title: number 5 is not a string",
        "runtime/run.json: plan[1]: string 'not a step' is not an object",
        "runtime/run.json: metrics.turns: boolean True is not an integer",
        "runtime/run.json: metrics.findings_by_code.y: string '3' is not an integer",
    ]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"run_id": 1', "runtime/run.json: damaged, not valid JSON (cut short)"),
        (b"[1]", "runtime/run.json: damaged, holds a JSON list, not an object"),
        (b"\xff", "runtime/run.json: damaged, not UTF-8"),
    ],
)
def test_a_damaged_file_is_a_named_problem(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(content)
    read = read_run_record(path)
    assert read.view is None
    assert len(read.problems) == 1 and read.problems[0].startswith(problem)


def test_a_missing_file_is_no_view_and_no_problem(tmp_path: Path) -> None:
    read = read_manifest(tmp_path / "manifest.json")
    assert read.view is None and read.problems == [] and read.damaged == []


def test_a_manifest_reads_back_typed(tmp_path: Path) -> None:
    manifest = Manifest(
        run_id="run_1",
        plugin="feedback",
        model="offline",
        status=RunStatus.FAILED,
        error_message="boom",
        input=ManifestInput(name="reviews.csv", source_hash=None),
        evidence_index_sha256=None,
        artifacts=[],
    )
    raw = manifest.encode()
    raw["artifacts"] = [
        {"name": "report.md", "status": "rejected", "findings": [{"code": "x", "details": 1}]}
    ]
    raw["findings"] = [{"validator": "v", "code": "run_wide", "message": "m"}]
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(raw))
    read = read_manifest(path)
    assert read.view is not None
    assert read.damaged == [
        "manifest.json: artifacts[0].findings[0].details: number 1 is not an object"
    ]
    assert read.view.input is not None and read.view.input.name == "reviews.csv"
    assert [f.code for f in read.view.all_findings()] == ["run_wide", "x"]
    assert read.view.artifacts[0].required is None


def test_events_read_back_typed_and_damaged_lines_named(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(
        b'{"seq": 1, "ts": "t", "run_id": "r", "type": "run.created", "data": {"plugin": "p"}}\n'
        b'{"seq": 2, "type": "run.started", "data": []}\n'
        b"not json\n"
        b'{"seq": 4, "ty'
    )
    read = read_events(path)
    assert [e.seq for e in read.events] == [1, 2]
    assert read.events[0].data == {"plugin": "p"}
    assert read.events[1].data is None and read.events[1].ts is None
    assert read.damaged == ["runtime/events.jsonl: seq 2: data: array [] is not an object"]
    assert [p.split(":")[0] for p in read.problems] == [
        "runtime/events.jsonl line 3",
        "runtime/events.jsonl line 4",
    ]


def test_event_views_of_subscriber_dicts() -> None:
    views, damaged = event_views([{"seq": "x", "type": "run.started"}])
    assert views == [EventView(type="run.started")]
    assert damaged == ["events: seq #1: seq: string 'x' is not an integer"]


HOSTILE_FILES = [
    b'{"a": 1}',
    b"",
    b"   ",
    b"\xff\xfe not utf-8",
    b'{"cut": "short',
    b"[1, 2]",
    b'"a string"',
    b"null",
    b'{"nan": NaN, "inf": -Infinity, "big": 123456789012345678901234567890}',
    b'{"dup": 1, "dup": 2}',
    '{"text": "\\u0000 \\ud800 \ue000 😀 é"}'.encode(),
    b'{"deep": ' + b"[" * 50 + b"]" * 50 + b"}",
    b'{"x": 1} trailing',
]


@pytest.mark.parametrize("raw", HOSTILE_FILES)
def test_a_files_bytes_parse_as_the_file_reads(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "record.json"
    path.write_bytes(raw)
    assert parse_json_object(raw, "record.json") == read_json_object(path, "record.json")
    citations = tmp_path / "citations.json"
    citations.write_bytes(raw)
    assert read_citations(citations, raw) == read_citations(citations)


def test_citations_handed_over_are_read_as_their_file(tmp_path: Path) -> None:
    document = {
        "schema_version": 2,
        "citations": [{"artifact": "a.md", "row_id": "r1", "quote": "\x00 😀", "start": 1}, 7],
        "failed": "not a list",
    }
    raw = json.dumps(document, ensure_ascii=False).encode()
    path = tmp_path / "citations.json"
    path.write_bytes(raw)
    assert read_citations(path, raw) == read_citations(path)
    assert read_citations(path, raw).problems
