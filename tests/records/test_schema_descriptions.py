"""Records' attribute docstrings describe their fields in the JSON Schemas, and are read
from the source only when a schema is generated: not when a record's class is made, and
the same whether or not the records were built (read or written) before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "docs" / "schemas"

#: Loads every record, counts the docstring readings, then builds each record (as reading
#: or writing one does) before generating the schemas when asked to.
PROGRAM = """
import json, sys
from pydantic._internal import _docs_extraction, _fields, _generate_schema
read = []
def counted(cls, use_inspect=False):
    read.append(cls.__qualname__)
    return _docs_extraction.extract_docstrings_from_cls(cls, use_inspect)
_fields.extract_docstrings_from_cls = counted
_generate_schema.extract_docstrings_from_cls = counted
from runlens.records import schemas
from runlens.records.base import Record, _records
loaded = list(read)
if sys.argv[1] == "built":
    for record in _records(Record):
        record.model_rebuild(force=True)
        assert all(f.description is None for f in record.__pydantic_fields__.values())
generated = {name: schemas.render(schema) for name, schema in schemas.generate().items()}
print(json.dumps({"loaded": loaded, "schemas": generated}))
"""


def _generated(how: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, how],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert isinstance(result, dict)
    return result


def test_records_read_no_docstrings_until_a_schema_is_generated() -> None:
    assert _generated("fresh")["loaded"] == []


def test_the_schemas_are_the_published_ones_even_after_the_records_were_built() -> None:
    for how in ("fresh", "built"):
        generated = _generated(how)["schemas"]
        assert isinstance(generated, dict)
        for name, text in generated.items():
            assert (PUBLISHED / name).read_text(encoding="utf-8") == text, (how, name)


def test_attribute_docstrings_read_as_pydantic_reads_them() -> None:
    from pydantic._internal._docs_extraction import extract_docstrings_from_cls

    from runlens.records import schemas  # noqa: F401  (every record class defined)
    from runlens.records.base import Record, _records, attribute_docstrings

    records = _records(Record)
    assert len(records) >= 10
    described = 0
    for record in records:
        expected = extract_docstrings_from_cls(record, use_inspect=True)
        assert attribute_docstrings(record) == expected, record.__qualname__
        described += len(expected)
    assert described > 10


def test_attribute_docstrings_of_an_odd_class() -> None:
    from pydantic._internal._docs_extraction import extract_docstrings_from_cls

    from runlens.records.base import attribute_docstrings

    class Odd:
        """Not an attribute's."""

        plain: int
        described: int = 3
        """  Indented
            text, cleaned.
        """
        other = 4
        """After an assignment without a type: not a docstring."""
        last: str
        "Single-quoted."

        def method(self) -> None:
            inner: int = 1
            """Inside a function: not the class's."""
            print(inner)

    assert attribute_docstrings(Odd) == {
        "described": "Indented\ntext, cleaned.",
        "last": "Single-quoted.",
    }
    assert attribute_docstrings(Odd) == extract_docstrings_from_cls(Odd, use_inspect=True)
