"""The speed goals' table in one run: every benchmark that measures a goal, run in turn, and
the goal rows they print gathered into one table with the machine and load beside it.

    python benchmarks/goals.py [--only bench_peers,baseline,...] [--quick]
        [--database-url postgresql://root@127.0.0.1:5432/test] [--log-dir DIR]

A benchmark prints a goal as a Markdown table row after a "Goals" line:
`| goal | figure | comparison | met? |` (`bench_peers.goal_row`), its figure taken beside its
comparison in the same run (interleaved rounds, ratios within a round). This script copies
those rows in order; a benchmark that printed none gets a row saying so, and its whole
output stays in `--log-dir` (default: a temporary folder, named at the end). `--quick` runs
each with small sizes, to check the harness rather than to measure. The table goes to
docs/performance.md by hand, with its "Machine and load" line. The benchmarks measure the
RunLens this interpreter imports: from a checkout, run it with `PYTHONPATH=src`
(baseline.py sets each tree's path itself).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (script, arguments, arguments with --quick). Each prints its own goal rows, or its figures.
BENCHMARKS: tuple[tuple[str, list[str], list[str]], ...] = (
    (
        "bench_peers",
        ["--calls", "10,100", "--rounds", "5"],
        ["--calls", "3,10", "--rounds", "1", "--steps", "40", "--concurrent", "20"],
    ),
    ("baseline", ["--rounds", "5"], ["--rounds", "1", "--runs-home-size", "20", "--steps", "40"]),
    ("bench_runtime", [], ["--runs", "20", "--repeat", "1", "--concurrent", "20"]),
    ("bench_validation", [], ["--rows", "2000", "--rounds", "1"]),
    ("bench_pages", [], []),
    ("bench_offline", ["--rows", "100000"], ["--rows", "2000"]),
    ("bench_evidence", [], ["--rows", "20000", "--repeat", "1"]),
)
#: The benchmarks that take `--database-url` (a PostgreSQL store beside SQLite).
WITH_DATABASE = ("bench_peers", "baseline")


def machine() -> str:
    """CPU model, cores, memory, system and Python: the machine part of "Machine and load"."""
    model = platform.processor() or platform.machine()
    with_cpuinfo = Path("/proc/cpuinfo")
    if with_cpuinfo.is_file():
        for line in with_cpuinfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        total_kib = int(meminfo.read_text(encoding="utf-8").split()[1])
        memory = f", {total_kib / 2**20:.0f} GiB"
    return (
        f"{model}, {os.cpu_count()} cores{memory}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f}"


def goal_rows(output: str) -> list[str]:
    """The goal rows a benchmark printed: table rows after its "Goals" line, header left out."""
    lines = output.splitlines()
    if "Goals" not in lines:
        return []
    rows = lines[lines.index("Goals") + 1 :]
    header = ("| goal | figure | comparison | met? |", "| --- | --- | --- | --- |")
    return [row for row in rows if row.startswith("| ") and row not in header]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated benchmarks (default: all that exist)")
    parser.add_argument("--quick", action="store_true", help="small sizes: check, not measure")
    parser.add_argument("--database-url", help="PostgreSQL for the benchmarks that take one")
    parser.add_argument("--log-dir", type=Path, help="where each benchmark's output is kept")
    args = parser.parse_args()
    chosen = args.only.split(",") if args.only else [name for name, _, _ in BENCHMARKS]
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="runlens_goals_"))
    log_dir.mkdir(parents=True, exist_ok=True)
    started_at = datetime.datetime.now(datetime.UTC)
    loads = [load()]
    table = ["| goal | figure | comparison | met? |", "| --- | --- | --- | --- |"]
    for name, full, quick in BENCHMARKS:
        script = HERE / f"{name}.py"
        if name not in chosen:
            continue
        if not script.is_file():
            table.append(f"| {name}.py | not in this tree | – | – |")
            continue
        command = [sys.executable, str(script), *(quick if args.quick else full)]
        if args.database_url and name in WITH_DATABASE:
            command += ["--database-url", args.database_url]
        print(f"running {' '.join(command[1:])}", file=sys.stderr, flush=True)
        began = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        took = time.perf_counter() - began
        (log_dir / f"{name}.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
        loads.append(load())
        rows = goal_rows(done.stdout)
        if done.returncode != 0:
            rows.append(f"| {name}.py | exited {done.returncode} | see {name}.txt | – |")
        elif not rows:
            rows.append(f"| {name}.py | printed no goal row: see {name}.txt | – | – |")
        table.extend(rows)
        print(f"  {name}: {took:.0f} s, {len(rows)} rows", file=sys.stderr, flush=True)
    print("\n".join(table))
    print(
        f"\nMachine and load: {machine()}; load average (1 / 5 / 15 min) at the start and "
        f"after each benchmark: {'; '.join(loads)}; {started_at:%Y-%m-%d %H:%M} UTC."
    )
    print(f"Each benchmark's output: {log_dir}")


if __name__ == "__main__":
    main()
