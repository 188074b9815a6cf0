"""The validating phase of a 100,000-row Feedback Analysis run, validator by validator.

    python benchmarks/bench_validation.py [--rows 100000] [--seed 2026] [--rounds 3] [--dir DIR]

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

Workspaces go to `--dir` (default: /dev/shm when it exists). Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

from jsonschema import Draft202012Validator

from runlens.models.registry import ModelContext, resolve_model
from runlens.runtime.run import run_plugin
from runlens.validation import ValidationContext, stop_validators
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=_DIR, help="where the workspace goes")
    args = parser.parse_args()
    csv_path = cached_csv(args.rows, args.seed)
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        workspace = Path(scratch) / "run"
        model = resolve_model("offline", ModelContext(plugin=plugin))
        started = time.perf_counter()
        result = asyncio.run(run_plugin(plugin, csv_path, model, workspace=workspace))
        print(f"run: {result.status.value} in {time.perf_counter() - started:.1f} s "
              f"({args.rows:,} rows); its validating phase: "
              f"{result.metrics['phase_seconds'].get('validating', 0):.2f} s")  # fmt: skip
        if not result.passed:
            sys.exit(f"the run did not complete: {result.error_message}")
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


if __name__ == "__main__":
    main()
