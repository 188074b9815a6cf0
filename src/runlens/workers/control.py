"""Stopping a run wherever it is: in the queue, or on a worker on any machine."""

from __future__ import annotations

from runlens.errors import UserError
from runlens.records.status import QUEUED
from runlens.store.db import RunStore
from runlens.store.rows import RunSummary

#: Why a run cancelled before any worker took it ended.
CANCELLED_IN_QUEUE = "cancelled before a worker started it"


class RunEnded(Exception):
    """The run has ended already: there is nothing to cancel (not a usage error)."""


def cancel_run(store: RunStore, run_id: str, store_url: str | None = None) -> RunSummary:
    """Cancel `run_id`: a queued run leaves the queue and ends `cancelled` at once; a running
    one is asked to stop (its worker or process polls the store, and it ends `cancelled`
    within about a second, with its records). `RunEnded` when it has ended already."""
    summary = store.request_cancel(run_id)
    if summary is None:
        raise UserError(f"no run {run_id!r} in the run store {store.url}")
    if summary.is_terminal:
        raise RunEnded(f"run {run_id} has ended already ({summary.status})")
    if summary.status == QUEUED:
        if store_url is not None:
            _cancel_queued_workflow(store_url, run_id)
        store.end_unstarted(run_id, "cancelled", CANCELLED_IN_QUEUE)
    updated = store.get_run(run_id)
    return updated if updated is not None else summary


def _cancel_queued_workflow(store_url: str, run_id: str) -> None:
    """Take the run's workflow off its queue, if it is still waiting there. A worker that
    takes it at this very moment finds the cancel request in the store and ends it."""
    from dbos import error as dbos_error

    from runlens.workers.submit import open_client

    client = open_client(store_url)
    try:
        if client.retrieve_workflow(run_id).get_status().status == "ENQUEUED":
            client.cancel_workflow(run_id)
    except dbos_error.DBOSNonExistentWorkflowError:
        pass  # never queued (its submit failed): the store's row is all there is
    finally:
        client.destroy()
