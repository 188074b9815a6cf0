"""A store, its queue, and real worker processes on it: what the worker tests drive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest
import sqlalchemy as sa

from runlens.store import RunStore, open_store
from runlens.store.rows import RunSummary
from runlens.workers.system import system_database

TERMINAL = {"completed", "failed", "cancelled", "interrupted"}


@dataclass
class WorkerProcess:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    log: IO[bytes]

    def log_text(self) -> str:
        self.log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    @property
    def executor_id(self) -> str:
        return self.name


@dataclass
class Cluster:
    """Workers and submissions on one store, each worker with its own runs home."""

    root: Path
    url: str
    env: dict[str, str]
    workers: list[WorkerProcess] = field(default_factory=list)
    _store: RunStore | None = None

    @property
    def store(self) -> RunStore:
        if self._store is None:
            self._store = open_store(self.url)
        return self._store

    def runlens(
        self, *args: str, home: str = "client", timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        env = {**self.env, "RUNLENS_HOME": str(self.root / home)}
        return subprocess.run(
            [sys.executable, "-m", "runlens", *args, "--database-url", self.url],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def submit(self, *args: str) -> list[str]:
        done = self.runlens("submit", *args)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        return [line.split(" ", 1)[0] for line in lines]

    def start_worker(self, name: str, *args: str, executor_id: str | None = None) -> WorkerProcess:
        """A `runlens worker` process logging to `<name>.log`, its executor id `name` unless
        `executor_id` says otherwise."""
        log_path = self.root / f"{name}.log"
        log = log_path.open("wb")
        env = {**self.env, "RUNLENS_HOME": str(self.root / name)}
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "runlens",
                "worker",
                "--executor-id",
                executor_id or name,
                "--database-url",
                self.url,
                *args,
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        worker = WorkerProcess(executor_id or name, process, log_path, log)
        self.workers.append(worker)
        return worker

    def wait_until_up(self, worker: WorkerProcess, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while " up on " not in worker.log_text():
            assert worker.process.poll() is None, worker.log_text()
            assert time.monotonic() < deadline, worker.log_text()
            time.sleep(0.1)

    def wait_log(self, worker: WorkerProcess, text: str, timeout: float = 90) -> str:
        """The worker's log once it holds `text` (a run's last line comes just after the
        store shows the run ended)."""
        deadline = time.monotonic() + timeout
        while text not in (log := worker.log_text()):
            assert time.monotonic() < deadline, f"{text!r} not in the log of {worker.name}:\n{log}"
            time.sleep(0.1)
        return log

    def held(self) -> dict[str, int]:
        """How many runs each executor holds now, as DBOS sees it: workflows it has taken
        from a queue (PENDING on it) and not finished. PostgreSQL stores only."""
        _, schema = system_database(self.url)
        query = sa.text(
            f'SELECT executor_id, count(*) FROM "{schema}".workflow_status '
            "WHERE status = 'PENDING' GROUP BY executor_id"
        )
        with self.store.engine.connect() as connection:
            return {str(row[0]): int(row[1]) for row in connection.execute(query)}

    def events(self, run_id: str) -> list[dict[str, Any]]:
        return self.store.events(run_id)

    def runs(self, run_ids: list[str]) -> dict[str, RunSummary]:
        found: dict[str, RunSummary] = {}
        for run_id in run_ids:
            row = self.store.get_run(run_id)
            assert row is not None, run_id
            found[run_id] = row
        return found

    def wait_terminal(self, run_ids: list[str], timeout: float) -> dict[str, RunSummary]:
        deadline = time.monotonic() + timeout
        while True:
            runs = self.runs(run_ids)
            if all(run.status in TERMINAL for run in runs.values()):
                return runs
            if time.monotonic() > deadline:
                states = {run_id: run.status for run_id, run in runs.items()}
                logs = "\n".join(w.log_text()[-3000:] for w in self.workers)
                pytest.fail(f"runs not ended after {timeout}s: {states}\n{logs}")
            time.sleep(0.25)

    def stop(self) -> None:
        for worker in self.workers:
            if worker.process.poll() is None:
                worker.process.send_signal(signal.SIGTERM)
        for worker in self.workers:
            try:
                worker.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
            worker.log.close()
        if self._store is not None:
            self._store.close()


def make_cluster(root: Path, url: str, extra_env: dict[str, Any] | None = None) -> Cluster:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RUNLENS_", "OPENAI_", "ANTHROPIC_"))
    }
    env.update({"RUNLENS_RETRY_INITIAL_DELAY": "0.05", **(extra_env or {})})
    return Cluster(root=root, url=url, env=env)
