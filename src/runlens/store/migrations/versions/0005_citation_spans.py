"""Citation spans: where the validator found each Markdown citation in its deliverable.

`citations.span_start`/`span_end`/`span_line` hold the quotation (with its marks) as
character offsets of the file's text as written, `id_start`/`id_end` the id after it, so a
page marks those characters instead of searching the text. Rows of runs recorded before
keep them null (the page falls back to its search for those).

Revision ID: 0005_citation_spans
Revises: 0004_clashes
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_citation_spans"
down_revision = "0004_clashes"
branch_labels = None
depends_on = None

_COLUMNS = ("span_start", "span_end", "span_line", "id_start", "id_end")


def upgrade() -> None:
    with op.batch_alter_table("citations") as batch:
        for name in _COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("citations") as batch:
        for name in reversed(_COLUMNS):
            batch.drop_column(name)
