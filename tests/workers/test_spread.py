"""Runs queued before the workers start are spread over them (issue 23, item 5): a worker
never holds more runs than its --concurrency, and every live worker of a store runs the same.

Real `runlens submit` and `runlens worker` processes on the machine's PostgreSQL; what a
worker holds is read from DBOS's own table (workflows PENDING on its executor id), polled
all along.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

from workers.cluster import Cluster
from workers.model_server import MODEL_SPEC, CountingModelServer, distinct_inputs, env_for


class HeldProbe:
    """Polls how many runs each executor holds, every 20 ms, keeping the most seen."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.most: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> HeldProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _poll(self) -> None:
        while not self._stop.is_set():
            for executor_id, count in self.cluster.held().items():
                self.most[executor_id] = max(self.most[executor_id], count)
            self._stop.wait(0.02)


def test_runs_queued_first_go_to_every_worker_within_its_concurrency(
    pg_cluster: Cluster, tmp_path: Path
) -> None:
    inputs = distinct_inputs(10, tmp_path / "inputs")
    with CountingModelServer(latency=0.3) as server:
        pg_cluster.env.update(env_for(server))
        run_ids = pg_cluster.submit("feedback-analysis", *map(str, inputs), "--model", MODEL_SPEC)
        with HeldProbe(pg_cluster) as probe:
            first = pg_cluster.start_worker("w1", "--concurrency", "2")
            pg_cluster.wait_until_up(first)
            # The first worker alone, with ten runs waiting: it takes two, not ten.
            time.sleep(2.0)
            assert probe.most["w1"] == 2, dict(probe.most)
            second = pg_cluster.start_worker("w2", "--concurrency", "2")
            pg_cluster.wait_until_up(second)
            runs = pg_cluster.wait_terminal(run_ids, timeout=300)
        assert {run.status for run in runs.values()} == {"completed"}
        assert probe.most["w1"] == 2 and probe.most["w2"] == 2, dict(probe.most)
        finished_by = Counter(run.worker for run in runs.values())
        assert finished_by["w1"] >= 2 and finished_by["w2"] >= 2, finished_by
        assert server.max_concurrent() <= 4
        assert server.repeated() == {}
        assert "run(s) at a time per queue" in first.log_text()


def test_a_worker_with_another_concurrency_is_refused(pg_cluster: Cluster) -> None:
    first = pg_cluster.start_worker("w1", "--concurrency", "2")
    pg_cluster.wait_until_up(first)
    other = pg_cluster.start_worker("w2", "--concurrency", "3")
    assert other.process.wait(timeout=60) == 2
    log = other.log_text()
    assert "--concurrency 3: the live workers of this store run another (w1 on " in log, log
    assert ": 2)" in log and "Traceback" not in log
    assert len(log.strip().splitlines()) == 1, log
    # Refused, it left no live row behind, and w1 runs on with its own value.
    [row] = [w for w in pg_cluster.store.list_workers() if w.executor_id == "w2"]
    assert row.stopped_at is not None
    assert first.process.poll() is None
    same = pg_cluster.start_worker("w3", "--concurrency", "2")
    pg_cluster.wait_until_up(same)
