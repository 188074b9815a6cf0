"""The run store: an index of every run's workspace in SQLite or PostgreSQL (SPEC section 14).

`open_store(store_url())` gives a `RunStore`; `sync_workspace` and `index_home` bring it in
step with workspaces on disk, `StoreMirror` keeps it in step with a live run. Runs of the
workers (`runlens worker`) also keep their files in the store, and the workers their
heartbeats (`WorkerRow`).
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
