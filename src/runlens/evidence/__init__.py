"""The Evidence Index: every row of the source CSV, by id, with its row hash and original text.

    build_evidence_index(csv_path)  one streaming pass over the CSV -> EvidenceIndex
    CsvTable.open(csv_path, ...)    the CSV decoded and checked once, paged for the model;
                                    `table.evidence_index(...)` builds the index from it
    EvidenceIndex.load(path)        read runtime/evidence_index.json
    index.write(path)               write it atomically, returning its SHA-256
    index.locate(id, quote)         where a quote sits in the row's text (Unicode NFC)

Formats and hashes are those of SPEC section 5, recomputable from the CSV alone.
"""

from runlens.evidence._encoding import file_sha256
from runlens.evidence.build import build_evidence_index
from runlens.evidence.index import EvidenceIndex, EvidenceItem, QuoteSpan
from runlens.evidence.table import CsvTable

__all__ = [
    "CsvTable",
    "EvidenceIndex",
    "EvidenceItem",
    "QuoteSpan",
    "build_evidence_index",
    "file_sha256",
]
