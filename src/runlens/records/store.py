"""Where runs live and how their records are read back.

Workspaces default to `./runlens-runs/<run_id>/`, or `$RUNLENS_HOME/<run_id>/` when set.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runlens.errors import UserError
from runlens.records.encoding import dumps_indented

RUN_RECORD = Path("runtime") / "run.json"


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
    """A record (`run.json`, `manifest.json`) as UTF-8 JSON, indented by two spaces.

    Readable with `cat` or `grep` while a run is going, and encoded at C speed (orjson).
    """
    return dumps_indented(record)


def read_run_record(workspace: Path) -> dict[str, Any]:
    path = workspace / RUN_RECORD
    try:
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"not a RunLens workspace (no {RUN_RECORD}): {workspace}") from None
    except json.JSONDecodeError as error:
        raise UserError(f"{path} is not valid JSON: {error}") from None
    return record


def find_workspace(run: str, home: Path | None = None) -> Path:
    """A run id under the runs home, or a path to a workspace."""
    candidate = Path(run)
    if (candidate / RUN_RECORD).is_file():
        return candidate
    under_home = runs_home(home) / run
    if (under_home / RUN_RECORD).is_file():
        return under_home
    raise UserError(f"no run {run!r} (looked in {runs_home(home)})")


def list_runs(home: Path | None = None) -> list[dict[str, Any]]:
    """Every run under the runs home, newest first; unreadable folders are skipped."""
    base = runs_home(home)
    if not base.is_dir():
        return []
    records = []
    for child in base.iterdir():
        path = child / RUN_RECORD
        if path.is_file():
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
            record["workspace"] = str(child)
            records.append(record)
    return sorted(records, key=lambda r: str(r.get("created_at", "")), reverse=True)
