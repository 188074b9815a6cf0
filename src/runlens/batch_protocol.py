"""The JSON batch protocol: a batch's user message (`batch_message`), read back with
`parse_batch_message`, and the row-by-row artifact the batch engine writes (`artifact_json`).

A batch message is one JSON document, never lines to split, whatever the input's column
names are; every character a CSV cell can hold arrives intact. The engine that sends the
messages and collects the items is `runlens.batching`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from runlens.validation.cuts import cut_text

#: A row's text is cut to about this many characters in a batch message (where a quote may
#: end: `runlens.validation.cuts.cut_text`).
MAX_TEXT_CHARS = 2000
#: Metadata values longer than this (free text) are left out of a batch message.
MAX_METADATA_CHARS = 40

Row = Mapping[str, str]

#: `json.dumps(value, ensure_ascii=False)`, with one encoder made once: `json.dumps` makes a
#: new encoder for every call given an argument, and a run encodes every row and item.
_dumps = json.JSONEncoder(ensure_ascii=False).encode


def batch_message(
    rows: Sequence[Row],
    id_column: str,
    text_column: str,
    *,
    task: str,
    id_key: str = "row_id",
    extra: Mapping[str, Any] | None = None,
    row_extras: Sequence[Mapping[str, Any] | None] = (),
) -> str:
    """The user message of one batch: one JSON document, never lines to split.

    `{"task": ..., **extra, "rows": [{id_key, "text", "metadata"?, **row_extra}, ...]}`,
    whatever the input's column names are (the id and text columns are carried under
    `id_key` and `text`; the other non-empty, short columns under `metadata`). A text longer
    than `MAX_TEXT_CHARS` is cut where a quote may end (`runlens.cut_text`), so every quote of
    what the model sees is a quote of the row, and the row says `"text_cut": true`. `row_extras`
    are each row's additional keys, in row order. Texts are carried as JSON strings, so every
    character a CSV cell can hold (line and paragraph separators, U+0085, form feeds, NUL)
    arrives intact; a reader must use a JSON parser (`parse_batch_message`). Rows are written
    one per line only for a human reading the log: the line breaks are JSON whitespace.
    """
    entries = []
    for position, row in enumerate(rows):
        text = row[text_column]
        shown = cut_text(text, MAX_TEXT_CHARS)
        entry: dict[str, Any] = {id_key: row[id_column], "text": shown}
        if len(shown) < len(text):
            entry["text_cut"] = True
        metadata = {
            key: value
            for key, value in row.items()
            if key not in (id_column, text_column) and value and len(value) <= MAX_METADATA_CHARS
        }
        if metadata:
            entry["metadata"] = metadata
        added = row_extras[position] if position < len(row_extras) else None
        if added:
            entry.update(added)
        entries.append(_dumps(entry))
    head = [f'"task": {_dumps(task)}']
    head.extend(f"{_dumps(key)}: {_dumps(value)}" for key, value in (extra or {}).items())
    body = ",\n".join(entries)
    return "{" + ",\n".join(head) + f',\n"rows": [\n{body}\n]}}'


def parse_batch_message(content: str) -> list[dict[str, Any]]:
    """The rows of a `batch_message`; ValueError when `content` is not one."""
    document = json.loads(content)
    rows = document.get("rows") if isinstance(document, dict) else None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValueError("not a batch message: no 'rows' list of objects")
    return rows


def artifact_json(
    items: Sequence[Any], failed_batches: Sequence[Any], field_name: str = "items"
) -> bytes:
    """The artifact `{"items": [...], "failed_batches": [...]}` with one entry per line.

    Each entry is encoded on its own (by the C encoder), so even 100,000 items never become
    one giant string (a single emoji would make it four bytes per character), and the file
    reads and diffs line by line.
    """
    return b"".join(
        (
            b"{" + json.dumps(field_name).encode("utf-8") + b": ",
            *_json_lines(items),
            b',\n"failed_batches": ',
            *_json_lines(failed_batches),
            b"}\n",
        )
    )


def _json_lines(values: Sequence[Any]) -> tuple[bytes, ...]:
    """A JSON array as parts to join, one value per line."""
    if not values:
        return (b"[]",)
    body = b",\n".join(_dumps(v).encode("utf-8") for v in values)
    return (b"[\n", body, b"\n]")
