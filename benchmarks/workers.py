"""Durable runs on several workers, queued first: N runs on 1, 2 and 3 workers started after.

    python benchmarks/workers.py [--runs 12] [--latency 1.0] [--workers 1 2 3] [--concurrency 2]
        [--database postgresql://postgres@127.0.0.1:5432/test] [--no-warm-up] [--dir DIR]

For each number of workers W, from scratch:

1. a fresh PostgreSQL schema for the run store (`bench_workers_<pid>_<W>w`; DBOS keeps the
   queue in `<schema>_dbos`), used through `--database-url
   postgresql://...?options=-csearch_path%3D<schema>`;
2. the counting model server (`tests/workers/model_server.py`) in a process of its own: an
   OpenAI-compatible server answering as the offline analyst after `--latency` seconds per
   request;
3. a warm-up (unless `--no-warm-up`): one worker runs W runs and stops, so the model server
   has loaded its analysis code and the machine's caches are warm; the server's counts are
   then reset;
4. `runlens submit feedback-analysis` of N copies of examples/sample_feedback.csv (each
   differing in its first row, so no two runs send the same request) with
   `--model openai:...`: every run is in the queue before any worker exists;
5. then W `runlens worker --concurrency C` processes, each with its own workspace folder as
   if it ran on a machine of its own, started at once; until every run has ended in the
   store (a plain SQL poll of its `runs` table: a `runlens runs` process per poll would take
   a second of CPU from the workers each time), the runs each worker holds are polled from
   DBOS's own table (workflows PENDING on its executor id);
6. the workers are stopped (SIGTERM), the model server too, and both schemas dropped.

Printed per configuration: the wall time, from starting the workers to the last run's
`finished_at` (so it includes each worker's start, seconds of imports); the speed-up over
one worker and the efficiency (speed-up / W); how long the workers took to be up; how many
runs completed, and how many each worker finished; the most runs any one worker held at
once (never above C); the model requests, how many of them were sent again, and the most
the server had in flight at once.

Also printed: the machine's cores, and the model time per run (its requests x the latency),
which more workers overlap perfectly. Each run also costs CPU (the tools, the validators, the
store and queue writes, and PostgreSQL's share): on a machine with fewer cores than workers
the runs compete for them, and the efficiency drops for that reason rather than the queue's.

Everything goes to a temporary folder (`--dir`) and the two schemas of each configuration;
nothing else is written. This prints measurements; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

# The model server lives with the tests (and imports `feedback.*` from tests/, as pytest does).
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

from tests.workers.model_server import MODEL_SPEC, SAMPLE_CSV, distinct_inputs, env_for

REPO = Path(__file__).resolve().parents[1]
SERVER_SCRIPT = REPO / "tests" / "workers" / "model_server.py"
DEFAULT_DATABASE = "postgresql://postgres@127.0.0.1:5432/test"
TERMINAL = {"completed", "failed", "cancelled", "interrupted"}
_DIR: str | None = "/dev/shm" if Path("/dev/shm").is_dir() else None
#: What a worker logs once it takes runs (`runlens.workers.worker.Worker.run`).
WORKER_UP = re.compile(r"worker \S+: up on ")


@dataclass
class Outcome:
    workers: int
    #: Workers started to last run finished; None when not every run ended in time.
    wall: float | None
    #: Workers started to every worker up.
    up: float
    warm_up: float | None
    statuses: dict[str, int]
    #: Runs finished by each worker, most first.
    finished_by: list[int]
    #: The most runs one worker held at once.
    most_held: int
    server: dict[str, int]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=12, help="runs per configuration")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per model request")
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[1, 2, 3], help="worker counts to try"
    )
    parser.add_argument("--concurrency", type=int, default=2, help="runs at once per worker")
    parser.add_argument(
        "--database", default=DEFAULT_DATABASE, help="a PostgreSQL database (schemas go in it)"
    )
    parser.add_argument(
        "--no-warm-up", dest="warm_up", action="store_false", help="time cold workers"
    )
    parser.add_argument("--dir", default=_DIR, help="where the temporary folder goes")
    parser.add_argument("--poll", type=float, default=0.5, help="seconds between status polls")
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="seconds the runs of a configuration may take"
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.concurrency < 1 or min(args.workers) < 1:
        parser.error("--runs, --concurrency and --workers must be at least 1")
    if args.latency < 0 or args.poll <= 0 or args.timeout <= 0:
        parser.error("--latency must be >= 0, --poll and --timeout > 0")
    if not args.database.startswith(("postgresql://", "postgres://")):
        parser.error("--database must be a postgresql:// URL")
    args.workers = sorted(set(args.workers))
    return args


def store_url(database: str, schema: str) -> str:
    """The run store in `schema` of `database` (first on the search path)."""
    return f"{database}{'&' if '?' in database else '?'}options=-csearch_path%3D{schema}"


# -- the pieces ------------------------------------------------------------------------------


@contextmanager
def fresh_schemas(database: str, schema: str) -> Iterator[None]:
    """`schema` created empty, and it and DBOS's `<schema>_dbos` dropped afterwards."""
    import psycopg
    from psycopg import sql

    def drop(connection: Any) -> None:
        for name in (schema, f"{schema}_dbos"):
            connection.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name))
            )

    with psycopg.connect(database, autocommit=True) as connection:
        drop(connection)
        connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield
    finally:
        with psycopg.connect(database, autocommit=True) as connection:
            drop(connection)


