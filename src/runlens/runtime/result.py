"""`RunResult`: how a run ended, as `Run.execute` returns it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runlens.records.status import RunStatus
from runlens.validation import Finding
from runlens.validation.defects import defect_notice, refused_batches


@dataclass(frozen=True)
class RunResult:
    run_id: str
    status: RunStatus
    error_message: str | None
    workspace: Path
    artifacts: dict[str, str]
    findings: tuple[Finding, ...]
    metrics: dict[str, Any]

    quotes: tuple[Any, ...] = ()
    #: What the user must know even when the run completed (rows not analysed, derived ids).
    warnings: tuple[str, ...] = ()
    #: The model's spec: findings on what RunLens's own offline analyst wrote are a defect.
    model: str | None = None

    @property
    def passed(self) -> bool:
        return self.status is RunStatus.COMPLETED

    @property
    def defect(self) -> str | None:
        """What the verdict says when its findings are RunLens's own defect, else None
        (`runlens.validation.defects`)."""
        codes = (f.code for f in self.findings)
        refused = refused_batches(self.metrics)
        return defect_notice(self.model, codes, self.run_id, refused_batches=refused)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status.value,
            "error_message": self.error_message,
            "workspace": str(self.workspace),
            "artifacts": self.artifacts,
            "findings": [finding.model_dump() for finding in self.findings],
            "defect": self.defect,
            "warnings": list(self.warnings),
            "metrics": self.metrics,
        }
