"""The Evidence Index: every row of the source table, by id, with its row hash and original text.

The source is a CSV file or one sheet of an Excel workbook (.xlsx), told apart by content.

    build_evidence_index(path)      one streaming pass over the file -> EvidenceIndex
    SourceTable.open(path, ...)     the file decoded and checked once, paged for the model;
                                    `table.evidence_index(...)` builds the index from it;
                                    `table.with_row_number_ids(name)` for a file without ids
    cell_text(value)                the text of a worksheet cell (the rule row hashes use)
    check_workbook(path, source)    inflate a workbook's parts within `WorkbookLimits`, parsing
                                    nothing (e.g. an upload): WorkbookTooLarge beyond them
    EvidenceIndex.load(path)        read runtime/evidence_index.json
    read_input_format(path)         how the indexed CSV was read (encoding, confidence,
                                    method, delimiter), from the index file's header line
    index.write(path)               write it atomically, returning its SHA-256
    index.locate(id, quote)         where a quote sits in the row's text (Unicode NFC)

Formats and hashes are those of SPEC section 5, recomputable from the file alone. A CSV's
encoding and delimiter are detected from samples of it (`_detect`) or given, and recorded; so
are a workbook's sheet and how ids were made (`id_rule`: a column, or `row-<n>`, see `_ids`).
"""

from runlens.evidence._bounds import (
    WorkbookLimits,
    WorkbookTooLarge,
    check_workbook,
)
from runlens.evidence._encoding import (
    TextFormat,
    check_encoding_name,
    file_sha256,
    require_regular_file,
)
from runlens.evidence._ids import FROM_COLUMN, FROM_ROW_NUMBER, IdRule
from runlens.evidence._records import MissingColumnError
from runlens.evidence._stores import EvidenceItem
from runlens.evidence._xlsx import cell_text, is_workbook
from runlens.evidence.build import build_evidence_index
from runlens.evidence.index import EvidenceIndex, QuoteSpan, read_input_format
from runlens.evidence.table import SourceTable

__all__ = [
    "FROM_COLUMN",
    "FROM_ROW_NUMBER",
    "EvidenceIndex",
    "EvidenceItem",
    "IdRule",
    "MissingColumnError",
    "QuoteSpan",
    "SourceTable",
    "TextFormat",
    "WorkbookLimits",
    "WorkbookTooLarge",
    "build_evidence_index",
    "cell_text",
    "check_encoding_name",
    "check_workbook",
    "file_sha256",
    "is_workbook",
    "read_input_format",
    "require_regular_file",
]
