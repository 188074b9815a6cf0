"""Copies of a run's workspace: a folder of this machine that names a run the store knows at
another folder still holding that run's record (`cp -r` of a run folder) is never indexed in
the run's place; it is listed in the run's `clashes` instead (`RunStore.set_clashes`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from runlens.records.readers import read_run_record
from runlens.store.listing import WorkspaceClash
from runlens.tools.workspace import Workspace

if TYPE_CHECKING:
    from runlens.store.db import RunStore
    from runlens.store.listing import SyncState

__all__ = ["WorkspaceClash", "clashing_workspace", "note_clashes", "record_clashes"]


def clashing_workspace(
    store: RunStore, run_id: str, root: Workspace, state: SyncState | None
) -> str | None:
    """The other folder the store knows the run at, when it is on this machine and its
    record still names the run (so `root` is a copy, not the run's folder moved); None
    when `root` may be indexed as the run's workspace. `state` is what the store holds of
    the run (`RunStore.sync_states`)."""
    if state is None or not state.workspace or state.host not in (None, store.host):
        return None
    known = Path(state.workspace)
    with contextlib.suppress(OSError):
        if known.resolve() == root.root or known.samefile(root.root):
            return None
    record = read_run_record(known / Workspace.RUN_RECORD).view
    if record is None or record.run_id != run_id:
        return None  # moved, removed or replaced: the folder here is the run's now
    return state.workspace


def note_clashes(store: RunStore, clashes: Sequence[WorkspaceClash]) -> None:
    """Add these copies to their runs' `clashes` (a reindex of folders named one by one)."""
    lists = store.clash_lists()
    for clash in clashes:
        listed = lists.setdefault(clash.run_id, [])
        if str(clash.workspace) not in listed:
            listed.append(str(clash.workspace))
            store.set_clashes(clash.run_id, sorted(listed))


def record_clashes(store: RunStore, home: Path, clashes: Sequence[WorkspaceClash]) -> None:
    """Keep in each run's `clashes` the copies of it found under `home` now (entries
    elsewhere stay as they were): a copy removed since is no longer listed."""
    found: dict[str, set[str]] = {}
    for clash in clashes:
        found.setdefault(clash.run_id, set()).add(str(clash.workspace))
    root = home.resolve()
    for run_id, listed in store.clash_lists().items():
        kept = {path for path in listed if not Path(path).is_relative_to(root)}
        found.setdefault(run_id, set()).update(kept)
        if found[run_id] == set(listed):
            del found[run_id]
    for run_id, paths in found.items():
        store.set_clashes(run_id, sorted(paths))
