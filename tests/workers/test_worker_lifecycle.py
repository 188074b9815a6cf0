"""A worker's own life: stopped by SIGTERM (its runs handed back at once), drained with
Ctrl-C, stopped twice, killed and restarted under its id; and the trace a handover leaves in
the run's events (`run.resumed`, issue 23 item 7)."""

from __future__ import annotations

import signal
import time
from datetime import datetime
from typing import Any

from workers.cluster import Cluster, WorkerProcess
from workers.model_server import MODEL_SPEC, SAMPLE_CSV, CountingModelServer, env_for


def _wait_running(cluster: Cluster, run_id: str, worker: WorkerProcess) -> None:
    deadline = time.monotonic() + 60
    while True:
        run = cluster.runs([run_id])[run_id]
        if run.worker == worker.name and run.status in {"running", "validating"}:
            return
        assert time.monotonic() < deadline, (run.status, worker.log_text())
        time.sleep(0.05)


def _resumed(cluster: Cluster, run_id: str) -> dict[str, Any]:
    """The run's one `run.resumed` event; its events numbered 1..n without a gap."""
    events = cluster.events(run_id)
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    [resumed] = [event for event in events if event["type"] == "run.resumed"]
    assert events[0]["type"] == "run.created" and events[-1]["type"] == "run.completed"
    return dict(resumed)


def test_sigterm_hands_the_runs_back_and_ends_the_worker_within_2s(pg_cluster: Cluster) -> None:
    with CountingModelServer(latency=0.4) as server:
        pg_cluster.env.update(env_for(server))
        # --dead-after 300: only the hand-over, not a stale heartbeat, can move the run.
        first = pg_cluster.start_worker("w1", "--dead-after", "300")
        second = pg_cluster.start_worker("w2", "--dead-after", "300")
        pg_cluster.wait_until_up(first)
        pg_cluster.wait_until_up(second)
        [run_id] = pg_cluster.submit("feedback-analysis", str(SAMPLE_CSV), "--model", MODEL_SPEC)
        deadline = time.monotonic() + 60
        while (holder := pg_cluster.runs([run_id])[run_id].worker) is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        leaving, staying = (first, second) if holder == "w1" else (second, first)
        _wait_running(pg_cluster, run_id, leaving)
        assert server.wait_for(3, timeout=60)
        started = time.monotonic()
        sent_at = time.time()
        leaving.process.send_signal(signal.SIGTERM)
        assert leaving.process.wait(timeout=10) == 0
        took = time.monotonic() - started
        assert took < 2.0, took
        in_flight = {r.fingerprint for r in server.in_flight_at(sent_at, grace=1.0)}
        assert f"SIGTERM: 1 run(s) handed back to the queue ({run_id})" in leaving.log_text()

        runs = pg_cluster.wait_terminal([run_id], timeout=120)
        assert runs[run_id].status == "completed" and runs[run_id].worker == staying.name
        resumed = _resumed(pg_cluster, run_id)
        data = resumed["data"]
        assert data["worker"] == staying.name and data["previous_worker"] == leaving.name
        assert data["reason"] == f"worker {leaving.name} stopped and handed its runs back"
        assert data["workspace"].endswith(f"/{staying.name}/{run_id}")
        # Taken over at once, not after --dead-after: the queue's poll and a replay.
        assert datetime.fromisoformat(resumed["ts"]).timestamp() - sent_at < 5.0
        log = pg_cluster.wait_log(staying, f"done {run_id}: completed")
        assert f"resume {run_id}" in log
        # w1 handed its run back itself: nothing is said to go back on the queue again.
        assert "go back on the queue" not in log
        assert set(server.repeated()) <= in_flight


def test_ctrl_c_finishes_the_run_in_progress_then_stops(pg_cluster: Cluster) -> None:
    with CountingModelServer(latency=0.4) as server:
        pg_cluster.env.update(env_for(server))
        worker = pg_cluster.start_worker("w1")
        pg_cluster.wait_until_up(worker)
        [run_id] = pg_cluster.submit("feedback-analysis", str(SAMPLE_CSV), "--model", MODEL_SPEC)
        _wait_running(pg_cluster, run_id, worker)
        worker.process.send_signal(signal.SIGINT)
        assert worker.process.wait(timeout=120) == 0
        log = worker.log_text()
        assert f"finishing {run_id}" in log
        assert f"done {run_id}: completed" in log and log.rstrip().endswith("stopped")
        assert pg_cluster.runs([run_id])[run_id].status == "completed"
        [row] = [w for w in pg_cluster.store.list_workers() if w.executor_id == "w1"]
        assert row.stopped_at is not None  # stopped on its own: nobody takes its runs over
        assert server.repeated() == {}


def test_a_second_signal_hands_the_runs_back_at_once(pg_cluster: Cluster) -> None:
    with CountingModelServer(latency=0.4) as server:
        pg_cluster.env.update(env_for(server))
        first = pg_cluster.start_worker("w1", "--dead-after", "300")
        pg_cluster.wait_until_up(first)
        [run_id] = pg_cluster.submit("feedback-analysis", str(SAMPLE_CSV), "--model", MODEL_SPEC)
        _wait_running(pg_cluster, run_id, first)
        second = pg_cluster.start_worker("w2", "--dead-after", "300")
        pg_cluster.wait_until_up(second)
        first.process.send_signal(signal.SIGINT)
        pg_cluster.wait_log(first, "stopping: taking no more runs")
        first.process.send_signal(signal.SIGINT)
        assert first.process.wait(timeout=30) == 0
        assert f"SIGINT: 1 run(s) handed back to the queue ({run_id})" in first.log_text()
        runs = pg_cluster.wait_terminal([run_id], timeout=120)
        assert runs[run_id].status == "completed" and runs[run_id].worker == "w2"
        log = pg_cluster.wait_log(second, f"done {run_id}: completed")
        assert f"resume {run_id}" in log and "go back on the queue" not in log
        assert _resumed(pg_cluster, run_id)["data"]["previous_worker"] == "w1"


def test_a_worker_restarted_under_its_id_resumes_its_own_runs(pg_cluster: Cluster) -> None:
    with CountingModelServer(latency=0.3) as server:
        pg_cluster.env.update(env_for(server))
        worker = pg_cluster.start_worker("w1", "--dead-after", "300")
        pg_cluster.wait_until_up(worker)
        [run_id] = pg_cluster.submit("feedback-analysis", str(SAMPLE_CSV), "--model", MODEL_SPEC)
        _wait_running(pg_cluster, run_id, worker)
        assert server.wait_for(3, timeout=60)
        worker.process.send_signal(signal.SIGKILL)
        killed_at = time.time()
        worker.process.wait(timeout=10)
        in_flight = {r.fingerprint for r in server.in_flight_at(killed_at, grace=1.0)}
        # Same host, its process gone: the id is free at once, despite --dead-after 300.
        again = pg_cluster.start_worker("w1-again", "--dead-after", "300", executor_id="w1")
        runs = pg_cluster.wait_terminal([run_id], timeout=120)
        assert runs[run_id].status == "completed" and runs[run_id].worker == "w1"
        assert f"resume {run_id}" in pg_cluster.wait_log(again, f"done {run_id}: completed")
        assert set(server.repeated()) <= in_flight
        data = _resumed(pg_cluster, run_id)["data"]
        assert data["worker"] == data["previous_worker"] == "w1"
        assert data["reason"] == "its worker was restarted under the same id"
