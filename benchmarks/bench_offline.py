"""A 100,000-row Feedback Analysis run with the offline model, end to end.

    python benchmarks/bench_offline.py [--rows 100000] [--seed 2026] [--dir DIR]

1. Generates a realistic feedback CSV deterministically (mixed Chinese and English, 40 product
   areas and some unknown domains, complaints, praise, requests and questions, typos, emoji,
   quoted commas and line breaks, a few very long rows and a few whitespace-only ones) and
   caches it under `benchmarks/.data/` (same seed and size, same bytes).
2. Runs `feedback-analysis` on it with the `offline` model through the library, in a child
   process, so its peak memory (ru_maxrss from `resource.getrusage`) is the run's alone.
3. Prints wall time, rows per second, peak RSS, time per phase (from the run's metrics), the
   size of the aggregated summary the main conversation sees (the `analyze_feedback_batches`
   result, in UTF-8 bytes), the artifacts' sizes and the verdict.

Workspaces go to `--dir` (default: /dev/shm when it exists), so the figures measure the run
rather than the disk. This prints measurements; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / ".data"
_DIR: str | None = "/dev/shm" if Path("/dev/shm").is_dir() else None

# -- data -----------------------------------------------------------------------------------

_ZH_AREAS = (
    "导出报表", "登录", "仪表盘", "账单", "手机App", "安卓客户端", "搜索", "消息通知", "权限设置",
    "数据同步", "API接口", "Excel导入", "审批流程", "客服", "新手引导", "发票", "日历", "打印",
    "文件上传", "夜间模式",
)  # fmt: skip
_EN_AREAS = (
    "the export", "login", "SSO", "the dashboard", "billing", "the iOS app", "search",
    "notifications", "permissions", "the Salesforce sync", "the API", "CSV import", "approvals",
    "support", "onboarding", "invoices", "the calendar", "file uploads", "dark mode", "reports",
)  # fmt: skip
_ZH = (
    "{a}太慢了，每次都要等{n}分钟，很影响效率。",
    "{a}经常失败，提示“未知错误”，换了浏览器也一样。",
    "{a}又崩溃了，丢了{n}条数据！！",
    "希望{a}可以支持批量操作，现在一个个点太麻烦",
    "{a}很好用，团队都很喜欢👍",
    "{a}还行吧，但是偶尔会卡一下。",
    "这个月{a}重复扣了{n}块钱，请尽快处理",
    "{a}的界面有点乱，找了半天才找到入口",
    "请问{a}支持导出成PDF吗？",
    "客服回复很快，{a}的问题当天就解决了，点赞",
    "{a}更新以后打不开了，我们{n}个人都用不了",
    "菜有点咸，上菜也慢，等了{n}分钟",
    "这个关卡太难了，充值{n}块还是过不去",
)
_EN = (
    "{a} is really slow, it takes {n} minutes every single time.",
    '{a} keeps failing with "unknown error", even after clearing the cache',
    "{a} crashed again and we lost {n} records. This is unacceptable!",
    "Would love bulk editing in {a}, doing it one by one is painful.",
    "Love {a}, the whole team uses it daily 🙂",
    "{a} is ok, but it freezes now and then.",
    "We were charged twice for {a} this month, {n} dollars, please refund",
    "Can't find anything in {a}, the layout is confusing",
    "Does {a} support exporting to PDF?",
    "Support fixed my issue with {a} within an hour, great job",
    "Since the update {a} won't open at all, {n} of us are blocked",
    "The soup was cold and the waiter ignored us for {n} minutes",
    "Level {n} is impossible unless you pay, total pay-to-win",
)
_TYPOS = (("太", "泰"), ("the ", "teh "), ("很", "狠"), ("really", "realy"))


def _text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.001:
        return rng.choice(("", "   ", "\n\t "))
    zh = rng.random() < 0.55
    areas, templates = (_ZH_AREAS, _ZH) if zh else (_EN_AREAS, _EN)
    parts = [
        rng.choice(templates).format(a=rng.choice(areas), n=rng.randint(2, 120))
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3)))
    ]
    separator = rng.choice(("", "\n")) if zh else rng.choice((" ", " ", "\n"))
    text = separator.join(parts)
    if roll > 0.995:
        text = " ".join([text] * rng.randint(10, 40))  # a long rant
    if rng.random() < 0.05:
        old, new = rng.choice(_TYPOS)
        text = text.replace(old, new, 1)
    return text


def generate_csv(rows: int, seed: int) -> bytes:
    """`rows` feedback rows as CSV bytes (UTF-8); the same bytes for the same arguments."""
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(("feedback_id", "text", "channel", "created_at", "rating", "user_segment"))
    for number in range(1, rows + 1):
        writer.writerow(
            (
                f"fb_{number:07d}",
                _text(rng),
                rng.choice(("app_store", "support_ticket", "nps_survey", "email", "in_app")),
                f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                str(rng.randint(1, 5)),
                rng.choice(("enterprise", "smb", "free", "education")),
            )
        )
    return out.getvalue().encode("utf-8")


def cached_csv(rows: int, seed: int) -> Path:
    """The generated CSV, written once under benchmarks/.data/."""
    path = DATA / f"feedback_{rows}_{seed}.csv"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".tmp")
        partial.write_bytes(generate_csv(rows, seed))
        partial.replace(path)
    return path


# -- the run (child process) ----------------------------------------------------------------


def _summary_bytes(workspace: Path) -> int:
    """UTF-8 size of the `analyze_feedback_batches` result (the aggregated summary), rebuilt
    from the analysis file the way the tool built it."""
    from runlens_feedback.aggregate import summarize_analysis

    analysis = json.loads((workspace / "artifacts" / "feedback_analysis.json").read_bytes())
    index = json.loads((workspace / "runtime" / "evidence_index.json").read_bytes())
    summary = summarize_analysis(
        analysis["items"],
        total_rows=len(index["items"]),
        failed_batches=analysis["failed_batches"],
        source=index["source"],
    )
    result = {"analysis_path": "artifacts/feedback_analysis.json", **summary}
    return len(json.dumps(result, ensure_ascii=False).encode("utf-8"))


def _peak_mib() -> float:
    """This process's peak resident set size so far, in MiB (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(csv_path: Path, workspace: Path) -> None:
    """Run once and print one JSON line of figures (peak RSS is this process's)."""
    from runlens.models.registry import ModelContext, resolve_model
    from runlens.plugins import load_plugin
    from runlens.records.events import Event
    from runlens.runtime.run import run_plugin

    plugin = load_plugin("feedback-analysis")
    model = resolve_model("offline", ModelContext(plugin=plugin))
    peaks: dict[str, float] = {}

    def on_event(event: Event) -> None:
        if event.type in ("tool.completed", "run.validating"):
            name = event.data.get("name", event.type)
            peaks[f"after {name}"] = _peak_mib()

    started = time.perf_counter()
    result = asyncio.run(
        run_plugin(plugin, csv_path, model, workspace=workspace, subscribers=[on_event])
    )
    wall = time.perf_counter() - started
    figures = {
        "status": result.status.value,
        "error_message": result.error_message,
        "artifacts": result.artifacts,
        "wall_seconds": wall,
        "peak_rss_mib": _peak_mib(),
        "peak_rss_by_step": peaks,
        "metrics": result.metrics,
        "summary_bytes": _summary_bytes(workspace),
        "summary_chars_seen": _result_chars(workspace),
        "artifact_bytes": {
            path.name: path.stat().st_size for path in sorted((workspace / "artifacts").iterdir())
        },
    }
    print(json.dumps(figures))


