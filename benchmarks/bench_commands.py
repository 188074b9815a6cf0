"""Wall time of the `runlens` commands a person types, each a new process.

    python benchmarks/bench_commands.py [--runs 1000] [--repeat 7]
        [--runlens "python -m runlens"] [--runlens "PYTHONPATH=/old/src python -m runlens"]

1. Builds a runs home (`--home`, default a temporary folder): one short scripted run
   (`feedback-analysis` on `examples/sample_feedback.csv` with the model file
   `examples/scripts/passing.json`), copied until the home holds `--runs` workspaces, each
   copy with a run id of its own (its records name it; nothing else changes). A home given
   with `--home` that already holds runs is used as it is.
2. Times, as new processes: `runlens --help`; a short scripted `runlens run` (the same run,
   in a home of its own whose store is already made, the way runs follow one another);
   `runlens runs` (the newest 20) and `runlens show RUN --no-events` over the home of
   `--runs` runs. Each command is run once untimed first, which lets a store index the home's
   workspaces (what the first listing after copying them does once) and a fresh store's
   first run create its tables.
3. Prints each command's median wall time with the fastest and slowest round, and the same
   for its CPU time (user and system, the process and its children): on a loaded machine
   the wall time follows the load, the CPU time much less. With more than one `--runlens`,
   rounds alternate between them and each figure is also given as a ratio to the first
   command's, taken within the same rounds.

`--runlens` is the command prefix that runs RunLens, split like a shell line; leading
`NAME=value` words go to its environment, so another checkout is measured with
`--runlens "PYTHONPATH=/path/to/old/src python -m runlens"`. The home is built with the
first prefix. Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample_feedback.csv"
SCRIPT = ROOT / "examples" / "scripts" / "passing.json"


@dataclass
class Runlens:
    """One way to run RunLens: the words of its command and what it adds to the environment."""

    label: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, prefix: str) -> Runlens:
        words = shlex.split(prefix)
        env: dict[str, str] = {}
        while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        if not words:
            raise SystemExit(f"--runlens {prefix!r} names no command")
        if words[0] == "python":
            words[0] = sys.executable
        return cls(prefix, words, env)

    def run(self, *args: object, home: Path, check: bool = True) -> tuple[float, float, str]:
        """Run `runlens ARGS` with `home` as its runs home: wall seconds, CPU seconds (user
        and system, of the process and its children) and stdout."""
        env = {**os.environ, **self.env, "RUNLENS_HOME": str(home), "COLUMNS": "120"}
        env.pop("RUNLENS_DATABASE_URL", None)
        cpu_before = _children_cpu()
        started = time.perf_counter()
        done = subprocess.run(
            [*self.argv, *map(str, args)], env=env, capture_output=True, text=True, check=False
        )
        seconds = time.perf_counter() - started
        cpu = _children_cpu() - cpu_before
        if check and done.returncode != 0:
            raise SystemExit(
                f"{self.label} {' '.join(map(str, args))} exited {done.returncode}:\n"
                f"{done.stderr[-2000:]}"
            )
        return seconds, cpu, done.stdout


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def scripted_run() -> list[object]:
    """`runlens run` of the sample with the passing model file: a short run, no provider."""
    return ["run", "feedback-analysis", SAMPLE, "--model", f"scripted:{SCRIPT}", "--json"]


def build_home(runlens: Runlens, home: Path, runs: int) -> str:
    """Fill `home` with `runs` workspaces (one real run and copies of it); a run id in it."""
    existing = sorted(path.parents[1].name for path in home.glob("*/runtime/run.json"))
    if existing:
        print(f"home {home}: {len(existing)} runs already (used as they are)")
        return existing[len(existing) // 2]
    home.mkdir(parents=True, exist_ok=True)
    _, _, stdout = runlens.run(*scripted_run(), home=home)
    first = json.loads(stdout)["run_id"]
    source = home / first
    started = time.perf_counter()
    for number in range(1, runs):
        run_id = f"{first[:-6]}{number:06x}"
        copy_workspace(source, home / run_id, first, run_id)
    print(
        f"home {home}: 1 run and {runs - 1} copies ({time.perf_counter() - started:.1f} s to copy)"
    )
    return f"{first[:-6]}{runs // 2:06x}" if runs > 1 else first


def copy_workspace(source: Path, target: Path, old_id: str, new_id: str) -> None:
    """`source` copied to `target`, its run id replaced in the run's own records (the
    deliverables under `artifacts/` and the input stay byte for byte, so their hashes hold)."""
    shutil.copytree(source, target)
    for path in (target / "runtime").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if old_id.encode() in data:
                path.write_bytes(data.replace(old_id.encode(), new_id.encode()))


def measure(
    commands: Sequence[Runlens], home: Path, run_homes: Path, run_id: str, repeat: int
) -> None:
    """Time each command of each `commands` `repeat` times, rounds interleaved; print."""
    cases: dict[str, list[object]] = {
        "runlens --help": ["--help"],
        "short scripted run": scripted_run(),
        "runlens runs": ["runs"],
        "runlens show": ["show", run_id, "--no-events"],
    }

    def home_of(name: str, number: int) -> Path:
        # Each checkout makes its scripted runs in a home of its own: a store made by one
        # version is not another's to open.
        return run_homes / str(number) if name == "short scripted run" else home

    for name, args in cases.items():  # untimed: a store indexes the home, a fresh one is made
        for number, runlens in enumerate(commands):
            runlens.run(*args, home=home_of(name, number))
    walls: dict[tuple[str, int], list[float]] = {}
    cpus: dict[tuple[str, int], list[float]] = {}
    for _ in range(repeat):
        for name, args in cases.items():
            for number, runlens in enumerate(commands):
                wall, cpu, _ = runlens.run(*args, home=home_of(name, number))
                walls.setdefault((name, number), []).append(wall)
                cpus.setdefault((name, number), []).append(cpu)
    for title, timings in (("wall", walls), ("CPU (user + system)", cpus)):
        print(
            f"\n{title} seconds, median (fastest-slowest) of {repeat} rounds, each a new "
            "process; x: median ratio to the first command within a round"
        )
        for name in cases:
            base = timings[(name, 0)]
            for number, runlens in enumerate(commands):
                values = timings[(name, number)]
                ratios = [value / first for value, first in zip(values, base, strict=True)]
                ratio = f"  x{statistics.median(ratios):.2f}" if number else ""
                print(
                    f"  {name:<20} {statistics.median(values):6.3f} s "
                    f"({min(values):.3f}-{max(values):.3f}){ratio}  [{runlens.label}]"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="workspaces in the runs home")
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds (median)")
    parser.add_argument("--home", type=Path, default=None, help="runs home to build or reuse")
    parser.add_argument(
        "--runlens",
        action="append",
        default=None,
        help='command prefix that runs RunLens (default: "python -m runlens"); repeat it to '
        "compare checkouts within the same rounds",
    )
    args = parser.parse_args()
    commands = [Runlens.parse(prefix) for prefix in args.runlens or ["python -m runlens"]]
    with tempfile.TemporaryDirectory(prefix="runlens-commands-") as scratch:
        home = args.home or Path(scratch) / "home"
        run_id = build_home(commands[0], home, args.runs)
        measure(commands, home, Path(scratch) / "scripted-runs", run_id, args.repeat)


if __name__ == "__main__":
    main()
