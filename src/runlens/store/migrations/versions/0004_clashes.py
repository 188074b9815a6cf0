"""Workspace clashes: folders on disk that name a run the store knows at another path.

`runs.clashes` lists them (`[{"workspace": path, "seen_at": time}]`): a copied workspace
(`cp -r` of a run folder) names the run it was copied from; it is reported there, and never
takes the run's row over.

Revision ID: 0004_clashes
Revises: 0003_durable
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0004_clashes"
down_revision = "0003_durable"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "runs",
        sa.Column("clashes", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=True),
    )


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("clashes")
