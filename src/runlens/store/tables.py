"""The run store's tables (SQLAlchemy Core), the one description the migrations must match.

`runs` holds one row per run (what the runs list filters and sorts on has an index);
`events` the run's event stream keyed by `(run_id, seq)`; `artifacts`, `findings` and
`citations` what the run's manifest and `runtime/citations.json` say once it has ended;
`reviews` the signed lines of its `runtime/reviews.jsonl` (SPEC section 17);
`files` the bytes of a run's workspace files, for runs that went through a worker (its
input when submitted, every file once it has ended), keyed by workspace-relative path.
Rows of the six child tables go with their run (`ON DELETE CASCADE`). `workers` holds one
row per `runlens worker` process: its heartbeat, and who took its runs over once it died;
`reviewers` one row per reviewer (`runlens reviewers add`): its public key and its UI
token's SHA-256.

Column types come from `runlens.store.codec`: any string, JSON value or integer a run
records is storable on both engines and reads back as written. JSON values are stored as
`JSONB` on PostgreSQL. Times are ISO 8601 strings in UTC,
as the workspace records write them: they sort the same as the instants they name.

The test `tests/store/test_migrations.py` compares these tables with what the migrations
build (Alembic's autogenerate comparison): a change here needs a new revision.
"""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa

from runlens.store.codec import Int, Json, Text

#: Names for indexes and constraints, so every engine and every migration names them alike.
NAMING: Final = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata: Final = sa.MetaData(naming_convention=NAMING)


def _run_id(*, primary: bool = False) -> sa.Column[str]:
    if primary:
        return sa.Column("run_id", Text(200), primary_key=True)
    return sa.Column(
        "run_id",
        Text(200),
        sa.ForeignKey("runs.run_id", ondelete="CASCADE"),
        primary_key=True,
    )


runs: Final = sa.Table(
    "runs",
    metadata,
    _run_id(primary=True),
    sa.Column("plugin", Text(200), nullable=False),
    sa.Column("model", Text(500), nullable=False),
    sa.Column("status", Text(20), nullable=False),
    sa.Column("error_message", Text(), nullable=True),
    sa.Column("input_name", Text(), nullable=True),
    sa.Column("workspace", Text(), nullable=False),
    sa.Column("origin", Text(10), nullable=False, server_default="cli"),
    sa.Column("host", Text(255), nullable=True),
    sa.Column("created_at", Text(40), nullable=True),
    sa.Column("finished_at", Text(40), nullable=True),
    sa.Column("updated_at", Text(40), nullable=False),
    sa.Column("finding_count", Int(), nullable=False, server_default="0"),
    sa.Column("findings_by_code", Json(), nullable=True),
    sa.Column("warnings", Json(), nullable=True),
    sa.Column("problems", Json(), nullable=True),
    sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("last_seq", Int(), nullable=False, server_default="0"),
    sa.Column("plan", Json(), nullable=True),
    sa.Column("metrics", Json(), nullable=True),
    sa.Column("evidence_index_sha256", Text(64), nullable=True),
    sa.Column("source_hash", Text(64), nullable=True),
    sa.Column("citation_counts", Json(), nullable=True),
    # `mtime_ns:size` of runtime/run.json when the store last read it: a listing re-reads
    # only the workspaces whose record changed since.
    sa.Column("record_stamp", Text(60), nullable=True),
    # The executor id of the worker holding the run (`runlens worker`); NULL for runs of
    # `runlens run` and of the UI, which no worker resumes.
    sa.Column("worker", Text(255), nullable=True),
    # Other folders on this machine whose record names this run (a copied workspace): each
    # `{"workspace": path, "seen_at": time}`. Reported, never indexed in the run's place.
    sa.Column("clashes", Json(), nullable=True),
    # Who started the run (`--as`, `$RUNLENS_USER`, the login name): the review policy may
    # not let them approve it (SPEC section 17). NULL for runs recorded before.
    sa.Column("submitted_by", Text(200), nullable=True),
    # The run this one re-runs with a review's findings (`runlens rerun --with-review`).
    sa.Column("rerun_of", Text(200), nullable=True),
    # unreviewed | approved | changes-requested | rejected (`runlens.review.state`).
    sa.Column("review_state", Text(20), nullable=False, server_default="unreviewed"),
    sa.Index(None, "status"),
    sa.Index(None, "plugin"),
    sa.Index(None, "model"),
    sa.Index(None, "created_at"),
    sa.Index(None, "workspace"),
    sa.Index(None, "worker"),
    sa.Index(None, "rerun_of"),
    sa.Index(None, "review_state"),
)

events: Final = sa.Table(
    "events",
    metadata,
    _run_id(),
    sa.Column("seq", Int(), primary_key=True, autoincrement=False),
    sa.Column("ts", Text(40), nullable=False),
    sa.Column("type", Text(100), nullable=False),
    sa.Column("data", Json(), nullable=False),
)

