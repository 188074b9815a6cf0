"""`runlens submit --as NAME`: who queued a run travels the queue to the worker that runs it,
and is in the store from the moment the run is queued (SPEC 17: the review policy may forbid
the submitter to approve it)."""

from __future__ import annotations

import json
from pathlib import Path

from workers.cluster import make_cluster

SAMPLE_CSV = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"


def test_a_queued_run_keeps_its_submitter_from_the_queue_to_its_record(tmp_path: Path) -> None:
    cluster = make_cluster(tmp_path, f"sqlite:///{tmp_path / 'shared' / 'runlens.db'}")
    try:
        (named,) = cluster.submit("feedback-analysis", str(SAMPLE_CSV), "--as=alice")
        queued = cluster.store.get_run(named)
        assert queued is not None and queued.status == "queued"
        assert queued.submitted_by == "alice"
        cluster.start_worker("solo")
        (run,) = cluster.wait_terminal([named], timeout=120).values()
        assert run.status == "completed" and run.submitted_by == "alice"
        record = cluster.store.read_file(named, "runtime/run.json")
        assert record is not None
        assert json.loads(record)["submitted_by"] == "alice"
        refused = cluster.runlens("submit", "feedback-analysis", str(SAMPLE_CSV), "--as=a b")
        assert refused.returncode == 2 and "reviewer name 'a b'" in refused.stderr
    finally:
        cluster.stop()
