"""The dotted-path rule language of artifact contracts.

`items.sentiment` names the `sentiment` of every element of `items`: a list met on the way is
walked element by element. Every match carries its concrete location, e.g. `items[3].sentiment`,
so a finding can point at the exact value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class Match:
    """One place a dotted path leads to. `found` is False when the last key is absent."""

    location: str
    value: Any
    found: bool = True


def split(path: str) -> tuple[str, ...]:
    return tuple(part for part in path.split(".") if part)


def _join(location: str, key: str) -> str:
    return f"{location}.{key}" if location else key


def walk(document: Any, path: str | tuple[str, ...]) -> Iterator[Match]:
    """Yield every value the path leads to, lists walked element by element.

    A key missing from an object yields a `Match` with `found=False` at that location, so
    callers can tell "absent" from "present but null". Values of the wrong shape on the way
    (a string where an object was expected) end that branch silently; JSON Schema rules are
    the place to require shapes.
    """
    keys = split(path) if isinstance(path, str) else path
    yield from _walk(document, keys, "")


def _walk(node: Any, keys: tuple[str, ...], location: str) -> Iterator[Match]:
    if isinstance(node, list):
        if len(keys) == 1:
            yield from _last_key(node, keys[0], location)
            return
        for index, element in enumerate(node):
            yield from _walk(element, keys, f"{location}[{index}]")
        return
    if not keys:
        yield Match(location, node)
        return
    if not isinstance(node, dict):
        return
    head, rest = keys[0], keys[1:]
    child = node.get(head, _MISSING)
    if child is _MISSING:
        yield Match(_join(location, head), None, found=False)
        return
    if not rest:
        yield Match(_join(location, head), child)
        return
    yield from _walk(child, rest, _join(location, head))


def _last_key(elements: list[Any], key: str, location: str) -> Iterator[Match]:
    """`_walk` of the last key over a list (`items[0].row_id`, `items[1].row_id` ...), one
    loop instead of a generator per element: the same matches, in the same order."""
    for index, element in enumerate(elements):
        if isinstance(element, dict):
            child = element.get(key, _MISSING)
            if child is _MISSING:
                yield Match(f"{location}[{index}].{key}", None, found=False)
            else:
                yield Match(f"{location}[{index}].{key}", child)
        elif isinstance(element, list):
            yield from _last_key(element, key, f"{location}[{index}]")


def found_values(document: Any, path: str | tuple[str, ...]) -> Iterator[Any]:
    """The values of the matches `walk` finds (`found`), in its order, without their
    locations: for a check that needs a location only when it has something to report."""
    keys = split(path) if isinstance(path, str) else path
    yield from _values(document, keys)


def _values(node: Any, keys: tuple[str, ...]) -> Iterator[Any]:
    """`_walk`'s found values (the same branches, in the same order)."""
    if isinstance(node, list):
        if len(keys) == 1:
            yield from _last_values(node, keys[0])
            return
        for element in node:
            yield from _values(element, keys)
        return
    if not keys:
        yield node
        return
    if not isinstance(node, dict):
        return
    child = node.get(keys[0], _MISSING)
    if child is _MISSING:
        return
    if len(keys) == 1:
        yield child
        return
    yield from _values(child, keys[1:])


def _last_values(elements: list[Any], key: str) -> Iterator[Any]:
    """`_last_key`'s found values."""
    for element in elements:
        if isinstance(element, dict):
            child = element.get(key, _MISSING)
            if child is not _MISSING:
                yield child
        elif isinstance(element, list):
            yield from _last_values(element, key)


