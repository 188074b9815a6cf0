"""Whether a run's deliverables on disk are still the bytes its validation judged.

The store keeps, for each artifact, the SHA-256 the manifest recorded when the run was
validated (`ArtifactRow.sha256`). A file edited afterwards (a `sed` on the report, say) no
longer carries that verdict: every page of the run and the API compare the bytes they serve
with that digest and say so loudly when they differ, naming both digests.

Digests of files on disk are cached by the file's identity and stat (`runlens.digests`), so
a page hashes a large deliverable once, not on every view; any write to the file changes its
stat and so its digest is taken again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from runlens.digests import fd_sha256
from runlens.store.rows import ArtifactRow, RunDetail
from runlens.ui.files import OpenedFile, WorkspaceFileError, open_in_workspace


@dataclass(frozen=True, slots=True)
class ChangedArtifact:
    """A deliverable whose bytes are not the ones validated: `current_sha256` None when the
    file is gone (or can no longer be opened), with `problem` saying why."""

    name: str
    label: str
    validated_sha256: str
    current_sha256: str | None
    problem: str | None = None

    @property
    def message(self) -> str:
        """One line for a page, a header or a log."""
        now = (
            f"on disk now sha256 {self.current_sha256}"
            if self.current_sha256 is not None
            else f"not readable now ({self.problem})"
        )
        return (
            f"{self.name} changed after validation: validated sha256 {self.validated_sha256}, {now}"
        )


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def opened_sha256(opened: OpenedFile) -> str:
    """The digest of an opened file (`runlens.digests.fd_sha256`: cached by its stat); the
    file's position is back at its start afterwards, so it can then be served."""
    return fd_sha256(opened.fd)


def change_of(
    row: ArtifactRow, current_sha256: str | None, problem: str | None = None
) -> ChangedArtifact | None:
    """The change of one artifact given its current digest, or None when it is unchanged or
    was never validated with a digest (missing, or a run still going)."""
    validated = (row.sha256 or "").lower()
    if not validated or row.status == "missing":
        return None
    if current_sha256 is not None and current_sha256.lower() == validated:
        return None
    return ChangedArtifact(row.name, row.label or row.name, validated, current_sha256, problem)


def artifact_change(run: RunDetail, row: ArtifactRow) -> ChangedArtifact | None:
    """Whether `row`'s file in the run's workspace (`UIContext.files_of`) differs from the
    validated bytes; None too while the run is going (its verdict is not in yet)."""
    if not run.is_terminal or not row.sha256 or row.status == "missing":
        return None
    try:
        opened = open_in_workspace(Path(run.workspace), row.name)
    except WorkspaceFileError as error:
        return change_of(row, None, str(error))
    try:
        return change_of(row, opened_sha256(opened))
    except OSError as error:
        return change_of(row, None, error.strerror or type(error).__name__)
    finally:
        opened.close()


def changed_artifacts(run: RunDetail) -> list[ChangedArtifact]:
    """Every deliverable of the run whose file is not the one validated, in contract order."""
    return [change for row in run.artifacts if (change := artifact_change(run, row)) is not None]


__all__ = [
    "ChangedArtifact",
    "artifact_change",
    "change_of",
    "changed_artifacts",
    "opened_sha256",
    "sha256_of",
]
