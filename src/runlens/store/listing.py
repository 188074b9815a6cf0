"""Runs as the store lists them, and what a runs home holds, without SQLAlchemy or pydantic:
what `runlens runs` needs to tell whether the store is in step with the home and to list it
(`runlens.store.reader`), and what the store's reads and `runlens.store.sync` share.

- `SyncState`: a run as the store last heard of it (what a sync compares a workspace with);
- `IndexReport`: what indexing a home did, and `WorkspaceClash`, a copy it left out;
- `summary_fields`: a `runs` row's columns as the fields of a `RunSummary` (`ListedRun` holds
  them without pydantic), and `detail_fields` those of a `RunDetail` with its artifacts and
  findings (`ListedDetail`);
- `home_records`, `record_stamp`, `stamped`: which workspaces of a home the store holds in
  their current state (one stat each);
- `held_ended`, `named_workspace`: the usual cases of `runlens.store.sync`'s `sync_workspace`
  (`if_changed`) and `local_workspace`, answered without the records' views the sync reads;
- `duration`: how long a run took, as the runs list shows it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from stat import S_ISREG
from typing import Any, Final, Protocol

from runlens.errors import UserError
from runlens.records.status import is_live, is_terminal
from runlens.store.values import as_dict, as_list
from runlens.tools.workspace import Workspace


class SyncState:
    """A run as the store last heard of it, for deciding what to re-read."""

    __slots__ = ("host", "last_seq", "record_stamp", "status", "worker", "workspace")

    def __init__(
        self,
        status: str,
        last_seq: int,
        record_stamp: str | None,
        workspace: str,
        host: str | None,
        worker: str | None = None,
    ) -> None:
        self.status = status
        self.last_seq = int(last_seq or 0)
        self.record_stamp = record_stamp
        self.workspace = workspace
        self.host = host
        #: The worker holding the run: its liveness is the worker's, not a local process's.
        self.worker = worker

    @property
    def is_terminal(self) -> bool:
        return is_terminal(self.status)


class WorkspaceClash(UserError):
    """A workspace names a run the store knows at another folder of this machine, which
    still holds that run's record: a copy (`cp -r` of a run folder), never indexed in the
    run's place. The run keeps its row; the copy is listed in its `clashes`."""

    def __init__(self, workspace: Path, run_id: str, known: str) -> None:
        self.workspace = workspace
        self.run_id = run_id
        self.known = known
        super().__init__(
            f"{workspace} names run {run_id}, which the run store knows at {known}: a copy "
            "of that workspace is not indexed in its place (give it a folder of its own "
            "with a new run, or remove one of the two)"
        )


