"""The conformance check of a run's records, read back from disk as any reader would.

run.json, events.jsonl, trace.json and manifest.json must all be there, meet their published
JSON Schemas (docs/schemas) and tell the same story: one run id, one final status, every
declared artifact in the manifest with the status the run gave it and the hash of the file on
disk, the Evidence Index the run recorded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runlens.plugins.base import Plugin
from runlens.records.schemas import record_problems as schema_problems
from runlens.tools.workspace import Workspace


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a conformance run returned, to compare its records with."""

    workspace: Path
    run_id: str
    status: str
    error_message: str | None
    artifacts: dict[str, str]
    finding_codes: tuple[str, ...]


def read_json(path: Path) -> Any:
    """The parsed file, or None when it is missing or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def outcome_problems(plugin: Plugin, outcome: RunOutcome) -> Iterator[str]:
    """What is wrong with the records of `outcome`'s run: files missing, not meeting their
    schemas (`runlens.records.schemas.record_problems`) or not telling the run's story."""
    workspace = Workspace(outcome.workspace)
    files = {
        "run.json": workspace.run_record,
        "events.jsonl": workspace.events,
        "trace.json": workspace.trace,
        "manifest.json": workspace.manifest,
    }
    missing = [name for name, path in files.items() if not path.is_file()]
    if missing:
        yield f"missing {', '.join(missing)}"
        return
    documents = {
        name: read_json(files[name]) for name in ("run.json", "trace.json", "manifest.json")
    }
    broken = [name for name, document in documents.items() if not isinstance(document, dict)]
    if broken:
        yield f"not a JSON object: {', '.join(broken)}"
        return
    yield from schema_problems(outcome.workspace)
    yield from _run_record_problems(documents["run.json"], outcome, workspace.evidence_index)
    yield from _event_problems(workspace.events, outcome)
    yield from _trace_problems(documents["trace.json"], outcome)
    yield from _manifest_problems(documents["manifest.json"], plugin, outcome)


def _run_record_problems(record: dict[str, Any], outcome: RunOutcome, index: Path) -> Iterator[str]:
    for key, expected in (("run_id", outcome.run_id), ("status", outcome.status)):
        if record.get(key) != expected:
            yield f"run.json {key} is {record.get(key)!r}, the run's is {expected!r}"
    recorded = record.get("evidence_index_sha256")
    if recorded is None:
        yield "run.json has no evidence_index_sha256: the input tool built no Evidence Index"
    elif not index.is_file():
        yield f"run.json names an Evidence Index, but {Workspace.EVIDENCE_INDEX} is missing"
    elif hashlib.sha256(index.read_bytes()).hexdigest() != recorded:
        yield f"{Workspace.EVIDENCE_INDEX} does not have the sha256 run.json records"


def _event_problems(path: Path, outcome: RunOutcome) -> Iterator[str]:
    events: list[Any] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            events.append(json.loads(line))
        except ValueError:
            yield f"events.jsonl line {number} is not JSON"
            return
    if not events or not all(isinstance(event, dict) for event in events):
        yield "events.jsonl holds no events, or lines that are not objects"
        return
    if [event.get("seq") for event in events] != list(range(1, len(events) + 1)):
        yield "events.jsonl: seq does not run 1, 2, 3, ... in order"
    others = sorted({str(event.get("run_id")) for event in events} - {outcome.run_id})
    if others:
        yield f"events.jsonl names other runs: {', '.join(others)}"
    first, last = events[0].get("type"), events[-1].get("type")
    if first != "run.created":
        yield f"the first event is {first!r}, not 'run.created'"
    if last != f"run.{outcome.status}":
        yield f"the last event is {last!r}, but the run ended {outcome.status}"


def _trace_problems(trace: dict[str, Any], outcome: RunOutcome) -> Iterator[str]:
    spans = trace.get("spans")
    if not isinstance(spans, list) or not spans or not all(isinstance(s, dict) for s in spans):
        yield "trace.json has no spans"
        return
    ids = {span.get("span_id") for span in spans}
    roots = [span for span in spans if span.get("parent_span_id") is None]
    if len(roots) != 1:
        yield f"trace.json has {len(roots)} root spans, not 1"
    orphans = [str(s.get("name")) for s in spans if s.get("parent_span_id") not in {*ids, None}]
    if orphans:
        yield f"trace.json spans with an unknown parent: {', '.join(orphans)}"
    if roots and (roots[0].get("attributes") or {}).get("runlens.run_id") != outcome.run_id:
        yield "trace.json's root span does not name the run"


def _manifest_problems(
    manifest: dict[str, Any], plugin: Plugin, outcome: RunOutcome
) -> Iterator[str]:
    expected = {"run_id": outcome.run_id, "status": outcome.status, "plugin": plugin.name}
    for key, value in expected.items():
        if manifest.get(key) != value:
            yield f"manifest.json {key} is {manifest.get(key)!r}, not {value!r}"
    entries = manifest.get("artifacts")
    listed = {
        entry.get("name"): entry
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, dict)
    }
    for contract in plugin.contracts:
        entry = listed.get(contract.name)
        if entry is None:
            yield f"manifest.json does not list {contract.name}"
            continue
        status = outcome.artifacts.get(contract.name)
        if entry.get("status") != status:
            yield f"manifest.json has {contract.name} {entry.get('status')!r}, the run {status!r}"
        path = outcome.workspace / contract.name
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        if entry.get("sha256") != digest:
            yield f"manifest.json's sha256 of {contract.name} is not the file's"
    extra = sorted(str(name) for name in set(listed) - {c.name for c in plugin.contracts})
    if extra:
        yield f"manifest.json lists artifacts no contract declares: {', '.join(extra)}"


__all__ = ["RunOutcome", "outcome_problems", "read_json"]
