"""The source lock: which data a run read, as bytes and as rows (SPEC section 16).

    {"bytes_sha256": "<hex>",     SHA-256 of the input file's bytes
     "rows_digest": "<hex>",      SHA-256 of the rows (below): the same for any copy of them
     "rows": 12000, "columns": ["id", "text", ...],
     "format": "csv" | "xlsx", "encoding": "utf-8" | ... | null (a workbook),
     "ref": {"git": {...}, "dvc": {...}, "uri": "..."} | null}

`rows_digest` is SHA-256 of the UTF-8 bytes of one line per row, `row_id<TAB>row_hash\\n`
(`row_hash` is the Evidence Index's, SPEC section 5: it hashes every column of the row by
name), the lines sorted by row id in Unicode code point order (Python's `str` order, which
is also the byte order of the ids in UTF-8). A row id never holds a tab or a newline (the
index refuses control characters in ids), so the lines are unambiguous. A copy of the same
rows in another encoding, with another delimiter, in another row order or as a workbook has
the same `rows_digest`; its `bytes_sha256` differs.

`ref` holds what versions the file, each key where it applies (several may): `git` (the
work tree's commit, the file's path and blob, whether it is dirty, origin's URL without
credentials: `refs.git_ref`), `dvc` (the recorded path and md5, whether the md5 matches:
`refs.dvc_ref`) and `uri` (what `--source-ref` gave). None when nothing does.

The lock reuses the row hashes of the index the run built: no second parse of the input.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from runlens.sourcelock.refs import dvc_ref, git_ref

if TYPE_CHECKING:
    from runlens.evidence import EvidenceIndex

#: The keys of a source lock, in the order run.json writes them.
LOCK_KEYS: Final = ("bytes_sha256", "rows_digest", "rows", "columns", "format", "encoding", "ref")
_LINES_PER_UPDATE: Final = 65536
_BELOW_TAB: Final = re.compile("[\x00-\x08]")


def rows_digest(pairs: Iterable[tuple[str, str]]) -> str:
    """SHA-256 hex of the lines `row_id<TAB>row_hash\n`, sorted by row id (code point order).

    `pairs` are (row_id, row_hash) in any order, each id once (as in an index)."""
    pairs = list(pairs)
    lines = list(map("\t".join, pairs))
    if any(
        _BELOW_TAB.search("".join(lines[start : start + _LINES_PER_UPDATE]))
        for start in range(0, len(lines), _LINES_PER_UPDATE)
    ):
        # An id with a character below the tab would sort after a shorter id it begins with
        # as a line, before it as an id: sort the pairs themselves (slower; never met in an
        # index, which refuses control characters in ids).
        return _digest_of_sorted(["\t".join(pair) for pair in sorted(pairs)])
    lines.sort()
    return _digest_of_sorted(lines)


def index_rows_digest(index: EvidenceIndex) -> str:
    """`rows_digest` of an Evidence Index's rows."""
    return _digest_of_sorted(index_row_lines(index))


def index_row_lines(index: EvidenceIndex) -> list[str]:
    """The `row_id<TAB>row_hash` lines `rows_digest` hashes (each followed by a newline),
    sorted. An index's ids hold no control character (the builder refuses them, a load
    checks them), so every character of an id sorts after the tab and the lines sort as
    their ids do: sorting the lines (strings) is several times faster than sorting
    (id, hash) pairs."""
    lines = [f"{row_id}\t{row_hash}" for row_id, row_hash, _ in index.rows()]
    lines.sort()
    return lines


def _digest_of_sorted(lines: list[str]) -> str:
    digest = hashlib.sha256()
    for start in range(0, len(lines), _LINES_PER_UPDATE):
        chunk = "\n".join(lines[start : start + _LINES_PER_UPDATE])
        digest.update(f"{chunk}\n".encode())
    return digest.hexdigest()


def build_source_lock(
    input_path: Path, index: EvidenceIndex, *, source_ref: str | None = None
) -> dict[str, Any]:
    """The source lock of `index`, built from `input_path` (the file the user named: its git
    and DVC references are looked up from there), with `source_ref` as `ref.uri`."""
    return index_lock(index, source_refs(input_path, source_ref=source_ref))


def index_lock(index: EvidenceIndex, ref: dict[str, Any] | None = None) -> dict[str, Any]:
    """The source lock an Evidence Index gives (all but where the file came from), with
    `ref`."""
    return {
        "bytes_sha256": index.source_hash,
        "rows_digest": index_rows_digest(index),
        "rows": index.total_rows,
        "columns": list(index.columns),
        "format": index.format,
        "encoding": index.encoding,
        "ref": ref,
    }


def source_refs(input_path: Path, *, source_ref: str | None = None) -> dict[str, Any] | None:
    """`ref` of a source lock: `git`, `dvc` and `uri` where each applies; None for none."""
    ref: dict[str, Any] = {}
    git = git_ref(input_path)
    if git is not None:
        ref["git"] = git
    dvc = dvc_ref(input_path)
    if dvc is not None:
        ref["dvc"] = dvc
    if source_ref:
        ref["uri"] = source_ref
    return ref or None