@dataclass
class IndexReport:
    """What `index_home` did: run ids added and updated, how many were already in step,
    the damaged records it met (`(workspace, problem)`) and the workspaces it left out as
    clashes (`WorkspaceClash`)."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    damaged: list[tuple[Path, str]] = field(default_factory=list)
    clashes: list[WorkspaceClash] = field(default_factory=list)


def summary_fields(values: Mapping[Any, Any]) -> dict[str, Any]:
    """A `runs` row (its columns decoded) as the fields of a `RunSummary`."""
    return {
        "run_id": values["run_id"],
        "plugin": values["plugin"],
        "model": values["model"],
        "status": values["status"],
        "error_message": values.get("error_message"),
        "input_name": values.get("input_name"),
        "workspace": values.get("workspace") or "",
        "origin": values.get("origin") if values.get("origin") in ("cli", "ui", "api") else "cli",
        "host": values.get("host"),
        "created_at": values.get("created_at"),
        "finished_at": values.get("finished_at"),
        "updated_at": values.get("updated_at") or "",
        "finding_count": int(values.get("finding_count") or 0),
        "findings_by_code": {
            str(code): int(count)
            for code, count in as_dict(values.get("findings_by_code")).items()
            if isinstance(count, int)
        },
        "warnings": [str(w) for w in as_list(values.get("warnings"))],
        "problems": [str(p) for p in as_list(values.get("problems"))],
        "cancel_requested": bool(values.get("cancel_requested")),
        "last_seq": int(values.get("last_seq") or 0),
        "worker": values.get("worker"),
        "clashes": [
            str(entry["workspace"])
            for entry in as_list(values.get("clashes"))
            if isinstance(entry, dict) and isinstance(entry.get("workspace"), str)
        ],
        "submitted_by": values.get("submitted_by"),
        "rerun_of": values.get("rerun_of"),
        "review_state": values.get("review_state") or "unreviewed",
    }


@dataclass(frozen=True, slots=True)
class ListedRun:
    """One run of the runs list with the fields of a `RunSummary` (`summary_fields`), for a
    command that lists runs and builds no pydantic model (`runlens runs`)."""

    run_id: str
    plugin: str
    model: str
    status: str
    error_message: str | None
    input_name: str | None
    workspace: str
    origin: str
    host: str | None
    created_at: str | None
    finished_at: str | None
    updated_at: str
    finding_count: int
    findings_by_code: dict[str, int]
    warnings: list[str]
    problems: list[str]
    cancel_requested: bool
    last_seq: int
    worker: str | None
    clashes: list[str]
    submitted_by: str | None
    rerun_of: str | None
    review_state: str


#: The fields of an `ArtifactRow` (`runlens.store.rows`) in its order: the columns of an
#: `artifacts` row it holds.
ARTIFACT_FIELDS: Final = (
    "name",
    "label",
    "description",
    "audience",
    "sensitivity",
    "required",
    "size",
    "sha256",
    "status",
    "finding_count",
)
#: The fields of a `FindingRow` in its order (its `column` is a `findings` row's `col`).
FINDING_FIELDS: Final = (
    "ordinal",
    "validator",
    "artifact",
    "code",
    "path",
    "message",
    "details",
    "row_id",
    "line",
    "column",
)


def artifact_fields(values: Mapping[Any, Any]) -> dict[str, Any]:
    """An `artifacts` row (its columns decoded) as the fields of an `ArtifactRow`."""
    return {key: values[key] for key in ARTIFACT_FIELDS if key in values}


def finding_fields(values: Mapping[Any, Any]) -> dict[str, Any]:
    """A `findings` row (its columns decoded) as the fields of a `FindingRow`."""
    fields = {key: values[key] for key in FINDING_FIELDS if key in values}
    fields["column"] = values["col"]
    fields["details"] = as_dict(values.get("details"))
    return fields


def detail_fields(
    values: Mapping[Any, Any],
    artifacts: Sequence[Mapping[Any, Any]],
    findings: Sequence[Mapping[Any, Any]],
    reruns: Sequence[str] = (),
) -> dict[str, Any]:
    """A `runs` row with its `artifacts` and `findings` rows (in order) and the ids of the
    runs that re-run it as the fields of a `RunDetail` (its artifacts and findings as the
    fields of theirs)."""
    return {
        **summary_fields(values),
        "plan": as_list(values.get("plan")),
        "metrics": as_dict(values.get("metrics")),
        "evidence_index_sha256": values.get("evidence_index_sha256"),
        "source_hash": values.get("source_hash"),
        "artifacts": [artifact_fields(a) for a in artifacts],
        "findings": [finding_fields(f) for f in findings],
        "citation_counts": as_dict(values.get("citation_counts")),
        "reruns": list(reruns),
    }


@dataclass(frozen=True, slots=True)
class ListedArtifact:
    """An `ArtifactRow`'s fields (`artifact_fields`) without pydantic."""

    name: str
    label: str
    description: str
    audience: str
    sensitivity: str
    required: bool
    size: int | None
    sha256: str | None
    status: str
    finding_count: int


@dataclass(frozen=True, slots=True)
class ListedFinding:
    """A `FindingRow`'s fields (`finding_fields`) without pydantic."""

    ordinal: int
    validator: str
    artifact: str
    code: str
    path: str
    message: str
    details: dict[str, Any]
    row_id: str | None
    line: int | None
    column: int | None


@dataclass(frozen=True, slots=True)
class ListedDetail(ListedRun):
    """One run with the fields of a `RunDetail` (`detail_fields`), for a command that shows
    a run and builds no pydantic model (`runlens show`)."""

    plan: list[dict[str, Any]]
    metrics: dict[str, Any]
    evidence_index_sha256: str | None
    source_hash: str | None
    artifacts: list[ListedArtifact]
    findings: list[ListedFinding]
    citation_counts: dict[str, int]
    reruns: list[str]
    #: Empty, as a `RunDetail` the store gives (`runlens.review.record.run_reviews` fills it).
    review: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        values: Mapping[Any, Any],
        artifacts: Sequence[Mapping[Any, Any]],
        findings: Sequence[Mapping[Any, Any]],
        reruns: Sequence[str] = (),
    ) -> ListedDetail:
        """`detail_fields` as a `ListedDetail`."""
        fields = detail_fields(values, artifacts, findings, reruns)
        fields["artifacts"] = [ListedArtifact(**a) for a in fields["artifacts"]]
        fields["findings"] = [ListedFinding(**f) for f in fields["findings"]]
        return cls(**fields)


class HeldRuns(Protocol):
    """What `held_ended` and `named_workspace` ask of the run store (a `RunStore`, a
    `ReadFirstStore`)."""

    host: str

    def sync_states(
        self, run_ids: Sequence[str] | None = None, *, live: bool = False
    ) -> dict[str, SyncState]: ...


