"""What the run store gives back: plain, typed rows, independent of the database engine.

The store (`runlens.store.RunStore`) answers with these; `runlens runs`, `runlens show`,
the HTTP API and the pages read nothing else from it. Every string in them may come from a
model or a user's file: whoever displays one escapes it for its medium.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

# A run's status in the store: `runlens.records.status` holds the one vocabulary.
from runlens.records.status import STORE_STATUSES, StoreStatus, is_terminal
from runlens.store.listing import (
    artifact_fields,
    detail_fields,
    duration,
    finding_fields,
    parse_time,
    summary_fields,
)

if TYPE_CHECKING:
    from runlens.records.readers import FindingView, ManifestArtifactView
    from runlens.store.listing import ListedDetail

__all__ = [
    "STORE_STATUSES",
    "ArtifactRow",
    "CitationRow",
    "CitationStatus",
    "FindingRow",
    "Origin",
    "ReviewerRow",
    "RunDetail",
    "RunSummary",
    "StoreStatus",
    "WorkerRow",
    "artifact_of",
    "citation_of",
    "detail_of",
    "duration",
    "finding_of",
    "parse_time",
    "run_detail",
    "summary_of",
]

#: Where a run was started from.
Origin = Literal["cli", "ui", "api"]
#: A citation the validators traced to its row (`verified`) or could not (`failed`).
CitationStatus = Literal["verified", "failed"]


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)  # built on first use


class RunSummary(_Row):
    """One run as the runs list shows it."""

    run_id: str
    plugin: str
    model: str
    #: queued | created | running | validating | completed | failed | cancelled | interrupted
    status: str
    error_message: str | None = None
    #: The input file's name (its copy is `input/<name>` in the workspace).
    input_name: str | None = None
    #: The workspace folder, as an absolute path on the machine that ran it.
    workspace: str
    origin: Origin = "cli"
    #: The machine the run's process ran on.
    host: str | None = None
    created_at: str | None = None
    finished_at: str | None = None
    #: When the store last heard of the run (ISO 8601, UTC).
    updated_at: str
    finding_count: int = 0
    findings_by_code: dict[str, int] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    #: Damaged records of the workspace, each naming its file (and line), when last read.
    problems: list[str] = Field(default_factory=list)
    #: Someone asked for the run to stop; the run's process acts on it within a second.
    cancel_requested: bool = False
    #: The `seq` of the last event the store holds.
    last_seq: int = 0
    #: The executor id of the worker holding the run (`runlens worker`); None for a run of
    #: `runlens run` or of the UI. Such a run is never settled by whether a process on this
    #: machine is alive: a dead worker's runs are resumed by another one.
    worker: str | None = None
    #: Other folders on this machine whose record names this run (a copied workspace, say):
    #: they were not indexed, and the run's row is still that of `workspace`.
    clashes: list[str] = Field(default_factory=list)
    #: Who started the run (`--as`, `$RUNLENS_USER`, the login name); None when unknown.
    submitted_by: str | None = None
    #: The run this one re-runs with a review's findings (`runlens rerun --with-review`).
    rerun_of: str | None = None
    #: unreviewed | approved | changes-requested | rejected (SPEC section 17).
    review_state: str = "unreviewed"

    @property
    def is_terminal(self) -> bool:
        return is_terminal(self.status)


class ArtifactRow(_Row):
    """One deliverable: its contract's metadata, its file, its verdict (the manifest's entry)."""

    name: str
    label: str
    description: str = ""
    audience: str
    sensitivity: str
    required: bool
    size: int | None = None
    sha256: str | None = None
    #: validated | rejected | missing | not_validated
    status: str
    finding_count: int = 0

    @classmethod
    def from_manifest(cls, entry: ManifestArtifactView) -> Self | None:
        """The row of a manifest's artifact entry (defaults for what an older or damaged
        entry lacks); None for one that names no file."""
        if entry.name is None:
            return None
        return cls(
            name=entry.name,
            label=entry.label or entry.name,
            description=entry.description or "",
            audience=entry.audience or "user",
            sensitivity=entry.sensitivity or "internal",
            required=bool(entry.required),
            size=entry.size,
            sha256=entry.sha256,
            status=entry.status or "not_validated",
            finding_count=len(entry.findings),
        )


class FindingRow(_Row):
    """One finding (SPEC section 6), with its location lifted out of `details` when it has one."""

    ordinal: int
    validator: str
    artifact: str
    code: str
    path: str = ""
    message: str
    details: dict[str, Any] = Field(default_factory=dict)
    row_id: str | None = None
    line: int | None = None
    column: int | None = None

    @classmethod
    def from_finding(cls, ordinal: int, finding: FindingView) -> Self:
        """The row of a manifest's finding, its location lifted out of `details`."""
        details = finding.details
        row_id = details.get("row_id")
        return cls(
            ordinal=ordinal,
            validator=finding.validator or "",
            artifact=finding.artifact or "",
            code=finding.code or "",
            path=finding.path or "",
            message=finding.message or "",
            details=details,
            row_id=row_id if isinstance(row_id, str) else None,
            line=_integer(details.get("line")),
            column=_integer(details.get("column")),
        )


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class CitationRow(_Row):
    """One citation of a source row in a deliverable: where it is, what it quotes, its verdict.

    `location` is the JSON path (`items[3].evidence_text`) or `line N` in a Markdown file;
    `start`/`end` are the quote's character offsets in the row's NFC text when it was
    verified; `code` and `reason` say why a failed one failed (its finding's code and message).
    An id cited without a quote (a field that lists evidence ids) has `quote` None.

    In a Markdown file, `span_start`/`span_end` are where the validator found the quotation
    (with its marks) in the file's text as written, from `span_line`, and `id_start`/`id_end`
    where the id after it stands; None for a JSON citation and for a run recorded before
    spans were (the page then searches the text for the quote).
    """

    ordinal: int
    artifact: str
    location: str
    row_id: str
    quote: str | None = None
    start: int | None = None
    end: int | None = None
    line: int | None = None
    column: int | None = None
    status: CitationStatus
    code: str | None = None
    reason: str | None = None
    span_start: int | None = None
    span_end: int | None = None
    span_line: int | None = None
    id_start: int | None = None
    id_end: int | None = None


