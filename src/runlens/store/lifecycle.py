"""A run's stored life: every write of a run's row, its events and its results, as named
transitions. Nothing else in RunLens writes a run's status to the store.

Which copy of a run is the truth depends on how the run was started:

- **A local run** (`runlens run`, a run the UI starts on this machine): its workspace is the
  truth, and the store an index of it, rebuilt from it at will (`runlens.store.sync`: the
  index follows what the workspace records, and `index_run` never refuses it). While the run
  is live the mirror (`runlens.store.mirror`) publishes its events here.
- **A queued run** (`runlens submit`, run by `runlens worker`): the store is the truth, and the
  workspace of the worker executing it a cache, wiped and rebuilt from the store when another
  worker resumes the run (`runlens.workers.workflow`). Its end is written once: a run a worker
  holds that the store shows ended never ends another way (`finish` refuses it).

The transitions, in the order of a run's life:

    queue            a submitted run, `queued` (no worker has started it)
    create_pending   a run about to be started by another process, `created`
    claim            a worker takes a queued run (or resumes it: `run.resumed` is published)
    publish          a live run's events, with the fields they change (`running`, `validating`)
    index_run        what a workspace records (the index of a local run, a damaged record)
    finish           the end state, after the run's results (`replace_results`)
    end_unstarted    a run no process got going ends `failed` or `cancelled`
    request_cancel   someone asks the run to stop (its process polls `cancel_requested`)
    set_clashes      copies of the run's workspace found on this machine
    set_review_state what the run's valid review decisions add up to (SPEC section 17)
    drop_events_from a replay published something else: the events from there on go
    delete_run       the run is forgotten (its workspace is left alone)

A local run whose process died reaches the store `interrupted` through `finish`, once a reader
has settled its workspace (`runtime.recovery`). A worker's run is never settled so: a worker
that stops hands its runs back (`expire_worker`, `runlens.workers.handover`) and the next one
to `claim` a run resumes it.

Each checks the move with `runlens.records.status` where the stored status is known: a run
never goes back from an end state (a reader that read the workspace just before the run
ended must not undo the run's own final write).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from runlens.records.io import utc_now
from runlens.records.status import (
    QUEUED,
    TERMINAL,
    UNSTARTED,
    InvalidTransition,
    RunStatus,
    check_stored,
    is_terminal,
)
from runlens.store import driver as d
from runlens.store import tables as t
from runlens.store.reviews import REVIEW_STATES
from runlens.store.rows import ArtifactRow, CitationRow, FindingRow, Origin, RunSummary
from runlens.store.runs import RunReads, summary_of
from runlens.store.writes import (
    MAX_SEQ,
    RUN_FIELDS,
    Published,
    Results,
    RunWrites,
    _result_counts,
    _write_results,
)

__all__ = ["MAX_SEQ", "RUN_FIELDS", "Published", "Results", "RunLife"]

_ENDED: Final = sorted(status.value for status in TERMINAL)
_UNSTARTED: Final = sorted(str(status) for status in UNSTARTED)
#: The run's stored status and worker, its row locked until the transaction ends.
_LOCK_RUN: Final = (
    sa.select(t.runs.c.status, t.runs.c.worker)
    .where(t.runs.c.run_id == sa.bindparam("the_run"))
    .with_for_update()
)


class RunLife(RunWrites, RunReads):
    """The store's writes of a run: its row, events and results (those of a live run and
    its end through the driver, `RunWrites`)."""

    def _status(self, connection: Connection, run_id: str) -> str | None:
        """The run's stored status, its row locked until the transaction ends."""
        status = connection.execute(_LOCK_RUN, {"the_run": run_id}).scalar()
        return str(status) if status is not None else None

    # -- before a run starts ---------------------------------------------------------------

    def queue(
        self,
        run_id: str,
        *,
        plugin: str,
        model: str,
        input_name: str,
        origin: Origin,
        created_at: str | None = None,
        submitted_by: str | None = None,
    ) -> None:
        """A run submitted to the workers: `queued`, its workspace not known yet."""
        self.upsert_run(
            run_id,
            plugin=plugin,
            model=model,
            status=QUEUED,
            input_name=input_name,
            workspace="",
            origin=origin,
            created_at=created_at or utc_now(),
            submitted_by=submitted_by,
        )

    def create_pending(
        self,
        run_id: str,
        *,
        plugin: str,
        model: str,
        input_name: str | None,
        workspace: str | Path,
        origin: Literal["cli", "ui", "api"],
        submitted_by: str | None = None,
        rerun_of: str | None = None,
    ) -> None:
        """A run about to be started by another process: `created`, on this machine (who
        starts it and the run it re-runs, when it does: SPEC 17)."""
        now = utc_now()
        with self._write() as connection:
            connection.execute(
                sa.insert(t.runs).values(
                    run_id=run_id,
                    plugin=plugin,
                    model=model,
                    status=RunStatus.CREATED.value,
                    input_name=input_name,
                    workspace=str(workspace),
                    origin=origin,
                    host=self.host,
                    created_at=now,
                    updated_at=now,
                    submitted_by=submitted_by,
                    rerun_of=rerun_of,
                )
            )

    def claim(
        self,
        run_id: str,
        *,
        worker: str,
        host: str,
        resumed: Mapping[str, Any] | None = None,
    ) -> bool:
        """A worker takes the run (its status moves on when the run publishes it): with
        `resumed`, the `run.resumed` event of a run taken over from another worker, published
        with the claim. False, and nothing written, when the run has ended (cancelled in the
        queue as the worker took it)."""
        with self.transaction():
            with self._write() as connection:
                if is_terminal(self._status(connection, run_id)):
                    return False
            if resumed is not None:
                self.append_events(run_id, [resumed])
            self.upsert_run(run_id, worker=worker, host=host)
        return True

    # -- while it runs ---------------------------------------------------------------------

    def drop_events_from(self, run_id: str, seq: int) -> None:
        """A replay published something else at `seq`: the events recorded from there on
        belong to a past that did not happen again, and go."""
        with self._write() as connection:
            connection.execute(
                sa.delete(t.events).where(t.events.c.run_id == run_id, t.events.c.seq >= seq)
            )

    def index_run(self, run_id: str, **fields: Any) -> None:
        """What a workspace records of the run (`runlens.store.sync`): the index of a local
        run follows its workspace, a damaged record included; only a live status never
        replaces a stored end (`upsert_run`)."""
        self.upsert_run(run_id, **fields)

    # -- its end ---------------------------------------------------------------------------

    def replace_results(
        self,
        run_id: str,
        artifacts: Sequence[ArtifactRow],
        findings: Sequence[FindingRow],
        citations: Sequence[CitationRow],
    ) -> None:
        """Set the run's artifacts, findings and citations (what its manifest and citations
        file say), replacing what the store held; the run's counts follow."""
        with self._writing() as (driver, engine):
            _write_results(driver, engine, run_id, artifacts, findings, citations, replace=True)
            d.update_run(
                driver,
                engine,
                run_id,
                {**_result_counts(findings, citations), "updated_at": utc_now()},
            )

    def finish(self, run_id: str, status: str, **fields: Any) -> None:
        """The run's end state (`TERMINAL`), with the fields that come with it (`error_message`,
        `finished_at`, the finding counts): written last, after its events and results, so a
        reader that sees it ended finds everything it left.

        A local run's index follows its workspace; a run a worker holds ends once
        (`InvalidTransition` for another end of a run the store shows ended)."""
        if status not in TERMINAL:
            raise InvalidTransition(f"{status!r} is not an end state")
        status = RunStatus(status).value
        with self.transaction():
            with self._write() as connection:
                row = connection.execute(_LOCK_RUN, {"the_run": run_id}).first()
            current, worker = (str(row.status), row.worker) if row is not None else (None, None)
            if current is not None and (worker is not None or not is_terminal(current)):
                check_stored(current, status)
            self.upsert_run(run_id, status=status, **fields)

    def end_unstarted(
        self, run_id: str, status: Literal["failed", "cancelled"], message: str
    ) -> bool:
        """End a run still `queued` or `created` (no process ever got it going); False when
        it is not."""
        now = utc_now()
        with self._write() as connection:
            current = self._status(connection, run_id)
            if current not in UNSTARTED:
                return False
            check_stored(str(current), status)
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id, t.runs.c.status.in_(_UNSTARTED))
                .values(status=status, error_message=message, finished_at=now, updated_at=now)
            )
        return True

    def request_cancel(self, run_id: str) -> RunSummary | None:
        """Ask a run to stop (its process polls for it); None when there is no such run. A
        run that has ended is returned unchanged."""
        with self._write() as connection:
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id, t.runs.c.status.not_in(_ENDED))
                .values(cancel_requested=True, updated_at=utc_now())
            )
            row = connection.execute(sa.select(t.runs).where(t.runs.c.run_id == run_id)).first()
        return summary_of(row._mapping) if row is not None else None

    # -- around it -------------------------------------------------------------------------

    def set_clashes(self, run_id: str, workspaces: Sequence[str]) -> None:
        """The folders of this machine found to name the run besides its workspace (copies
        of it), with the time they were listed; none clears the list."""
        now = utc_now()
        entries = [{"workspace": path, "seen_at": now} for path in workspaces]
        with self._write() as connection:
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id)
                .values(clashes=entries or None, updated_at=now)
            )

    def set_review_state(self, run_id: str, state: str) -> None:
        """The run's review state (`runlens.review.state`: unreviewed, approved,
        changes-requested, rejected); its status is not touched."""
        if state not in REVIEW_STATES:
            raise ValueError(f"not a review state: {state!r}")
        with self._write() as connection:
            connection.execute(
                sa.update(t.runs)
                .where(t.runs.c.run_id == run_id)
                .values(review_state=state, updated_at=utc_now())
            )

    def delete_run(self, run_id: str) -> None:
        """Forget a run (its workspace is left alone)."""
        with self._write() as connection:
            connection.execute(sa.delete(t.runs).where(t.runs.c.run_id == run_id))
