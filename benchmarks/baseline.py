"""The current tree against an old commit (default 9f49e1d, the commit before the run store),
measured side by side: old, now, and now / old.

    python benchmarks/baseline.py [--commit 9f49e1d] [--rounds 5] [--runs-home-size 1000]
        [--only run,listing,steps] [--database-url postgresql://...]

The old commit is checked out in a temporary git worktree (`git worktree add --detach`,
removed at the end). Both trees run under this interpreter (/work/venv's: its packages are a
superset of what the old commit needs) with `PYTHONPATH=<tree>/src`, each from its own
folder, so `python -m runlens` is that tree's CLI. Every figure is measured in interleaved
rounds (old, now, old, now, ...; the order alternates), the ratio taken within each round,
and the median printed. Sections:

- `run`: a short scripted `runlens run feedback-analysis` (each tree's
  examples/scripts/passing.json on examples/sample_feedback.csv), the whole process as a user
  times it. Each tree keeps one runs home across rounds (after one untimed run), as a user's
  does; now's run writes the SQLite store there (and PostgreSQL with `--database-url`).
- `listing`: `runlens runs` and `runlens show RUN` on a runs home of `--runs-home-size` runs.
  Each tree's home is built once: one scripted run by that tree, copied with new run ids. The
  old commit reads the workspaces from disk on every call. The current tree answers from the
  run store, which it fills from the workspaces it does not know on the first `runs`: "cold"
  is that first call (the store file deleted before each), "warm" a call after it.
- `steps`: microseconds per step of a run with 10 and 100 tool calls and the gap between two
  model calls, from benchmarks/bench_peers.py's RunLens worker (written against both trees'
  API) under each tree: old without a store (it has none), now without and with the SQLite
  store.

Each tree's bytecode is cached by its first (untimed) process, as an installed copy's is,
whatever PYTHONDONTWRITEBYTECODE says: without a cache every process compiles the sources
it imports, which weighs on the tree with more of them.

This prints measurements; it asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_peers import (
    Worker,
    gap_growth,
    goal_row,
    interleaved,
    print_table,
    start_worker,
)

ROOT = Path(__file__).resolve().parent.parent
OLD_COMMIT = "9f49e1d"


@contextlib.contextmanager
def old_tree(commit: str) -> Iterator[Path]:
    """`commit` checked out in a temporary worktree, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="runlens_baseline_")) / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(folder), commit],
        check=True,
    )
    try:
        yield folder
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], check=False
        )
        shutil.rmtree(folder.parent, ignore_errors=True)


class Tree:
    """One source tree: how to run its CLI and where its runs go."""

    def __init__(
        self,
        label: str,
        root: Path,
        scratch: Path,
        database_url: str = "",
    ) -> None:
        self.label = label
        self.root = root
        self.scratch = scratch / label.replace(" ", "_")
        self.scratch.mkdir(parents=True)
        self.env = dict(os.environ, PYTHONPATH=str(root / "src"), NO_COLOR="1", COLUMNS="120")
        self.env.pop("RUNLENS_DATABASE_URL", None)
        # As an installed copy runs (pip compiles it): each tree's bytecode cached in its
        # __pycache__ by its first (untimed) process. Under PYTHONDONTWRITEBYTECODE=1 a tree
        # without a cache compiles every source it imports in every process, which weighs
        # on the tree with more of them (and not on one a cache was left in).
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        if database_url:
            self.env["RUNLENS_DATABASE_URL"] = database_url

    def cli(self, *args: str, home: Path) -> float:
        """Wall seconds of `python -m runlens ARGS` with `home` as the runs home."""
        env = dict(self.env, RUNLENS_HOME=str(home))
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "runlens", *args],
            cwd=self.scratch,
            env=env,
            capture_output=True,
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(
                f"{self.label}: runlens {' '.join(args)} exited {done.returncode}:\n"
                f"{done.stderr.decode(errors='replace')[-2000:]}"
            )
        return elapsed

    def scripted_run(self, home: Path) -> float:
        examples = self.root / "examples"
        return self.cli(
            "run",
            "feedback-analysis",
            str(examples / "sample_feedback.csv"),
            "--model",
            f"scripted:{examples / 'scripts' / 'passing.json'}",
            "--json",
            home=home,
        )


