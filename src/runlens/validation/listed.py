"""The values of one field of every object of a list, read in one comprehension.

`found_values(document, "items.sentiment")` walks the document through nested generators, a
few of them per value: fine for a small document, a tenth of a second for every field read
of a deliverable of 100,000 items. `field_values` gives the same values in the same order,
read in one comprehension when the path is a field of the objects of a top-level list (the
usual deliverable), and by `found_values` otherwise.
"""

from __future__ import annotations

from typing import Any

from runlens.contracts.paths import found_values, split

#: A field an object does not have (`found_values` skips it).
_ABSENT: Any = object()


def field_values(document: Any, path: str) -> list[Any]:
    """`list(found_values(document, path))`."""
    keys = split(path)
    elements = document.get(keys[0]) if type(document) is dict and len(keys) == 2 else None
    if type(elements) is not list or not set(map(type, elements)) <= {dict}:
        return list(found_values(document, path))
    key = keys[1]
    values = [element.get(key, _ABSENT) for element in elements]
    if _ABSENT in values:
        return [value for value in values if value is not _ABSENT]
    return values
