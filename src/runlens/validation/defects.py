"""When a finding is RunLens's own fault: findings on what the embedded offline analyst wrote.

The `offline` model is RunLens's own: its plugin's deterministic analyst, which needs no
network and no key. What it delivers, RunLens wrote, and RunLens's own validators must accept
it on any valid input. So a finding on an offline run's deliverables, as the run left them,
is a defect of RunLens, not a problem with the user's file and not a model's mistake; every
verdict that shows one says so, in words a user can act on (`defect_notice`). Findings on an
LLM's deliverables are the model's mistakes and read as before.

Batches whose items the contract refused are the same defect caught earlier (the batch engine
checks each item as it comes, and the rows end up not analysed): they get the notice too.
Findings about the workspace rather than the deliverables (an Evidence Index that is missing
or was changed) say nothing of the analyst, and deliverables changed after the run (by hand,
say) are no longer what it wrote: neither gets the notice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: Providers whose deliverables are RunLens's own work.
EMBEDDED_PROVIDERS = frozenset({"offline"})
#: Findings about the workspace, not about what the model wrote.
_WORKSPACE_CODES = frozenset({"evidence_index_missing", "evidence_index_tampered"})


def written_by_runlens(model: object) -> bool:
    """Whether a run of `model` (its spec, `offline` or `openai:gpt-4o`) had its deliverables
    written by RunLens itself."""
    return isinstance(model, str) and model.partition(":")[0].strip() in EMBEDDED_PROVIDERS


def defect_notice(
    model: str | None, codes: Iterable[str], run: str | None = None, *, refused_batches: int = 0
) -> str | None:
    """What a verdict says when it shows a RunLens defect (module docstring), or None.

    `codes` are the findings' codes; `refused_batches` counts the batches whose items the
    contract refused (their rows end up not analysed: the same defect, caught earlier);
    `run` names the run for the report to send."""
    if not written_by_runlens(model):
        return None
    findings = any(code not in _WORKSPACE_CODES for code in codes)
    if not findings and refused_batches <= 0:
        return None
    what = "these findings are" if findings else "the rows left not analysed are"
    target = run or "RUN"
    return (
        f"This is a RunLens defect, not a problem with your file: {what} on deliverables "
        "written by RunLens's own offline analyst, and RunLens must accept what it writes. "
        "Please report it to the RunLens maintainers with the output of "
        f"`runlens show {target} --json` and, if you can share them, the rows it names."
    )


def refused_batches(metrics: object) -> int:
    """The failed batches a run's metrics count (`batches_failed`), 0 when they count none."""
    count = metrics.get("batches_failed") if isinstance(metrics, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else 0


def recorded_defect(record: Mapping[str, Any], codes: Iterable[str]) -> str | None:
    """`defect_notice` for a run as `runtime/run.json` records it (model, run id, metrics),
    with its findings' `codes`; for deliverables as the run left them (the caller knows)."""
    model, run_id = record.get("model"), record.get("run_id")
    return defect_notice(
        model if isinstance(model, str) else None,
        codes,
        run_id if isinstance(run_id, str) and run_id else None,
        refused_batches=refused_batches(record.get("metrics")),
    )