def median_ratio(mine: list[float], base: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(mine, base, strict=True))


#: Goal rows gathered by the sections, printed at the end: (goal, figure, comparison, met).
GOALS: list[tuple[str, str, str, bool | None]] = []


def add_goal(goal: str, rows: dict[str, list[float]], label: str, base: str, limit: float) -> None:
    """A goal row: `label`'s median within-round ratio to `base`, met when <= `limit`."""
    if label in rows and base in rows:
        ratio = median_ratio(rows[label], rows[base])
        figure = (
            f"×{ratio:.2f} ({statistics.median(rows[label]):.2f} s vs "
            f"{statistics.median(rows[base]):.2f} s)"
        )
        GOALS.append((goal, figure, f"{base}, same round", ratio <= limit))


def print_rows(title: str, rows: dict[str, list[float]], base: str) -> None:
    """Median seconds (range) per tree and the median within-round ratio to `base`."""
    print(f"\n{title}")
    for label, times in rows.items():
        ratio = "" if label == base else f"x{median_ratio(times, rows[base]):.2f} {base}"
        print(
            f"  {label:<22} {statistics.median(times):7.3f} s "
            f"({min(times):.3f}-{max(times):.3f})  {ratio}".rstrip()
        )


def section_run(trees: list[Tree], rounds: int) -> None:
    """A short scripted `runlens run`, whole process, interleaved."""
    homes = {tree.label: tree.scratch / "home_run" for tree in trees}
    for tree in trees:
        tree.scripted_run(homes[tree.label])  # untimed: the home and its store exist after it
    times: dict[str, list[float]] = {tree.label: [] for tree in trees}
    for number in range(rounds):
        for tree in trees if number % 2 == 0 else trees[::-1]:
            times[tree.label].append(tree.scripted_run(homes[tree.label]))
    base = trees[0].label
    print_rows("a short scripted `runlens run` (passing.json, 6 feedback rows)", times, base)
    add_goal("a short scripted `runlens run` (≤ 1.1× the old commit)", times, "now", base, 1.1)
    add_goal("the same with PostgreSQL", times, "now PostgreSQL", base, 1.1)


def build_home(tree: Tree, size: int) -> tuple[Path, str]:
    """A runs home holding `size` runs: one scripted run by `tree`, copied with new run ids.
    The store file the run wrote (the current tree's) is removed: it knows only the first."""
    home = tree.scratch / "home_listing"
    tree.scripted_run(home)
    (first,) = [child for child in home.iterdir() if child.name.startswith("run_")]
    for leftover in home.iterdir():
        if leftover.is_file():
            leftover.unlink()
    original = first.name.encode()
    files = [path for path in first.rglob("*") if path.is_file()]
    prefix = original[: -len(b"000000")]
    run_ids = (prefix + f"{number:06x}".encode() for number in range(size + 1))
    for run_id in [run_id for run_id in run_ids if run_id != original][: size - 1]:
        target = home / run_id.decode()
        for path in files:
            destination = target / path.relative_to(first)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(path.read_bytes().replace(original, run_id))
    return home, first.name


def _forget_store(home: Path) -> None:
    for name in ("runlens.db", "runlens.db-wal", "runlens.db-shm", "runlens.db-journal"):
        with contextlib.suppress(FileNotFoundError):
            (home / name).unlink()


