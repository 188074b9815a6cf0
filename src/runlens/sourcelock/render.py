"""A source lock as lines a person reads (`runlens show`, the run page): label and value,
each value plain text (callers escape it for their medium: a terminal's markup, HTML).

A source lock is read back from `run.json`, which anyone could have edited: every value is
shown through `str()` of what is there, and a lock of the wrong shape gives what it can.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runlens.records.readers import EventView


def source_lock_lines(lock: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(label, value) for each part of `lock` present; [] for no lock."""
    if not isinstance(lock, Mapping):
        return []
    lines: list[tuple[str, str]] = []
    for key, label in (("bytes_sha256", "bytes sha256"), ("rows_digest", "rows digest")):
        if lock.get(key) is not None:
            lines.append((label, str(lock[key])))
    shape = [f"{lock['rows']} rows" if lock.get("rows") is not None else None]
    if lock.get("format"):
        shape.append(str(lock["format"]))
    if lock.get("encoding"):
        shape.append(str(lock["encoding"]))
    if any(shape):
        lines.append(("read as", ", ".join(part for part in shape if part)))
    columns = lock.get("columns")
    if isinstance(columns, list) and columns:
        lines.append(("columns", ", ".join(map(str, columns))))
    ref = lock.get("ref")
    if isinstance(ref, Mapping):
        lines.extend(_ref_lines(ref))
    else:
        lines.append(("reference", "none (no git work tree, DVC file or --source-ref)"))
    return lines


def _ref_lines(ref: Mapping[str, Any]) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    git = ref.get("git")
    if isinstance(git, Mapping):
        state = "dirty (differs from HEAD)" if git.get("dirty") else "clean"
        commit = str(git.get("commit") or "no commit")
        lines.append(("git", f"{git.get('path')} @ {commit} (blob {git.get('blob')}, {state})"))
        if git.get("remote"):
            lines.append(("git remote", str(git["remote"])))
    dvc = ref.get("dvc")
    if isinstance(dvc, Mapping):
        matches = dvc.get("md5_matches")
        verdict = (
            "matches the file"
            if matches is True
            else "does NOT match the file"
            if matches is False
            else "not checked"
        )
        lines.append(
            (
                "dvc",
                f"{dvc.get('path')} md5 {dvc.get('md5')} ({verdict}; {dvc.get('tracked_by')})",
            )
        )
    if ref.get("uri") is not None:
        lines.append(("source ref", str(ref["uri"])))
    return lines


def lock_from_events(events: Iterable[EventView]) -> dict[str, Any] | None:
    """The source lock the run's `evidence.indexed` event carries (the latest), for a run
    read from the run store, whose record keeps no lock of its own; None without one."""
    found: dict[str, Any] | None = None
    for event in events:
        if event.type == "evidence.indexed" and event.data is not None:
            lock = event.data.get("source_lock")
            if isinstance(lock, dict):
                found = lock
    return found
