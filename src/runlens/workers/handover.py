"""Putting a worker's unfinished runs back on their queues: the one place RunLens reaches
into DBOS's private functions.

DBOS recovers an executor's workflows only at `DBOS.launch()` (its own id) or through its
Conductor service; a worker that finds another one dead, or that hands its own runs back as it
stops, needs the same for another executor id, now. DBOS's own recovery (`DBOS.
_recover_pending_workflows`) does it, but reports every pending workflow it looked at, also
the ones it did not move; this does the same two steps and reports only the runs it moved.
The move is one conditional UPDATE per workflow (PENDING and still on one of `executor_ids`
becomes ENQUEUED), so a run is handed over at most once, whoever else recovers it at the
same moment.

DBOS's public API has no such move: `DBOS.resume_workflow` enqueues a workflow whatever its
executor and whether it is cancelled, so two workers finding one dead worker at once could
both hand a run on (and a run cancelled meanwhile would start again). So the private calls
stay, fenced here: nothing else in RunLens imports `dbos._*`, and
`tests/workers/test_handover.py` pins the DBOS releases they were checked against
(`CHECKED_DBOS`: the test fails on any other) and moves a dead executor's workflow for real.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

#: The DBOS releases (version prefixes) whose private functions this module was checked
#: against: `_dbos._get_dbos_instance`, `_shard_keys.bind_shard_keys`,
#: `_utils.INTERNAL_QUEUE_NAME`, `_utils.GlobalParams.app_version`, and the system database's
#: `get_pending_workflows(executor_id, app_version)` and
#: `reenqueue_for_recovery(workflow_id, executor_ids, queue_name) -> bool`.
CHECKED_DBOS: Final = ("3.4.",)


def requeue_runs_of(executor_ids: Sequence[str]) -> list[str]:
    """The workflows (run ids) of `executor_ids` that were still in progress and are now back
    on their queues, in the order DBOS lists them. Needs a launched DBOS."""
    from dbos._dbos import _get_dbos_instance
    from dbos._shard_keys import bind_shard_keys
    from dbos._utils import INTERNAL_QUEUE_NAME, GlobalParams

    dbos = _get_dbos_instance()
    moved: list[str] = []
    for executor_id in executor_ids:
        pending = dbos._sys_db.get_pending_workflows(executor_id, GlobalParams.app_version)
        for workflow in pending:
            with bind_shard_keys({workflow.workflow_id: workflow.shard_key}):
                if dbos._sys_db.reenqueue_for_recovery(
                    workflow.workflow_id, list(executor_ids), INTERNAL_QUEUE_NAME
                ):
                    moved.append(workflow.workflow_id)
    return moved
