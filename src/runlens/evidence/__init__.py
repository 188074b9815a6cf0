"""The Evidence Index: every row of the source CSV, by id, with its row hash and original text.

    build_evidence_index(csv_path)  one streaming pass over the CSV -> EvidenceIndex
    CsvTable.open(csv_path, ...)    the CSV decoded and checked once, paged for the model;
                                    `table.evidence_index(...)` builds the index from it
    EvidenceIndex.load(path)        read runtime/evidence_index.json
    read_input_format(path)         how the indexed CSV was read (encoding, confidence,
                                    method, delimiter), from the index file's header line
    index.write(path)               write it atomically, returning its SHA-256
    index.locate(id, quote)         where a quote sits in the row's text (Unicode NFC)

Formats and hashes are those of SPEC section 5, recomputable from the CSV alone. The CSV's
encoding and delimiter are detected from samples of it (`_detect`) or given, and recorded.
"""

from runlens.evidence._encoding import (
    TextFormat,
    check_encoding_name,
    file_sha256,
    require_regular_file,
)
from runlens.evidence._storage import read_input_format
from runlens.evidence.build import build_evidence_index
from runlens.evidence.index import EvidenceIndex, EvidenceItem, QuoteSpan
from runlens.evidence.table import CsvTable

__all__ = [
    "CsvTable",
    "EvidenceIndex",
    "EvidenceItem",
    "QuoteSpan",
    "TextFormat",
    "build_evidence_index",
    "check_encoding_name",
    "file_sha256",
    "read_input_format",
    "require_regular_file",
]
