"""The run store: every run's row, events and results in SQLite or PostgreSQL (SPEC section 14).

Which copy of a run is the truth depends on how it was started (`runlens.store.lifecycle`):

- a local run (`runlens run`, the UI): its workspace; the store is an index of it, which
  `sync_workspace` and `index_home` rebuild from workspaces on disk and `StoreMirror` keeps in
  step while the run is live;
- a queued run (`runlens submit`, run by `runlens worker`): the store, which also keeps its
  files; the workspace of the worker executing it is a cache, rebuilt from the store when
  another worker resumes the run. The workers keep their heartbeats here too (`WorkerRow`).

`open_store(store_url())` gives a `RunStore`: one facade over the store's parts (engine and
migrations, a run's stored life, reads, files, workers' liveness; `runlens.store.db`). A run's
status moves only through the named transitions of `runlens.store.lifecycle`.
"""

from runlens.store.db import HEAD_REVISION, RunStore, display_url, open_store, store_url
from runlens.store.mirror import StoreMirror
from runlens.store.rows import (
    ArtifactRow,
    CitationRow,
    FindingRow,
    RunDetail,
    RunSummary,
    WorkerRow,
)
from runlens.store.sync import IndexReport, index_home, refresh_live, sync_workspace

__all__ = [
    "HEAD_REVISION",
    "ArtifactRow",
    "CitationRow",
    "FindingRow",
    "IndexReport",
    "RunDetail",
    "RunStore",
    "RunSummary",
    "StoreMirror",
    "WorkerRow",
    "display_url",
    "index_home",
    "open_store",
    "refresh_live",
    "store_url",
    "sync_workspace",
]
