"""The run store's first schema: runs, their events, artifacts, findings and citations.

Revision ID: 0001_initial
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def _run_id() -> sa.Column[str]:
    return sa.Column("run_id", sa.String(200), nullable=False)


def _child_key(
    table: str, *columns: str
) -> tuple[sa.ForeignKeyConstraint, sa.PrimaryKeyConstraint]:
    return (
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.run_id"], name=f"fk_{table}_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", *columns, name=f"pk_{table}"),
    )


def upgrade() -> None:
    op.create_table(
        "runs",
        _run_id(),
        sa.Column("plugin", sa.String(200), nullable=False),
        sa.Column("model", sa.String(500), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error_message", sa.Text, nullable=True),
        sa.Column("input_name", sa.Text, nullable=True),
        sa.Column("workspace", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=True),
        sa.Column("finished_at", sa.String(40), nullable=True),
        sa.Column("updated_at", sa.String(40), nullable=False),
        sa.Column("finding_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("findings_by_code", JSON, nullable=True),
        sa.Column("warnings", JSON, nullable=True),
        sa.Column("problems", JSON, nullable=True),
        sa.Column("last_seq", sa.Integer, nullable=False, server_default="0"),
        sa.Column("plan", JSON, nullable=True),
        sa.Column("metrics", JSON, nullable=True),
        sa.Column("evidence_index_sha256", sa.String(64), nullable=True),
        sa.Column("source_hash", sa.String(64), nullable=True),
        sa.Column("citation_counts", JSON, nullable=True),
        sa.Column("record_stamp", sa.String(60), nullable=True),
        sa.PrimaryKeyConstraint("run_id", name="pk_runs"),
    )
    for column in ("status", "plugin", "model", "created_at", "workspace"):
        op.create_index(f"ix_runs_{column}", "runs", [column])
    op.create_table(
        "events",
        _run_id(),
        sa.Column("seq", sa.Integer, nullable=False, autoincrement=False),
        sa.Column("ts", sa.String(40), nullable=False),
        sa.Column("type", sa.String(100), nullable=False),
        sa.Column("data", JSON, nullable=False),
        *_child_key("events", "seq"),
    )
    op.create_table(
        "artifacts",
        _run_id(),
        sa.Column("name", sa.String(500), nullable=False),
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
        *_child_key("artifacts", "name"),
    )
    op.create_table(
        "findings",
        _run_id(),
        sa.Column("ordinal", sa.Integer, nullable=False, autoincrement=False),
        sa.Column("validator", sa.String(200), nullable=False),
        sa.Column("artifact", sa.String(500), nullable=False),
        sa.Column("code", sa.String(100), nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("details", JSON, nullable=False),
        sa.Column("row_id", sa.Text, nullable=True),
        sa.Column("line", sa.Integer, nullable=True),
        sa.Column("col", sa.Integer, nullable=True),
        *_child_key("findings", "ordinal"),
    )
    op.create_index("ix_findings_run_id_code", "findings", ["run_id", "code"])
    op.create_table(
        "citations",
        _run_id(),
        sa.Column("ordinal", sa.Integer, nullable=False, autoincrement=False),
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
        *_child_key("citations", "ordinal"),
    )
    op.create_index("ix_citations_run_id_row_id", "citations", ["run_id", "row_id"])
    op.create_index("ix_citations_run_id_artifact", "citations", ["run_id", "artifact"])


def downgrade() -> None:
    for table in ("citations", "findings", "artifacts", "events", "runs"):
        op.drop_table(table)
