"""Many runs on several workers, one of them killed with SIGKILL mid-way (issue 13).

Every process here is real: `runlens submit`, three `runlens worker` processes with their own
executor ids and runs homes, the machine's PostgreSQL, and an OpenAI-compatible model server
on 127.0.0.1 that answers as the offline analyst and counts every request it receives.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from runlens.verdict.keys import key_id, load_public_key
from workers.cluster import TERMINAL, Cluster, make_cluster
from workers.model_server import (
    MODEL_SPEC,
    SAMPLE_CSV,
    CountingModelServer,
    distinct_inputs,
    env_for,
)

ARTIFACTS = (
    "artifacts/feedback_analysis.json",
    "artifacts/product_backlog.json",
    "artifacts/insight_report.md",
    "artifacts/insight_chart.svg",
)


def _reference_hashes(inputs: list[Path], root: Path) -> dict[str, dict[str, str]]:
    """Each input run uninterrupted, in this process, with the offline analyst itself."""
    from runlens.models.registry import ModelContext, resolve_model
    from runlens.plugins import load_plugin
    from runlens.runtime.run import RunSettings, run_plugin

    plugin = load_plugin("feedback-analysis")
    hashes = {}
    for path in inputs:
        workspace = root / path.stem
        result = asyncio.run(
            run_plugin(
                plugin,
                path,
                resolve_model("offline", ModelContext(plugin=plugin)),
                workspace=workspace,
                settings=RunSettings(validator_plugins=False),
            )
        )
        assert result.status == "completed", result.error_message
        hashes[path.name] = {
            name: hashlib.sha256((workspace / name).read_bytes()).hexdigest() for name in ARTIFACTS
        }
    return hashes


def test_thirty_runs_on_three_workers_survive_a_kill_9(pg_cluster: Cluster, tmp_path: Path) -> None:
    inputs = distinct_inputs(30, tmp_path / "inputs")
    with CountingModelServer(latency=0.25) as server:
        pg_cluster.env.update(env_for(server))
        workers = [
            pg_cluster.start_worker(
                name, "--concurrency", "3", "--dead-after", "3", "--provider-limit", "openai=7"
            )
            for name in ("w1", "w2", "w3")
        ]
        for worker in workers:
            pg_cluster.wait_until_up(worker)
        run_ids = pg_cluster.submit("feedback-analysis", *map(str, inputs), "--model", MODEL_SPEC)
        assert len(run_ids) == 30

        # Kill w1 once some runs have ended and it holds two or more runs still running (a run
        # already validating may end in the moment between this poll and the kill).
        victim = workers[0]
        deadline = time.monotonic() + 120
        while True:
            runs = pg_cluster.runs(run_ids)
            done = sum(run.status == "completed" for run in runs.values())
            held = [
                run_id
                for run_id, run in runs.items()
                if run.worker == victim.name and run.status == "running"
            ]
            if done >= 4 and len(held) >= 2:
                break
            assert time.monotonic() < deadline, "no moment to kill w1 came"
            time.sleep(0.05)
        victim.process.send_signal(signal.SIGKILL)
        killed_at = time.time()
        victim.process.wait(timeout=10)
        in_flight = {request.fingerprint for request in server.in_flight_at(killed_at, grace=1.0)}
        # A run may have ended on w1 between reading the store and the kill (a slow poll on a
        # loaded machine): the runs to follow are the ones w1 left unfinished.
        runs = pg_cluster.runs(held)
        held = [run_id for run_id in held if runs[run_id].status not in TERMINAL]
        assert held, "w1 finished every run it held before the kill"

        runs = pg_cluster.wait_terminal(run_ids, timeout=400)
        assert {run.status for run in runs.values()} == {"completed"}, {
            run_id: (run.status, run.error_message) for run_id, run in runs.items()
        }
        # The runs w1 held were resumed elsewhere, and say which worker finished them.
        for run_id in held:
            assert runs[run_id].worker in {"w2", "w3"}
        survivors = "".join(worker.log_text() for worker in workers[1:])
        assert "worker w1 stopped answering" in survivors
        assert all(f"resume {run_id}" in survivors for run_id in held)
        assert "stopped answering" not in workers[0].log_text()  # nobody was taken for dead early
        assert survivors.count("stopped answering") == 1

        # No model call was sent twice, except the ones in flight when w1 died.
        repeated = server.repeated()
        assert set(repeated) <= in_flight, (repeated, len(in_flight))
        assert all(count == 2 for count in repeated.values())
        # The provider limit held across the three workers.
        assert server.max_concurrent() <= 7

    # Every run's artifacts are those of an uninterrupted run of its input.
    # (Each input once: a held run's input may be one of the first two.)
    checked = [path for path in inputs if any(runs[r].input_name == path.name for r in held)]
    expected = _reference_hashes(
        list(dict.fromkeys([*checked, *inputs[:2]])), tmp_path / "reference"
    )
    by_input = {run.input_name: run_id for run_id, run in runs.items()}
    for name, hashes in expected.items():
        files = pg_cluster.store.file_index(by_input[name])
        assert {path: files[path][0] for path in ARTIFACTS} == hashes, name


def test_a_queued_run_can_be_cancelled_and_a_running_one_stopped(
    pg_cluster: Cluster,
) -> None:
    with CountingModelServer(latency=1.5) as server:
        pg_cluster.env.update(env_for(server))
        first, second = pg_cluster.submit(
            "feedback-analysis", str(SAMPLE_CSV), str(SAMPLE_CSV), "--model", MODEL_SPEC
        )
        cancelled = pg_cluster.runlens("cancel", second)
        assert cancelled.returncode == 0, cancelled.stderr
        assert pg_cluster.runs([second])[second].status == "cancelled"

        worker = pg_cluster.start_worker("w1")
        pg_cluster.wait_until_up(worker)
        assert server.wait_for(2, timeout=60)  # the first run is talking to the model
        stop = pg_cluster.runlens("cancel", first[-6:])
        assert stop.returncode == 0, stop.stderr
        assert "cancel requested" in stop.stdout
        runs = pg_cluster.wait_terminal([first, second], timeout=60)
        assert runs[first].status == "cancelled"
        assert runs[second].status == "cancelled"
        assert runs[second].worker is None  # no worker ever took it
        again = pg_cluster.runlens("cancel", first)
        assert again.returncode == 1 and "has ended already" in again.stderr
        log = pg_cluster.wait_log(worker, f"done {first}: cancelled")
        assert f"take {first}" in log
        assert second not in log


def test_submit_refuses_what_no_worker_could_run(pg_cluster: Cluster, tmp_path: Path) -> None:
    cases = [
        (("feedback-analysis", str(tmp_path / "nope.csv")), "input file not found"),
        (("no-such-plugin", str(SAMPLE_CSV)), "no-such-plugin"),
        (("feedback-analysis", str(SAMPLE_CSV), "--model", "scripted:/tmp/x.json"), "scripted"),
        (("feedback-analysis", str(SAMPLE_CSV), "--model", "nosuch:m"), "unknown provider"),
    ]
    for args, message in cases:
        done = pg_cluster.runlens("submit", *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
        assert done.stdout == ""
    assert pg_cluster.store.list_runs() == ([], 0)


def test_one_machine_on_sqlite_and_the_store_shows_everything(tmp_path: Path) -> None:
    cluster = make_cluster(tmp_path, f"sqlite:///{tmp_path / 'shared' / 'runlens.db'}")
    try:
        run_ids = cluster.submit("feedback-analysis", str(SAMPLE_CSV), str(SAMPLE_CSV))
        queued = json.loads(cluster.runlens("runs", "--json", "--limit", "5").stdout)
        assert {run["status"] for run in queued} == {"queued"}
        worker = cluster.start_worker("solo", "--concurrency", "2")
        runs = cluster.wait_terminal(run_ids, timeout=120)
        assert {run.status for run in runs.values()} == {"completed"}
        assert {run.worker for run in runs.values()} == {"solo"}
        # Another "machine" (another runs home, no workspace of these runs) sees it all.
        listed = json.loads(cluster.runlens("runs", "--json", home="elsewhere").stdout)
        assert {run["run_id"]: run["worker"] for run in listed} == dict.fromkeys(run_ids, "solo")
        shown = json.loads(cluster.runlens("show", run_ids[0], "--json", home="elsewhere").stdout)
        hashes = shown["artifact_hashes"]
        files = cluster.store.file_index(run_ids[0])
        for name in ARTIFACTS:
            assert hashes[name] == files[name][0]
        cluster.wait_log(worker, f"done {run_ids[0]}: completed")
        # The worker signed each verdict with its own home's key, which `runlens verify`
        # checks where the workspaces are; the submitting side made no key.
        worker_key = key_id(load_public_key(cluster.root / "solo" / "keys" / "default.pub.pem"))
        for run_id in run_ids:
            done = subprocess.run(
                [sys.executable, "-m", "runlens", "verify", run_id, "--json"],
                env={**cluster.env, "RUNLENS_HOME": str(cluster.root / "solo")},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            checks = {check["check"]: check for check in json.loads(done.stdout)["checks"]}
            assert all(check["ok"] for check in checks.values())
            assert worker_key in checks["signature"]["detail"]
        assert not (cluster.root / "client" / "keys").exists()
    finally:
        cluster.stop()


def test_a_provider_limit_holds_across_workers(pg_cluster: Cluster, tmp_path: Path) -> None:
    inputs = distinct_inputs(6, tmp_path / "inputs")
    with CountingModelServer(latency=0.6) as server:
        pg_cluster.env.update(env_for(server))
        workers = [
            pg_cluster.start_worker(name, "--concurrency", "3", "--provider-limit", "openai=2")
            for name in ("w1", "w2")
        ]
        for worker in workers:
            pg_cluster.wait_until_up(worker)
        run_ids = pg_cluster.submit("feedback-analysis", *map(str, inputs), "--model", MODEL_SPEC)
        runs = pg_cluster.wait_terminal(run_ids, timeout=300)
        assert {run.status for run in runs.values()} == {"completed"}
        # Six slots between the two workers, two for the provider: never more at once, and
        # the two were used (one run's calls go one at a time).
        assert server.max_concurrent() == 2
        assert server.repeated() == {}
