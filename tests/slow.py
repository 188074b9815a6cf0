"""The slow tests, in one place: what the default `python -m pytest` leaves out.

A test is slow when it takes seconds on a 2-core machine: it starts real processes (the CLI,
the UI server, workers, a browser), waits on timeouts, or runs on PostgreSQL. `tests/conftest.py`
marks every collected test whose node id matches one of the patterns below `slow`; the
default run deselects them (`addopts` in pyproject.toml), `python -m pytest -m ""` runs
everything and `python -m pytest -m slow` only them. Each kind of test keeps fast cases in the
default run (a store test on SQLite, a CLI run in process, ...), so a pattern names the slow
cases, not a whole kind.

Patterns are `fnmatch` patterns over node ids relative to the repository root.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

SLOW: tuple[str, ...] = ()


def is_slow(nodeid: str) -> bool:
    """Whether the test with this node id is one of the slow ones."""
    return any(fnmatchcase(nodeid, pattern) for pattern in SLOW)
