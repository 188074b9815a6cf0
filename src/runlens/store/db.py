"""The run store: every run's status, plan, events, findings, artifacts and citations, the
files of the runs the workers hold, and the workers' heartbeats (SPEC section 14).

`RunStore` is one facade over the store's parts, each in a module of its own:

    runlens.store.engine     URL, opening, migrations, locks, transactions (`StoreBase`)
    runlens.store.lifecycle  a run's stored life: its row, events and results (`RunLife`)
    runlens.store.writes     of those, a live run's and its end's, through the driver
                             (`RunWrites`; `runlens.store.write_first` writes them through
                             `sqlite3` alone for `runlens run`)
    runlens.store.runs       reading runs, events and citations back (`RunReads`)
    runlens.store.files      the runs' workspace files (`StoredFiles`)
    runlens.store.liveness   the workers' heartbeats (`WorkerRows`)
    runlens.store.reviews    reviewers, review lines, the review queue (`ReviewRows`)

Which copy of a run is the truth (`runlens.store.lifecycle` says it at length): for a local
run (`runlens run`, the UI) its workspace, the store an index of it kept in step while the run
is live (`runlens.store.mirror`) and rebuilt from it at will (`runlens.store.sync`); for a
queued run (`runlens submit`, `runlens worker`) the store, the worker's workspace a cache.
"""

from __future__ import annotations

from runlens.store.engine import (
    HEAD_REVISION,
    display_url,
    migration_config,
    open_engine,
    store_url,
)
from runlens.store.files import StoredFiles
from runlens.store.lifecycle import MAX_SEQ, RUN_FIELDS, RunLife
from runlens.store.liveness import EXPIRED, WorkerRows
from runlens.store.reviews import ReviewRows
from runlens.store.runs import SyncState

__all__ = [
    "EXPIRED",
    "HEAD_REVISION",
    "MAX_SEQ",
    "RUN_FIELDS",
    "RunStore",
    "SyncState",
    "display_url",
    "migration_config",
    "open_store",
    "store_url",
]


class RunStore(RunLife, StoredFiles, WorkerRows, ReviewRows):
    """One store, shared by the threads of a process (each call takes its own connection)."""


def open_store(url: str) -> RunStore:
    """Connect to the store at `url`, creating it (and its folder, for SQLite) or upgrading
    its schema when needed; `UserError` naming the URL when it cannot be used."""
    engine, shown = open_engine(url)
    return RunStore(engine, shown)
