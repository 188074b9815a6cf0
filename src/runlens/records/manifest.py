"""The manifest: what a run delivered, with hashes and validation status (SPEC section 11).

`manifest.json` at the workspace root, written once when the run ends (and by the reader that
settles a run whose process died), whatever the outcome.
"""

from __future__ import annotations

import errno
import hashlib
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import Field

from runlens.contracts import ArtifactContract
from runlens.contracts.model import Audience
from runlens.records.base import Record
from runlens.records.status import RunStatus
from runlens.validation.findings import Finding

MANIFEST_SCHEMA_VERSION: Final = 1
#: Status of an artifact in a run that ended before validation ran.
NOT_VALIDATED: Final = "not_validated"
ArtifactState = Literal["validated", "rejected", "missing", "not_validated"]


class ManifestInput(Record):
    name: str
    """The input file's name (its copy is `input/<name>`)."""
    source_hash: str | None
    """SHA-256 of the input's bytes; None when the file is gone."""


class ManifestArtifact(Record):
    """One deliverable: the contract's metadata, the file's size and hash, its verdict."""

    name: str
    label: str
    description: str
    audience: Audience
    sensitivity: str
    required: bool
    size: int | None
    """None when the file does not exist."""
    sha256: str | None
    status: ArtifactState
    findings: list[Finding]


class Manifest(Record):
    """What `manifest.json` holds."""

    schema_version: Literal[1] = MANIFEST_SCHEMA_VERSION
    run_id: str
    plugin: str
    model: str
    status: RunStatus
    error_message: str | None
    input: ManifestInput
    evidence_index_sha256: str | None
    artifacts: list[ManifestArtifact]
    findings: list[Finding] = Field(default_factory=list)
    """The findings that belong to no artifact of the list: about the run as a whole
    (`artifact` "", such as a validator that failed to give a verdict), or naming a file no
    contract declares; each artifact lists its own. Manifests written before this field
    existed have none: read its absence as an empty list."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: The errors `Path.is_file` answers False for.
_ABSENT: Final = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def _regular_size(path: Path) -> int | None:
    """The size of `path` when it is a regular file (`Path.is_file`), else None: one `stat`
    where `is_file()` and then `stat()` made two."""
    try:
        info = path.stat()
    except OSError as error:
        if error.errno in _ABSENT:
            return None
        raise
    except ValueError:  # a path `stat` cannot take (a NUL in it), as `is_file` says
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def artifact_entry(
    workspace: Path,
    contract: ArtifactContract,
    status: ArtifactState | None,
    findings: Sequence[Finding],
    *,
    sha256: Callable[[Path], str] = _sha256,
) -> ManifestArtifact:
    path = workspace / contract.name
    size = _regular_size(path)
    exists = size is not None
    state: ArtifactState = status or (NOT_VALIDATED if exists else "missing")
    return ManifestArtifact(
        **contract.to_metadata(),
        size=size,
        sha256=sha256(path) if exists else None,
        status=state,
        findings=[f for f in findings if f.artifact == contract.name],
    )


def build_manifest(
    *,
    run: Mapping[str, Any],
    workspace: Path,
    contracts: Sequence[ArtifactContract],
    statuses: Mapping[str, ArtifactState] | None,
    findings: Sequence[Finding],
    input_name: str,
    source_hash: str | None,
    sha256: Callable[[Path], str] = _sha256,
) -> Manifest:
    """`run` gives `run_id`, `plugin`, `model`, `status`, `error_message` and
    `evidence_index_sha256` (a run record, or what a reader could read of one); `sha256`
    hashes each artifact.

    Each finding goes to the artifact it names; those that name none of `contracts` (about
    the run as a whole, `artifact` "") go to the manifest's own `findings`, so every finding
    of the run is listed once."""
    statuses = statuses or {}
    listed = {contract.name for contract in contracts}
    return Manifest(
        run_id=run["run_id"],
        plugin=run["plugin"],
        model=run["model"],
        status=run["status"],
        error_message=run["error_message"],
        input=ManifestInput(name=input_name, source_hash=source_hash),
        evidence_index_sha256=run.get("evidence_index_sha256"),
        artifacts=[
            artifact_entry(
                workspace, contract, statuses.get(contract.name), findings, sha256=sha256
            )
            for contract in contracts
        ],
        findings=[f for f in findings if f.artifact not in listed],
    )
