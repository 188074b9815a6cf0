"""Bringing the run store in step with workspaces on disk.

A local run's workspace is the record of truth; the store holds what its records say (an
index of it: `runlens.store.lifecycle` says which copy is the truth for which run). `sync_workspace`
reads one workspace the way `runlens show` does (`runtime.recovery.load_run`: damaged
records are named, a run whose process died is settled as `interrupted`) and writes what
changed: the run's fields, the events the store does not hold yet (by `seq`), and, once the
run has ended, its artifacts and findings (`manifest.json`: each artifact's and the run's
own) and its citations (the verified ones of `runtime/citations.json`, quotes and ids cited
without a quote, the failed ones from the findings that name a row).

`index_home` does that for every workspace under a runs home, skipping ended runs whose
`run.json` has not changed since the store read it; `refresh_live` re-reads the runs the
store holds as live whose workspace is on this machine (a run whose process died becomes
`interrupted` there).

A run a worker holds (its store row names the `worker`) is durable: when its worker dies,
another worker resumes it, perhaps on another machine. So its liveness is the worker's
heartbeat in the store, never the lock of a workspace here: while its workspace here does
not record it ended, a sync neither settles it nor writes anything of it (the workspace may
be the cache of a worker killed mid-run, its records older than the store's). A workspace
that records the run ended is synced as any other. A worker's own sync at the end of a run
(`upload_files`) puts every file of the workspace in the store first, then the end state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from runlens.errors import one_line
from runlens.records.citations import FailedCitationRecord, TextSpanRecord, read_citations
from runlens.records.io import WrittenRecords
from runlens.records.readers import (
    EventView,
    FindingView,
    ManifestView,
    RunRecordView,
    parse_view,
    read_events,
    read_manifest,
    read_run_record,
)
from runlens.records.status import DAMAGED, TERMINAL
from runlens.runtime.recovery import RunView, load_run
from runlens.store.clashes import (
    WorkspaceClash,
    clashing_workspace,
    record_clashes,
)
from runlens.store.listing import (
    IndexReport,
    Located,
    SyncState,
    held_ended,
    home_records,
    named_workspace,
    record_stamp,
    stamped,
)
from runlens.store.rows import ArtifactRow, CitationRow, FindingRow, Origin
from runlens.tools.workspace import Workspace

if TYPE_CHECKING:
    from runlens.store.db import RunStore
    from runlens.store.driver import EventRecord

__all__ = [
    "IndexReport",
    "adopt_reviews",
    "finish_streamed",
    "index_home",
    "local_workspace",
    "missing_events",
    "not_indexed",
    "record_stamp",
    "refresh_live",
    "settle_review_state",
    "sync_workspace",
    "upload_workspace",
]

#: Bytes of workspace files `upload_workspace` hands the store in one transaction (at least
#: one file each time, however large).
UPLOAD_BATCH_BYTES = 32 * 1024 * 1024


def sync_workspace(
    store: RunStore,
    workspace: Path,
    *,
    origin: Origin | None = None,
    upload_files: bool = False,
    lock_seconds: float | None = None,
    if_changed: bool = False,
) -> str | None:
    """Write what `workspace` records into the store; the run id, or None when the folder
    holds no run record (not a run, or one whose process has not started it yet). A run a
    worker holds is left as the store has it while the workspace does not record it ended.

    `if_changed` (a reader such as `runlens show`): nothing is read further nor written
    when the store holds the run ended, at this workspace, with the `record_stamp` its
    `run.json` has now (an ended run's records are complete once that file is written), and
    its event log and manifest are still there.

    `upload_files` (a worker, for the run it holds): every file of the workspace goes into
    the store's `files` too (`upload_workspace`), before the run's end state.
    `lock_seconds`: how long to wait for a lock another process holds on the store
    (`RunStore.transaction`); past it the store's error is raised."""
    return _sync(
        store,
        workspace,
        origin=origin,
        upload_files=upload_files,
        lock_seconds=lock_seconds,
        if_changed=if_changed,
    )[0]


def upload_workspace(store: RunStore, run_id: str, workspace: Path) -> int:
    """Put every regular file of the workspace in the store (`RunStore.put_files`: links,
    the workspace lock and temporary files left out, see `runlens.store.files`), in
    transactions of about `UPLOAD_BATCH_BYTES`; how many files the store did not hold as
    they are."""
    from runlens.store.files import read_regular, workspace_files

    written = 0
    batch: dict[str, bytes] = {}
    size = 0
    for path, file in workspace_files(Workspace(workspace).root):
        data = read_regular(file)
        if data is None:
            continue  # gone, or replaced by a link, since it was listed
        batch[path] = data
        size += len(data)
        if size >= UPLOAD_BATCH_BYTES:
            written += store.put_files(run_id, batch)
            batch, size = {}, 0
    if batch:
        written += store.put_files(run_id, batch)
    return written


def _sync(
    store: RunStore,
    workspace: Path,
    *,
    origin: Origin | None,
    upload_files: bool,
    lock_seconds: float | None = None,
    if_changed: bool = False,
) -> tuple[str | None, bool]:
    """`sync_workspace`, saying also whether anything was written (not for a run a worker
    holds whose workspace here does not record it ended, nor, with `if_changed`, for an
    ended run the store holds as its workspace records it)."""
    root = Workspace(workspace)
    if not root.run_record.is_file():
        return None, False
    if if_changed:
        ended = held_ended(store, root.root)
        if ended is not None:
            return ended, False
    named = read_run_record(root.run_record).view
    named_id = named.run_id if named is not None else None
    # All of the workspace's state reaches the store, or none of it; and the run's row is
    # read once, in the transaction that writes it (the clash check and the events the
    # store holds go by that read). The events are read once the run is settled: settling
    # a run whose process died adds its last event.
    with store.transaction(lock_seconds=lock_seconds):
        state = store.sync_states([named_id]).get(named_id) if named_id is not None else None
        held = state is not None and state.worker is not None
        view = load_run(root.root, settle=not held)
        record = view.record
        run_id = str(record.run_id)
        # Durable: a dead worker's run is resumed by another worker, not settled here.
        resumable = held and view.status not in TERMINAL
        if not resumable:
            if view.problems and record.status is None:
                # A record too damaged to name its run: keep the id the store knows this
                # folder by.
                run_id = next(
                    (
                        known
                        for known, s in store.sync_states().items()
                        if s.workspace == str(root.root)
                    ),
                    run_id,
                )
            if run_id != named_id:
                state = store.sync_states([run_id]).get(run_id)
            known = clashing_workspace(store, run_id, root, state)
            if known is not None:
                raise WorkspaceClash(root.root, run_id, known)
            events = read_events(root.events)
            _write_state(
                store,
                run_id,
                root,
                view,
                events.events,
                [*events.problems, *events.damaged],
                origin,
                upload_files,
                state,
            )
    if resumable:
        if upload_files:
            upload_workspace(store, run_id, root.root)
        return run_id, False
    return run_id, True


def finish_streamed(
    store: RunStore,
    workspace: Path | Workspace,
    run_id: str,
    *,
    unwritten: Sequence[Mapping[str, Any]] | Sequence[EventRecord],
    report_events: ReportEvents,
    origin: Origin | None,
    lock_seconds: float | None = None,
    written: WrittenRecords | None = None,
    new: bool = False,
) -> bool:
    """The end of a run whose events a live mirror has streamed (`StoreMirror.finish`):
    what the store does not hold yet is written once, in one transaction
    (`RunStore.end_run`), as `sync_workspace` would write it: the events the mirror has not
    written (`unwritten`), the run's fields from its final `run.json`, its artifacts,
    findings and citations, and its end state. The event log is not read again:
    `report_events` are the run's `validator.completed` events, which order its findings
    (`_report_order`), or what gives them, asked only when there are two findings or more
    to order. Nor are the record files the run's end handed over as it wrote them
    (`written`), while `run.json` is still the size written (one rewritten since is read).
    `new`: the mirror has not written the run yet (`RunStore.end_run`'s `new`).

    False, and nothing written, when the workspace does not record the run `run_id` ended
    with a record read whole: `sync_workspace` then reads the workspace as a reader would.
    The run is the mirror's own, written at this workspace: no copy of it is looked for
    (`clashing_workspace`)."""
    root = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    stamp = record_stamp(root.root)
    if stamp is None:
        return False
    if written is not None and stamp.rpartition(":")[2] != str(len(written.run_record)):
        written = None  # not the record the run's end wrote: the files as they are now
    read = (
        read_run_record(root.run_record)
        if written is None
        else parse_view(RunRecordView, written.run_record, Workspace.RUN_RECORD)
    )
    record = read.view
    if record is None or read.problems or read.damaged or record.run_id != run_id:
        return False
    view = RunView(root.root, record, [])
    if view.status not in TERMINAL:
        return False
    state = _state(root, view, report_events, [], origin, written=written, stamp=stamp)
    store.end_run(
        run_id,
        state.final.pop("status"),
        state.fields,
        unwritten,
        state.results,
        state.final,
        lock_seconds=lock_seconds,
        new=new,
    )
    return True


#: The events that order a run's findings (`_report_order`), or what gives them on demand.
ReportEvents = Sequence[EventView] | Callable[[], Sequence[EventView]]


@dataclass
class _State:
    """What a workspace records of its run, as the store's columns: `fields` (`index_run`),
    `final` (`finish`: the end state, with the finding counts of the run's metrics; empty
    for a live run) and, for an ended run with a manifest, its `results`."""

    fields: dict[str, Any]
    final: dict[str, Any]
    results: tuple[list[ArtifactRow], list[FindingRow], list[CitationRow]] | None


def _state(
    root: Workspace,
    view: RunView,
    events: ReportEvents,
    event_problems: list[str],
    origin: Origin | None,
    *,
    written: WrittenRecords | None = None,
    stamp: str | None = None,
) -> _State:
    """The run's state read from its workspace (`events` order its findings); `written`,
    the record files as the run's end wrote them, are not read again, and `stamp` is the
    `record_stamp` of its `run.json` when taken already."""
    record = view.record
    manifest: ManifestView | None = None
    problems = [*view.problems, *_status_problem(record, view.problems)]
    terminal = view.status in TERMINAL
    if terminal:
        read = (
            read_manifest(root.manifest)
            if written is None
            else parse_view(ManifestView, written.manifest, Workspace.MANIFEST)
        )
        manifest = read.view
        problems.extend([*read.problems, *read.damaged])
    problems.extend(event_problems or (missing_events(root.root) if terminal else []))
    fields = _run_fields(record, view.problems, root, manifest, stamp or record_stamp(root.root))
    fields["problems"] = problems
    if origin is not None:
        fields["origin"] = origin
    final = {"status": fields.pop("status")} if terminal else {}
    results = None
    if terminal and manifest is not None:
        artifacts, findings = _results(manifest, events)
        cited = written.citations if written is not None else None
        results = (artifacts, findings, _citations(root, findings, cited))
        # The run's count comes from its metrics (the events), as while it was live.
        counts = _findings_by_code(record)
        if counts is not None:
            final.update(findings_by_code=counts, finding_count=sum(counts.values()))
    return _State(fields, final, results)


def _write_state(
    store: RunStore,
    run_id: str,
    root: Workspace,
    view: RunView,
    events: list[EventView],
    event_problems: list[str],
    origin: Origin | None,
    upload_files: bool,
    state: SyncState | None,
) -> None:
    """Write the run's state: its fields, the events the store does not hold, with
    `upload_files` its files, its results once it has ended, and its end state last.
    `state` is what the store holds of the run, read in this transaction."""
    known = state.last_seq if state is not None else 0
    if known and store.event_count(run_id) < known:
        known = 0  # some events never reached the store (it failed a while): add them all
    fresh = [e.encode() for e in events if e.seq is not None and e.seq > known]
    read = _state(root, view, events, event_problems, origin)
    # An ended run's end state is written last, after its events and results: a reader that
    # sees it ended (the run page, the API's `end` event) finds everything it left.
    store.index_run(run_id, **read.fields)
    if adopt_reviews(store, run_id, root.root):
        settle_review_state(store, run_id, root.root)
    if fresh:
        store.append_events(run_id, fresh)
    if upload_files:
        upload_workspace(store, run_id, root.root)
    if read.results is not None:
        store.replace_results(run_id, *read.results)
    if read.final:
        store.finish(run_id, **read.final)


def adopt_reviews(store: RunStore, run_id: str, workspace: Path) -> int:
    """The lines of the workspace's `runtime/reviews.jsonl` after those the store holds of
    the run (SPEC section 17), when the store's are the file's beginning: a ledger is only
    ever appended to, and a file that says otherwise (a line changed, removed, re-ordered)
    is `runlens verify`'s to name, never taken in. How many lines were added."""
    from runlens.review.entries import REVIEWS_PATH

    if not (workspace / REVIEWS_PATH).is_file():
        return 0
    from runlens.review.entries import ReviewError
    from runlens.review.ledger import read_ledger

    try:
        on_disk = read_ledger(workspace)
    except ReviewError:
        return 0
    stored = store.review_lines(run_id)
    if len(on_disk) <= len(stored) or [e.line for e in on_disk[: len(stored)]] != stored:
        return 0
    added = 0
    for entry in on_disk[len(stored) :]:
        if entry.run_id != run_id or not store.append_review_line(run_id, entry):
            break
        added += 1
    return added


def settle_review_state(store: RunStore, run_id: str, workspace: Path) -> str | None:
    """Set the run's review state from the store's review lines, its deliverables as they
    are in `workspace` and its plugin's review policy (the default one when the plugin is
    not installed here); the state, None when the run or its lines cannot be read."""
    from runlens.plugins import load_plugin
    from runlens.plugins.review import ReviewPolicy
    from runlens.review.entries import ReviewError
    from runlens.review.ledger import current_digests, parse_ledger
    from runlens.review.state import review_state

    detail = store.get_run(run_id)
    if detail is None:
        return None
    try:
        entries = parse_ledger("".join(line + "\n" for line in store.review_lines(run_id)))
    except ReviewError:
        return None
    try:
        policy = load_plugin(detail.plugin).review_policy
    except Exception:  # a plugin that cannot load here: the default policy holds
        policy = ReviewPolicy()
    state = review_state(
        entries,
        current_digests(workspace),
        policy,
        detail.submitted_by,
        completed=detail.status == "completed",
    ).state
    store.set_review_state(run_id, state)
    return state


def index_home(
    store: RunStore,
    home: Path,
    *,
    force: bool = False,
    on_pending: Callable[[int], None] | None = None,
) -> IndexReport:
    """Sync every workspace under `home` the store does not hold in its current state
    (`force`: every one, whatever the store holds). `on_pending` is told how many that is
    before the first is synced, when there is any.

    A workspace is current when the store holds its run ended with the `record_stamp` its
    `run.json` has now: one stat, nothing read. The others are synced in transactions of
    about `INDEX_BATCH_SECONDS` (one commit for many runs), each workspace in a savepoint
    of its own: one that fails is named and leaves nothing, the others are written."""
    report = IndexReport()
    by_workspace = {state.workspace: state for state in store.sync_states().values()}
    pending: list[tuple[Path, SyncState | None]] = []
    for folder, stamp in home_records(home):
        state = by_workspace.get(folder)
        if not force and stamped(state, folder, stamp):
            report.unchanged += 1
            continue
        pending.append((Path(folder), state))
    if pending and on_pending is not None:
        on_pending(len(pending))
    written: list[tuple[Path, str]] = []
    done = 0
    while done < len(pending):
        with store.transaction():
            started = time.monotonic()
            while done < len(pending) and time.monotonic() - started < INDEX_BATCH_SECONDS:
                resolved, state = pending[done]
                done += 1
                run_id = _index_one(store, report, resolved, state)
                if run_id is not None:
                    written.append((resolved, run_id))
    problems = store.run_problems([run_id for _, run_id in written]) if written else {}
    for resolved, run_id in written:
        for problem in problems.get(run_id, ()):
            report.damaged.append((resolved, problem))
    order = {resolved: number for number, (resolved, _) in enumerate(pending)}
    report.damaged.sort(key=lambda item: order.get(item[0], len(order)))  # workspace order
    record_clashes(store, home, report.clashes)
    return report


#: About how long `index_home` holds the store's write lock for one batch of workspaces.
INDEX_BATCH_SECONDS = 0.25


def _index_one(
    store: RunStore, report: IndexReport, resolved: Path, state: SyncState | None
) -> str | None:
    """Sync one workspace of `index_home` in a savepoint; the run id when it was written
    (the report says what became of the others)."""
    try:
        with store.savepoint():
            run_id, written = _sync(store, resolved, origin=None, upload_files=False)
    except WorkspaceClash as clash:
        report.clashes.append(clash)
        return None
    except Exception as error:  # one workspace never stops the others: named, skipped
        report.damaged.append((resolved, not_indexed(error)))
        return None
    if run_id is None:
        return None
    if not written:  # a worker's run its workspace here does not record ended
        report.unchanged += 1
        return None
    (report.updated if state is not None else report.added).append(run_id)
    return run_id


def missing_events(workspace: Path) -> list[str]:
    """The problem of a workspace whose event log is missing (none when it is there)."""
    if (workspace / Workspace.EVENTS).is_file():
        return []
    return [f"{Workspace.EVENTS} is missing: the run's events cannot be shown"]


def not_indexed(error: BaseException) -> str:
    """The problem that kept a workspace out of the store, in one line."""
    from sqlalchemy import exc as sa_exc

    if isinstance(error, sa_exc.DBAPIError) and error.orig is not None:
        error = error.orig
    reason = one_line(error, 300)
    return f"not indexed ({type(error).__name__}: {reason})"


def refresh_live(store: RunStore, *, run_ids: Sequence[str] | None = None) -> list[str]:
    """Re-read the live runs (of `run_ids`, or all) whose workspace is on this machine;
    the ids of those re-read. A run a worker holds is re-read only once its workspace
    records it ended (its worker's heartbeat, not a process here, says whether it lives)."""
    done = []
    for run_id, state in store.sync_states(run_ids, live=True).items():
        if state.is_terminal or state.host not in (None, store.host) or not state.workspace:
            continue
        workspace = Path(state.workspace)
        if not (workspace / Workspace.RUN_RECORD).is_file():
            continue
        try:
            synced, written = _sync(store, workspace, origin=None, upload_files=False)
        except Exception:  # the store keeps what it had; `runlens reindex` names the problem
            continue
        if synced and written:
            done.append(run_id)
    return done


def local_workspace(store: RunStore, run: Located) -> Path | None:
    """The run's workspace when it is on this machine: its folder holds a run record
    (`runtime/run.json`) that does not name another run (a damaged one is the workspace's
    to report), and the run is not a worker's on another machine (the folder would be a
    stale copy: the cache of a worker killed mid-run, the run resumed elsewhere). None
    otherwise: read the run from the store."""
    workspace = named_workspace(store, run)  # the usual case: its `run.json` names the run
    if workspace is not None:
        return workspace
    if not run.workspace:
        return None
    workspace = Path(run.workspace)
    if run.worker is not None and run.host not in (None, store.host):
        return None
    path = workspace / Workspace.RUN_RECORD
    if not path.is_file():
        return None
    record = read_run_record(path).view
    named = record.run_id if record is not None else None
    if named is not None and named != run.run_id:
        return None
    return workspace


def _run_fields(
    record: RunRecordView,
    problems: Sequence[str],
    workspace: Workspace,
    manifest: ManifestView | None,
    stamp: str | None,
) -> dict[str, Any]:
    status = record.status
    if status is None:
        # `load_run` names what is wrong with the record (`_status_problem` a record read
        # whole without a status): no status of its own is truthful but `damaged`.
        status = DAMAGED
    source = manifest.input if manifest is not None else None
    input_name = record.input_name or (source.name if source is not None else None)
    counts = _findings_by_code(record) or {}
    fields: dict[str, Any] = {
        "plugin": record.plugin or "unknown",
        "model": record.model or "unknown",
        "status": status,
        "error_message": record.error_message,
        "input_name": input_name or None,
        "workspace": str(workspace.root),
        "created_at": record.created_at,
        "finished_at": record.finished_at,
        "warnings": list(record.warnings),
        "plan": [step.encode() for step in record.plan],
        "metrics": record.metrics.encode() if record.metrics is not None else {},
        "evidence_index_sha256": record.evidence_index_sha256,
        "findings_by_code": counts,
        "finding_count": sum(counts.values()),
        "record_stamp": stamp,
    }
    if source is not None and source.source_hash is not None:
        fields["source_hash"] = source.source_hash
    # Who started the run and what it re-runs (SPEC section 17), when the record says so
    # (a record written before it does not: the store keeps what it was told otherwise).
    for key in ("submitted_by", "rerun_of"):
        value = getattr(record, key, None)
        if isinstance(value, str) and value:
            fields[key] = value
    return fields


def _status_problem(record: RunRecordView, problems: Sequence[str]) -> list[str]:
    """The problem of a record read whole that names no status (it is stored `damaged`)."""
    if problems or record.status is not None:
        return []
    return [f"{Workspace.RUN_RECORD}: no status"]


def _findings_by_code(record: RunRecordView) -> dict[str, int] | None:
    by_code = record.metrics.findings_by_code if record.metrics is not None else None
    return dict(by_code) if by_code is not None else None


def _results(
    manifest: ManifestView, events: ReportEvents
) -> tuple[list[ArtifactRow], list[FindingRow]]:
    """The manifest's artifacts, and every finding of the run: each artifact's and the run's
    own (the manifest's top-level `findings`), in the order of the run's report as far as
    the events tell it (`_report_order`; `events` is asked for them only when there are two
    findings or more: one or none is in that order already)."""
    artifacts = [
        row for row in map(ArtifactRow.from_manifest, manifest.artifacts) if row is not None
    ]
    found = manifest.all_findings()
    if len(found) > 1:
        found = _report_order(found, events() if callable(events) else events)
    findings: list[FindingRow] = []
    for finding in found:
        findings.append(FindingRow.from_finding(len(findings), finding))
    return artifacts, findings


def _report_order(
    findings: Sequence[FindingView], events: Sequence[EventView]
) -> list[FindingView]:
    """`findings` (the run's own first, then each artifact's) in the order of the run's
    report: its findings come validator by validator, in the order the last validation
    round's `validator.completed` events name them. The manifest does not keep the order
    within one validator, so that stays as given: the run's own findings first. A validator
    no event names (or a run without those events) comes last, as given."""
    completed = [
        event.data
        for event in events
        if event.type == "validator.completed" and event.data is not None
    ]
    rounds = [data["round"] for data in completed if isinstance(data.get("round"), int)]
    last = max(rounds, default=None)
    rank: dict[str, int] = {}
    for data in completed:
        if data.get("round") == last:
            rank.setdefault(str(data.get("validator")), len(rank))
    return sorted(findings, key=lambda finding: rank.get(str(finding.validator), len(rank)))


def _citations(
    workspace: Workspace, findings: Sequence[FindingRow], written: bytes | None = None
) -> list[CitationRow]:
    """Verified citations from `runtime/citations.json` (read through its model: a damaged
    entry is left out; `written`: its bytes as the run's end wrote them), then a failed one
    per finding that names the row it cites (its code and message say why it failed), each
    with the spans the file records for it."""
    recorded = read_citations(workspace.root / Workspace.CITATIONS, written)
    citations = [
        CitationRow(
            ordinal=ordinal,
            artifact=entry.artifact,
            location=entry.location,
            row_id=entry.row_id,
            quote=entry.quote,
            start=entry.start,
            end=entry.end,
            line=entry.line,
            column=entry.column,
            status="verified",
            **_span_fields(entry.span, entry.id_span),
        )
        for ordinal, entry in enumerate(recorded.citations)
    ]
    failed_spans: dict[tuple[str, int | None, int | None, str], FailedCitationRecord] = {
        (entry.artifact, entry.line, entry.column, entry.row_id): entry for entry in recorded.failed
    }
    for finding in findings:
        if finding.row_id is None:
            continue
        quote = finding.details.get("quote")
        spans = failed_spans.get((finding.artifact, finding.line, finding.column, finding.row_id))
        span, id_span = (spans.span, spans.id_span) if spans is not None else (None, None)
        citations.append(
            CitationRow(
                ordinal=len(citations),
                artifact=finding.artifact,
                location=finding.path,
                row_id=finding.row_id,
                quote=quote if isinstance(quote, str) else None,
                line=finding.line,
                column=finding.column,
                status="failed",
                code=finding.code,
                reason=finding.message,
                **_span_fields(span, id_span),
            )
        )
    return citations


class _SpanFields(TypedDict):
    """A citation row's span columns."""

    span_start: int | None
    span_end: int | None
    span_line: int | None
    id_start: int | None
    id_end: int | None


def _span_fields(span: TextSpanRecord | None, id_span: TextSpanRecord | None) -> _SpanFields:
    """A citation row's span columns from the recorded spans (None where there is none)."""
    return {
        "span_start": None if span is None else span.start,
        "span_end": None if span is None else span.end,
        "span_line": None if span is None else span.line,
        "id_start": None if id_span is None else id_span.start,
        "id_end": None if id_span is None else id_span.end,
    }


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
