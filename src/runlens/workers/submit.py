"""`runlens submit`: queue one run per input for the workers.

Each run is first a row in the run store (status `queued`) holding its input file, so any
worker on any machine can read it, then a workflow on its provider's queue. When queueing
fails, the row says why (`failed`, with the error), so no run is left queued that no worker
will ever take.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runlens.errors import UserError
from runlens.evidence import require_regular_file
from runlens.models.registry import known_providers
from runlens.plugins import load_plugin
from runlens.records.store import new_run_id
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


def check_model(model_spec: str) -> str:
    """A usage error unless the model's provider is one a worker can run."""
    provider = provider_of(model_spec)
    if provider == "scripted":
        raise UserError(
            "--model scripted:PATH names a file on this machine, which a worker elsewhere "
            "cannot read: use `runlens run` for scripted models"
        )
    providers = known_providers()
    if provider not in providers:
        raise UserError(
            f"--model {model_spec}: unknown provider {provider!r} "
            f"(known: {', '.join(sorted(providers))})"
        )
    return provider


def submit_runs(
    store: RunStore,
    store_url: str,
    *,
    plugin_name: str,
    inputs: Sequence[Path],
    model_spec: str,
    options: dict[str, Any],
    origin: Origin = "cli",
) -> list[Submitted]:
    """Queue a run of `plugin_name` for each of `inputs`; `UserError` before anything is
    queued when the plugin, the model or an input is not usable."""
    plugin = load_plugin(plugin_name)
    provider = check_model(model_spec)
    if provider == "offline" and plugin.offline_model is None:
        raise UserError(f"plugin {plugin.name} has no offline model: submit it with --model")
    for path in inputs:
        require_regular_file(path, "input file")
    client = open_client(store_url)
    try:
        _ensure_queue(client, queue_name(provider))
        return [
            _submit_one(store, client, plugin.name, path, model_spec, provider, options, origin)
            for path in inputs
        ]
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
        reason = " ".join(str(error).split())[:300] or type(error).__name__
        raise UserError(f"cannot open the run queue in {schema}: {reason}") from None


def _ensure_queue(client: Any, name: str) -> None:
    """The provider's queue, made when it is the first run of that provider (its limits are
    the workers' to set: `runlens worker --provider-limit`)."""
    if client.retrieve_queue(name) is None:
        client.register_queue(
            name, polling_interval_sec=POLLING_SECONDS, on_conflict="never_update"
        )


def _submit_one(
    store: RunStore,
    client: Any,
    plugin: str,
    path: Path,
    model_spec: str,
    provider: str,
    options: dict[str, Any],
    origin: Origin,
) -> Submitted:
    run_id = new_run_id()
    while store.get_run(run_id) is not None:  # one in 16 million, twice in a second
        run_id = new_run_id()
    request = RunRequest(
        run_id=run_id, plugin=plugin, model=model_spec, input_name=path.name, **options
    )
    content = path.read_bytes()
    store.queue(run_id, plugin=plugin, model=model_spec, input_name=path.name, origin=origin)
    store.put_files(run_id, {request.input_path: content})
    try:
        client.enqueue(
            {
                "queue_name": queue_name(provider),
                "workflow_name": WORKFLOW_NAME,
                "workflow_id": run_id,
                "workflow_id_reuse_policy": "reject",
                "app_version": app_version(),
                "application_name": APP_NAME,
            },
            request.to_json(),
        )
    except Exception as error:
        reason = " ".join(str(error).split())[:300] or type(error).__name__
        store.end_unstarted(run_id, "failed", f"could not be queued: {reason}")
        raise UserError(f"{path}: could not be queued: {reason}") from None
    return Submitted(run_id, path)
