"""Where DBOS keeps the queue and the checkpoints: next to the run store.

- Run store on PostgreSQL: the same database, in the schema `dbos` (or, when the store's URL
  puts a schema first on the search path, `<that schema>_dbos`; `RUNLENS_QUEUE_SCHEMA` names
  another). Every worker and every `runlens submit` that uses one store uses one queue.
- Run store on SQLite: `runlens-queue.sqlite` beside `runlens.db`; one machine, one worker
  process (with as many runs at once as `--concurrency`).

Queues are per model provider (`runlens.openai`, `runlens.offline`, ...), so that a
provider's limit (`--provider-limit openai=4`) is a DBOS queue concurrency: the number of
that provider's runs in progress across all workers together. The runtime sends one run's
model calls one at a time, so it is also the number of requests that provider sees at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote

from sqlalchemy.engine import make_url

from runlens import __version__

#: The DBOS application every worker and submitter belongs to.
APP_NAME: Final = "runlens"
#: The workflow a queued run is.
WORKFLOW_NAME: Final = "runlens.run"
#: How often an idle worker asks the queue for work, in seconds.
POLLING_SECONDS: Final = 0.5


def app_version() -> str:
    """Workers take the runs submitted for their own RunLens version (replaying a run needs
    the code that started it)."""
    return f"runlens-{__version__}"


def provider_of(model_spec: str) -> str:
    """`openai:gpt-4o` -> `openai`; `offline` -> `offline`."""
    return model_spec.partition(":")[0].strip() or "offline"


def queue_name(provider: str) -> str:
    return f"runlens.{provider}"


def system_database(store_url: str) -> tuple[str, str]:
    """The DBOS system database's URL and schema for the run store at `store_url`."""
    url = make_url(store_url)
    if url.get_backend_name() == "sqlite":
        database = url.database or ""
        folder = Path(database).parent if database and database != ":memory:" else Path(".")
        return f"sqlite:///{(folder / 'runlens-queue.sqlite').absolute()}", "dbos"
    schema = os.environ.get("RUNLENS_QUEUE_SCHEMA", "").strip()
    if not schema:
        search_path = _search_path(url.query.get("options"))
        schema = f"{search_path}_dbos" if search_path else "dbos"
    return url.render_as_string(hide_password=False), schema


def dbos_config(store_url: str, executor_id: str) -> dict[str, Any]:
    """The `DBOSConfig` of a worker (a TypedDict, built as a plain dict)."""
    from dbos import DBOSPortableJSONSerializer

    url, schema = system_database(store_url)
    return {
        "name": APP_NAME,
        "system_database_url": url,
        "dbos_system_schema": schema,
        "executor_id": executor_id,
        "application_version": app_version(),
        # Checkpoints are JSON (never pickles): readable by any tool, and nothing in the
        # database can make a worker run code.
        "serializer": DBOSPortableJSONSerializer(),
        "log_level": os.environ.get("RUNLENS_DBOS_LOG_LEVEL", "WARNING"),
    }


def _search_path(options: Any) -> str | None:
    """The first schema of `options=-csearch_path=...` in a PostgreSQL URL, if any."""
    values = options if isinstance(options, tuple) else (options,)
    for value in values:
        if not isinstance(value, str):
            continue
        for part in unquote(value).split():
            for prefix in ("-csearch_path=", "search_path="):
                if part.startswith(prefix):
                    first = part[len(prefix) :].split(",")[0].strip().strip('"')
                    if first and first != "$user":
                        return first
    return None
