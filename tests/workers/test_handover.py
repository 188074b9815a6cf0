"""The one module that reaches into DBOS's private functions (`runlens.workers.handover`):
pinned to the DBOS releases it was checked against, and exercised for real on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from runlens.workers.handover import CHECKED_DBOS

SRC = Path(__file__).resolve().parents[2] / "src"

#: A worker process `alive` that finds a workflow of the dead executor `dead` still PENDING:
#: `requeue_runs_of` moves it back on a queue (ENQUEUED) once: the second call finds nothing.
PROBE = """
import json, sys
import sqlalchemy as sa
from dbos import DBOS
from runlens.workers.handover import requeue_runs_of
from runlens.workers.submit import open_client
from runlens.workers.system import app_version, dbos_config, system_database

store_url = sys.argv[1]
url, schema = system_database(store_url)
client = open_client(store_url)
client.enqueue(
    {"queue_name": "runlens.nobody", "workflow_name": "runlens.handover_probe",
     "workflow_id": "run_probe", "app_version": app_version(), "application_name": "runlens"},
    "echo",
)
client.destroy()
engine = sa.create_engine(url)
with engine.begin() as connection:
    connection.execute(sa.text(
        f'UPDATE "{schema}".workflow_status SET status = \\'PENDING\\', executor_id = \\'dead\\''
        " WHERE workflow_uuid = 'run_probe'"
    ))
engine.dispose()

DBOS(config=dbos_config(store_url, "alive"))

@DBOS.workflow(name="runlens.handover_probe")
def probe(text: str) -> str:
    return text

DBOS.launch()
first = requeue_runs_of(["dead"])
second = requeue_runs_of(["dead"])
status = DBOS.get_workflow_status("run_probe")
print(json.dumps({"first": first, "second": second, "status": status.status}))
DBOS.destroy()
"""


def test_dbos_is_a_release_the_handover_was_checked_against() -> None:
    installed = version("dbos")
    assert installed.startswith(CHECKED_DBOS), (
        f"dbos {installed} is installed; runlens.workers.handover calls DBOS private functions "
        f"checked only against {', '.join(CHECKED_DBOS)}*: check them against {installed} "
        "(and this test's probe), then add it to CHECKED_DBOS"
    )


def test_a_dead_executors_run_is_handed_back_once(postgres_url: str) -> None:
    environment = {**os.environ, "PYTHONPATH": str(SRC), "RUNLENS_DBOS_LOG_LEVEL": "ERROR"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, postgres_url],
        capture_output=True,
        text=True,
        timeout=180,
        env=environment,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer == {"first": ["run_probe"], "second": [], "status": "ENQUEUED"}
