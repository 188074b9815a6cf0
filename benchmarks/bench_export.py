"""The self-verifying HTML export of a Feedback Analysis run: its size, how long `runlens export`
takes, and how fast the file paints and checks itself in a browser, for 100, 3,000 and
100,000 rows.

    python benchmarks/bench_export.py [--rows 100 3000 100000] [--seed 2026] [--rounds 3]

1. Runs `feedback-analysis` with the `offline` model on the CSV `bench_offline.py` generates,
   once per size: the workspace and its runs home (with the signing key) are kept under
   `benchmarks/.data/export_<rows>_<seed>/` and reused while the run record says it ended.
2. Runs `runlens export WORKSPACE --html FILE` in a child process, as a user does, and prints
   the file's size and the command's wall time.
3. Opens the file in Chromium (`/usr/bin/chromium`, or `$RUNLENS_CHROMIUM`) from a `file://`
   URL with every other request aborted, `--rounds` times, and prints the median first
   contentful paint and the median time until the page's own check ended (signature and
   hashes with WebCrypto), with its outcome. A request the page tried to make is printed too.

Prints; asserts nothing. The goals (issue 27): at most 2 MB and first paint under 1 s for a
3,000-row run; for 100,000 rows the file holds the cited rows and the figures, not the input.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from runlens.models.registry import ModelContext, resolve_model
from runlens.runtime.run import run_plugin
from runlens_feedback import plugin

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_offline import DATA, cached_csv  # a sibling script, not a package

GOAL_BYTES = 2 * 1024 * 1024
GOAL_PAINT_MS = 1000.0


def _workspace(rows: int, seed: int) -> tuple[Path, Path]:
    """The kept run of `rows` rows and its runs home, made on first use."""
    folder = DATA / f"export_{rows}_{seed}"
    workspace, home = folder / "run", folder / "home"
    record = workspace / "runtime" / "run.json"
    if record.is_file() and (workspace / "runtime" / "verdict.dsse.json").is_file():
        status = json.loads(record.read_text(encoding="utf-8")).get("status")
        if status in {"completed", "failed"}:
            return workspace, home
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    home.mkdir(parents=True)
    os.environ["RUNLENS_HOME"] = str(home)
    model = resolve_model("offline", ModelContext(plugin=plugin))
    started = time.perf_counter()
    result = asyncio.run(run_plugin(plugin, cached_csv(rows, seed), model, workspace=workspace))
    print(f"  run: {result.status.value} in {time.perf_counter() - started:.1f} s")
    return workspace, home


def _export(workspace: Path, home: Path, target: Path) -> float:
    command = [sys.executable, "-m", "runlens", "export", str(workspace), "--html", str(target)]
    started = time.perf_counter()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "RUNLENS_HOME": str(home)},
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"runlens export failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed


def _open(browser: Any, target: Path) -> dict[str, Any]:
    """One fresh page on the file: first contentful paint, the check's end and outcome, and
    any request the page tried to make (all aborted)."""
    context = browser.new_context()
    tried: list[str] = []
    url = target.resolve().as_uri()

    def block(route: Any) -> None:
        if route.request.url != url:
            tried.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    context.route("**/*", block)
    page = context.new_page()
    page.goto(url)
    outcome = page.evaluate(
        """async () => {
            const result = await window.runlensCheck;
            const checked = performance.now();
            const paint = await new Promise((resolve) => {
                const seen = (entries) => entries.find((e) => e.name === "first-contentful-paint");
                const now = seen(performance.getEntriesByType("paint"));
                if (now) return resolve(now.startTime);
                new PerformanceObserver((list) => {
                    const entry = seen(list.getEntries());
                    if (entry) resolve(entry.startTime);
                }).observe({type: "paint", buffered: true});
                setTimeout(() => resolve(null), 5000);
            });
            const banner = document.getElementById("runlens-check").innerText;
            return {paint, checked, verified: result.verified, banner: banner.split("\\n")[0]};
        }"""
    )
    context.close()
    return {**outcome, "requests": tried}


def _measure(target: Path, rounds: int) -> list[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    executable = os.environ.get("RUNLENS_CHROMIUM", "/usr/bin/chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable)
        try:
            return [_open(browser, target) for _ in range(rounds)]
        finally:
            browser.close()


def _bundle_figures(target: Path) -> dict[str, Any]:
    from runlens.verdict.exportfile import extract_bundle

    bundle = extract_bundle(target.read_text(encoding="utf-8"))
    rows = json.loads(bundle["rows"])
    return {
        "files": sorted(bundle["files"]),
        "omitted": sorted(bundle["omitted"]),
        "rows": len(rows),
        "row_list": bundle["row_list"] is not None,
        "view_bytes": len(bundle["view"].encode("utf-8")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100, 3000, 100_000])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for rows in args.rows:
        print(f"{rows:,} rows")
        workspace, home = _workspace(rows, args.seed)
        target = workspace.parent / f"export_{rows}.html"
        export_seconds = _export(workspace, home, target)
        size = target.stat().st_size
        figures = _bundle_figures(target)
        print(
            f"  runlens export: {export_seconds:.2f} s; file {size / 1024:,.0f} KiB "
            f"({'within' if size <= GOAL_BYTES else 'OVER'} the 2 MiB goal)"
        )
        print(
            f"  embedded: {', '.join(figures['files'])}; {figures['rows']} cited rows; "
            f"row list {'embedded' if figures['row_list'] else 'not embedded'}; "
            f"view {figures['view_bytes'] / 1024:,.0f} KiB"
        )
        print(f"  not embedded: {', '.join(figures['omitted'])}")
        opened = _measure(target, args.rounds)
        paints = [o["paint"] for o in opened if o["paint"] is not None]
        paint = statistics.median(paints) if paints else float("nan")
        checked = statistics.median(o["checked"] for o in opened)
        verdict = "verified" if all(o["verified"] for o in opened) else "NOT verified"
        print(
            f"  first contentful paint: {paint:.0f} ms "
            f"({'within' if paint < GOAL_PAINT_MS else 'OVER'} the 1 s goal); "
            f"checked itself in {checked:.0f} ms: {verdict}"
        )
        print(f"  banner: {opened[0]['banner'][:120]}")
        tried = sorted({url for o in opened for url in o["requests"]})
        print(f"  requests the page tried: {len(tried)}" + (f" {tried}" if tried else ""))


if __name__ == "__main__":
    main()
