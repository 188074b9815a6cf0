"""The JSON Schemas of a run's records, generated from their models.

    python -m runlens.records.schemas docs/schemas          write the five files
    python -m runlens.records.schemas docs/schemas --check  exit 1 if one is out of date

`run.schema.json` (`runtime/run.json`), `manifest.schema.json`, `trace.schema.json`
(`runtime/trace.json`), `events.schema.json` (one line of `runtime/events.jsonl`) and
`citations.schema.json` (`runtime/citations.json`). The published files in `docs/schemas/`
are exactly what this module generates (a test holds them to it), so a change to a record's
model shows up as a change to its schema.

`record_problems(workspace)` checks a finished run's records against them, as any reader
holding only the schemas could.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from jsonschema import Draft202012Validator
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import JsonSchemaMode

from runlens.records.catalogue import EVENT_DATA, EVENT_TYPES, EVENTS_SCHEMA_VERSION, data_adapter
from runlens.records.citations import CitationsRecord
from runlens.records.manifest import Manifest
from runlens.records.run_record import RunRecord
from runlens.records.trace import Trace
from runlens.tools.workspace import Workspace

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
RUN_SCHEMA: Final = "run.schema.json"
MANIFEST_SCHEMA: Final = "manifest.schema.json"
TRACE_SCHEMA: Final = "trace.schema.json"
EVENTS_SCHEMA: Final = "events.schema.json"
CITATIONS_SCHEMA: Final = "citations.schema.json"
_DEFS: Final = "#/$defs/{model}"


def _model_schema(model: type[BaseModel], title: str, description: str) -> dict[str, Any]:
    schema = model.model_json_schema(mode="serialization", ref_template=_DEFS)
    return {"$schema": DIALECT, **schema, "title": title, "description": description}


def events_schema() -> dict[str, Any]:
    """One line of `events.jsonl`: `{seq, ts, run_id, type, data}`, `data` by `type`."""
    ordered = sorted(EVENT_TYPES)
    inputs: list[tuple[str, JsonSchemaMode, TypeAdapter[Any]]] = [
        (event_type, "serialization", data_adapter(event_type)) for event_type in ordered
    ]
    refs, definitions = TypeAdapter.json_schemas(inputs, ref_template=_DEFS)
    rules = [
        {
            "if": {"properties": {"type": {"const": event_type}}},
            "then": {"properties": {"data": refs[(event_type, "serialization")]}},
        }
        for event_type in ordered
    ]
    return {
        "$schema": DIALECT,
        "title": "RunLens event",
        "description": (
            "One line of runtime/events.jsonl. `type` is one of the catalogue's types and "
            "`data` has that type's shape. The catalogue's version is `data.schema_version` "
            f"of `run.created` (this is version {EVENTS_SCHEMA_VERSION})."
        ),
        "type": "object",
        "properties": {
            "seq": {"type": "integer", "minimum": 1},
            "ts": {"type": "string", "format": "date-time"},
            "run_id": {"type": "string"},
            "type": {"enum": ordered},
            "data": {"type": "object"},
        },
        "required": ["seq", "ts", "run_id", "type", "data"],
        "additionalProperties": False,
        "allOf": rules,
        "$defs": definitions.get("$defs", {}),
    }


def generate() -> dict[str, dict[str, Any]]:
    """Every published schema, by file name."""
    assert set(EVENT_DATA) == EVENT_TYPES
    return {
        RUN_SCHEMA: _model_schema(
            RunRecord, "RunLens run record", f"{Workspace.RUN_RECORD}: status, plan, metrics."
        ),
        MANIFEST_SCHEMA: _model_schema(
            Manifest, "RunLens manifest", f"{Workspace.MANIFEST}: what a run delivered."
        ),
        TRACE_SCHEMA: _model_schema(
            Trace, "RunLens trace", f"{Workspace.TRACE}: the run's spans (OpenTelemetry-shaped)."
        ),
        EVENTS_SCHEMA: events_schema(),
        CITATIONS_SCHEMA: _model_schema(
            CitationsRecord,
            "RunLens citations",
            f"{Workspace.CITATIONS}: where the deliverables cite source rows.",
        ),
    }


def record_problems(workspace: Path) -> list[str]:
    """Where a run's records break their schemas: one line per problem (file, where, what).

    Reads `run.json`, `manifest.json`, `trace.json` and every line of `events.jsonl`; a
    missing or unreadable file is a problem too. Empty for the records of a finished run.
    """
    schemas = generate()
    root = Workspace(workspace)
    problems: list[str] = []
    for name, path, relative in (
        (RUN_SCHEMA, root.run_record, Workspace.RUN_RECORD),
        (MANIFEST_SCHEMA, root.manifest, Workspace.MANIFEST),
        (TRACE_SCHEMA, root.trace, Workspace.TRACE),
    ):
        try:
            document = json.loads(path.read_bytes())
        except (OSError, ValueError) as error:
            problems.append(f"{relative}: unreadable ({error})")
            continue
        problems.extend(_problems(schemas[name], document, relative))
    try:
        lines = root.events.read_bytes().splitlines()
    except OSError as error:
        return [*problems, f"{Workspace.EVENTS}: unreadable ({error})"]
    events = Draft202012Validator(schemas[EVENTS_SCHEMA])
    for number, line in enumerate(lines, start=1):
        where = f"{Workspace.EVENTS} line {number}"
        try:
            event = json.loads(line)
        except ValueError as error:
            problems.append(f"{where}: not JSON ({error})")
            continue
        problems.extend(_problems(events, event, where))
    return problems


def _problems(
    schema: dict[str, Any] | Draft202012Validator, document: Any, where: str
) -> list[str]:
    validator = schema if isinstance(schema, Draft202012Validator) else Draft202012Validator(schema)
    return [
        f"{where}: {'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
        for error in validator.iter_errors(document)
    ]


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the JSON Schemas of RunLens records.")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--check", action="store_true", help="only report out-of-date files")
    args = parser.parse_args(argv)
    stale = []
    for name, schema in generate().items():
        path: Path = args.folder / name
        text = render(schema)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(name)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    verb = "out of date" if args.check else "written"
    print(f"{verb}: {', '.join(stale)}" if stale else "all schemas up to date")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
