"""Durable runs: the worker holding a run, a run's files in the store, and the workers.

`runs.worker` names the `runlens worker` process (its executor id) that holds a submitted
run; `files` keeps the bytes of such a run's workspace files (its input when submitted,
every file once it has ended), so any machine can read them; `workers` holds each worker's
heartbeat and, once it died, which worker took its runs over.

Revision ID: 0003_durable
Revises: 0002_run_control
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_durable"
down_revision = "0002_run_control"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN and new tables on every engine: no table is rebuilt, so no row moves.
    op.add_column("runs", sa.Column("worker", sa.String(255), nullable=True))
    op.create_index("ix_runs_worker", "runs", ["worker"])
    op.create_table(
        "files",
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("path", sa.String(1000), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("content", sa.LargeBinary, nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.run_id"], name="fk_files_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "path", name="pk_files"),
    )
    op.create_table(
        "workers",
        sa.Column("executor_id", sa.String(255), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("concurrency", sa.Integer, nullable=False),
        sa.Column("started_at", sa.String(40), nullable=False),
        sa.Column("heartbeat_at", sa.String(40), nullable=False),
        sa.Column("stopped_at", sa.String(40), nullable=True),
        sa.Column("recovered_by", sa.String(255), nullable=True),
        sa.PrimaryKeyConstraint("executor_id", name="pk_workers"),
    )


def downgrade() -> None:
    op.drop_table("workers")
    op.drop_table("files")
    op.drop_index("ix_runs_worker", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("worker")
