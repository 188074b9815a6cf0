"""What a queued run asks for: plugin, model, input and options, as the queue carries it.

`runlens submit` writes one `RunRequest` per input into the workflow's arguments (JSON, in the
system database); the worker that takes it builds the run from it. Nothing secret travels
this way: API keys come from the worker's own environment, and hook files (which name
commands on the submitting machine) are not part of a queued run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from runlens.errors import UserError
from runlens.runtime.run import RunSettings


@dataclass(frozen=True)
class RunRequest:
    run_id: str
    plugin: str
    model: str
    #: The input file's name; its bytes are in the run store at `input/<name>`.
    input_name: str
    repair_turns: int = 0
    max_turns: int | None = None
    max_tool_calls: int | None = None
    wall_time: float | None = None
    encoding: str | None = None
    id_column: str | None = None
    text_column: str | None = None
    sheet: str | None = None

    @property
    def input_path(self) -> str:
        """Where the input sits in the store and in the workspace."""
        return f"input/{self.input_name}"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, value: Any) -> RunRequest:
        """A request read back from the queue; `UserError` naming what is wrong with it."""
        if not isinstance(value, dict):
            raise UserError(f"a queued run must be a JSON object, not {type(value).__name__}")
        names = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(value) - names)
        if unknown:
            raise UserError(f"a queued run has unknown fields: {', '.join(unknown)}")
        for name in ("run_id", "plugin", "model", "input_name"):
            if not isinstance(value.get(name), str) or not value[name]:
                raise UserError(f"a queued run has no {name}")
        name = value["input_name"]
        if "/" in name or "\\" in name or name in {".", ".."} or "\x00" in name:
            raise UserError(f"a queued run's input name is not a file name: {name!r}")
        return cls(**value)

    def settings(self) -> RunSettings:
        """The run's settings on this worker (its secrets and retry delay from its env)."""
        return RunSettings.from_options(
            repair_turns=self.repair_turns,
            max_turns=self.max_turns,
            max_tool_calls=self.max_tool_calls,
            wall_time=self.wall_time,
            encoding=self.encoding,
            id_column=self.id_column,
            text_column=self.text_column,
            sheet=self.sheet,
        )
