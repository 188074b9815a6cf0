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

from __future__ import annotations

from typing import TYPE_CHECKING

from runlens._lazy import lazy_names

#: Public name -> the module it lives in, imported on first use: a command that reads one
#: part of the store (`runlens runs` its rows) loads neither the mirror nor the sync.
_HOMES: dict[str, str] = {
    "HEAD_REVISION": "runlens.store.db",
    "ArtifactRow": "runlens.store.rows",
    "CitationRow": "runlens.store.rows",
    "FindingRow": "runlens.store.rows",
    "IndexReport": "runlens.store.sync",
    "ReviewerRow": "runlens.store.rows",
    "RunDetail": "runlens.store.rows",
    "RunStore": "runlens.store.db",
    "RunSummary": "runlens.store.rows",
    "StoreMirror": "runlens.store.mirror",
    "WorkerRow": "runlens.store.rows",
    "display_url": "runlens.store.db",
    "index_home": "runlens.store.sync",
    "open_store": "runlens.store.db",
    "refresh_live": "runlens.store.sync",
    "store_url": "runlens.store.db",
    "sync_workspace": "runlens.store.sync",
}

__all__ = [
    "HEAD_REVISION",
    "ArtifactRow",
    "CitationRow",
    "FindingRow",
    "IndexReport",
    "ReviewerRow",
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


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)


if TYPE_CHECKING:
    from runlens.store.db import HEAD_REVISION, RunStore, display_url, open_store, store_url
    from runlens.store.mirror import StoreMirror
    from runlens.store.rows import (
        ArtifactRow,
        CitationRow,
        FindingRow,
        ReviewerRow,
        RunDetail,
        RunSummary,
        WorkerRow,
    )
    from runlens.store.sync import IndexReport, index_home, refresh_live, sync_workspace