class Located(Protocol):
    """What `held_workspace` reads of a run (a `RunSummary`, a `ListedDetail`)."""

    @property
    def run_id(self) -> str: ...
    @property
    def workspace(self) -> str: ...
    @property
    def host(self) -> str | None: ...
    @property
    def worker(self) -> str | None: ...


class Timed(Protocol):
    """What `duration` reads of a run (a `RunSummary`, a `ListedRun`)."""

    @property
    def status(self) -> str: ...
    @property
    def created_at(self) -> str | None: ...
    @property
    def finished_at(self) -> str | None: ...


def one_match(text: str, matches: list[str], url: str) -> str:
    """The one run id of `matches` (the store's ids `text` starts or ends), or the
    `UserError` a person reads when there is none or several (the first five named)."""
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:5])
        more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
        raise UserError(
            f"{text!r} matches {len(matches)} runs ({shown}{more}): give more of the id"
        )
    raise UserError(f"no run {text!r} (looked in the run store {url})")


def parse_time(value: str | None) -> datetime | None:
    """A time the store holds (ISO 8601) as an aware datetime; None for none or garbage."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def duration(run: Timed) -> str:
    """How long the run took (so far, while it is live): `4.2 s`, `3 min 05 s`, `1 h 02 min`;
    nothing for a run still queued (it has not started)."""
    if run.status == "queued":
        return ""
    start = parse_time(run.created_at)
    end = parse_time(run.finished_at) or (datetime.now(UTC) if is_live(run.status) else None)
    if start is None or end is None:
        return ""
    seconds = max((end - start).total_seconds(), 0.0)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def record_stamp(workspace: Path) -> str | None:
    """`mtime_ns:size` of the workspace's `runtime/run.json`; None when there is none."""
    try:
        stat = os.stat(workspace / Workspace.RUN_RECORD)
    except OSError:
        return None
    return f"{stat.st_mtime_ns}:{stat.st_size}"


def stamped(state: SyncState | None, workspace: str, stamp: str | None) -> bool:
    """Whether the store holds the run ended, at `workspace`, with the record stamp `stamp`."""
    return (
        state is not None
        and state.is_terminal
        and state.workspace == workspace
        and stamp is not None
        and state.record_stamp == stamp
    )


def home_records(home: Path) -> list[tuple[str, str]]:
    """Every folder under the runs home that holds a run record (`run_workspaces`), sorted
    by name: its resolved path and its `record_stamp`. The home is resolved once and each
    folder costs one stat of its `run.json` (a folder that is a link is resolved)."""
    base = home.resolve()
    try:
        with os.scandir(base) as entries:
            folders = sorted((entry.name, entry.path, entry.is_symlink()) for entry in entries)
    except OSError:
        return []
    found = []
    for _, path, linked in folders:
        try:
            stat = os.stat(os.path.join(path, Workspace.RUN_RECORD))
        except OSError:
            continue
        if not S_ISREG(stat.st_mode):
            continue
        resolved = os.path.realpath(path) if linked else path
        found.append((resolved, f"{stat.st_mtime_ns}:{stat.st_size}"))
    return found


def held_ended(store: HeldRuns, workspace: Path) -> str | None:
    """The run id `workspace`'s `run.json` names when the store holds that run ended, at
    this workspace (resolved), with the `record_stamp` its `run.json` has now, and its event
    log and manifest are still there: an ended run's records are complete once that file is
    written, so `sync_workspace(if_changed=True)` reads nothing further and writes nothing.
    None otherwise (a log or manifest gone since is a problem a sync records)."""
    from runlens.records.io import read_json_object

    root = workspace.resolve()
    raw, _ = read_json_object(root / Workspace.RUN_RECORD, Workspace.RUN_RECORD)
    run_id = raw.get("run_id") if raw is not None else None
    if (
        isinstance(run_id, str)
        and (root / Workspace.EVENTS).is_file()
        and (root / Workspace.MANIFEST).is_file()
        and stamped(store.sync_states([run_id]).get(run_id), str(root), record_stamp(root))
    ):
        return run_id
    return None


def named_workspace(store: HeldRuns, run: Located) -> Path | None:
    """The run's workspace when its folder holds a `run.json` that names the run, and the
    run is not a worker's on another machine: the usual case of `local_workspace`
    (`runlens.store.sync`), which says what else is the run's workspace. None otherwise."""
    from runlens.records.io import read_json_object

    if not run.workspace or (run.worker is not None and run.host not in (None, store.host)):
        return None
    workspace = Path(run.workspace)
    raw, _ = read_json_object(workspace / Workspace.RUN_RECORD, Workspace.RUN_RECORD)
    return workspace if raw is not None and raw.get("run_id") == run.run_id else None
