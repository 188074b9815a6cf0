"""What a queued run asks for: its id, its input's name and its `RunOptions`, as the queue
carries them.

`runlens submit` writes one `RunRequest` per input into the workflow's arguments (JSON, in the
system database): one flat object, the run id and the input's name beside the option fields
(the shape runs queued by earlier versions have too); the worker that takes it opens the run
from it (`runlens.start.open_run`). Nothing secret travels this way: API keys come from the
worker's own environment, and hook files (which name commands on the submitting machine) are
not part of a queued run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runlens.errors import UserError
from runlens.start import OPTION_FIELDS, RunOptions

_KNOWN: frozenset[str] = frozenset({"run_id", "input_name", *OPTION_FIELDS})
#: Option fields a queued run holds only when they are used.
_ADDED: tuple[str, ...] = ("source_ref", "submitted_by", "rerun_of", "review_findings")


@dataclass(frozen=True)
class RunRequest:
    run_id: str
    #: The input file's name; its bytes are in the run store at `input/<name>`.
    input_name: str
    options: RunOptions

    @property
    def plugin(self) -> str:
        return self.options.plugin

    @property
    def model(self) -> str:
        return self.options.model

    @property
    def input_path(self) -> str:
        """Where the input sits in the store and in the workspace."""
        return f"input/{self.input_name}"

    def to_json(self) -> dict[str, Any]:
        options = {**self.options.to_json(), "review_findings": list(self.options.review_findings)}
        # Added after the first version (the source lock; review by people): left out when
        # unused, so a worker of an earlier version (which refuses fields it does not know)
        # still takes the run.
        for name in _ADDED:
            if options[name] is None or options[name] == []:
                del options[name]
        return {
            "run_id": self.run_id,
            "plugin": options.pop("plugin"),
            "model": options.pop("model"),
            "input_name": self.input_name,
            **options,
        }

    @classmethod
    def from_json(cls, value: Any) -> RunRequest:
        """A request read back from the queue; `UserError` naming what is wrong with it."""
        if not isinstance(value, dict):
            raise UserError(f"a queued run must be a JSON object, not {type(value).__name__}")
        unknown = sorted(set(value) - _KNOWN)
        if unknown:
            raise UserError(f"a queued run has unknown fields: {', '.join(unknown)}")
        for name in ("run_id", "plugin", "model", "input_name"):
            if not isinstance(value.get(name), str) or not value[name]:
                raise UserError(f"a queued run has no {name}")
        name = value["input_name"]
        if "/" in name or "\\" in name or name in {".", ".."} or "\x00" in name:
            raise UserError(f"a queued run's input name is not a file name: {name!r}")
        for field in ("source_ref", "submitted_by", "rerun_of"):
            if value.get(field) is not None and not isinstance(value[field], str):
                raise UserError(f"a queued run's {field} must be a string")
        findings = value.get("review_findings", [])
        if not isinstance(findings, list) or not all(isinstance(f, str) for f in findings):
            raise UserError("a queued run's review_findings must be a list of strings")
        options = {key: item for key, item in value.items() if key in OPTION_FIELDS}
        options["review_findings"] = tuple(findings)
        return cls(run_id=value["run_id"], input_name=name, options=RunOptions(**options))