def section_listing(trees: list[Tree], size: int, rounds: int) -> None:
    """`runlens runs` and `runlens show` on a home of `size` runs: cold (the store indexes the
    workspaces) and warm for the current tree; the old commit has no store: every call reads
    the workspaces."""
    homes = {tree.label: build_home(tree, size) for tree in trees}
    for tree in trees:  # untimed: each tree's listing code compiled (and cached) once
        home, run_id = homes[tree.label]
        tree.cli("runs", home=home)
        tree.cli("show", run_id, home=home)
    base = trees[0].label
    runs: dict[str, list[float]] = {}
    show: dict[str, list[float]] = {}
    for number in range(rounds):
        for tree in trees if number % 2 == 0 else trees[::-1]:
            home, run_id = homes[tree.label]
            if tree is trees[0]:
                runs.setdefault(tree.label, []).append(tree.cli("runs", home=home))
                show.setdefault(tree.label, []).append(tree.cli("show", run_id, home=home))
                continue
            _forget_store(home)
            runs.setdefault(f"{tree.label} (cold)", []).append(tree.cli("runs", home=home))
            runs.setdefault(f"{tree.label} (warm)", []).append(tree.cli("runs", home=home))
            show.setdefault(f"{tree.label} (warm)", []).append(tree.cli("show", run_id, home=home))
    print_rows(f"`runlens runs` with {size} runs", runs, base)
    print_rows(f"`runlens show RUN` with {size} runs", show, base)
    goal = f"`runlens {{}}` with {size} runs, {{}} (≤ 1.5× the old commit)"
    add_goal(goal.format("runs", "warm store"), runs, "now (warm)", base, 1.5)
    add_goal(goal.format("runs", "first call, indexing"), runs, "now (cold)", base, 1.5)
    add_goal(goal.format("show RUN", "warm store"), show, "now (warm)", base, 1.5)


def section_steps(trees: list[Tree], rounds: int, steps: int) -> None:
    """µs per step under each tree, from bench_peers.py's RunLens worker."""
    workers: dict[str, Worker] = {}
    for tree in trees:
        frameworks = ["runlens"] if tree is trees[0] else ["runlens", "runlens-sqlite"]
        for framework in frameworks:
            label = (
                f"{tree.label} ({'SQLite store' if framework.endswith('sqlite') else 'no store'})"
            )
            started = start_worker(label, framework, sys.executable, tree.env)
            if started is not None:
                workers[label] = started
    sizes = [10, 100]
    try:
        figures = interleaved(workers, sizes, steps, rounds)
    finally:
        for started in workers.values():
            started.close()
    names = list(workers)
    print(f"\nµs per step (median of {rounds} interleaved rounds, about {steps} steps each)")
    print_table(figures, names, sizes, names[0])
    for name in names:
        growth = gap_growth(figures, name, sizes)
        if growth is not None:
            print(f"  {name}: late gap between model calls at 100 / at 10 calls = {growth:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", default=OLD_COMMIT)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs-home-size", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=400, help="model calls per measurement")
    parser.add_argument("--only", help="comma-separated sections: run, listing, steps")
    parser.add_argument(
        "--database-url", help="also time the current tree's run with this store (PostgreSQL)"
    )
    args = parser.parse_args()
    sections = args.only.split(",") if args.only else ["run", "listing", "steps"]
    print(
        f"python {sys.version.split()[0]} ({sys.executable}); old: {args.commit}, now: {ROOT}; "
        "bytecode cached by each tree's first process"
    )
    with old_tree(args.commit) as old, tempfile.TemporaryDirectory(prefix="bench_") as scratch:
        trees = [Tree(args.commit, old, Path(scratch)), Tree("now", ROOT, Path(scratch))]
        if "run" in sections:
            with_postgres = list(trees)
            if args.database_url:
                with_postgres.append(
                    Tree(
                        "now PostgreSQL",
                        ROOT,
                        Path(scratch),
                        database_url=args.database_url,
                    )
                )
            section_run(with_postgres, args.rounds)
        if "listing" in sections:
            section_listing(trees, args.runs_home_size, args.rounds)
        if "steps" in sections:
            section_steps(trees, args.rounds, args.steps)
    print("\nGoals\n| goal | figure | comparison | met? |\n| --- | --- | --- | --- |")
    for row in GOALS:
        goal_row(*row)


if __name__ == "__main__":
    main()
