"""Where runs live and how their records are read back.

Workspaces default to `./runlens-runs/<run_id>/`, or `$RUNLENS_HOME/<run_id>/` when set.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runlens.errors import UserError
from runlens.records.encoding import dumps_indented
from runlens.tools.workspace import Workspace

RUN_RECORD = Workspace.RUN_RECORD  # workspace-relative


def runs_home(explicit: Path | None = None) -> Path:
    if explicit is not None:
        return explicit
    configured = os.environ.get("RUNLENS_HOME")
    return Path(configured) if configured else Path.cwd() / "runlens-runs"


def new_run_id(now: datetime | None = None) -> str:
    """Sortable by time, unique enough for many runs a second: `run_20261130T071500Z_3f9a1c`."""
    moment = now or datetime.now(UTC)
    return f"run_{moment:%Y%m%dT%H%M%SZ}_{secrets.token_hex(3)}"


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def encode_record(record: Mapping[str, Any]) -> bytes:
    """A record (`run.json`, `manifest.json`: a model's `encode()`) as UTF-8 JSON, indented by
    two spaces.

    Readable with `cat` or `grep` while a run is going, and encoded at C speed (orjson).
    """
    return dumps_indented(record)


@dataclass(frozen=True, slots=True)
class WrittenRecords:
    """The record files a run wrote at its end, as written (the bytes on disk, secrets
    blanked out): what the run hands the subscribers of its events that keep them
    (`StoreMirror.records_written`) so they need not read back what was just written.
    `citations` is None when the run's end did not write that file."""

    run_record: bytes
    manifest: bytes
    citations: bytes | None


def read_json_object(path: Path, label: str) -> tuple[dict[str, Any] | None, str | None]:
    """A JSON object from `path`: `(value, None)`, or `(None, problem)`; `(None, None)` if
    the file does not exist."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as error:
        return None, f"{label}: cannot be read ({error.strerror or type(error).__name__})"
    return parse_json_object(raw, label)


def parse_json_object(raw: bytes, label: str) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object of a file's bytes `raw`, as `read_json_object` reads it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, (
            f"{label}: damaged, not UTF-8 (byte 0x{raw[error.start]:02x} at offset {error.start})"
        )
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        cut = " (cut short)" if error.pos >= len(text.rstrip()) else ""
        return None, (
            f"{label}: damaged, not valid JSON{cut}: {error.msg} at line {error.lineno} "
            f"column {error.colno}"
        )
    if not isinstance(value, dict):
        return None, f"{label}: damaged, holds a JSON {type(value).__name__}, not an object"
    return value, None


def find_workspace(run: str, home: Path | None = None) -> Path:
    """A workspace path, a run id under the runs home, or a unique prefix or suffix of one
    (`run_2026`, `0a23ec`)."""
    candidate = Path(run)
    if (candidate / RUN_RECORD).is_file():
        return candidate
    base = runs_home(home)
    under_home = base / run
    if run and "/" not in run and (under_home / RUN_RECORD).is_file():
        return under_home
    matches = sorted(
        path
        for path in run_workspaces(home)
        if run and (path.name.startswith(run) or path.name.endswith(run))
    )
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(path.name for path in matches[:5])
        more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
        raise UserError(f"{run!r} matches {len(matches)} runs ({shown}{more}): give more of the id")
    raise UserError(f"no run {run!r} (looked in {base})")


def run_workspaces(home: Path | None = None) -> list[Path]:
    """Every folder under the runs home that holds a run record."""
    base = runs_home(home)
    try:
        children = list(base.iterdir())
    except OSError:
        return []
    return [child for child in children if (child / RUN_RECORD).is_file()]
