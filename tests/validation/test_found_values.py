"""`found_values` and `found_items` against `walk`: the same values (and locations), in the
same order, on generated documents.

Checks that only need a location when they have something to report (the enum rules, the
coverage of ids) read `found_values`, the evidence check's ids `found_items`; any document on
which they differ from `walk`'s found matches would change what they report.
"""

from __future__ import annotations

import random
from typing import Any

from runlens.contracts import walk, walk_pairs
from runlens.contracts.paths import found_items, found_pairs, found_values
from runlens.validation.listed import field_values

_KEYS = ("items", "row_id", "ids", "a", "b")
_PATHS = (
    "items",
    "items.row_id",
    "items.ids",
    "items.a.b",
    "a",
    "a.b",
    "a.b.row_id",
    "items.a.row_id",
    "",
    ("items", "row_id"),
)


def _node(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth <= 0 or roll < 0.3:
        return rng.choice([None, "r1", "r2", 3, True, "", [], {}])
    if roll < 0.6:
        return [_node(rng, depth - 1) for _ in range(rng.randrange(4))]
    keys = rng.sample(_KEYS, rng.randrange(len(_KEYS) + 1))
    return {key: _node(rng, depth - 1) for key in keys}


def test_found_values_are_the_values_walk_finds() -> None:
    rng = random.Random(28)
    for _ in range(3000):
        document = _node(rng, 4)
        for path in _PATHS:
            expected = [match.value for match in walk(document, path) if match.found]
            assert list(found_values(document, path)) == expected, (document, path)


def test_found_items_are_the_matches_walk_finds() -> None:
    rng = random.Random(29)
    for _ in range(3000):
        document = _node(rng, 4)
        for path in _PATHS:
            expected = [
                (match.location, match.value) for match in walk(document, path) if match.found
            ]
            assert list(found_items(document, path)) == expected, (document, path)


def test_found_items_on_the_usual_item_list() -> None:
    """Nested lists walked element by element, absent keys and non-objects skipped; odd
    keys and values are passed through as they are."""
    document = {
        "items": [
            {"row_id": "r1"},
            {"other": 1},
            [{"row_id": ""}, [{"row_id": "é\u0301\x00"}]],
            "x",
            {"row_id": ["a", None]},
        ]
    }
    assert list(found_items(document, "items.row_id")) == [
        ("items[0].row_id", "r1"),
        ("items[2][0].row_id", ""),
        ("items[2][1][0].row_id", "é\u0301\x00"),
        ("items[4].row_id", ["a", None]),
    ]
    assert list(found_items(document, "")) == [("", document)]
    assert list(found_items("x", "items.row_id")) == []


def test_found_values_on_the_usual_item_list() -> None:
    document = {"items": [{"row_id": "r1"}, {"other": 1}, [{"row_id": "r2"}], "x"]}
    assert list(found_values(document, "items.row_id")) == ["r1", "r2"]
    assert [m.found for m in walk(document, "items.row_id")] == [True, False, True]


_PAIRS = (
    ("items.a", "items.row_id"),
    ("items.ids", "items.row_id"),
    ("items.a.b", "items.row_id"),
    ("a.b", "a.row_id"),
    ("a", "row_id"),
    ("items", "items.row_id"),
)


def test_found_pairs_are_the_pairs_walk_pairs_finds() -> None:
    """`found_pairs` (the evidence check's quotes and ids) against `walk_pairs`."""
    rng = random.Random(2028)
    for _ in range(3000):
        document = _node(rng, 4)
        for first, second in _PAIRS:
            expected = [
                (a.location, a.value, b.location, b.value)
                for a, b in walk_pairs(document, first, second)
                if a.found and b.found
            ]
            assert list(found_pairs(document, first, second)) == expected, (document, first)


def test_walk_pairs_on_the_usual_item_list() -> None:
    document = {"items": [{"a": "q", "row_id": "r1"}, {"a": "q2"}, ["x"], {"row_id": "r3"}]}
    pairs = [
        (a.location, a.value, a.found, b.location, b.value, b.found)
        for a, b in walk_pairs(document, "items.a", "items.row_id")
    ]
    assert pairs == [
        ("items[0].a", "q", True, "items[0].row_id", "r1", True),
        ("items[1].a", "q2", True, "items[1].row_id", None, False),
        ("items[3].a", None, False, "items[3].row_id", "r3", True),
    ]
    assert list(found_pairs(document, "items.a", "items.row_id")) == [
        ("items[0].a", "q", "items[0].row_id", "r1")
    ]


def _usual(rng: random.Random) -> Any:
    """A document whose `items` is mostly a list of objects (the shape `field_values` reads
    in one comprehension), sometimes with an element of another shape."""
    items: list[Any] = [
        {key: _node(rng, 1) for key in rng.sample(_KEYS, rng.randrange(len(_KEYS) + 1))}
        for _ in range(rng.randrange(6))
    ]
    if items and rng.random() < 0.3:
        items[rng.randrange(len(items))] = _node(rng, 2)
    return {"items": items, "a": _node(rng, 2)}


def test_field_values_are_the_values_found_values_finds() -> None:
    """`field_values` (the coverage check's ids) against `found_values`."""
    rng = random.Random(2029)
    for n in range(4000):
        document = _usual(rng) if n % 2 else _node(rng, 4)
        for path in _PATHS:
            if isinstance(path, str):
                expected = list(found_values(document, path))
                assert field_values(document, path) == expected, (document, path)