def _result_chars(workspace: Path) -> int | None:
    """Characters of the `analyze_feedback_batches` result, as the run's events record it."""
    from runlens.records.events import read_events

    for event in read_events(workspace / "runtime" / "events.jsonl"):
        data = event["data"]
        if event["type"] == "tool.completed" and data.get("name") == "analyze_feedback_batches":
            return int(data["result_chars"])
    return None


# -- driver ---------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--dir", default=_DIR, help="where the workspace goes")
    parser.add_argument("--child", nargs=2, metavar=("CSV", "WORKSPACE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]))
        return
    started = time.perf_counter()
    csv_path = cached_csv(args.rows, args.seed)
    print(
        f"input: {csv_path} ({csv_path.stat().st_size / 1e6:.1f} MB, {args.rows} rows, "
        f"seed {args.seed}; ready in {time.perf_counter() - started:.1f} s)"
    )
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        workspace = Path(scratch) / "run"
        command = [sys.executable, __file__, "--child", str(csv_path), str(workspace)]
        completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        sys.exit(f"the run crashed:\n{completed.stderr}")
    _print(json.loads(completed.stdout.strip().splitlines()[-1]), args.rows)


def _print(figures: dict[str, Any], rows: int) -> None:
    wall = figures["wall_seconds"]
    phases = figures["metrics"].get("phase_seconds") or {}
    print(f"wall time:     {wall:.1f} s ({rows / wall:,.0f} rows/s)")
    print(f"peak RSS:      {figures['peak_rss_mib']:.0f} MiB (the run's process)")
    steps = ", ".join(f"{k} {v:.0f}" for k, v in figures["peak_rss_by_step"].items())
    print(f"  peak so far: {steps} (MiB)")
    if phases:
        print("phases:        " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()))
    print(
        f"summary:       {figures['summary_bytes']:,} bytes UTF-8 "
        f"({figures['summary_chars_seen']:,} characters in the tool result the model saw)"
    )
    sizes = ", ".join(
        f"{name} {size / 1e6:.2f} MB" for name, size in figures["artifact_bytes"].items()
    )
    print(f"artifacts:     {sizes}")
    batches = {k: v for k, v in figures["metrics"].items() if k.startswith("batches_")}
    print(f"batches:       {batches}")
    print(f"verdict:       {figures['status'].upper()} {figures['artifacts']}")
    if figures["error_message"]:
        print(f"error:         {figures['error_message']}")


if __name__ == "__main__":
    main()
