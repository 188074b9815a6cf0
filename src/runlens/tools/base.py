"""Tools: a name, a description, a JSON Schema for the arguments, and a function.

A tool function receives the run's `ToolContext` and the model's arguments as keyword
arguments (already checked against `parameters`). It returns a `str` or JSON-serialisable value
that becomes the tool result. It raises `ToolError` to tell the model its call was wrong; any
other exception is caught by the loop and also returned to the model as a tool error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runlens.models.messages import ToolSpec

if TYPE_CHECKING:
    from runlens.models.base import Model
    from runlens.tools.workspace import Workspace

ToolFunction = Callable[..., Any | Awaitable[Any]]


@dataclass
class ToolContext:
    """What a tool may use during a run. One per run, shared by every tool call."""

    run_id: str
    workspace: Workspace
    input_path: Path
    model: Model | None = None
    #: The input's encoding as the user named it (`--encoding`); None: detect it.
    input_encoding: str | None = None
    #: The input's id and text columns as the user named them (`--id-column`,
    #: `--text-column`); None: the plugin's defaults.
    input_id_column: str | None = None
    input_text_column: str | None = None
    #: The workbook sheet to read (`--sheet`); None: the first worksheet.
    input_sheet: str | None = None
    #: Called by an input tool once it has written runtime/evidence_index.json.
    on_evidence_index: Callable[[Path], None] | None = None
    #: Publishes a plugin-specific event (e.g. a batch finished) into the run's event stream.
    emit: Callable[[str, dict[str, Any]], None] | None = None
    #: Records a warning the user must see with the verdict (e.g. some rows could not be
    #: analysed, ids were derived from row numbers): `run.warned`, `warnings` in run.json.
    warn: Callable[[str], None] | None = None
    #: Makes a model call through the run's retries and records (e.g. one analysis batch):
    #: `await call_model(messages, tools, purpose="batch")`.
    call_model: Callable[..., Awaitable[Any]] | None = None
    #: Per-run scratch state for tools (e.g. a cached CSV table). Never shown to the model.
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    function: ToolFunction

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)
