"""What every serialised record shares: closed, documented, versioned pydantic models.

Records reject keys they do not declare (a typo in the writer fails a test, not a reader),
take their schema descriptions from the attribute docstrings, and list every field they
always write as required in their JSON Schema (`runlens.records.schemas`).
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
import threading
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

#: The configuration of the records' TypedDicts (`with_config`), which read their attribute
#: docstrings when their schema is built, on first use.
RECORD_CONFIG: Final = ConfigDict(
    extra="forbid",
    use_attribute_docstrings=True,
    json_schema_serialization_defaults_required=True,
    # Validators and serialisers are built when a record is first read or written, not
    # when its module is imported: a command loads many record types and uses few.
    defer_build=True,
)


class Record(BaseModel):
    # Without `use_attribute_docstrings`: a model would read its attribute docstrings from
    # its module's source when its class is made (about 2 ms a record, at every command's
    # start), and they only describe the fields in the JSON Schema: `model_json_schema`
    # gives the fields the same descriptions first (`describe_records`).
    model_config = ConfigDict(
        extra="forbid",
        json_schema_serialization_defaults_required=True,
        defer_build=True,
    )

    def encode(self) -> dict[str, Any]:
        """The JSON object to write."""
        return self.model_dump(mode="json")

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The record's JSON Schema (pydantic's), each field described by its attribute
        docstring unless it has a description of its own."""
        describe_records()
        return super().model_json_schema(*args, **kwargs)


_described: set[type[Record]] = set()
_describing = threading.Lock()


def describe_records() -> None:
    """Describe every record's fields by their attribute docstrings, as
    `use_attribute_docstrings` would have when their classes were made: a field without a
    description of its own gets the docstring under it in the class that declares it. The
    records whose schemas were built then build them again, in the order they were
    defined (a record holding another reuses the other's schema)."""
    with _describing:
        records = [record for record in _records(Record) if record not in _described]
        for record in records:
            for name, field in record.__pydantic_fields__.items():
                if field.description is None:
                    field.description = _docstring(record, name)
        for record in records:
            # Names resolved in the record's module alone, as when it was first built.
            record.model_rebuild(force=True, _parent_namespace_depth=0)
        _described.update(records)


def _records(record: type[Record]) -> list[type[Record]]:
    found = []
    for sub in record.__subclasses__():
        found.append(sub)
        found.extend(_records(sub))
    return found


def _docstring(record: type[Record], name: str) -> str | None:
    for owner in record.__mro__:
        if name in inspect.get_annotations(owner):
            return _docstrings(owner).get(name) if issubclass(owner, Record) else None
    return None


_DOCSTRINGS: dict[type[Record], dict[str, str]] = {}


def _docstrings(record: type[Record]) -> dict[str, str]:
    found = _DOCSTRINGS.get(record)
    if found is None:
        found = _DOCSTRINGS[record] = attribute_docstrings(record)
    return found


def attribute_docstrings(cls: type) -> dict[str, str]:
    """The docstrings of a class's annotated attributes, as `use_attribute_docstrings` reads
    them: a string statement right after `name: type` (or `name: type = value`) in the
    class's own body, cleaned as `inspect.cleandoc` cleans a docstring. Empty when the
    source cannot be read."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    statement = ast.parse(source).body[0]
    if not isinstance(statement, ast.ClassDef):
        return {}
    found: dict[str, str] = {}
    body = statement.body
    for annotated, after in itertools.pairwise(body):
        if (
            isinstance(annotated, ast.AnnAssign)
            and isinstance(annotated.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            found[annotated.target.id] = inspect.cleandoc(after.value.value)
    return found
