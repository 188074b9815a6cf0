"""The JSON bodies of the HTTP API (SPEC section 14), as pydantic models for OpenAPI.

Runs, artifacts, findings and citations are the store's own rows (`runlens.store.rows`);
what is defined here wraps them (a page of runs) or has no row of its own (an event, an
evidence row, a started run, an installed plugin, an error).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runlens.store.rows import CitationRow, RunDetail, RunSummary


class _Body(BaseModel):
    model_config = ConfigDict(frozen=True)


class ErrorBody(_Body):
    """Every error the API answers: one message naming the problem."""

    detail: str


class RunList(_Body):
    """`GET /api/runs`: one page of runs, newest first, and how many match in all."""

    runs: list[RunSummary]
    total: int
    limit: int
    offset: int


class ChangedArtifactBody(_Body):
    """A deliverable whose file is not the bytes the run's validation judged:
    `current_sha256` None when it can no longer be read (`problem` says why)."""

    name: str
    validated_sha256: str
    current_sha256: str | None
    problem: str | None = None
    message: str


class RunView(RunDetail):
    """`GET /api/runs/{run_id}`: the run, whole, and every deliverable changed on disk after
    its validation (empty when every file is the one validated)."""

    changed_after_validation: list[ChangedArtifactBody] = Field(default_factory=list)


class RunEvent(_Body):
    """One event of a run (SPEC section 11): `seq` strictly increasing from 1."""

    seq: int
    ts: str | None = None
    run_id: str
    type: str
    data: dict[str, Any] = Field(default_factory=dict)


class EvidenceRow(_Body):
    """`GET /api/runs/{run_id}/evidence/{row_id}`: one source row, whole, and every place a
    deliverable cites it (verified or failed)."""

    run_id: str
    row_id: str
    text: str
    #: The input file's name the row comes from.
    source: str
    #: How the row is identified: `id_column`, `text_column`, `row_hash`, `position` (1-based).
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: The row's other columns (the Evidence Index's `metadata`): name -> value, in order.
    columns: dict[str, str] = Field(default_factory=dict)
    #: What each deliverable that describes rows says of this one (the plugin's row fields).
    analysis: list[RowAnalysisBody] = Field(default_factory=list)
    citations: list[CitationRow]
    #: The run's deliverables whose files are not the bytes validated: the citations above
    #: were checked against those bytes, not against what is on disk now.
    changed_after_validation: list[ChangedArtifactBody] = Field(default_factory=list)


class RowAnalysisBody(_Body):
    """The fields a deliverable declares as describing the row (`row_fields`), for one row."""

    artifact: str
    label: str
    fields: dict[str, str]


class AnalysedRow(_Body):
    """One analysed row: its id, the start of its text, the deliverable's fields, metadata."""

    row_id: str
    snippet: str
    fields: dict[str, str]
    metadata: dict[str, str]


class RowList(_Body):
    """`GET /api/runs/{run_id}/rows`: one page of the analysed rows matching the filters."""

    run_id: str
    #: The deliverable whose items describe the rows.
    artifact: str
    #: The fields that can be filtered by name; metadata columns as `meta.<column>`.
    fields: list[str]
    metadata_columns: list[str]
    total: int
    matched: int
    page: int
    pages: int
    limit: int
    rows: list[AnalysedRow]


class StartedRun(_Body):
    """`POST /api/runs`: the run's id and its page; the run goes on in its own process."""

    run_id: str
    url: str
    status: str = "created"


class ContractInfo(_Body):
    """One deliverable a plugin declares."""

    name: str
    label: str
    required: bool
    kind: str
    audience: str
    description: str


class PluginInfo(_Body):
    """One installed plugin, or why it could not be loaded (`error`)."""

    name: str
    description: str | None = None
    version: str | None = None
    error: str | None = None
    offline_model: bool = False
    contracts: list[ContractInfo] = Field(default_factory=list)


class PluginList(_Body):
    """`GET /api/plugins`: what `/new` offers: plugins and the model providers accepted."""

    plugins: list[PluginInfo]
    #: Model providers `POST /api/runs` accepts (`offline`, `openai`, `anthropic`, ...).
    model_providers: list[str]


class CheckBody(_Body):
    """One check of `runlens verify`: `signature`, `subject:<name>`, `statement`,
    `evidence_index`, `validators`, `reviews`; `detail` names what differs."""

    check: str
    ok: bool
    detail: str


class VerifyBody(_Body):
    """`POST /api/runs/{run_id}/verify`: true when every check holds."""

    verified: bool
    checks: list[CheckBody]


class StaleClaimBody(_Body):
    """A claim of the run citing a row the newer file added, removed or changed."""

    artifact: str
    location: str
    line: int | None = None
    row_id: str
    change: str
    #: `quote` (a report quotation), `item` (an analysis or backlog item) or `figure`.
    kind: str
    #: Where exactly the row is cited (an item's field, a quote), or a figure's key.
    detail: str = ""


class DriftBody(_Body):
    """`POST /api/runs/{run_id}/drift`: the newer file against the run's source lock
    (`identical`, `same-rows` or `rows-changed` with the row ids) and the stale claims."""

    run_id: str
    upload_id: str
    file: str
    result: str
    added: list[str]
    removed: list[str]
    changed: list[str]
    stale: list[StaleClaimBody]
    #: Deliverables changed since the run judged them (their claims are read as judged).
    changed_since_run: list[str] = Field(default_factory=list)
    #: The run page showing this comparison, and the reader view with the stale quotes marked.
    page_url: str
    report_url: str


__all__ = [
    "ChangedArtifactBody",
    "CheckBody",
    "ContractInfo",
    "DriftBody",
    "ErrorBody",
    "EvidenceRow",
    "PluginInfo",
    "PluginList",
    "RunEvent",
    "RunList",
    "RunView",
    "StaleClaimBody",
    "StartedRun",
    "VerifyBody",
]
