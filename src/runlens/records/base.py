"""What every serialised record shares: closed, documented, versioned pydantic models.

Records reject keys they do not declare (a typo in the writer fails a test, not a reader),
take their schema descriptions from the attribute docstrings, and list every field they
always write as required in their JSON Schema (`runlens.records.schemas`).
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict

RECORD_CONFIG: Final = ConfigDict(
    extra="forbid",
    use_attribute_docstrings=True,
    json_schema_serialization_defaults_required=True,
    # Validators and serialisers are built when a record is first read or written, not
    # when its module is imported: a command loads many record types and uses few.
    defer_build=True,
)


class Record(BaseModel):
    model_config = RECORD_CONFIG

    def encode(self) -> dict[str, Any]:
        """The JSON object to write."""
        return self.model_dump(mode="json")
