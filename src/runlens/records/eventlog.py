"""Reading `runtime/events.jsonl` back as the JSON objects its lines hold, with the stdlib
alone: `runlens show` reads an ended run's log without loading the event catalogue
(`runlens.records.events`, which writes the log)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runlens.tools.workspace import Workspace


def read_event_log(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every readable event of `events.jsonl`, and one problem per line that is not one
    (naming the line: not UTF-8, not JSON, cut short by a crash, not an object)."""
    events: list[dict[str, Any]] = []
    problems: list[str] = []
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return events, problems
    except OSError as error:
        return events, [f"{Workspace.EVENTS}: cannot be read ({error.strerror})"]
    lines = raw.split(b"\n")
    last = len(lines) - 1 if lines and lines[-1] == b"" else len(lines)
    for number, line in enumerate(lines[:last], start=1):
        if not line.strip():
            continue
        problem = None
        try:
            value = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as error:
            problem = f"not UTF-8 (byte 0x{line[error.start]:02x} at column {error.start + 1})"
        except json.JSONDecodeError as error:
            torn = number == last and not raw.endswith(b"\n")
            problem = "cut short (the run stopped while writing it)" if torn else error.msg
        else:
            if isinstance(value, dict):
                events.append(value)
                continue
            problem = f"a JSON {type(value).__name__}, not an event object"
        problems.append(f"{Workspace.EVENTS} line {number}: damaged, {problem}; skipped")
    return events, problems
