"""Bounds on every parameter of a URL the server answers, pages and API alike.

Each bound is where a value stops meaning anything: no run id is longer than the store's
column (200), no offset reaches a billion runs, no event seq passes 2**53 (what JSON numbers
hold exactly). A value beyond one is the client's mistake and gets a 422 naming the
parameter, never a database overflow and a 500.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from fastapi import Path, Query

#: The longest run id the store holds (its `runs.run_id` column).
MAX_RUN_ID: Final = 200
#: The longest artifact name the store holds (`artifacts.name`).
MAX_ARTIFACT_NAME: Final = 500
#: The longest source row id asked for (ids are cells of the input; longer ones are no id).
MAX_ROW_ID: Final = 1000
#: The longest search or filter text.
MAX_TEXT: Final = 1000
#: The largest offset into a list of runs.
MAX_OFFSET: Final = 1_000_000_000
#: The largest page number of a paged list.
MAX_PAGE: Final = 10_000_000
#: The largest event seq (exact in a JSON number, and far beyond any run's events).
MAX_SEQ: Final = 2**53

RunId = Annotated[str, Path(min_length=1, max_length=MAX_RUN_ID, description="A run's id")]
ArtifactName = Annotated[
    str, Path(min_length=1, max_length=MAX_ARTIFACT_NAME, description="A contract name")
]
RowId = Annotated[str, Path(min_length=1, max_length=MAX_ROW_ID, description="A source row id")]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
PageNumber = Annotated[int, Query(ge=1, le=MAX_PAGE)]
Seq = Annotated[int, Query(ge=0, le=MAX_SEQ, description="Only events with a greater seq")]
Text = Annotated[str, Query(max_length=MAX_TEXT)]
#: A run's review state (SPEC section 17), as a filter.
ReviewState = Literal["unreviewed", "approved", "changes-requested", "rejected"]


def seq_header(value: str | None) -> int | None:
    """A `Last-Event-ID` as a seq, or None when it is not one: ASCII digits only (`²` is a
    digit to `str.isdigit` but no number), at most as large as `MAX_SEQ`."""
    if value is None:
        return 0
    text = value.strip()
    if not text or len(text) > len(str(MAX_SEQ)) or not text.isascii() or not text.isdigit():
        return None
    number = int(text)
    return number if number <= MAX_SEQ else None


__all__ = [
    "MAX_ARTIFACT_NAME",
    "MAX_OFFSET",
    "MAX_PAGE",
    "MAX_ROW_ID",
    "MAX_RUN_ID",
    "MAX_SEQ",
    "MAX_TEXT",
    "ArtifactName",
    "Offset",
    "PageNumber",
    "ReviewState",
    "RowId",
    "RunId",
    "Seq",
    "Text",
    "seq_header",
]
