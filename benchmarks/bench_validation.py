"""The validating phase of a 100,000-row Feedback Analysis run, validator by validator.

    python benchmarks/bench_validation.py [--rows 100000] [--seed 2026] [--rounds 3] [--dir DIR]
                                          [--profile N] [--workspace DIR]

1. Runs `feedback-analysis` with the `offline` model on the CSV `bench_offline.py` generates
   (same rows for the same seed and size, cached under `benchmarks/.data/`), once.
2. Times every Stop validator on that workspace, median of `--rounds`, in the two ways a
   workspace is judged: as `runlens run` judges it (the process that built the Evidence
   Index trusts the bytes it wrote) and as `runlens validate` does (the index is rebuilt from
   `input/` and compared row by row). Each round gets a fresh `ValidationContext`, so nothing
   is cached between rounds; the index and the JSON documents are read once per round and
   shared by the validators, so the first validator that needs one pays for it.
3. Prints each validator's median seconds and the round's total, and the time the JSON
   Schema check takes with jsonschema alone, for comparison with the fast path.
4. Times `runlens validate` as the command runs it (`validate_workspace` with the plugin and
   the hash `runtime/run.json` records) beside building the Evidence Index of the same CSV
   (`build_evidence_index`), interleaved round by round, and prints the medians and the
   ratio of each round's pair, in wall and in CPU seconds (the goal: validate within 5x the
   index build).
5. With `--profile N`, profiles one more `runlens validate` round with cProfile and prints
   its top N functions by own time and by cumulative time.

`--workspace DIR` judges the workspace of an earlier run instead of making one (a 100,000-row
offline run takes minutes; `bench_pages.py` keeps one under `benchmarks/.data/`).

Workspaces go to `--dir` (default: /dev/shm when it exists). Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import hashlib
import io
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from jsonschema import Draft202012Validator

from runlens.evidence import build_evidence_index, read_input_format
from runlens.models.registry import ModelContext, resolve_model
from runlens.runtime.run import run_plugin
from runlens.validation import (
    ValidationContext,
    aggregate,
    run_validator,
    stop_validators,
    validate_workspace,
)
from runlens.validation.base import parse_json
from runlens_feedback import plugin
from runlens_feedback.contracts import ANALYSIS_CONTRACT

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_offline import cached_csv  # a sibling script, not a package

_DIR: str | None = "/dev/shm" if Path("/dev/shm").is_dir() else None


def _round(workspace: Path, *, in_process: bool, index_sha256: str) -> dict[str, float]:
    context = ValidationContext(
        workspace,
        plugin.contracts,
        expected_index_sha256=index_sha256 if in_process else None,
        index_built_in_process=in_process,
    )
    seconds: dict[str, float] = {}
    for validator in stop_validators(plugin, entry_points=False):
        started = time.perf_counter()
        result = validator.validate(context)
        seconds[validator.name] = time.perf_counter() - started
        if result.blocked:
            sys.exit(f"{validator.name} blocked the benchmark's own run: {result.summary}")
    return seconds


def _medians(rounds: list[dict[str, float]]) -> dict[str, float]:
    return {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}


def _jsonschema_alone(workspace: Path) -> float:
    document = parse_json(workspace / ANALYSIS_CONTRACT.name)
    validator = Draft202012Validator(ANALYSIS_CONTRACT.json_schema or {})
    started = time.perf_counter()
    errors = sum(1 for _ in validator.iter_errors(document))
    elapsed = time.perf_counter() - started
    assert errors == 0
    return elapsed


def _build_index(workspace: Path, csv_path: Path) -> None:
    """Build the Evidence Index of `csv_path` as the run read it."""
    reading = read_input_format(workspace / "runtime/evidence_index.json")
    build_evidence_index(
        csv_path, id_column=str(reading["id_column"]), text_column=str(reading["text_column"])
    )


def _validate(workspace: Path, sha: str) -> float:
    """Seconds `runlens validate WORKSPACE` spends judging it (its imports aside)."""
    started = time.perf_counter()
    report = validate_workspace(
        workspace, plugin.contracts, expected_index_sha256=sha, plugin=plugin
    )
    elapsed = time.perf_counter() - started
    if not report.passed:
        sys.exit(f"runlens validate blocked the benchmark's own run: {report.error_message}")
    return elapsed


def _timed(work: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of `work` (validators run in a worker thread: the CPU clock is
    the process's)."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def _validate_against_build(workspace: Path, csv_path: Path, sha: str, rounds: int) -> None:
    builds, validations = [], []
    for _ in range(rounds):  # interleaved: a burst of load elsewhere hits both alike
        builds.append(_timed(lambda: _build_index(workspace, csv_path)))
        validations.append(_timed(lambda: _validate(workspace, sha)))
    print(f"\nrunlens validate vs the index build (median of {rounds}, interleaved):")
    for clock, at in (("wall", 0), ("CPU", 1)):
        ratios = [v[at] / b[at] for v, b in zip(validations, builds, strict=True)]
        print(
            f"  {clock:4}: build_evidence_index {statistics.median(b[at] for b in builds):6.2f} s, "
            f"runlens validate {statistics.median(v[at] for v in validations):6.2f} s, ratio "
            f"{statistics.median(ratios):6.2f} x (goal <= 5; rounds: "
            + ", ".join(f"{r:.2f}" for r in ratios)
            + ")"
        )


def _profile(workspace: Path, sha: str, top: int) -> None:
    """cProfile of what `validate_workspace` runs, in this thread (a profiler sees one
    thread; the runner's worker thread would be invisible to it)."""
    context = ValidationContext(workspace, plugin.contracts, expected_index_sha256=sha)
    profiler = cProfile.Profile()
    profiler.enable()
    results = [run_validator(v, context) for v in stop_validators(plugin)]
    aggregate(results, plugin.contracts, context)
    profiler.disable()
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(top)
        lines = out.getvalue().splitlines()
        start = next((n for n, line in enumerate(lines) if "ncalls" in line), 0)
        print(f"\nprofile of one runlens validate round, top {top} by {order}:")
        print("\n".join(lines[start:]).rstrip())


def _run(workspace: Path, csv_path: Path, rows: int) -> None:
    model = resolve_model("offline", ModelContext(plugin=plugin))
    started = time.perf_counter()
    result = asyncio.run(run_plugin(plugin, csv_path, model, workspace=workspace))
    print(f"run: {result.status.value} in {time.perf_counter() - started:.1f} s "
          f"({rows:,} rows); its validating phase: "
          f"{result.metrics['phase_seconds'].get('validating', 0):.2f} s")  # fmt: skip
    if not result.passed:
        sys.exit(f"the run did not complete: {result.error_message}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=_DIR, help="where the workspace goes")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="profile's top N")
    parser.add_argument(
        "--workspace",
        type=Path,
        help="judge this workspace of an earlier run instead of running (its input/ file is "
        "the index build's source)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        if args.workspace is not None:
            workspace = args.workspace
            csv_path = next((workspace / "input").iterdir())
            print(f"workspace: {workspace} (input {csv_path.name})")
        else:
            csv_path = cached_csv(args.rows, args.seed)
            workspace = Path(scratch) / "run"
            _run(workspace, csv_path, args.rows)
        sha = hashlib.sha256((workspace / "runtime/evidence_index.json").read_bytes()).hexdigest()
        for label, in_process in (("runlens run", True), ("runlens validate", False)):
            rounds = [
                _round(workspace, in_process=in_process, index_sha256=sha)
                for _ in range(args.rounds)
            ]
            medians = _medians(rounds)
            total = statistics.median(sum(r.values()) for r in rounds)
            print(f"\nas {label} judges it (median of {args.rounds}): {total:.2f} s")
            for name, seconds in medians.items():
                print(f"  {name:34} {seconds:7.3f} s")
        print(
            f"\nJSON Schema of {ANALYSIS_CONTRACT.name} with jsonschema alone: "
            f"{_jsonschema_alone(workspace):.2f} s (the fast path is in JsonOutputValidationHook)"
        )
        _validate_against_build(workspace, csv_path, sha, args.rounds)
        if args.profile:
            _profile(workspace, sha, args.profile)


if __name__ == "__main__":
    main()