@contextmanager
def model_server(latency: float, summary: dict[str, int]) -> Iterator[str]:
    """The counting model server in a process of its own: its base URL; `summary` is
    filled with its counts (since the last reset) once it has stopped."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "--port", "0", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the model server did not start (said {url!r})")
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            out, _ = process.communicate(timeout=30)
            summary.update(json.loads(out.strip().splitlines()[-1]))
        except (subprocess.TimeoutExpired, ValueError, IndexError):
            process.kill()
            process.wait()


def reset_counts(server: str) -> None:
    """Make the model server forget the requests so far (`POST /_reset`)."""
    request = urllib.request.Request(server.removesuffix("/v1") + "/_reset", b"{}", method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()


@contextmanager
def workers(
    count: int, url: str, concurrency: int, scratch: Path, env: dict[str, str], name: str
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` `runlens worker` processes named `name-<i>`, started at once and each up
    (taking runs); SIGTERM when done."""
    processes: list[subprocess.Popen[bytes]] = []
    logs = [scratch / f"{name}-{i}.log" for i in range(count)]
    try:
        for i, log in enumerate(logs):
            with log.open("wb") as out:
                command = [
                    *(sys.executable, "-m", "runlens", "worker"),
                    *("--concurrency", str(concurrency), "--database-url", url),
                    *("--home", str(scratch / f"{name}-{i}")),
                    *("--executor-id", f"{name}-{i}"),
                ]
                processes.append(
                    subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
                )
        deadline = time.monotonic() + 120
        waiting = set(range(count))
        while waiting:
            for i in sorted(waiting):
                text = logs[i].read_text(encoding="utf-8", errors="replace")
                if WORKER_UP.search(text):
                    waiting.discard(i)
                elif processes[i].poll() is not None or time.monotonic() > deadline:
                    state = f"exited {processes[i].returncode}" if processes[i].poll() else "hung"
                    raise RuntimeError(f"worker {i} did not come up ({state}):\n{text[-2000:]}")
            time.sleep(0.1)
        yield processes
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def runlens(*args: str, env: dict[str, str]) -> str:
    """`runlens ARGS` in a child process: its stdout (an error, with stderr, unless exit 0)."""
    done = subprocess.run(
        [sys.executable, "-m", "runlens", *args], capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        raise RuntimeError(f"runlens {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def submit(inputs: Sequence[Path], url: str, scratch: Path, env: dict[str, str]) -> set[str]:
    """`runlens submit` of `inputs`: the run ids."""
    printed = runlens(
        *("submit", "feedback-analysis", *map(str, inputs)),
        *("--model", MODEL_SPEC, "--database-url", url, "--home", str(scratch / "submit")),
        env=env,
    )
    return {line.split(" ", 1)[0] for line in printed.splitlines() if line.strip()}


def wait_until_ended(
    database: str, schema: str, run_ids: set[str], poll: float, timeout: float
) -> tuple[bool, int]:
    """Wait until every run of `run_ids` has a terminal status in the store: whether they
    all did before `timeout`, and the most runs one worker held at once meanwhile.

    One SQL query on the store's `runs` table and one on DBOS's `workflow_status` per poll:
    a `runlens runs` process would cost the machine more than a second of CPU each time,
    taken from the workers.
    """
    import psycopg
    from psycopg import sql

    ended = sql.SQL("SELECT count(*) FROM {}.runs WHERE run_id = ANY(%s) AND status = ANY(%s)")
    held = sql.SQL(
        "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM {}.workflow_status "
        "WHERE status = 'PENDING' AND workflow_uuid = ANY(%s) GROUP BY executor_id) AS h"
    )
    ended_query = ended.format(sql.Identifier(schema))
    held_query = held.format(sql.Identifier(f"{schema}_dbos"))
    most = 0
    deadline = time.monotonic() + timeout
    with psycopg.connect(database, autocommit=True) as connection:
        while time.monotonic() < deadline:
            row = connection.execute(held_query, (list(run_ids),)).fetchone()
            most = max(most, int(row[0]) if row is not None else 0)
            row = connection.execute(ended_query, (list(run_ids), sorted(TERMINAL))).fetchone()
            if row is not None and row[0] == len(run_ids):
                return True, most
            time.sleep(poll)
    return False, most


def _timestamp(value: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        return None


# -- one configuration -----------------------------------------------------------------------


def one(
    args: argparse.Namespace,
    count: int,
    inputs: Sequence[Path],
    warm_up: Sequence[Path],
    scratch: Path,
) -> Outcome:
    """N runs queued, then `count` workers started, from a fresh schema."""
    schema = f"bench_workers_{os.getpid()}_{count}w"
    url = store_url(args.database, schema)
    summary: dict[str, int] = {}
    hidden = ("RUNLENS_DATABASE_URL", "RUNLENS_QUEUE_SCHEMA", "RUNLENS_HOME")
    base = {name: value for name, value in os.environ.items() if name not in hidden}
    warmed: float | None = None
    with fresh_schemas(args.database, schema), model_server(args.latency, summary) as server:
        env = {**base, **env_for(server), "RUNLENS_HOME": str(scratch / "home")}
        if args.warm_up:
            began = time.time()
            with workers(1, url, args.concurrency, scratch, env, f"warm-{count}w"):
                warm_ids = submit(warm_up[:count], url, scratch, env)
                wait_until_ended(args.database, schema, warm_ids, args.poll, args.timeout)
            warmed = time.time() - began
            reset_counts(server)
        run_ids = submit(inputs, url, scratch, env)
        started = time.time()
        with workers(count, url, args.concurrency, scratch, env, f"bench-{count}w"):
            up = time.time() - started
            _, most_held = wait_until_ended(args.database, schema, run_ids, args.poll, args.timeout)
            listed = runlens(
                *("runs", "--json", "--limit", str(len(run_ids) + count)),
                *("--database-url", url, "--home", str(scratch / "poll")),
                env=env,
            )
    runs = {run["run_id"]: run for run in json.loads(listed) if run["run_id"] in run_ids}
    statuses: dict[str, int] = {}
    by_worker: dict[str, int] = {}
    for run_id in run_ids:
        status = runs.get(run_id, {}).get("status", "unlisted")
        statuses[status] = statuses.get(status, 0) + 1
        worker = str(runs.get(run_id, {}).get("worker"))
        by_worker[worker] = by_worker.get(worker, 0) + 1
    finished = [_timestamp(run.get("finished_at")) for run in runs.values()]
    ended = [f for f in finished if f is not None]
    done = all(status in TERMINAL for status in statuses) and len(ended) == len(run_ids)
    wall = max(ended) - started if done else None
    finished_by = sorted(by_worker.values(), reverse=True)
    return Outcome(count, wall, up, warmed, statuses, finished_by, most_held, summary)


# -- the table -------------------------------------------------------------------------------

COLUMNS = (
    ("workers", 7),
    ("wall s", 8),
    ("speed-up", 8),
    ("efficiency", 10),
    ("up s", 6),
    ("completed", 9),
    ("per worker", 12),
    ("max held", 8),
    ("requests", 8),
    ("sent again", 10),
    ("max in flight", 13),
)


def _line(cells: Sequence[str]) -> str:
    return " ".join(f"{cell:>{width}}" for cell, (_, width) in zip(cells, COLUMNS, strict=True))


def _row(outcome: Outcome, baseline: Outcome, runs: int) -> str:
    """One configuration's line of the table; `baseline` is the one with the fewest workers."""
    wall = speed_up = efficiency = ""
    if outcome.wall is None:
        wall = "timed out"
    else:
        wall = f"{outcome.wall:.1f}"
        if baseline.wall is not None:
            # Against one worker (or the fewest tried, times their number).
            ratio = baseline.wall * baseline.workers / outcome.wall
            speed_up, efficiency = f"{ratio:.2f}x", f"{ratio / outcome.workers:.0%}"
    server = outcome.server
    cells = [
        str(outcome.workers),
        wall,
        speed_up,
        efficiency,
        f"{outcome.up:.1f}",
        f"{outcome.statuses.get('completed', 0)}/{runs}",
        "/".join(map(str, outcome.finished_by)),
        str(outcome.most_held),
        str(server.get("requests", "?")),
        str(server.get("repeated", "?")),
        str(server.get("max_concurrent", "?")),
    ]
    notes = [f"{n} {s}" for s, n in sorted(outcome.statuses.items()) if s != "completed"]
    if outcome.warm_up is not None:
        notes.append(f"warm-up {outcome.warm_up:.1f} s")
    return _line(cells) + (f"  ({', '.join(notes)})" if notes else "")


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    cores = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    print(
        f"machine: {platform.node()}, {cores} cores ({usable} usable by this process), "
        f"load average {load}, Python {platform.python_version()}"
    )
    print(
        f"{args.runs} runs of feedback-analysis ({SAMPLE_CSV.name}) per configuration, model "
        f"latency {args.latency:g} s per request, {args.concurrency} run(s) at a time per "
        f"worker, all queued before the workers start, store {args.database}"
    )
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="runlens-bench-workers-", dir=args.dir) as folder:
        scratch = Path(folder)
        copies = distinct_inputs(args.runs + max(args.workers), scratch / "inputs")
        inputs, warm_up = copies[: args.runs], copies[args.runs :]
        print(_line([name for name, _ in COLUMNS]))
        for count in args.workers:
            outcome = one(args, count, inputs, warm_up, scratch)
            outcomes.append(outcome)
            print(_row(outcome, outcomes[0], args.runs), flush=True)
    requests = outcomes[0].server.get("requests", 0) if outcomes else 0
    if requests:
        per_run = requests / args.runs
        print(
            f"model time per run: {per_run:.1f} requests x {args.latency:g} s = "
            f"{per_run * args.latency:.1f} s; all {args.runs} runs one after another: "
            f"{args.runs * per_run * args.latency:.1f} s"
        )


if __name__ == "__main__":
    main()
