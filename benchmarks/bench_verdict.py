"""Signing and verifying the verdict of a 100,000-row Feedback Analysis run, beside the run.

    python benchmarks/bench_verdict.py [--rows 100000] [--seed 2026] [--rounds 3] [--dir DIR]
                                       [--workspace DIR]

1. Runs `feedback-analysis` with the `offline` model on the CSV `bench_offline.py` generates
   (cached under `benchmarks/.data/`), once, in a runs home of its own: the run signs its
   verdict as it ends (`runtime/verdict.dsse.json`, with the home's default key).
2. Times signing again, median of `--rounds`: hashing the subjects (deliverables, input,
   index), building the statement, signing its DSSE envelope and writing it.
3. Times `runlens verify` on the workspace (`verify_workspace`), median of `--rounds`, and
   apart from it the part that needs no RunLens knowledge: the signature and the subjects'
   hashes (what `sha256sum` and a DSSE library check).
4. Prints each beside the run's own wall time.

`--workspace DIR` uses the workspace of an earlier run (signed by a key of that run's home,
`$RUNLENS_HOME`) instead of making one. Workspaces go to `--dir` (default: /dev/shm when it
exists). Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from runlens.models.registry import ModelContext, resolve_model
from runlens.runtime.run import run_plugin
from runlens.verdict.dsse import open_envelope
from runlens.verdict.keys import load_public_keys, signing_key
from runlens.verdict.statement import (
    build_statement,
    canonical_json,
    collect_subjects,
    decode_statement,
    read_envelope,
)
from runlens.verdict.verify import verify_workspace
from runlens_feedback import plugin

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_offline import cached_csv  # a sibling script, not a package

_DIR: str | None = "/dev/shm" if Path("/dev/shm").is_dir() else None


def _run(workspace: Path, csv_path: Path, rows: int) -> float:
    model = resolve_model("offline", ModelContext(plugin=plugin))
    started = time.perf_counter()
    result = asyncio.run(run_plugin(plugin, csv_path, model, workspace=workspace))
    elapsed = time.perf_counter() - started
    print(f"run: {result.status.value} in {elapsed:.2f} s ({rows:,} rows)")
    if not (workspace / "runtime" / "verdict.dsse.json").is_file():
        sys.exit(f"the run wrote no verdict: {result.warnings}")
    return elapsed


def _median(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _sign(workspace: Path, home: Path, scratch: Path) -> None:
    """What the run's end does to sign: hash the subjects, build and sign the statement,
    write the envelope (to scratch: the workspace's own stays as the run wrote it)."""
    from runlens.verdict.dsse import sign_envelope

    envelope = read_envelope(workspace)
    assert envelope is not None
    predicate = decode_statement(envelope)["predicate"]
    input_name = next((workspace / "input").iterdir()).name
    key = signing_key(home)
    statement = build_statement(collect_subjects(workspace, f"input/{input_name}"), predicate)
    signed = sign_envelope(canonical_json(statement), key)
    (scratch / "verdict.dsse.json").write_text(json.dumps(signed, indent=2))


def _signature_and_hashes(workspace: Path, home: Path) -> None:
    envelope = read_envelope(workspace)
    assert envelope is not None
    open_envelope(envelope, load_public_keys([], home))
    subjects = {s["name"]: s["digest"]["sha256"] for s in decode_statement(envelope)["subject"]}
    input_name = next((workspace / "input").iterdir()).name
    current = {
        s["name"]: s["digest"]["sha256"] for s in collect_subjects(workspace, f"input/{input_name}")
    }
    assert current == subjects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=_DIR, help="where the workspace goes")
    parser.add_argument("--workspace", type=Path, help="an earlier run's workspace")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch_name:
        scratch = Path(scratch_name)
        run_seconds: float | None = None
        if args.workspace is not None:
            workspace = args.workspace
            home = Path(os.environ.get("RUNLENS_HOME") or workspace.parent)
        else:
            home = scratch / "home"
            os.environ["RUNLENS_HOME"] = str(home)  # the run's default key is made there
            workspace = home / "run"
            run_seconds = _run(workspace, cached_csv(args.rows, args.seed), args.rows)
        sizes = sum(p.stat().st_size for p in workspace.rglob("*") if p.is_file())
        print(f"workspace: {workspace} ({sizes / 2**20:.1f} MiB)")
        sign = _median(lambda: _sign(workspace, home, scratch), args.rounds)
        offline = _median(lambda: _signature_and_hashes(workspace, home), args.rounds)
        report = verify_workspace(workspace, home=home)
        if not report.verified:
            sys.exit(f"the run's own verdict does not verify: {report.failed}")
        verify = _median(lambda: verify_workspace(workspace, home=home), args.rounds)
        beside = f"{run_seconds:.2f} s" if run_seconds is not None else "not timed (--workspace)"
        print(f"\nmedian of {args.rounds} rounds; the run itself: {beside}")
        for label, seconds in (
            ("sign (hash subjects, sign, write)", sign),
            ("verify: signature and hashes only", offline),
            ("runlens verify (every check)", verify),
        ):
            share = f"  ({seconds / run_seconds:6.1%} of the run)" if run_seconds else ""
            print(f"  {label:36} {seconds:7.3f} s{share}")


if __name__ == "__main__":
    main()