def found_items(document: Any, path: str | tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    """The matches `walk` finds (`found`), in its order, as `(location, value)`: for checks
    of many items, without a `Match` made per value."""
    keys = split(path) if isinstance(path, str) else path
    yield from _items(document, keys, "")


def _items(node: Any, keys: tuple[str, ...], location: str) -> Iterator[tuple[str, Any]]:
    """`_walk`'s found matches (the same branches, in the same order)."""
    if isinstance(node, list):
        if len(keys) == 1:
            yield from _last_items(node, keys[0], location)
            return
        for index, element in enumerate(node):
            yield from _items(element, keys, f"{location}[{index}]")
        return
    if not keys:
        yield location, node
        return
    if not isinstance(node, dict):
        return
    head, rest = keys[0], keys[1:]
    child = node.get(head, _MISSING)
    if child is _MISSING:
        return
    if not rest:
        yield _join(location, head), child
        return
    yield from _items(child, rest, _join(location, head))


def _last_items(elements: list[Any], key: str, location: str) -> Iterator[tuple[str, Any]]:
    """`_last_key`'s found matches."""
    for index, element in enumerate(elements):
        if isinstance(element, dict):
            child = element.get(key, _MISSING)
            if child is not _MISSING:
                yield f"{location}[{index}].{key}", child
        elif isinstance(element, list):
            yield from _last_items(element, key, f"{location}[{index}]")


def common_prefix(first: str, second: str) -> tuple[str, ...]:
    """The leading keys two dotted paths share (the list their values sit in)."""
    prefix: list[str] = []
    for a, b in zip(split(first), split(second), strict=False):
        if a != b:
            break
        prefix.append(a)
    return tuple(prefix)


def walk_pairs(document: Any, first: str, second: str) -> Iterator[tuple[Match, Match]]:
    """Pair the values of two paths that sit in the same item.

    For `items.evidence_text` and `items.row_id`, yields one pair per element of `items`.
    Only the first value of each relative path in an item is used.
    """
    prefix, rest_first, rest_second = _pair_paths(first, second)
    for location, element in _pair_elements(document, prefix):
        pair = _pair_of(element, rest_first, rest_second, location)
        if pair is not None:
            yield pair


def found_pairs(document: Any, first: str, second: str) -> Iterator[tuple[str, Any, str, Any]]:
    """The pairs `walk_pairs` yields whose two values are both found, in its order, as
    `(first location, first value, second location, second value)`: for checks of many
    items, without a `Match` made per value."""
    prefix, rest_first, rest_second = _pair_paths(first, second)
    one_key = len(rest_first) == len(rest_second) == 1
    a, b = rest_first[-1:], rest_second[-1:]
    for location, element in _pair_elements(document, prefix):
        if one_key and type(element) is dict:
            x, y = element.get(a[0], _MISSING), element.get(b[0], _MISSING)
            if x is not _MISSING and y is not _MISSING:
                yield _join(location, a[0]), x, _join(location, b[0]), y
            continue
        pair = _pair_of(element, rest_first, rest_second, location)
        if pair is not None and pair[0].found and pair[1].found:
            yield pair[0].location, pair[0].value, pair[1].location, pair[1].value


def _pair_paths(first: str, second: str) -> tuple[tuple[str, ...], ...]:
    """The keys two paths share (the items) and the rest of each, inside an item."""
    prefix = common_prefix(first, second)
    if len(prefix) == len(split(first)) or len(prefix) == len(split(second)):
        prefix = prefix[:-1]
    return prefix, split(first)[len(prefix) :], split(second)[len(prefix) :]


def _pair_elements(document: Any, prefix: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    """Each item the paths of a pair start from, with its location."""
    containers = (
        [Match("", document)] if not prefix else [m for m in walk(document, prefix) if m.found]
    )
    for container in containers:
        if isinstance(container.value, list):
            base = container.location
            for i, element in enumerate(container.value):
                yield f"{base}[{i}]", element
        else:
            yield container.location, container.value


def _pair_of(
    element: Any, rest_first: tuple[str, ...], rest_second: tuple[str, ...], location: str
) -> tuple[Match, Match] | None:
    """The first match of each path inside one item, None when either has none."""
    if len(rest_first) == len(rest_second) == 1 and isinstance(element, dict):
        # Two keys of one object (the usual `items[i]`): what `_walk` yields first.
        return _key_of(element, rest_first[0], location), _key_of(element, rest_second[0], location)
    a = next(_walk(element, rest_first, location), None)
    b = next(_walk(element, rest_second, location), None)
    return (a, b) if a is not None and b is not None else None


def _key_of(element: dict[str, Any], key: str, location: str) -> Match:
    """The match `_walk` gives for the last key of a path in one object."""
    child = element.get(key, _MISSING)
    where = f"{location}.{key}" if location else key
    return Match(where, None, False) if child is _MISSING else Match(where, child)
