"""Where a row's id comes from: the `id_rule` an Evidence Index records in its header.

    column      ids are the values of the index's `id_column`, a column of the source
    row-number  the source has no id column: the id of the n-th data row is `row-<n>`

Data rows are numbered as every RunLens message numbers them: from 1, the header not counted,
blank rows (every field empty) skipped and not counted. So `row-3` is the third row with a
value, whatever blank lines or multi-line quoted fields come before it, in a CSV file and in a
worksheet alike; anyone can recompute the ids from the file alone. Ids derived this way are
unique and printable by construction, so they need none of the checks column ids get.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

IdRule: TypeAlias = Literal["column", "row-number"]
FROM_COLUMN: Final = "column"
FROM_ROW_NUMBER: Final = "row-number"
ID_RULES: Final[tuple[IdRule, ...]] = (FROM_COLUMN, FROM_ROW_NUMBER)


#: How a row-number id is spelt, for `str.format`.
ROW_NUMBER_ID: Final = "row-{}"


def row_number_ids(first: int, count: int) -> list[str]:
    """Ids of `count` consecutive data rows, the first of them row `first` (1-based)."""
    return list(map(ROW_NUMBER_ID.format, range(first, first + count)))


def check_id_rule(value: object) -> IdRule:
    """`value` as an `IdRule`; ValueError naming the rules for anything else."""
    for rule in ID_RULES:
        if value == rule:
            return rule
    raise ValueError(f"unknown id rule {value!r} (one of: {', '.join(ID_RULES)})")
