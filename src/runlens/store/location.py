"""Where the run store is, without SQLAlchemy: its URL (`store_url`), the revision its schema
must hold (`HEAD_REVISION`), and the SQLite file a plain `sqlite:///PATH` URL names
(`sqlite_file`), which `runlens.store.reader` reads through the standard library.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final
from urllib.parse import quote

from runlens.records.io import runs_home

#: How long a SQLite connection waits for a lock another process holds, in milliseconds.
BUSY_MS: Final = 30_000
#: The newest migration (`migrations/versions/`); a test checks it against the folder.
HEAD_REVISION: Final = "0007_reviews"
#: The SQLite file in the runs home.
SQLITE_NAME: Final = "runlens.db"

_SQLITE_PREFIX: Final = "sqlite:///"


def store_url(explicit: str | None = None, home: Path | None = None) -> str:
    """The store's SQLAlchemy URL: `explicit`, else `$RUNLENS_DATABASE_URL`, else SQLite in
    the runs home. `postgres://` and `postgresql://` mean the psycopg (3) driver."""
    url = explicit or os.environ.get("RUNLENS_DATABASE_URL") or ""
    if not url.strip():
        return f"sqlite:///{(runs_home(home) / SQLITE_NAME).absolute()}"
    url = url.strip()
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def sqlite_file(url: str) -> str | None:
    """The file a plain `sqlite:///PATH` URL names, when SQLAlchemy reads the URL back as
    written (no query, no percent-escape, nothing it would quote when displaying it: then
    the URL is also its own display form, `display_url`); None for any other URL."""
    if not url.startswith(_SQLITE_PREFIX):
        return None
    path = url[len(_SQLITE_PREFIX) :]
    if not path or path == ":memory:" or path.startswith("file:") or "%" in path:
        return None
    return path if quote(path, safe=" +/") == path else None
