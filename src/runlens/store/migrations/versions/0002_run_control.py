"""Runs say where they came from and where they run, and can be asked to stop.

`origin` (cli, ui, api) and `host` (the machine of the run's process) let the UI show who
started a run and re-read only the workspaces on its own machine; `cancel_requested` is how
the UI and the API ask a run's process to stop (the process polls it).

Revision ID: 0002_run_control
Revises: 0001_initial
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_run_control"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN on every engine: no table is rebuilt, so no row moves.
    op.add_column("runs", sa.Column("origin", sa.String(10), nullable=False, server_default="cli"))
    op.add_column("runs", sa.Column("host", sa.String(255), nullable=True))
    op.add_column(
        "runs",
        sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("cancel_requested")
        batch.drop_column("host")
        batch.drop_column("origin")
