"""One source row of a run, read from the run's Evidence Index for the evidence routes.

The index (`runtime/evidence_index.json`) is the run's own record of every row; loading one
is cheap (rows are decoded on first use) but not free for a large input, so the last few
loaded are kept, keyed by path and invalidated when the file's size or modification time
changes. The file is opened like an artifact (`runlens.ui.files`): a link on the way is
refused.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from runlens.errors import EvidenceIndexError
from runlens.evidence import EvidenceIndex
from runlens.tools.workspace import Workspace
from runlens.ui.files import WorkspaceFileError, open_in_workspace


class EvidenceUnavailable(Exception):
    """The row cannot be shown; the message says why. `missing` tells 404 from a damaged
    index."""

    def __init__(self, message: str, *, missing: bool = True) -> None:
        super().__init__(message)
        self.missing = missing


@dataclass(frozen=True, slots=True)
class SourceRow:
    """One row of the source as the index records it."""

    row_id: str
    text: str
    source: str
    id_column: str
    text_column: str
    row_hash: str
    #: The row's other columns, as the index keeps them (name -> value, source order).
    metadata: dict[str, str]


class EvidenceRows:
    """Rows of runs' Evidence Indexes, with the `capacity` most recent indexes kept loaded."""

    def __init__(self, capacity: int = 8) -> None:
        self._capacity = capacity
        self._loaded: OrderedDict[str, tuple[tuple[int, int], EvidenceIndex]] = OrderedDict()
        self._lock = threading.Lock()

    def row(self, workspace: Path, row_id: str) -> SourceRow:
        """The row `row_id` of the run in `workspace`; EvidenceUnavailable if there is none."""
        index = self.index(workspace)
        if row_id not in index:
            raise EvidenceUnavailable(
                f"row {row_id!r} is not in the run's Evidence Index ({len(index)} rows from "
                f"{index.source})"
            )
        try:
            text, row_hash = index.text(row_id), index.row_hash(row_id)
            metadata = dict(index.metadata(row_id))
        except EvidenceIndexError as error:
            raise EvidenceUnavailable(str(error), missing=False) from None
        return SourceRow(
            row_id=row_id,
            text=text,
            source=index.source,
            id_column=index.id_column,
            text_column=index.text_column,
            row_hash=row_hash,
            metadata=metadata,
        )

    def index(self, workspace: Path) -> EvidenceIndex:
        """The run's Evidence Index, loaded once per version of its file."""
        try:
            opened = open_in_workspace(workspace, Workspace.EVIDENCE_INDEX)
        except WorkspaceFileError as error:
            raise EvidenceUnavailable(
                f"the run has no readable Evidence Index ({error}); the input step may not "
                "have finished"
            ) from None
        version = (opened.size, opened.mtime_ns)
        opened.close()
        key = os.fspath(workspace)
        with self._lock:
            cached = self._loaded.get(key)
            if cached is not None and cached[0] == version:
                self._loaded.move_to_end(key)
                return cached[1]
        try:
            index = EvidenceIndex.load(workspace / Workspace.EVIDENCE_INDEX)
        except EvidenceIndexError as error:
            raise EvidenceUnavailable(str(error), missing=False) from None
        with self._lock:
            self._loaded[key] = (version, index)
            self._loaded.move_to_end(key)
            while len(self._loaded) > self._capacity:
                self._loaded.popitem(last=False)
        return index


__all__ = ["EvidenceRows", "EvidenceUnavailable", "SourceRow"]
