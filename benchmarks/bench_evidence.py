"""Evidence Index benchmark: how fast the index is built, and how fast citations are checked.

    python benchmarks/bench_evidence.py [--rows N] [--repeat K] [--citations C]

Generates (once, deterministically, cached under benchmarks/.data/) a feedback CSV of N rows
(default 1,000,000, about 200 MB: Chinese text with full-width and ASCII punctuation, some
quoted newlines, commas and double quotes) with the columns
feedback_id,text,channel,created_at,rating,user_segment. Then, each measurement in a fresh
subprocess so that every peak memory figure is its own (K rounds, best run by wall time):

- bare `csv.reader` pass (the yardstick), a SHA-256 pass over the raw bytes,
- a floor: `csv.reader` plus one `hashlib.sha256` call per row, the least any per-row hash costs,
- the naive build (DictReader, `json.dumps` and `hashlib.sha256` per row),
- `build_evidence_index`, and `EvidenceIndex.write`,
- validating C citations (default 100,000; 1% unknown ids and 1% paraphrases planted) against
  the written index: `EvidenceIndex.load`, then membership and `locate` for each.

Timings are wall-clock seconds on whatever else the machine is doing; CPU seconds are shown
next to them. Peak memory is the process's peak RSS, and in brackets how far it rose above the
RSS the process had just before the measured work started.
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
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / ".data"
SEED = 20240601
GENERATOR_VERSION = 1

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
                ["feedback_id", "text", "channel", "created_at", "rating", "user_segment"]
            )
            writer.writerows(_rows(rows, random.Random(SEED)))
        partial.replace(path)
    return path


def _rows(count: int, rng: random.Random) -> Any:
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
    for n, feedback_id in enumerate(rng.sample(ids, min(citations, len(ids)))):
        text = index.text(feedback_id)
        start = rng.randrange(len(text))
        quote = text[start : start + rng.randint(4, 20)]
        if n % 100 == 1:
            feedback_id = f"fb_fabricated_{n}"
        elif n % 100 == 2:
            quote = quote + "（并非原文）"
        items.append({"feedback_id": feedback_id, "evidence_text": quote})
    path.write_text(json.dumps({"items": items}, ensure_ascii=False), encoding="utf-8")
    return path


# -- measurements (each runs in its own subprocess) -------------------------------------------


def bare_pass(csv_path: Path) -> dict[str, Any]:
    rows = 0
    with csv_path.open(encoding="utf-8", newline="") as stream:
        for _ in csv.reader(stream):
            rows += 1
    return {"rows": rows - 1}


def sha256_pass(csv_path: Path) -> dict[str, Any]:
    digest = hashlib.sha256()
    with csv_path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return {"sha256": digest.hexdigest()[:12]}


def floor_pass(csv_path: Path) -> dict[str, Any]:
    sha256 = hashlib.sha256
    with csv_path.open(encoding="utf-8", newline="") as stream:
        for row in csv.reader(stream):
            sha256(row[1].encode()).digest()
    return {}


def naive_build(csv_path: Path) -> dict[str, Any]:
    items: dict[str, dict[str, str]] = {}
    with csv_path.open(encoding="utf-8", newline="") as stream:
        for row in csv.DictReader(stream):
            canonical = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            row_hash = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
            items[row["feedback_id"]] = {"row_hash": row_hash, "text": row["text"]}
    return {"rows": len(items), "sha256": sha256_pass(csv_path)["sha256"]}


def fast_build(csv_path: Path) -> dict[str, Any]:
    from runlens.evidence import build_evidence_index

    index = build_evidence_index(csv_path, id_column="feedback_id", text_column="text")
    return {"rows": len(index), "sha256": index.source_hash[:12]}


MEASURES: dict[str, Callable[[Path], dict[str, Any]]] = {
    "bare": bare_pass,
    "sha256": sha256_pass,
    "floor": floor_pass,
    "naive": naive_build,
    "build": fast_build,
}


def measure(name: str, csv_path: Path, index_path: Path, analysis_path: Path) -> dict[str, Any]:
    """Run one measurement in this process and return its figures."""
    if name == "write":
        return _measure_write(csv_path, index_path)
    if name == "validate":
        return _measure_validate(index_path, analysis_path)
    return _timed(lambda: MEASURES[name](csv_path))


def _timed(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    before = _current_rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    result["wall"] = time.perf_counter() - wall
    result["cpu"] = time.process_time() - cpu
    result["peak_mb"] = _peak_rss_mb()
    result["work_mb"] = result["peak_mb"] - before
    return result


def _measure_write(csv_path: Path, index_path: Path) -> dict[str, Any]:
    from runlens.evidence import build_evidence_index

    index = build_evidence_index(csv_path, id_column="feedback_id", text_column="text")
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
            feedback_id = citation["feedback_id"]
            if feedback_id not in index:
                unknown += 1
            elif index.locate(feedback_id, citation["evidence_text"]) is None:
                mismatched += 1
        return {"checks_s": time.perf_counter() - loaded, "unknown": unknown, "bad": mismatched}

    return _timed(validate)


def _current_rss_mb() -> float:
    try:  # Linux: resident pages now (ru_maxrss only knows the peak so far)
        resident = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return _peak_rss_mb()
    return resident * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


# -- driver ----------------------------------------------------------------------------------


def run_child(name: str, csv_path: Path, index_path: Path, analysis_path: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", name, "--csv", str(csv_path)]
    command += ["--index", str(index_path), "--analysis", str(analysis_path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measurement {name!r} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


LABELS = {
    "bare": "bare csv.reader pass",
    "sha256": "sha256 of the raw bytes",
    "floor": "floor: csv.reader + 1 sha256/row",
    "naive": "naive build (json.dumps/row)",
    "build": "build_evidence_index",
    "write": "EvidenceIndex.write",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    parser.add_argument("--citations", type=int, default=100_000)
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
    print(
        f"\nEvidence Index benchmark: {args.rows:,} rows, {size_mb:.1f} MB ({csv_path.name})\n"
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
        f"best of {args.repeat} round(s) by wall time, each run in a fresh process\n"
    )
    # The index (and the analysis citing it) first; then the timed steps round-robin, so that
    # a burst of load from elsewhere on the machine hits every step alike, not just one.
    results: dict[str, dict[str, Any]] = {
        "write": run_child("write", csv_path, index_path, index_path)
    }
    # In a child too: Linux carries a process's peak RSS across fork+exec into its children.
    command = [sys.executable, __file__, "--child", "analysis", "--index", str(index_path)]
    command += ["--citations", str(args.citations)]
    analysis_path = Path(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    for _ in range(args.repeat):
        for name in ("bare", "sha256", "floor", "naive", "build", "validate"):
            run = run_child(name, csv_path, index_path, analysis_path)
            if name not in results or run["wall"] < results[name]["wall"]:
                results[name] = run
    print_table(results, size_mb, args.citations)


def print_table(results: dict[str, dict[str, Any]], size_mb: float, citations: int) -> None:
    bare = results["bare"]["wall"]
    header = f"{'step':<34}{'wall s':>8}{'cpu s':>8}{'MB/s':>9}{'speed vs bare':>15}"
    print(header + f"{'peak RSS MB (work)':>22}")
    print("-" * (len(header) + 22))
    for name, label in LABELS.items():
        run = results[name]
        speed = f"{bare / run['wall']:.2f}" if name != "write" else ""
        throughput = size_mb / run["wall"] if name != "write" else run["bytes"] / 1e6 / run["wall"]
        memory = f"{run['peak_mb']:.0f} ({run['work_mb']:+.0f})"
        print(
            f"{label:<34}{run['wall']:>8.2f}{run['cpu']:>8.2f}{throughput:>9.1f}"
            f"{speed:>15}{memory:>22}"
        )
    check = results["validate"]
    label = f"validate {citations:,} citations"
    memory = f"{check['peak_mb']:.0f} ({check['work_mb']:+.0f})"
    print(f"{label:<34}{check['wall']:>8.2f}{check['cpu']:>8.2f}{'':>9}{'':>15}{memory:>22}")
    build = results["build"]
    load_s = check["wall"] - check["checks_s"]
    print(
        f"\n  index file: {results['write']['bytes'] / 1e6:.1f} MB; validation = load "
        f"{load_s:.2f} s + membership/locate {check['checks_s']:.2f} s; found "
        f"{check['unknown']} unknown ids and {check['bad']} non-verbatim quotes "
        f"(planted: {citations // 100} + {citations // 100})"
    )
    print(
        f"  build speed relative to bare csv.reader: {bare / build['wall']:.2f} (target >= 0.50);"
        f" naive: {bare / results['naive']['wall']:.2f}; floor: "
        f"{bare / results['floor']['wall']:.2f}"
    )
    print(f"  validation time / build time: {check['wall'] / build['wall']:.2f} (target < 0.25)\n")


if __name__ == "__main__":
    main()
