"""`QuoteLocation`'s own `__init__` against the frozen dataclass it replaces: the same fields,
defaults, equality, hash, repr, immutability, `dataclasses.replace` and pydantic round trip."""

from __future__ import annotations

import dataclasses

import pytest

from runlens.validation import QuoteLocation, ValidationReport
from runlens.validation.base import TextSpan


@dataclasses.dataclass(frozen=True)
class _Reference:
    """`QuoteLocation` as the dataclass decorator writes its `__init__`."""

    artifact: str
    path: str
    row_id: str
    start: int
    end: int
    quote: str | None = None
    line: int | None = None
    column: int | None = None
    span: TextSpan | None = None
    id_span: TextSpan | None = None


_CASES: list[tuple[tuple[object, ...], dict[str, object]]] = [
    (("artifacts/a.json", "items[0].evidence_text", "fb_001", 0, 3), {}),
    (("a", "p", "r", 1, 2, "q\x00\u0301é"), {}),
    (("", "", "", 0, 0), {"quote": ""}),
    (
        ("report.md", "line 12", "fb 2", 5, 9),
        {"quote": "x" * 100_000, "line": 12, "column": 3, "span": TextSpan(1, 4, 12)},
    ),
    (("r.md", "line 1", "𝒳", 0, 1, "q", 1, 1, TextSpan(0, 3, 1), TextSpan(4, 6, 1)), {}),
]


@pytest.mark.parametrize(("args", "kwargs"), _CASES)
def test_quote_location_is_the_dataclass_it_replaces(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    made = QuoteLocation(*args, **kwargs)  # type: ignore[arg-type]
    reference = _Reference(*args, **kwargs)  # type: ignore[arg-type]
    assert dataclasses.astuple(made) == dataclasses.astuple(reference)
    assert [f.name for f in dataclasses.fields(made)] == [
        f.name for f in dataclasses.fields(reference)
    ]
    assert repr(made) == repr(reference).replace("_Reference(", "QuoteLocation(", 1)
    assert made == QuoteLocation(*args, **kwargs)  # type: ignore[arg-type]
    assert hash(made) == hash(QuoteLocation(*args, **kwargs))  # type: ignore[arg-type]
    assert made != dataclasses.replace(made, start=made.start + 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.start = 7  # type: ignore[misc]
    report = ValidationReport(
        passed=True, findings=[], artifacts={}, error_message=None, quotes=[made]
    )
    assert ValidationReport.model_validate_json(report.model_dump_json()).quotes == [made]


def test_quote_location_keyword_arguments_and_defaults() -> None:
    made = QuoteLocation(artifact="a", path="p", row_id="r", start=1, end=2)
    assert (made.quote, made.line, made.column, made.span, made.id_span) == (None,) * 5
    with pytest.raises(TypeError):
        QuoteLocation("a", "p", "r", 1)  # type: ignore[call-arg]
