"""The manifest: what a run delivered, with hashes and validation status (SPEC section 11)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from runlens.contracts import ArtifactContract
from runlens.validation.findings import Finding

#: Status of an artifact in a run that ended before validation ran.
NOT_VALIDATED = "not_validated"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def artifact_entry(
    workspace: Path,
    contract: ArtifactContract,
    status: str | None,
    findings: Sequence[Finding],
) -> dict[str, Any]:
    path = workspace / contract.name
    exists = path.is_file()
    if status is None:
        status = NOT_VALIDATED if exists else "missing"
    return {
        **contract.to_metadata(),
        "size": path.stat().st_size if exists else None,
        "sha256": _sha256(path) if exists else None,
        "status": status,
        "findings": [f.model_dump() for f in findings if f.artifact == contract.name],
    }


def build_manifest(
    *,
    run: Mapping[str, Any],
    workspace: Path,
    contracts: Sequence[ArtifactContract],
    statuses: Mapping[str, str] | None,
    findings: Sequence[Finding],
    input_name: str,
    source_hash: str | None,
) -> dict[str, Any]:
    statuses = statuses or {}
    return {
        "run_id": run["run_id"],
        "plugin": run["plugin"],
        "model": run["model"],
        "status": run["status"],
        "error_message": run["error_message"],
        "input": {"name": input_name, "source_hash": source_hash},
        "evidence_index_sha256": run.get("evidence_index_sha256"),
        "artifacts": [
            artifact_entry(workspace, contract, statuses.get(contract.name), findings)
            for contract in contracts
        ],
    }
