"""Reading a run back from its workspace, whatever state the files are in.

Two things happen here that the run itself could not do:

- **Damaged records.** `run.json` or `manifest.json` cut short, not UTF-8 or not an object, a
  line of `events.jsonl` that is not JSON: each is reported as a problem naming the file (and
  line), and everything else that can be read is read. Nothing here raises for a damaged file.
- **Interrupted runs.** A run whose record is not terminal and whose lock holder is gone (see
  `runtime.lock`) died without finishing: `kill -9`, a crash, a power cut. The first reader
  to see it settles it as `interrupted`, once: it takes the lock over (an atomic rename, so
  two readers never both write), ends the event log with `run.interrupted` (after cutting off
  a line the dead process left half-written), marks the steps that were under way `failed`,
  sets `finished_at` and `error_message`, writes the manifest from the files on disk, and
  removes the temporary files of atomic writes the process never finished.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runlens.records.io import utc_now
from runlens.records.status import RunStatus, is_live
from runlens.tools.workspace import INPUT, Workspace

if TYPE_CHECKING:
    from runlens.records.plain import PlainManifest, PlainRunRecord
    from runlens.records.readers import EventView, ManifestView, MetricsView, RunRecordView
    from runlens.runtime.lock import LockHolder

#: Temporary files of `runlens.atomic` writes: `.<name>.<12 hex>.tmp`.
_TEMP_FILE = re.compile(r"^\..+\.[0-9a-f]{12}\.tmp$")
#: A settling claim this old belongs to a reader that died while settling.
_CLAIM_SECONDS = 60.0


@dataclass
class RunView:
    """What could be read of one run. `problems` names every damaged file, and every key of
    `run.json` read as its default (a value of the wrong type, `runlens.records.readers`)."""

    workspace: Path
    record: RunRecordView
    problems: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.record.status or "unknown"


def load_run(workspace: Path, *, settle: bool = True) -> RunView:
    """Read a workspace's run record (settling it if its process died), never raising.

    The record of a run still going is brought up to date from its events (`live_record`):
    `run.json` is written when a run starts and when it ends, the events as things happen.
    """
    from runlens.records.readers import RunRecordView, read_events, read_run_record
    from runlens.records.run_record import live_record

    root = Workspace(workspace)
    read = read_run_record(root.run_record)
    record = read.view or RunRecordView()
    view = RunView(workspace, record, [*read.problems, *read.damaged])
    if record.run_id is None:
        record.run_id = workspace.name
    if read.view is None:
        if not read.problems:
            view.problems.append(f"{Workspace.RUN_RECORD}: missing")
        return view
    if is_live(record.status):
        settled = settle_if_interrupted(root, record) if settle else None
        if settled is not None:
            view.record = settled
        else:
            view.record = live_record(record, read_events(root.events).events)
    return view


def settle_if_interrupted(workspace: Workspace, record: RunRecordView) -> RunRecordView | None:
    """If the run's process is gone, settle the run as `interrupted` and return its record.

    None when the run is alive. When another reader is settling it at the same moment, the
    record returned says `interrupted` but is not written by this call.
    """
    from runlens.records.readers import read_run_record
    from runlens.runtime.lock import holder_is_alive, lock_path, read_holder

    lock = lock_path(workspace)
    holder = read_holder(lock)
    if holder is not None and holder_is_alive(holder):
        return None
    settled = _interrupted_record(record, holder, workspace)
    claim = lock.with_name(f"{lock.name}.settling")
    if not _claim(claim):
        return settled  # another reader is settling it; it writes the records
    try:
        current = read_run_record(workspace.run_record).view
        if current is not None and not is_live(current.status):
            return current  # settled by a reader that finished just before us
        _append_interrupted_event(workspace, settled)
        _write_interrupted_records(workspace, settled)
        remove_temporary_files(workspace)
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
    finally:
        with contextlib.suppress(FileNotFoundError):
            claim.unlink()
    return settled


def _claim(path: Path) -> bool:
    """Create `path` exclusively; a claim older than `_CLAIM_SECONDS` (its reader died) is
    taken over."""
    for _ in range(2):
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            with contextlib.suppress(FileNotFoundError):
                if time.time() - path.stat().st_mtime > _CLAIM_SECONDS:
                    path.unlink()
                    continue
            return False
        return True
    return False


def _interrupted_record(
    record: RunRecordView, holder: LockHolder | None, workspace: Workspace
) -> RunRecordView:
    """The record of the dead run, brought up to date from its event log: `run.json` was
    written when the run started, the events up to the last one published."""
    from runlens.records.readers import read_events
    from runlens.records.run_record import live_record

    if holder is None:
        cause = "its process ended without finishing it (the workspace holds no lock)"
    else:
        beat = utc_from_timestamp(holder.heartbeat)
        cause = (
            f"its process ({holder.describe()}) ended without finishing it; "
            f"last heartbeat at {beat}"
        )
    message = f"interrupted: {cause}"
    events = read_events(workspace.events).events
    live = live_record(record, events)
    failed = {"status": "failed", "reason": "interrupted while under way"}
    update: dict[str, Any] = {
        "status": RunStatus.INTERRUPTED.value,
        "error_message": message,
        "finished_at": utc_now(),
        "plan": [
            step.model_copy(update=failed) if step.status == "running" else step
            for step in live.plan
        ],
    }
    metrics = _replayed_metrics(events)
    if metrics is not None:
        update["metrics"] = metrics
    return live.model_copy(update=update)


def _replayed_metrics(events: list[EventView]) -> MetricsView | None:
    """The run's metrics recomputed from its events, as the live run counted them."""
    from runlens.records.events import Event
    from runlens.records.metrics import MetricsCollector
    from runlens.records.readers import MetricsView

    collector = MetricsCollector()
    try:
        for event in events:
            ts = str(event.ts)
            collector(
                Event(
                    seq=event.seq or 0,
                    ts=ts,
                    run_id=str(event.run_id),
                    type=str(event.type),
                    data=event.data or {},
                    at=datetime.fromisoformat(ts).timestamp(),
                )
            )
        return MetricsView.model_validate(collector.as_dict())
    except (ValueError, TypeError, KeyError, AttributeError):
        return None  # events too damaged to count: keep the record's last metrics


