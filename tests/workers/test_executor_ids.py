"""One live worker per executor id, and a killed worker's run resumed in time (issue 23,
item 6). Real worker processes, the machine's PostgreSQL, and the counting model server."""

from __future__ import annotations

import signal
import time
from datetime import datetime
from pathlib import Path

from runlens.store import RunStore, open_store
from workers.cluster import Cluster, WorkerProcess
from workers.model_server import MODEL_SPEC, SAMPLE_CSV, CountingModelServer, env_for


def _wait_running(cluster: Cluster, run_id: str, worker: WorkerProcess) -> None:
    deadline = time.monotonic() + 60
    while True:
        run = cluster.runs([run_id])[run_id]
        if run.worker == worker.executor_id and run.status in {"running", "validating"}:
            return
        assert time.monotonic() < deadline, (run.status, worker.log_text())
        time.sleep(0.05)


def test_a_second_worker_under_a_live_workers_id_is_refused(pg_cluster: Cluster) -> None:
    with CountingModelServer(latency=0.3) as server:
        pg_cluster.env.update(env_for(server))
        first = pg_cluster.start_worker("w1")
        pg_cluster.wait_until_up(first)
        [run_id] = pg_cluster.submit("feedback-analysis", str(SAMPLE_CSV), "--model", MODEL_SPEC)
        _wait_running(pg_cluster, run_id, first)
        assert server.wait_for(2, timeout=60)
        twin = pg_cluster.start_worker("twin", executor_id="w1")
        assert twin.process.wait(timeout=60) == 2
        log = twin.log_text()
        assert "--executor-id w1 is in use by a live worker (pid " in log, log
        assert f"pid {first.process.pid} on " in log and "Traceback" not in log
        assert len(log.strip().splitlines()) == 1, log
        runs = pg_cluster.wait_terminal([run_id], timeout=120)
        assert runs[run_id].status == "completed" and runs[run_id].worker == "w1"
        # The twin never resumed w1's run: no request was sent twice, no handover happened.
        assert server.repeated() == {}
        assert all(event["type"] != "run.resumed" for event in pg_cluster.events(run_id))
        # w1 is still the live holder of its id, and still beating.
        [row] = [w for w in pg_cluster.store.list_workers() if w.executor_id == "w1"]
        assert row.pid == first.process.pid and row.stopped_at is None


def test_a_killed_workers_run_is_resumed_within_dead_after(pg_cluster: Cluster) -> None:
    dead_after = 4.0
    with CountingModelServer(latency=0.3) as server:
        pg_cluster.env.update(env_for(server))
        first = pg_cluster.start_worker("w1", "--dead-after", f"{dead_after:g}")
        pg_cluster.wait_until_up(first)
        [run_id] = pg_cluster.submit("feedback-analysis", str(SAMPLE_CSV), "--model", MODEL_SPEC)
        _wait_running(pg_cluster, run_id, first)
        second = pg_cluster.start_worker("w2", "--dead-after", f"{dead_after:g}")
        pg_cluster.wait_until_up(second)
        assert server.wait_for(3, timeout=60)
        first.process.send_signal(signal.SIGKILL)
        killed_at = time.time()
        first.process.wait(timeout=10)
        in_flight = {r.fingerprint for r in server.in_flight_at(killed_at, grace=1.0)}
        runs = pg_cluster.wait_terminal([run_id], timeout=120)
        assert runs[run_id].status == "completed" and runs[run_id].worker == "w2"
        events = pg_cluster.events(run_id)
        [resumed] = [event for event in events if event["type"] == "run.resumed"]
        taken_at = datetime.fromisoformat(resumed["ts"]).timestamp()
        # Dead after `dead_after` s without a heartbeat; noticed at w2's next heartbeat
        # (every dead_after/4 s); the last heartbeat came up to dead_after/4 s before the kill.
        assert taken_at - killed_at <= dead_after + 2.5, taken_at - killed_at
        assert resumed["data"]["worker"] == "w2" and resumed["data"]["previous_worker"] == "w1"
        assert "w1 stopped answering" in resumed["data"]["reason"]
        assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
        assert set(server.repeated()) <= in_flight
        log = pg_cluster.wait_log(second, f"done {run_id}: completed")
        assert "worker w1 stopped answering (last heartbeat " in log
        assert f"1 of its runs go back on the queue ({run_id})" in log


def test_an_id_is_registered_once_while_its_worker_lives(
    pg_cluster: Cluster, tmp_path: Path
) -> None:
    """The store's side, on PostgreSQL and on SQLite: one statement decides."""
    for store in (pg_cluster.store, open_store(f"sqlite:///{tmp_path / 'runlens.db'}")):

        def register(pid: int, replacing: int | None = None, store: RunStore = store) -> bool:
            return store.register_worker(
                "w1",
                host="h",
                pid=pid,
                concurrency=1,
                unless_alive_within=30,
                replacing_pid=replacing,
            )

        assert register(1)
        assert not register(2)  # w1 (pid 1) is alive
        assert [row.pid for row in store.list_workers()] == [1]
        assert register(3, replacing=1)  # pid 1 known gone
        assert not store.heartbeat("w1", pid=1)  # the old process is told so
        assert store.heartbeat("w1", pid=3)
        store.stop_worker("w1")
        assert register(4)  # a stopped worker's id is free
        store.expire_worker("w1")  # no heartbeat since long ago
        assert register(5)
        assert [row.executor_id for row in store.live_workers(within=30)] == ["w1"]
