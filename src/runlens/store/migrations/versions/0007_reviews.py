"""Review by people (SPEC section 17): who submitted a run, what it re-runs, its review
state, the signed lines of its review ledger, and the reviewers.

`runs.submitted_by` names who started the run (the review policy may forbid them to approve
it), `runs.rerun_of` the run it re-runs with a review's findings, `runs.review_state` what
its valid decisions add up to (`unreviewed` for every run recorded before). `reviews` holds
each line of a run's `runtime/reviews.jsonl` keyed by `(run_id, seq)`; `reviewers` each
reviewer's public key and the SHA-256 of its UI token (never the token).

Revision ID: 0007_reviews
Revises: 0006_citation_order
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_reviews"
down_revision = "0006_citation_order"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN and new tables on every engine: no table is rebuilt, so no row moves.
    op.add_column("runs", sa.Column("submitted_by", sa.String(200), nullable=True))
    op.add_column("runs", sa.Column("rerun_of", sa.String(200), nullable=True))
    op.add_column(
        "runs",
        sa.Column("review_state", sa.String(20), nullable=False, server_default="unreviewed"),
    )
    op.create_index("ix_runs_rerun_of", "runs", ["rerun_of"])
    op.create_index("ix_runs_review_state", "runs", ["review_state"])
    op.create_table(
        "reviews",
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False, autoincrement=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("reviewer", sa.String(64), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("line", sa.Text, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.run_id"], name="fk_reviews_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "seq", name="pk_reviews"),
    )
    op.create_table(
        "reviewers",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("keyid", sa.String(64), nullable=False),
        sa.Column("public_key", sa.Text, nullable=False),
        sa.Column("token_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_reviewers"),
        sa.UniqueConstraint("token_sha256", name="uq_reviewers_token_sha256"),
    )


def downgrade() -> None:
    op.drop_table("reviewers")
    op.drop_table("reviews")
    op.drop_index("ix_runs_review_state", table_name="runs")
    op.drop_index("ix_runs_rerun_of", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("review_state")
        batch.drop_column("rerun_of")
        batch.drop_column("submitted_by")
