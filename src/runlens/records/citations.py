"""`runtime/citations.json`: where a run's deliverables cite source rows, as validation found it.

Written when the run ends, if validation ran (`CitationsRecord`, through its model), and read
by the run store (`runlens.store.sync`), which the pages read. It holds every citation the
last validation round verified (the quotes, then the ids cited without a quote) and where
each Markdown citation that failed is written (its finding says why it failed).

A Markdown citation carries the spans the citation grammar found: `span`, the quotation with
its marks, and `id_span`, the id after it, as character offsets of the deliverable's text as
written. A page marks exactly those characters instead of searching the text again. Files
of runs recorded before spans were have none (the fields are optional, so the version is
still 1); their readers fall back to a search.

`read_citations` reads any version leniently: a damaged file or entry is named in its
`problems`, never raised, and the entries that do read are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

from pydantic import Field, ValidationError

from runlens.records.base import Record
from runlens.records.io import parse_json_object, read_json_object
from runlens.tools.workspace import Workspace

CITATIONS_SCHEMA_VERSION: Final = 1
#: The versions `read_citations` reads.
READABLE_VERSIONS: Final = frozenset({CITATIONS_SCHEMA_VERSION})
_LABEL: Final = Workspace.CITATIONS
_Entry = TypeVar("_Entry", bound=Record)


class TextSpanRecord(Record):
    """Characters `start` to `end` of a Markdown deliverable's text as written (decoded as
    UTF-8, without a BOM; a CR LF counts two), the first of them on `line` (1-based)."""

    start: int
    end: int
    line: int


class CitationRecord(Record):
    """One verified citation: a quote (`quote`, `start`/`end` its offsets in the row's NFC
    text) or an id cited without one (those four null), where it is cited (`location`: a JSON
    path, or `line N` of a Markdown file, with the opening mark's `line` and `column`)."""

    artifact: str
    location: str
    row_id: str
    quote: str | None = None
    start: int | None = None
    end: int | None = None
    line: int | None = None
    column: int | None = None
    span: TextSpanRecord | None = None
    """The quotation with its marks, in a Markdown deliverable."""
    id_span: TextSpanRecord | None = None
    """The id after the quotation, in a Markdown deliverable."""


class FailedCitationRecord(Record):
    """Where a Markdown citation that failed is written: the finding at `artifact`, `line N`,
    with this `line`, `column` and `row_id` says why."""

    artifact: str
    location: str
    row_id: str
    line: int
    column: int
    span: TextSpanRecord
    id_span: TextSpanRecord | None


class CitationsRecord(Record):
    """What `runtime/citations.json` holds."""

    schema_version: Literal[1] = CITATIONS_SCHEMA_VERSION
    citations: list[CitationRecord]
    """The verified quotes, then the ids cited without a quote."""
    failed: list[FailedCitationRecord] = Field(default_factory=list)
    """Where each Markdown citation that failed is written."""


@dataclass(frozen=True)
class CitationsRead:
    """`runtime/citations.json` as read: the entries that read, and what was damaged."""

    citations: list[CitationRecord] = field(default_factory=list)
    failed: list[FailedCitationRecord] = field(default_factory=list)
    #: One line per damaged part, naming the file (and the entry).
    problems: list[str] = field(default_factory=list)
    #: The file's `schema_version`, None when it is missing or unreadable.
    version: int | None = None


def read_citations(path: Path, written: bytes | None = None) -> CitationsRead:
    """The citations file at `path`, any readable version; never raises on its content. A
    missing file reads as no citations and no problem (validation did not run). `written`:
    the file's bytes as the run has just written them (`WrittenRecords`), not read again."""
    document, problem = (
        read_json_object(path, _LABEL) if written is None else parse_json_object(written, _LABEL)
    )
    if document is None:
        return CitationsRead(problems=[problem] if problem else [])
    problems: list[str] = []
    version = document.get("schema_version")
    if version not in READABLE_VERSIONS:
        problems.append(f"{_LABEL}: schema_version {version!r} is not one this RunLens reads")
        version = None
    return CitationsRead(
        citations=_entries(document, "citations", CitationRecord, problems),
        failed=_entries(document, "failed", FailedCitationRecord, problems),
        problems=problems,
        version=version,
    )


def _entries(
    document: Mapping[str, Any], key: str, model: type[_Entry], problems: list[str]
) -> list[_Entry]:
    value = document.get(key, [])
    if not isinstance(value, list):
        problems.append(f"{_LABEL}: damaged, {key} is not a list")
        return []
    entries: list[_Entry] = []
    for position, entry in enumerate(value):
        try:
            entries.append(model.model_validate(entry))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(map(str, first["loc"])) or "(entry)"
            problems.append(f"{_LABEL}: damaged, {key}[{position}] {where}: {first['msg']}")
    return entries
