"""Citations in their order by artifact and by row: the pages ask for one artifact's (or one
row's) citations in order, and each index now answers that by itself.

With `(run_id, artifact)` alone SQLite reads the run's citations in order by the primary key
`(run_id, ordinal)` and filters them: a report's 14 citations cost a scan of all 100,000 of
a large run's analysis. `(run_id, artifact, ordinal)` and `(run_id, row_id, ordinal)` hold
the rows of one artifact (one row) already sorted, so the query reads those rows only.

Revision ID: 0006_citation_order
Revises: 0005_citation_spans
"""

from __future__ import annotations

from alembic import op

revision = "0006_citation_order"
down_revision = "0005_citation_spans"
branch_labels = None
depends_on = None

#: (old index, its columns) -> (new index, its columns), named as `tables.NAMING` names them.
_REPLACED = (
    (
        ("ix_citations_run_id_artifact", ["run_id", "artifact"]),
        ("ix_citations_run_id_artifact_ordinal", ["run_id", "artifact", "ordinal"]),
    ),
    (
        ("ix_citations_run_id_row_id", ["run_id", "row_id"]),
        ("ix_citations_run_id_row_id_ordinal", ["run_id", "row_id", "ordinal"]),
    ),
)


def upgrade() -> None:
    for (old, _), (new, columns) in _REPLACED:
        op.create_index(new, "citations", columns)
        op.drop_index(old, table_name="citations")


def downgrade() -> None:
    for (old, columns), (new, _) in _REPLACED:
        op.create_index(old, "citations", columns)
        op.drop_index(new, table_name="citations")
