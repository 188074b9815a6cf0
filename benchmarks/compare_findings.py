"""Do two source trees judge the same workspaces alike? Every finding, in order.

    python benchmarks/compare_findings.py --workspace DIR --tree A/src --tree B/src [--dir D]

Copies the workspace of a completed Feedback Analysis run, then makes broken copies of it
(a changed quote in the analysis and in the report, a cited id that is not in the source, a
wrong figure in the report, a wrong count in the analysis, ...), and judges each copy with
each tree in its own process (`PYTHONPATH=TREE`): once as `runlens validate` does
(`validate_workspace`, the whole `ValidationReport` with its findings, quote locations and
id citations) and once as `runlens run` does (every Stop validator's result with the index
trusted as built in process). Prints which copies differ and exits 1 when any does. Speed
changes to the validators must leave this silent. Prints; the exit status is the verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

_ANALYSIS = "artifacts/feedback_analysis.json"
_BACKLOG = "artifacts/product_backlog.json"
_REPORT = "artifacts/insight_report.md"


def _judge(workspace: Path) -> str:
    """The findings of both ways of judging `workspace`, as JSON (runs in the tree's process)."""
    import hashlib

    from runlens.validation import ValidationContext, stop_validators, validate_workspace
    from runlens_feedback import plugin

    index = workspace / "runtime/evidence_index.json"
    sha = hashlib.sha256(index.read_bytes()).hexdigest()
    report = validate_workspace(
        workspace, plugin.contracts, expected_index_sha256=sha, plugin=plugin
    )
    context = ValidationContext(
        workspace, plugin.contracts, expected_index_sha256=sha, index_built_in_process=True
    )
    in_run = []
    for validator in stop_validators(plugin, entry_points=False):
        result = validator.validate(context)
        in_run.append(
            {
                "name": validator.name,
                "findings": [f.model_dump(mode="json") for f in result.findings],
                "summary": result.summary,
                "blocked": result.blocked,
            }
        )
    return json.dumps({"validate": report.model_dump(mode="json"), "run": in_run}, indent=1)


def _edit_json(path: Path, edit: Callable[[dict], None]) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document)
    path.write_text(json.dumps(document, ensure_ascii=False, indent=2), encoding="utf-8")


def _edit_text(path: Path, edit: Callable[[str], str]) -> None:
    before = path.read_text(encoding="utf-8")
    after = edit(before)
    if after == before:
        sys.exit(f"the edit of {path} changed nothing")
    path.write_text(after, encoding="utf-8")


def _quote_changed(ws: Path) -> None:
    def edit(d: dict) -> None:
        item = next(i for i in d["items"] if len(i.get("evidence_text", "")) > 4)
        item["evidence_text"] = item["evidence_text"][:-2] + "ZZ"

    _edit_json(ws / _ANALYSIS, edit)


def _quote_changed_in_report(ws: Path) -> None:
    _edit_text(ws / _REPORT, lambda md: re.sub(r"(“[^”]{3})", r"\1QQ", md, count=1))


