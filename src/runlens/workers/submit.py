"""`runlens submit`: queue one run per input for the workers.

Each run is first a row in the run store (status `queued`) holding its input file, so any
worker on any machine can read it, then a workflow on its provider's queue. When queueing
fails, the row says why (`failed`, with the error), so no run is left queued that no worker
will ever take.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runlens.errors import UserError, one_line
from runlens.evidence import require_regular_file
from runlens.plugins import load_plugin
from runlens.records.io import new_run_id
from runlens.start import SCRIPTED_IN_QUEUE, RunOptions, check_model
from runlens.store.db import RunStore
from runlens.store.rows import Origin
from runlens.workers.request import RunRequest
from runlens.workers.system import (
    APP_NAME,
    POLLING_SECONDS,
    WORKFLOW_NAME,
    app_version,
    provider_of,
    queue_name,
    system_database,
)


@dataclass(frozen=True)
class Submitted:
    run_id: str
    input_path: Path


def submit_runs(
    store: RunStore,
    store_url: str,
    *,
    options: RunOptions,
    inputs: Sequence[Path],
    origin: Origin = "cli",
) -> list[Submitted]:
    """Queue a run as `options` ask for each of `inputs`; `UserError` before anything is
    queued when the plugin, the model or an input is not usable (the model is checked as a
    worker will, its keys apart: they are the workers')."""
    plugin = load_plugin(options.plugin)
    model_spec = check_model(options.model, plugin, refuse_scripted=SCRIPTED_IN_QUEUE)
    options = dataclasses.replace(options, plugin=plugin.name, model=model_spec)
    for path in inputs:
        require_regular_file(path, "input file")
    client = open_client(store_url)
    try:
        _ensure_queue(client, queue_name(provider_of(model_spec)))
        return [_submit_one(store, client, options, path, origin) for path in inputs]
    finally:
        client.destroy()


def open_client(store_url: str) -> Any:
    """A DBOS client on the store's system database, created (or upgraded) when needed."""
    from dbos import DBOS, DBOSClient, DBOSPortableJSONSerializer

    url, schema = system_database(store_url)
    try:
        DBOS.migrate(url, schema=schema)
        return DBOSClient(
            system_database_url=url,
            dbos_system_schema=schema,
            serializer=DBOSPortableJSONSerializer(),
            application_name=APP_NAME,
        )
    except Exception as error:
        reason = one_line(error, 300)
        raise UserError(f"cannot open the run queue in {schema}: {reason}") from None


def _ensure_queue(client: Any, name: str) -> None:
    """The provider's queue, made when it is the first run of that provider (its limits are
    the workers' to set: `runlens worker --provider-limit`)."""
    if client.retrieve_queue(name) is None:
        client.register_queue(
            name, polling_interval_sec=POLLING_SECONDS, on_conflict="never_update"
        )


def _submit_one(
    store: RunStore, client: Any, options: RunOptions, path: Path, origin: Origin
) -> Submitted:
    run_id = new_run_id()
    while store.get_run(run_id) is not None:  # one in 16 million, twice in a second
        run_id = new_run_id()
    request = RunRequest(run_id=run_id, input_name=path.name, options=options)
    plugin, model_spec = options.plugin, options.model
    content = path.read_bytes()
    store.queue(
        run_id,
        plugin=plugin,
        model=model_spec,
        input_name=path.name,
        origin=origin,
        submitted_by=options.submitted_by,
    )
    store.put_files(run_id, {request.input_path: content})
    try:
        client.enqueue(
            {
                "queue_name": queue_name(provider_of(model_spec)),
                "workflow_name": WORKFLOW_NAME,
                "workflow_id": run_id,
                "workflow_id_reuse_policy": "reject",
                "app_version": app_version(),
                "application_name": APP_NAME,
            },
            request.to_json(),
        )
    except Exception as error:
        reason = one_line(error, 300)
        store.end_unstarted(run_id, "failed", f"could not be queued: {reason}")
        raise UserError(f"{path}: could not be queued: {reason}") from None
    return Submitted(run_id, path)