class WorkerRow(_Row):
    """One `runlens worker` process as the store knows it. Times are the database's clock
    (ISO 8601, UTC), the same for workers on every machine."""

    executor_id: str
    host: str
    pid: int
    concurrency: int
    started_at: str
    #: When the worker last said it is alive.
    heartbeat_at: str
    #: When the worker stopped on its own (None while it runs, or once it died).
    stopped_at: str | None = None
    #: The executor id of the worker that found this one dead and took its runs over.
    recovered_by: str | None = None


class ReviewerRow(_Row):
    """One reviewer (`runlens reviewers add`): its key's id and public key (PEM). Its UI
    token is stored only as a SHA-256, never given back."""

    name: str
    keyid: str
    public_key: str
    created_at: str


class RunDetail(RunSummary):
    """One run with everything its page shows."""

    plan: list[dict[str, Any]] = Field(default_factory=list)
    metrics: dict[str, Any] = Field(default_factory=dict)
    evidence_index_sha256: str | None = None
    source_hash: str | None = None
    artifacts: list[ArtifactRow] = Field(default_factory=list)
    findings: list[FindingRow] = Field(default_factory=list)
    #: {"verified": n, "failed": m}
    citation_counts: dict[str, int] = Field(default_factory=dict)
    #: The runs that re-run this one (their `rerun_of` is its id), oldest first.
    reruns: list[str] = Field(default_factory=list)
    #: The review's counts (`ReviewSummary.as_json()`); empty until the store is asked for
    #: it (`runlens.review.record.run_reviews`).
    review: dict[str, Any] = Field(default_factory=dict)

    @property
    def defect(self) -> str | None:
        """The notice that the run's findings (or rows not analysed) are RunLens's own
        defect, its offline analyst having written the deliverables; else None
        (`runlens.validation.defects`)."""
        from runlens.validation.defects import defect_notice, refused_batches

        refused = refused_batches(self.metrics)
        return defect_notice(
            self.model, self.findings_by_code, self.run_id, refused_batches=refused
        )


def summary_of(values: Mapping[Any, Any]) -> RunSummary:
    """The summary of a `runs` row (its columns decoded)."""
    return RunSummary(**summary_fields(values))


def detail_of(
    values: Mapping[Any, Any],
    artifacts: Sequence[Mapping[Any, Any]],
    findings: Sequence[Mapping[Any, Any]],
    reruns: Sequence[str] = (),
) -> RunDetail:
    """The detail of a `runs` row with its `artifacts` and `findings` rows (in order) and the
    ids of the runs that re-run it."""
    fields = detail_fields(values, artifacts, findings, reruns)
    fields["artifacts"] = [ArtifactRow(**a) for a in fields["artifacts"]]
    fields["findings"] = [FindingRow(**f) for f in fields["findings"]]
    return RunDetail(**fields)


def run_detail(detail: RunDetail | ListedDetail) -> RunDetail:
    """`detail` as a `RunDetail`: a `ListedDetail` (a run read through `sqlite3`,
    `runlens.store.reader`) made into one, field by field."""
    if isinstance(detail, RunDetail):
        return detail
    return RunDetail(**asdict(detail))


def artifact_of(values: Mapping[Any, Any]) -> ArtifactRow:
    """The row of an `artifacts` row."""
    return ArtifactRow(**artifact_fields(values))


def finding_of(values: Mapping[Any, Any]) -> FindingRow:
    """The row of a `findings` row (its `col` is the finding's `column`)."""
    return FindingRow(**finding_fields(values))


def citation_of(values: Mapping[Any, Any]) -> CitationRow:
    """The row of a `citations` row (its offsets are the citation's `start` and `end`)."""
    fields = {key: values[key] for key in CitationRow.model_fields if key in values}
    fields.update(column=values["col"], start=values["start_offset"], end=values["end_offset"])
    return CitationRow(**fields)