artifacts: Final = sa.Table(
    "artifacts",
    metadata,
    _run_id(),
    sa.Column("name", Text(500), primary_key=True),
    sa.Column("ordinal", Int(), nullable=False),
    sa.Column("label", Text(), nullable=False),
    sa.Column("description", Text(), nullable=False),
    sa.Column("audience", Text(50), nullable=False),
    sa.Column("sensitivity", Text(50), nullable=False),
    sa.Column("required", sa.Boolean, nullable=False),
    sa.Column("size", Int(big=True), nullable=True),
    sa.Column("sha256", Text(64), nullable=True),
    sa.Column("status", Text(20), nullable=False),
    sa.Column("finding_count", Int(), nullable=False),
)

findings: Final = sa.Table(
    "findings",
    metadata,
    _run_id(),
    sa.Column("ordinal", Int(), primary_key=True, autoincrement=False),
    sa.Column("validator", Text(200), nullable=False),
    sa.Column("artifact", Text(500), nullable=False),
    sa.Column("code", Text(100), nullable=False),
    sa.Column("path", Text(), nullable=False),
    sa.Column("message", Text(), nullable=False),
    sa.Column("details", Json(), nullable=False),
    sa.Column("row_id", Text(), nullable=True),
    sa.Column("line", Int(), nullable=True),
    sa.Column("col", Int(), nullable=True),
    sa.Index(None, "run_id", "code"),
)

citations: Final = sa.Table(
    "citations",
    metadata,
    _run_id(),
    sa.Column("ordinal", Int(), primary_key=True, autoincrement=False),
    sa.Column("artifact", Text(500), nullable=False),
    sa.Column("location", Text(), nullable=False),
    sa.Column("row_id", Text(500), nullable=False),
    sa.Column("quote", Text(), nullable=True),
    sa.Column("start_offset", Int(), nullable=True),
    sa.Column("end_offset", Int(), nullable=True),
    sa.Column("line", Int(), nullable=True),
    sa.Column("col", Int(), nullable=True),
    sa.Column("status", Text(20), nullable=False),
    sa.Column("code", Text(100), nullable=True),
    sa.Column("reason", Text(), nullable=True),
    sa.Column("span_start", Int(), nullable=True),
    sa.Column("span_end", Int(), nullable=True),
    sa.Column("span_line", Int(), nullable=True),
    sa.Column("id_start", Int(), nullable=True),
    sa.Column("id_end", Int(), nullable=True),
    # With the ordinal, one row's (one artifact's) citations are read in order from the
    # index alone, not filtered out of the whole run's in primary-key order.
    sa.Index(None, "run_id", "row_id", "ordinal"),
    sa.Index(None, "run_id", "artifact", "ordinal"),
)

files: Final = sa.Table(
    "files",
    metadata,
    _run_id(),
    # Workspace-relative POSIX path: `input/tickets.csv`, `artifacts/report.md`.
    sa.Column("path", Text(1000), primary_key=True),
    sa.Column("sha256", Text(64), nullable=False),
    sa.Column("size", Int(big=True), nullable=False),
    sa.Column("content", sa.LargeBinary, nullable=False),
    sa.Column("updated_at", Text(40), nullable=False),
)

reviews: Final = sa.Table(
    "reviews",
    metadata,
    _run_id(),
    # The line's `seq` in the run's `runtime/reviews.jsonl` (1, 2, ...): the key makes two
    # reviewers appending at once take distinct places in one chain.
    sa.Column("seq", Int(), primary_key=True, autoincrement=False),
    sa.Column("created_at", Text(40), nullable=False),
    sa.Column("kind", Text(20), nullable=False),
    sa.Column("reviewer", Text(64), nullable=False),
    # SHA-256 of `line`, which the next line names as its `previous`.
    sa.Column("digest", Text(64), nullable=False),
    # The signed DSSE envelope as written, one line of JSON (`runlens.review.entries`).
    sa.Column("line", Text(), nullable=False),
)

reviewers: Final = sa.Table(
    "reviewers",
    metadata,
    sa.Column("name", Text(64), primary_key=True),
    sa.Column("keyid", Text(64), nullable=False),
    sa.Column("public_key", Text(), nullable=False),
    # SHA-256 of the reviewer's UI token: the token itself is never stored.
    sa.Column("token_sha256", Text(64), nullable=False, unique=True),
    sa.Column("created_at", Text(40), nullable=False),
)

workers: Final = sa.Table(
    "workers",
    metadata,
    sa.Column("executor_id", Text(255), primary_key=True),
    sa.Column("host", Text(255), nullable=False),
    sa.Column("pid", Int(), nullable=False),
    sa.Column("concurrency", Int(), nullable=False),
    # Times by the database's clock (one clock for workers on many machines).
    sa.Column("started_at", Text(40), nullable=False),
    sa.Column("heartbeat_at", Text(40), nullable=False),
    sa.Column("stopped_at", Text(40), nullable=True),
    # The executor id of the worker that took this dead worker's runs over.
    sa.Column("recovered_by", Text(255), nullable=True),
)
