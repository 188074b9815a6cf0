"""Tools: a name, a description, a JSON Schema for the arguments, and a function.

A tool function receives the run's `ToolContext` and the model's arguments as keyword
arguments (already checked against `parameters`). It returns a `str` or JSON-serialisable value
that becomes the tool result. It raises `ToolError` to tell the model its call was wrong; any
other exception is caught by the loop and also returned to the model as a tool error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from runlens.models.messages import Message, ModelResponse, ToolSpec

if TYPE_CHECKING:
    from runlens.evidence import EvidenceIndex
    from runlens.models.base import Model
    from runlens.tools.workspace import Workspace

ToolFunction = Callable[..., Any | Awaitable[Any]]


class CallModel(Protocol):
    """A model call through the run's retries and records, for tools (e.g. one batch).

    `purpose` names the call in `model.called` (`batch`, ...): only the loop's own calls are
    turns of the conversation.
    """

    async def __call__(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], *, purpose: str
    ) -> ModelResponse: ...


#: Publishes an event into the run's stream: `emit(name, data)` (see `ToolContext.emit`).
Emit = Callable[[str, Mapping[str, Any]], None]
#: Records a warning the user must see with the verdict: `warn(message)`.
Warn = Callable[[str], None]
#: Tells the run its Evidence Index is written: `on_evidence_index(path, index)`, the index
#: as built (its row hashes make the source lock without reading the file again).
OnEvidenceIndex = Callable[[Path, "EvidenceIndex"], None]


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
    on_evidence_index: OnEvidenceIndex | None = None
    #: Publishes an event into the run's stream. `batch.completed` / `batch.failed` (the batch
    #: engine's) are checked against their shapes; any other name is the plugin's own and is
    #: published as `plugin.event` `{name, data}` (`runlens.records.catalogue`). Naming
    #: another core event raises `ValueError`.
    emit: Emit | None = None
    #: Records a warning the user must see with the verdict (e.g. some rows could not be
    #: analysed, ids were derived from row numbers): `run.warned`, `warnings` in run.json.
    warn: Warn | None = None
    #: Makes a model call through the run's retries and records (e.g. one analysis batch):
    #: `await call_model(messages, tools, purpose="batch")`.
    call_model: CallModel | None = None
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
