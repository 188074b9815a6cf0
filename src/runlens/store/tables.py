"""The run store's tables (SQLAlchemy Core), the one description the migrations must match.

`runs` holds one row per run (what the runs list filters and sorts on has an index);
`events` the run's event stream keyed by `(run_id, seq)`; `artifacts`, `findings` and
`citations` what the run's manifest and `runtime/citations.json` say once it has ended;
`files` the bytes of a run's workspace files, for runs that went through a worker (its
input when submitted, every file once it has ended), keyed by workspace-relative path.
Rows of the five child tables go with their run (`ON DELETE CASCADE`). `workers` holds one
row per `runlens worker` process: its heartbeat, and who took its runs over once it died.

JSON values are `JSON`, stored as `JSONB` on PostgreSQL. Times are ISO 8601 strings in UTC,
as the workspace records write them: they sort the same as the instants they name.

The test `tests/store/test_migrations.py` compares these tables with what the migrations
build (Alembic's autogenerate comparison): a change here needs a new revision.
"""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

#: Names for indexes and constraints, so every engine and every migration names them alike.
NAMING: Final = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata: Final = sa.MetaData(naming_convention=NAMING)

#: A JSON document: JSONB on PostgreSQL, JSON (text) elsewhere.
Json: Final = sa.JSON().with_variant(JSONB(), "postgresql")


def _run_id(*, primary: bool = False) -> sa.Column[str]:
    if primary:
        return sa.Column("run_id", sa.String(200), primary_key=True)
    return sa.Column(
        "run_id",
        sa.String(200),
        sa.ForeignKey("runs.run_id", ondelete="CASCADE"),
        primary_key=True,
    )


runs: Final = sa.Table(
    "runs",
    metadata,
    _run_id(primary=True),
    sa.Column("plugin", sa.String(200), nullable=False),
    sa.Column("model", sa.String(500), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("error_message", sa.Text, nullable=True),
    sa.Column("input_name", sa.Text, nullable=True),
    sa.Column("workspace", sa.Text, nullable=False),
    sa.Column("origin", sa.String(10), nullable=False, server_default="cli"),
    sa.Column("host", sa.String(255), nullable=True),
    sa.Column("created_at", sa.String(40), nullable=True),
    sa.Column("finished_at", sa.String(40), nullable=True),
    sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Column("finding_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("findings_by_code", Json, nullable=True),
    sa.Column("warnings", Json, nullable=True),
    sa.Column("problems", Json, nullable=True),
    sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("last_seq", sa.Integer, nullable=False, server_default="0"),
    sa.Column("plan", Json, nullable=True),
    sa.Column("metrics", Json, nullable=True),
    sa.Column("evidence_index_sha256", sa.String(64), nullable=True),
    sa.Column("source_hash", sa.String(64), nullable=True),
    sa.Column("citation_counts", Json, nullable=True),
    # `mtime_ns:size` of runtime/run.json when the store last read it: a listing re-reads
    # only the workspaces whose record changed since.
    sa.Column("record_stamp", sa.String(60), nullable=True),
    # The executor id of the worker holding the run (`runlens worker`); NULL for runs of
    # `runlens run` and of the UI, which no worker resumes.
    sa.Column("worker", sa.String(255), nullable=True),
    sa.Index(None, "status"),
    sa.Index(None, "plugin"),
    sa.Index(None, "model"),
    sa.Index(None, "created_at"),
    sa.Index(None, "workspace"),
    sa.Index(None, "worker"),
)

events: Final = sa.Table(
    "events",
    metadata,
    _run_id(),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("ts", sa.String(40), nullable=False),
    sa.Column("type", sa.String(100), nullable=False),
    sa.Column("data", Json, nullable=False),
)

artifacts: Final = sa.Table(
    "artifacts",
    metadata,
    _run_id(),
    sa.Column("name", sa.String(500), primary_key=True),
    sa.Column("ordinal", sa.Integer, nullable=False),
    sa.Column("label", sa.Text, nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("audience", sa.String(50), nullable=False),
    sa.Column("sensitivity", sa.String(50), nullable=False),
    sa.Column("required", sa.Boolean, nullable=False),
    sa.Column("size", sa.BigInteger, nullable=True),
    sa.Column("sha256", sa.String(64), nullable=True),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("finding_count", sa.Integer, nullable=False),
)

findings: Final = sa.Table(
    "findings",
    metadata,
    _run_id(),
    sa.Column("ordinal", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("validator", sa.String(200), nullable=False),
    sa.Column("artifact", sa.String(500), nullable=False),
    sa.Column("code", sa.String(100), nullable=False),
    sa.Column("path", sa.Text, nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("details", Json, nullable=False),
    sa.Column("row_id", sa.Text, nullable=True),
    sa.Column("line", sa.Integer, nullable=True),
    sa.Column("col", sa.Integer, nullable=True),
    sa.Index(None, "run_id", "code"),
)

citations: Final = sa.Table(
    "citations",
    metadata,
    _run_id(),
    sa.Column("ordinal", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("artifact", sa.String(500), nullable=False),
    sa.Column("location", sa.Text, nullable=False),
    sa.Column("row_id", sa.String(500), nullable=False),
    sa.Column("quote", sa.Text, nullable=True),
    sa.Column("start_offset", sa.Integer, nullable=True),
    sa.Column("end_offset", sa.Integer, nullable=True),
    sa.Column("line", sa.Integer, nullable=True),
    sa.Column("col", sa.Integer, nullable=True),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("code", sa.String(100), nullable=True),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Index(None, "run_id", "row_id"),
    sa.Index(None, "run_id", "artifact"),
)

files: Final = sa.Table(
    "files",
    metadata,
    _run_id(),
    # Workspace-relative POSIX path: `input/tickets.csv`, `artifacts/report.md`.
    sa.Column("path", sa.String(1000), primary_key=True),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("content", sa.LargeBinary, nullable=False),
    sa.Column("updated_at", sa.String(40), nullable=False),
)

workers: Final = sa.Table(
    "workers",
    metadata,
    sa.Column("executor_id", sa.String(255), primary_key=True),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("concurrency", sa.Integer, nullable=False),
    # Times by the database's clock (one clock for workers on many machines).
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("heartbeat_at", sa.String(40), nullable=False),
    sa.Column("stopped_at", sa.String(40), nullable=True),
    # The executor id of the worker that took this dead worker's runs over.
    sa.Column("recovered_by", sa.String(255), nullable=True),
)
