"""The Evidence Index of a run's input built again, as the run read it: for
`runlens validate --source` and `runlens verify` (which builds it in a temporary folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from runlens.errors import EvidenceIndexError
from runlens.tools.workspace import Workspace

EVIDENCE_INDEX = Workspace.EVIDENCE_INDEX
#: Where a rebuilt index is written: beside the run's own, never over it.
REBUILT_INDEX = Workspace.REBUILT_INDEX


class ReadingDefaults(Protocol):
    """What a rebuild reads of a plugin (a `runlens.Plugin` is one): its input's columns."""

    @property
    def id_column(self) -> str: ...

    @property
    def text_column(self) -> str: ...


def recorded_reading(workspace: Path, record: dict[str, Any]) -> dict[str, Any]:
    """How the run read its input (`input_format`: columns, id rule, sheet ...): from
    `runtime/run.json`, else the header of the workspace's own index; {} if neither says."""
    from runlens.evidence import read_input_format

    recorded = record.get("input_format")
    if isinstance(recorded, dict):
        return recorded
    index_path = workspace / EVIDENCE_INDEX
    if index_path.is_file():
        try:
            return read_input_format(index_path)
        except EvidenceIndexError:
            return {}
    return {}


def rebuild_index(
    workspace: Path,
    source: Path,
    plugin: ReadingDefaults,
    encoding: str | None = None,
    *,
    reading: dict[str, Any] | None = None,
) -> Path:
    """Build the Evidence Index of `source` (in `encoding`, or the one detected) into
    `runtime/`, beside the run's own index (never over it: that one is evidence of what the
    run used); return the file written. `reading` (`input_format` keys: `id_column`,
    `text_column`, `id_rule`, `sheet`) makes it read the file as the run did; what it does not
    say is the plugin's default."""
    from runlens.evidence import FROM_COLUMN, build_evidence_index, require_regular_file

    require_regular_file(source, "source CSV")
    reading = reading or {}
    index = build_evidence_index(
        source,
        id_column=reading.get("id_column") or plugin.id_column,
        text_column=reading.get("text_column") or plugin.text_column,
        id_rule=reading.get("id_rule") or FROM_COLUMN,
        sheet=reading.get("sheet"),
        source_name=source.name,
        encoding=encoding,
    )
    target = workspace / REBUILT_INDEX
    target.parent.mkdir(parents=True, exist_ok=True)
    index.write(target)
    return target


__all__ = ["REBUILT_INDEX", "ReadingDefaults", "rebuild_index", "recorded_reading"]
