"""The source's own rows, for figures and checks about its other columns (`SOURCE_ROWS`).

A figure rule that names `SOURCE_ROWS` among its sources finds the input's rows as
`{id: {column: value}}` (every column but the index's id and text columns), read from the
very file the Evidence Index was judged against, once per validation round.
"""

from __future__ import annotations

from runlens.errors import InputError, UserError
from runlens.evidence import EvidenceIndex, SourceTable
from runlens.validation.base import ValidationContext
from runlens.validation.trust import source_file

#: The source name under which a rule's `compute` finds the input's rows (module docstring).
SOURCE_ROWS = "input:rows"
#: The rows of the source by id: every column but the id and text columns.
SourceRows = dict[str, dict[str, str]]


def source_rows(context: ValidationContext, index: EvidenceIndex) -> SourceRows | None:
    """The rows of the source the index was judged against (`SOURCE_ROWS`), read once per
    validation round; None when the source cannot be found or read again."""
    key = ("source_rows", "")
    shared = context._shared
    if key not in shared:
        shared[key] = _read_source_rows(context, index)
    rows: SourceRows | None = shared[key]
    return rows


def _read_source_rows(context: ValidationContext, index: EvidenceIndex) -> SourceRows | None:
    """The source's rows, paired with the index's ids in source order (the index was built
    from these very rows, so ids made from row numbers pair up too)."""
    path = source_file(context, index)  # as the index was judged
    if path is None:
        return None
    recorded = _recorded_rows(index)
    if recorded is not None:
        return recorded
    try:
        table = SourceTable.open(
            path,
            required_columns=(index.text_column,),
            source_name=index.source,
            encoding=index.encoding,
            delimiter=index.delimiter,
            sheet=getattr(index, "sheet", None),
        )
    except (InputError, UserError, OSError):
        return None
    if table.total_rows != len(index):
        return None
    skipped = (index.id_column, index.text_column)
    kept = [(n, column) for n, column in enumerate(table.columns) if column not in skipped]
    rows: SourceRows = {}
    for position, (row_id, _, _) in enumerate(index.rows()):
        values = table.row_values(position)
        rows[row_id] = {column: values[n] for n, column in kept}
    return rows


def _recorded_rows(index: EvidenceIndex) -> SourceRows | None:
    """The rows' other columns as the index records them, or None when it does not record
    them all (an index an older version wrote). The index of a round is the source's own
    (rebuilt from it, or built from it by this very process), so these are the source's
    values, without reading the file once more."""
    return index.metadata_dicts()
