"""Evidence Index benchmark: the input path `runlens run` takes, and checking citations.

    python benchmarks/bench_evidence.py [--rows N] [--repeat K] [--citations C] [--only STEP]

Generates (once, deterministically from a fixed seed, cached under benchmarks/.data/) a
feedback CSV of N rows (default 1,000,000, about 196 MB: Chinese text with full-width and
ASCII punctuation, some quoted newlines, commas and double quotes) with the columns
feedback_id,text,channel,created_at,rating,user_segment. Then runs each step K times (default
5), round-robin so that a burst of load from elsewhere hits every step alike, each run in a
fresh subprocess so that every peak memory figure is its own:

- `bare`: a bare `csv.reader` pass over the file (the yardstick);
- `naive`: the naive build (DictReader, `json.dumps` and `hashlib.sha256` per row);
- `build`: `build_evidence_index` alone;
- `table`: `SourceTable.open` + `table.evidence_index` (the input path without the write);
- `run`: the input path `runlens run` takes: `TableInput.load` with a minimal `ToolContext`
  (open, check, index, and write `runtime/evidence_index.json` durably);
- `write`: `EvidenceIndex.write` alone (timed after a build in the same process);
- `validate`: checking C citations (default 100,000; 1% unknown ids and 1% paraphrases
  planted) against the written index: `EvidenceIndex.load`, then membership and `locate`.

Printed per step: the median and the fastest wall time, the median CPU time (all threads,
and the main thread's alone: `main s`, the critical path when the second core is free), the
median wall time and main-thread CPU time relative to the bare pass's (`x bare`, `main x`),
the peak RSS (median over the runs; the process's high-water mark, `resource.getrusage`)
and its ratio to the file's size. Wall times move with whatever
else the machine does, so the load average before and after is printed too, and CPU seconds
beside the wall seconds.

Targets (issue 11): the run path at least as fast as `build_evidence_index` alone (5.8 s on the
issue's machine), with peak memory under twice the file's size. This prints; it asserts nothing.

Figures, 1,000,000 rows (195.9 MB), on the shared 2-core machine of issue 11. Wall times
there move by +-30 % with other work (load average 1-3 while these were taken), so the
evidence package as it was before (commit c1efc78) was run interleaved with this one, round
by round, 5 rounds (medians; ratios are medians of the per-round ratios):

                                       before           after            after / before
    SourceTable.open + evidence_index     9.4 s, 705 MB    5.7 s, 340 MB    0.63
    + the durable write (run path)     14.3 s, 705 MB   7.6 s, 340 MB    0.53
    build_evidence_index alone         6.9 s, 364 MB    6.8 s, 301 MB
    bare csv.reader pass               2.6 s

    open + index / the old builder alone: 0.88; with the write: 1.24
    peak RSS / file size: 3.6 before, 1.74 after

This script's own run (5 rounds, load 0.9 rising to 4): bare 1.72 s; builder alone 7.01 s
(304 MB); open + index 6.30 s (342 MB); `TableInput.load` 7.66 s (343 MB, 1.75x the file;
1.09x the builder alone); write alone 1.67 s; validating 100,000 citations 3.14 s.

Issue 28 (the index within 1.5x of `csv.reader`, memory at most 2x the file), 1,000,000 rows,
open + index + durable write, the evidence package before (commit 3b5c020) and after run
interleaved, 3 rounds, medians, on the shared 2-core machine at load average 4-7 (wall
times there moved by 2x between rounds, so CPU seconds are the figures to compare):

                                 main-thread CPU   x bare CPU   all threads   peak RSS
    bare csv.reader pass            1.56 s            1.00          1.56 s       17 MB
    before                          8.03 s            5.1           8.07 s      341 MB (1.74x)
    after                           6.89 s            4.4           7.96 s      365 MB (1.86x)

The SHA-256 of the input and the index file's hashing and writing moved to threads (they
overlap with parsing only when the second core is free, which it was not while measured);
the rest is per-row C work the csv module, `str.join`/`split` and hashlib do (row hashes
alone: about 0.95 s a million rows). 1.5x `csv.reader` is not reached.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / ".data"
SEED = 20240601
GENERATOR_VERSION = 1
ID_COLUMN, TEXT_COLUMN = "feedback_id", "text"

PHRASES = (
    "导出周报太慢了",
    "我们团队每周五都要导出",
    "等三分钟很影响效率",
    "希望支持批量操作",
    "登录经常掉线",
    "客服回复很及时，点赞",
    "价格有点贵",
    "界面很清爽",
    "搜索结果不准确",
    "手机端闪退",
    "数据同步延迟严重",
    "权限设置太复杂了",
    "新版本很好用",
    "通知太多了，能不能关掉",
    "报表图表不支持导出PDF",
    "“一键分享”按钮找不到",
    "希望增加暗色模式",
    "加载速度还可以",
    "上传附件经常失败（超过10MB）",
    "整体满意",
    "The export button is hidden",
    "同步到 Slack 的消息有时会丢",
)
PUNCTUATION = ("，", "。", "！", "？", "；", ", ", "……", "、")
CHANNELS = ("app_store", "web", "email", "wechat", "phone", "survey")
SEGMENTS = ("free", "pro", "enterprise", "trial")


# -- data ------------------------------------------------------------------------------------


def feedback_csv(rows: int) -> Path:
    """The cached CSV of `rows` rows, generated on first use (atomically)."""
    path = DATA / f"feedback_{rows}_v{GENERATOR_VERSION}.csv"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        print(f"generating {path.name} ...", flush=True)
        partial = path.with_suffix(".partial")
        with partial.open("w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(
                [ID_COLUMN, TEXT_COLUMN, "channel", "created_at", "rating", "user_segment"]
            )
            writer.writerows(_rows(rows, random.Random(SEED)))
        partial.replace(path)
    return path


def _rows(count: int, rng: random.Random) -> Iterator[tuple[str, ...]]:
    for number in range(1, count + 1):
        parts = []
        for _ in range(rng.randint(3, 7)):
            parts.append(rng.choice(PHRASES))
            parts.append(rng.choice(PUNCTUATION))
        roll = rng.random()
        if roll < 0.05:
            parts.insert(rng.randrange(len(parts)), "\n")  # a quoted newline
        elif roll < 0.10:
            parts.append('他说"太难用了"')
        month, day, hour = rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23)
        yield (
            f"fb_{number:07d}",
            "".join(parts),
            rng.choice(CHANNELS),
            f"2024-{month:02d}-{day:02d}T{hour:02d}:{rng.randint(0, 59):02d}:00+08:00",
            str(rng.randint(1, 5)),
            rng.choice(SEGMENTS),
        )


def analysis_json(index_path: Path, citations: int) -> Path:
    """An analysis citing `citations` rows with verbatim quotes, a few of them planted wrong."""
    from runlens.evidence import EvidenceIndex

    path = index_path.with_name(f"{index_path.stem}.analysis_{citations}.json")
    if path.exists():
        return path
    index = EvidenceIndex.load(index_path)
    rng = random.Random(SEED + 1)
    ids = list(index.items)
    items = []
    for n, row_id in enumerate(rng.sample(ids, min(citations, len(ids)))):
        text = index.text(row_id)
        start = rng.randrange(len(text))
        quote = text[start : start + rng.randint(4, 20)]
        if n % 100 == 1:
            row_id = f"fb_fabricated_{n}"
        elif n % 100 == 2:
            quote = quote + "（并非原文）"
        items.append({"row_id": row_id, "evidence_text": quote})
    path.write_text(json.dumps({"items": items}, ensure_ascii=False), encoding="utf-8")
    return path


# -- measurements (each runs in its own subprocess) -------------------------------------------


def bare_pass(csv_path: Path) -> dict[str, Any]:
    rows = 0
    with csv_path.open(encoding="utf-8", newline="") as stream:
        for _ in csv.reader(stream):
            rows += 1
    return {"rows": rows - 1}


def naive_build(csv_path: Path) -> dict[str, Any]:
    items: dict[str, dict[str, str]] = {}
    with csv_path.open(encoding="utf-8", newline="") as stream:
        for row in csv.DictReader(stream):
            canonical = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            row_hash = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
            items[row[ID_COLUMN]] = {"row_hash": row_hash, "text": row[TEXT_COLUMN]}
    return {"rows": len(items)}


def fast_build(csv_path: Path) -> dict[str, Any]:
    from runlens.evidence import build_evidence_index

    index = build_evidence_index(csv_path, id_column=ID_COLUMN, text_column=TEXT_COLUMN)
    return {"rows": len(index)}


def table_index(csv_path: Path) -> dict[str, Any]:
    from runlens.evidence import SourceTable

    table = SourceTable.open(csv_path, required_columns=(ID_COLUMN, TEXT_COLUMN))
    index = table.evidence_index(ID_COLUMN, TEXT_COLUMN)
    return {"rows": len(index)}


def run_path(csv_path: Path) -> dict[str, Any]:
    """`TableInput.load` as a run calls it, on a workspace of its own (deleted afterwards,
    outside the timed region: see `measure`)."""
    from runlens import TableInput, ToolContext
    from runlens.tools.workspace import Workspace

    workspace = Workspace(Path(tempfile.mkdtemp(prefix="bench_evidence_", dir=DATA)))
    workspace.create()
    context = ToolContext(run_id="bench", workspace=workspace, input_path=csv_path)
    tool = TableInput(tool_name="read_feedback", id_column=ID_COLUMN, text_column=TEXT_COLUMN)
    table, index = tool.load(context)
    return {"rows": table.total_rows, "indexed": len(index), "cleanup": str(workspace.root)}


MEASURES: dict[str, Callable[[Path], dict[str, Any]]] = {
    "bare": bare_pass,
    "naive": naive_build,
    "build": fast_build,
    "table": table_index,
    "run": run_path,
}
LABELS = {
    "bare": "bare csv.reader pass",
    "naive": "naive build (json.dumps/row)",
    "build": "build_evidence_index alone",
    "table": "SourceTable.open + evidence_index",
    "run": "run path: TableInput.load",
    "write": "EvidenceIndex.write alone",
    "validate": "validate citations",
}


def measure(name: str, csv_path: Path, index_path: Path, analysis_path: Path) -> dict[str, Any]:
    """Run one measurement in this process and return its figures."""
    if name == "write":
        return _measure_write(csv_path, index_path)
    if name == "validate":
        return _measure_validate(index_path, analysis_path)
    if name not in ("bare", "naive"):
        # Imported before the clock starts: a run has them loaded before its input step.
        import runlens.evidence
        import runlens.tools.workspace  # noqa: F401
    result = _timed(lambda: MEASURES[name](csv_path))
    cleanup = result.pop("cleanup", None)
    if cleanup is not None:
        _remove_tree(Path(cleanup))
    return result


def _timed(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    wall, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
    result = work()
    result["wall"] = time.perf_counter() - wall
    result["cpu"] = time.process_time() - cpu
    result["main_cpu"] = time.thread_time() - main
    result["peak_mb"] = _peak_rss_mb()
    return result


def _measure_write(csv_path: Path, index_path: Path) -> dict[str, Any]:
    from runlens.evidence import build_evidence_index

    index = build_evidence_index(csv_path, id_column=ID_COLUMN, text_column=TEXT_COLUMN)
    result = _timed(lambda: {"sha256": index.write(index_path)[:12]})
    result["bytes"] = index_path.stat().st_size
    return result


def _measure_validate(index_path: Path, analysis_path: Path) -> dict[str, Any]:
    from runlens.evidence import EvidenceIndex

    citations = json.loads(analysis_path.read_text(encoding="utf-8"))["items"]

    def validate() -> dict[str, Any]:
        index = EvidenceIndex.load(index_path)
        loaded = time.perf_counter()
        unknown = mismatched = 0
        for citation in citations:
            row_id = citation["row_id"]
            if row_id not in index:
                unknown += 1
            elif index.locate(row_id, citation["evidence_text"]) is None:
                mismatched += 1
        return {"checks_s": time.perf_counter() - loaded, "unknown": unknown, "bad": mismatched}

    return _timed(validate)


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def _remove_tree(root: Path) -> None:
    for path in sorted(root.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    root.rmdir()


# -- driver ----------------------------------------------------------------------------------


def run_child(name: str, csv_path: Path, index_path: Path, analysis_path: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", name, "--csv", str(csv_path)]
    command += ["--index", str(index_path), "--analysis", str(analysis_path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measurement {name!r} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of generated CSV")
    parser.add_argument("--repeat", type=int, default=5, help="runs per step (median kept)")
    parser.add_argument("--citations", type=int, default=100_000)
    parser.add_argument("--only", action="append", choices=[*LABELS], help="steps to run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--csv", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--index", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--analysis", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "analysis":
        print(analysis_json(args.index, args.citations), end="")
        return
    if args.child:
        print(json.dumps(measure(args.child, args.csv, args.index, args.analysis)))
        return

    csv_path = feedback_csv(args.rows)
    index_path = csv_path.with_suffix(".index.json")
    size_mb = csv_path.stat().st_size / 1e6
    steps = args.only or [*LABELS]
    load_before = _load()
    print(
        f"\nEvidence Index benchmark: {args.rows:,} rows, {size_mb:.1f} MB ({csv_path.name})\n"
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
        f"{args.repeat} run(s) per step, each in a fresh process; load average {load_before}\n"
    )
    # The index (and the analysis citing it) first, each in a child too: Linux carries a
    # process's peak RSS across fork+exec into its children.
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in steps}
    first_write = run_child("write", csv_path, index_path, index_path)
    if "write" in results:
        results["write"].append(first_write)
    analysis_path = index_path
    if "validate" in steps:
        command = [sys.executable, __file__, "--child", "analysis", "--index", str(index_path)]
        command += ["--citations", str(args.citations)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        analysis_path = Path(done.stdout)
    for round_number in range(args.repeat):
        for name in steps:
            if name == "write" and round_number == 0:
                continue  # the first write above is that round's
            results[name].append(run_child(name, csv_path, index_path, analysis_path))
    print_table(results, size_mb, args.citations)
    print(f"  load average before: {load_before}; after: {_load()}\n")
    print_goals(results, args.rows, size_mb)


def print_goals(results: dict[str, list[dict[str, Any]]], rows: int, size_mb: float) -> None:
    """The goal rows: the index build within 1.5x a bare `csv.reader` pass over the same file
    (wall, medians of the interleaved runs; CPU of the main thread beside it) and its peak
    memory at most 2x the file, on 1M rows."""
    if not (results.get("bare") and results.get("build")):
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_peers import goal_row  # a sibling script, not a package

    def median(name: str, key: str) -> float:
        return statistics.median(float(run[key]) for run in results[name])

    ratio = median("build", "wall") / median("bare", "wall")
    main_ratio = median("build", "main_cpu") / median("bare", "main_cpu")
    peak = median("build", "peak_mb") / size_mb
    full = rows >= 1_000_000
    print("Goals\n| goal | figure | comparison | met? |\n| --- | --- | --- | --- |")
    goal_row(
        f"Evidence Index build, {rows:,} rows, within 1.5× a bare `csv.reader` pass",
        f"×{ratio:.2f} wall (main thread CPU ×{main_ratio:.2f})",
        f"bare `csv.reader` {median('bare', 'wall'):.2f} s, same runs",
        ratio <= 1.5 if full else None,
    )
    goal_row(
        f"Evidence Index build, {rows:,} rows, peak memory ≤ 2× the file",
        f"×{peak:.2f} ({median('build', 'peak_mb'):.0f} MB)",
        f"the file: {size_mb:.0f} MB",
        peak <= 2 if full else None,
    )


def _load() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def print_table(results: dict[str, list[dict[str, Any]]], size_mb: float, citations: int) -> None:
    def median(name: str, key: str) -> float:
        return statistics.median(float(run[key]) for run in results[name])

    bare = median("bare", "wall") if results.get("bare") else None
    bare_cpu = median("bare", "main_cpu") if results.get("bare") else None
    header = (
        f"{'step':<32}{'median s':>9}{'min s':>8}{'cpu s':>8}{'main s':>8}{'x bare':>8}"
        f"{'main x':>8}{'peak RSS MB':>13}{'x file':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, runs in results.items():
        if not runs:
            continue
        wall, cpu, peak = median(name, "wall"), median(name, "cpu"), median(name, "peak_mb")
        main = median(name, "main_cpu")
        fastest = min(run["wall"] for run in runs)
        ratio = f"{wall / bare:.2f}" if bare and name not in ("write", "validate") else ""
        main_ratio = (
            f"{main / bare_cpu:.2f}" if bare_cpu and name not in ("write", "validate") else ""
        )
        label = LABELS[name] if name != "validate" else f"validate {citations:,} citations"
        print(
            f"{label:<32}{wall:>9.2f}{fastest:>8.2f}{cpu:>8.2f}{main:>8.2f}{ratio:>8}"
            f"{main_ratio:>8}{peak:>13.0f}{peak / size_mb:>8.2f}"
        )
    print()
    if results.get("write"):
        written = results["write"][0]["bytes"] / 1e6
        print(f"  index file: {written:.1f} MB")
    if results.get("validate"):
        check = results["validate"][0]
        load_s = median("validate", "wall") - median("validate", "checks_s")
        print(
            f"  validation = load {load_s:.2f} s + membership/locate "
            f"{median('validate', 'checks_s'):.2f} s; found {check['unknown']} unknown ids and "
            f"{check['bad']} non-verbatim quotes (planted: {citations // 100} + {citations // 100})"
        )
    if results.get("run") and results.get("build"):
        run, build = median("run", "wall"), median("build", "wall")
        peak = median("run", "peak_mb")
        print(
            f"  run path / builder alone: {run / build:.2f} (target <= 1.00; the issue's builder: "
            f"5.8 s); run path peak RSS / file size: {peak / size_mb:.2f} (target < 2.00)"
        )


if __name__ == "__main__":
    main()