def utc_from_timestamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def _append_interrupted_event(workspace: Workspace, record: RunRecordView) -> None:
    """End the log with `run.interrupted`, cutting off a line left half-written."""
    from runlens.records.encoding import dumps_compact

    path = workspace.events
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raw = b""
    keep = raw.rfind(b"\n") + 1
    last_seq = 0
    for line in reversed(raw[:keep].split(b"\n")):
        with contextlib.suppress(ValueError, UnicodeDecodeError, AttributeError):
            value = json.loads(line)
            if isinstance(value, dict) and isinstance(value.get("seq"), int):
                last_seq = value["seq"]
                break
    event = {
        "seq": last_seq + 1,
        "ts": datetime.now(UTC).isoformat(timespec="microseconds"),
        "run_id": record.run_id,
        "type": "run.interrupted",
        "data": {"error_message": record.error_message},
    }
    with path.open("r+b" if path.exists() else "wb") as stream:
        stream.truncate(keep)
        stream.seek(keep)
        stream.write(dumps_compact(event) + b"\n")


def _write_interrupted_records(workspace: Workspace, record: RunRecordView) -> None:
    from runlens.atomic import write_atomic
    from runlens.records.io import encode_record
    from runlens.records.manifest import build_manifest

    contracts: tuple[Any, ...] = ()
    with contextlib.suppress(Exception):  # a plugin that no longer loads: no artifact list
        from runlens.plugins import load_plugin

        contracts = tuple(load_plugin(str(record.plugin)).contracts)
    input_name = record.input_name
    source = workspace.input / input_name if input_name else None
    manifest = build_manifest(
        run={
            "run_id": str(record.run_id),
            "plugin": record.plugin or "unknown",
            "model": record.model or "unknown",
            "status": record.status,
            "error_message": record.error_message,
            "evidence_index_sha256": record.evidence_index_sha256,
        },
        workspace=workspace.root,
        contracts=contracts,
        statuses=None,
        findings=(),
        input_name=input_name,
        source_hash=_file_sha256(source) if source is not None and source.is_file() else None,
    )
    write_atomic(workspace.manifest, encode_record(manifest.encode()))
    write_atomic(workspace.run_record, encode_record(record.encode()))


def remove_temporary_files(workspace: Workspace) -> list[Path]:
    """Remove what atomic writes of a dead process left behind; return the removed paths."""
    removed = []
    for path in _candidates(workspace):
        if _TEMP_FILE.match(path.name):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def _candidates(workspace: Workspace) -> Iterator[Path]:
    for folder in (workspace.root, workspace.runtime):
        with contextlib.suppress(OSError):
            yield from (p for p in folder.iterdir() if p.is_file() and not p.is_symlink())
    with contextlib.suppress(OSError):
        yield from (
            p for p in workspace.artifacts.rglob(".*.tmp") if p.is_file() and not p.is_symlink()
        )


def workspace_changes(
    workspace: Path,
    record: RunRecordView | PlainRunRecord,
    manifest: ManifestView | PlainManifest | None,
) -> list[str]:
    """What in the workspace no longer matches the run's records: a deliverable, the input
    or the Evidence Index changed, added or removed after the run wrote its manifest."""
    changes: list[str] = []
    for entry in manifest.artifacts if manifest is not None else []:
        if entry.name is None:
            continue
        path = workspace / entry.name
        expected = entry.sha256
        if not _inside(workspace, path):
            continue
        exists = path.is_file()
        if expected is None and exists:
            changes.append(f"{entry.name} was added after the run")
        elif expected is not None and not exists:
            changes.append(f"{entry.name} was removed after the run")
        elif expected is not None and _file_sha256(path) != expected:
            changes.append(f"{entry.name} was changed after the run (its SHA-256 differs)")
    source = manifest.input if manifest is not None else None
    if source is not None and source.source_hash is not None:
        name = Path(source.name or "").name
        path = workspace / INPUT / name
        if name and (not path.is_file() or _file_sha256(path) != source.source_hash):
            changes.append(f"{INPUT}/{name} was changed or removed after the run")
    index_hash = record.evidence_index_sha256
    index = workspace / Workspace.EVIDENCE_INDEX
    if index_hash is not None:
        if not index.is_file():
            changes.append(f"{Workspace.EVIDENCE_INDEX} was removed after the run")
        elif _file_sha256(index) != index_hash:
            changes.append(f"{Workspace.EVIDENCE_INDEX} was changed after the run")
    return changes


def _file_sha256(path: Path) -> str:
    """SHA-256 (lowercase hex) of the file's bytes, as the records give hashes: the stdlib's,
    so that reading a run's state does not load the Evidence Index's machinery."""
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def _inside(workspace: Path, path: Path) -> bool:
    try:
        return path.resolve().is_relative_to(workspace.resolve())
    except OSError:
        return False
