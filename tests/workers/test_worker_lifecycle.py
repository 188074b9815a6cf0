"""A worker's own life: stopped politely, stopped twice, killed and restarted under its id."""

from __future__ import annotations

import signal
import time

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


def test_sigterm_finishes_the_run_in_progress_then_stops(pg_cluster: Cluster) -> None:
    with CountingModelServer(latency=0.4) as server:
        pg_cluster.env.update(env_for(server))
        worker = pg_cluster.start_worker("w1")
        pg_cluster.wait_until_up(worker)
        [run_id] = pg_cluster.submit("feedback-analysis", str(SAMPLE_CSV), "--model", MODEL_SPEC)
        _wait_running(pg_cluster, run_id, worker)
        worker.process.send_signal(signal.SIGTERM)
        assert worker.process.wait(timeout=120) == 0
        log = worker.log_text()
        assert f"finishing {run_id}" in log
        assert f"done {run_id}: completed" in log and log.rstrip().endswith("stopped")
        assert pg_cluster.runs([run_id])[run_id].status == "completed"
        [row] = [w for w in pg_cluster.store.list_workers() if w.executor_id == "w1"]
        assert row.stopped_at is not None  # stopped on its own: nobody takes its runs over


def test_a_second_signal_hands_the_runs_over_at_once(pg_cluster: Cluster) -> None:
    with CountingModelServer(latency=0.4) as server:
        pg_cluster.env.update(env_for(server))
        # --dead-after 300: only the hand-over, not a stale heartbeat, can move the run.
        first = pg_cluster.start_worker("w1", "--dead-after", "300")
        pg_cluster.wait_until_up(first)
        [run_id] = pg_cluster.submit("feedback-analysis", str(SAMPLE_CSV), "--model", MODEL_SPEC)
        _wait_running(pg_cluster, run_id, first)
        second = pg_cluster.start_worker("w2", "--dead-after", "300")
        pg_cluster.wait_until_up(second)
        first.process.send_signal(signal.SIGTERM)
        pg_cluster.wait_log(first, "stopping: taking no more runs")
        first.process.send_signal(signal.SIGINT)
        assert first.process.wait(timeout=30) == 1
        assert "handing runs in progress over" in first.log_text()
        runs = pg_cluster.wait_terminal([run_id], timeout=120)
        assert runs[run_id].status == "completed" and runs[run_id].worker == "w2"
        log = pg_cluster.wait_log(second, f"done {run_id}: completed")
        assert "worker w1 stopped answering" in log and f"resume {run_id}" in log


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
        again = pg_cluster.start_worker("w1", "--dead-after", "300")
        runs = pg_cluster.wait_terminal([run_id], timeout=120)
        assert runs[run_id].status == "completed" and runs[run_id].worker == "w1"
        assert f"resume {run_id}" in pg_cluster.wait_log(again, f"done {run_id}: completed")
        assert set(server.repeated()) <= in_flight