def _foreign_id_in_analysis(ws: Path) -> None:
    def edit(d: dict) -> None:
        d["items"][len(d["items"]) // 2]["feedback_id"] = "fb_9999999"

    _edit_json(ws / _ANALYSIS, edit)


def _foreign_id_in_backlog(ws: Path) -> None:
    def edit(d: dict) -> None:
        d["items"][0]["evidence_feedback_ids"][0] = "fb_9999998"

    _edit_json(ws / _BACKLOG, edit)


def _foreign_id_in_report(ws: Path) -> None:
    _edit_text(ws / _REPORT, lambda md: re.sub(r"— fb_\d+", "— fb_9999997", md, count=1))


def _wrong_figure(ws: Path) -> None:
    def edit(md: str) -> str:
        match = re.search(r"已分析 (\d+) 条|(\d+) rows analysed|analysed (\d+)", md)
        if match is None:  # any table count then
            return re.sub(r"\| (\d+) \|", lambda m: f"| {int(m[1]) + 7} |", md, count=1)
        number = next(g for g in match.groups() if g)
        return (
            md[: match.start()] + match[0].replace(number, str(int(number) + 3)) + md[match.end() :]
        )

    _edit_text(ws / _REPORT, edit)


def _wrong_table_count(ws: Path) -> None:
    _edit_text(
        ws / _REPORT,
        lambda md: re.sub(
            r"\| (\d+) \| (\d+\.\d)%", lambda m: f"| {int(m[1]) + 1} | {m[2]}%", md, count=1
        ),
    )


def _wrong_count_in_analysis(ws: Path) -> None:
    def edit(d: dict) -> None:
        flipped = 0
        for item in d["items"]:
            if item.get("sentiment") == "negative" and flipped < 5:
                item["sentiment"] = "positive"
                flipped += 1
        if d.get("failed_batches"):
            d["failed_batches"][0]["rows"] = d["failed_batches"][0]["rows"] + 1

    _edit_json(ws / _ANALYSIS, edit)


def _dropped_items(ws: Path) -> None:
    def edit(d: dict) -> None:
        del d["items"][10:20]

    _edit_json(ws / _ANALYSIS, edit)


def _malformed_item(ws: Path) -> None:
    def edit(d: dict) -> None:
        d["items"][3]["severity"] = "enormous"
        d["items"][4]["sentiment"] = 7
        d["items"][5] = "not an item"

    _edit_json(ws / _ANALYSIS, edit)


def _backlog_of_another_theme(ws: Path) -> None:
    def edit(d: dict) -> None:
        d["items"][0]["theme"] = "a theme of no cited row"

    _edit_json(ws / _BACKLOG, edit)


_BREAKAGES: dict[str, Callable[[Path], None]] = {
    "quote changed in the analysis": _quote_changed,
    "quote changed in the report": _quote_changed_in_report,
    "id not in the source (analysis)": _foreign_id_in_analysis,
    "id not in the source (backlog)": _foreign_id_in_backlog,
    "id not in the source (report)": _foreign_id_in_report,
    "wrong figure in the report": _wrong_figure,
    "wrong count in a report table": _wrong_table_count,
    "wrong counts in the analysis": _wrong_count_in_analysis,
    "analysis items dropped": _dropped_items,
    "malformed analysis items": _malformed_item,
    "backlog evidence of another theme": _backlog_of_another_theme,
}


def _run_tree(tree: Path, workspace: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, __file__, "--judge", str(workspace)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return f"exit {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    parser.add_argument("--dir", default="/dev/shm" if Path("/dev/shm").is_dir() else None)
    parser.add_argument("--only", action="append", default=[], help="breakage names to run")
    parser.add_argument("--judge", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.judge is not None:
        print(_judge(args.judge))
        return
    if args.workspace is None or len(args.tree) != 2:
        parser.error("give --workspace and two --tree")
    differ = 0
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        cases = {"unchanged": None, **_BREAKAGES}
        for name, breakage in cases.items():
            if args.only and name not in args.only and name != "unchanged":
                continue
            copy = Path(scratch) / "ws"
            if copy.exists():
                shutil.rmtree(copy)
            shutil.copytree(args.workspace, copy)
            if breakage is not None:
                breakage(copy)
            first, second = (_run_tree(tree, copy) for tree in args.tree)
            try:
                validate = json.loads(first)["validate"]
                codes = [f["code"] for f in validate["findings"]]
                verdict = "passed" if validate["passed"] else f"{len(codes)} findings"
            except (ValueError, KeyError):
                verdict = "no report"
                codes = []
            same = first == second and not first.startswith("exit")
            differ += not same
            shown = ", ".join(sorted(set(codes)))[:90]
            print(f"{'same   ' if same else 'DIFFER '} {name:34} {verdict} {shown}")
            if not same:
                for label, text in (("first", first), ("second", second)):
                    (Path(args.dir or ".") / f"findings_{label}.json").write_text(text)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
