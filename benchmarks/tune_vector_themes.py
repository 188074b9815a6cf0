"""Theme discovery with sentence vectors on DEVELOPMENT data only: the figures its settings
were chosen on.

Run: `python benchmarks/tune_vector_themes.py` (fetches the corpora into benchmarks/.data/
like the quality benchmark). Deterministic. Prints, per setting of
`discovery.vectors.VECTOR_ROWS_PER_TOPIC`, `discovery.vectors.OUTLIER_SHARE` and
`embedding.TEXT_CHARS`, each development corpus's themes, coverage and purity against its true
topic, and the word-based topics (`vectors=False`) beside them.

Development corpora (see benchmarks/corpora.py and docs/quality.md):

- `shipped sample (gold)`: `examples/sample_feedback.csv` by its hand-labelled topic
  (`corpora.shipped_sample`);
- `zh THUCNews train half`: the training half of the genre split of THUCNews headlines
  (`corpora.thucnews_split`), by section;
- `en drugs train top-10`: `drugsComTrain.tsv`'s reviews of the ten most frequent
  conditions (`corpora.drug_top_conditions("training")`), by condition;
- `en VADER mixed 3k`: 1,000 snippets each of VADER's tweets, film and Amazon snippets
  (`tune_themes.training_corpora`), by source.

The held-out halves (THUCNews's other half, `drugsComTest.tsv`) are read only by
`bench_quality.py`, after the settings were fixed.
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter
from collections.abc import Sequence
from functools import partial
from typing import Any

import corpora

Topical = corpora.Topical


def development() -> dict[str, Topical]:
    import tune_themes

    corpora.ensure_python_packages()
    thucnews_train, _ = corpora.thucnews_split()
    mixed = tune_themes.training_corpora()["vader mixed 3k"]
    sources = ["tweets"] * 1000 + ["film"] * 1000 + ["amazon"] * 1000
    return {
        "shipped sample (gold)": corpora.shipped_sample(),
        "zh THUCNews train half": thucnews_train,
        "en drugs train top-10": corpora.drug_top_conditions("training"),
        "en VADER mixed 3k": list(zip(mixed, sources, strict=True)),
    }


def measured(rows: Topical, **options: Any) -> tuple[int, float, float, float]:
    """(themes, coverage, purity, seconds) of `discover_themes(..., **options)` on `rows`."""
    from bench_quality import _purity_of

    from runlens_feedback.discovery import discover_themes

    return _purity_of(partial(discover_themes, **options), rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-topic", type=float, nargs="*", default=[1, 1.5, 2, 5])
    parser.add_argument("--outliers", type=float, nargs="*", default=[0.0, 0.1, 0.2])
    parser.add_argument("--chars", type=int, nargs="*", default=[300, 600])
    parser.add_argument("--concepts", type=float, nargs="*", default=[0.0, 0.5, 1.0])
    parser.add_argument("--starts", type=int, nargs="*", default=[4, 10])
    args = parser.parse_args(argv)

    from runlens_feedback import embedding
    from runlens_feedback.discovery import vectors as discovery

    data = development()
    encode = embedding.sentence_vectors
    memo: dict[tuple[int, str], Any] = {}

    def cached(texts: Sequence[str]) -> Any:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if (embedding.TEXT_CHARS, t) not in memo]
        if missing:
            for text, vector in zip(missing, encode(missing), strict=True):
                memo[(embedding.TEXT_CHARS, text)] = vector
        return np.vstack([memo[(embedding.TEXT_CHARS, t)] for t in texts])

    embedding.sentence_vectors = cached  # type: ignore[assignment]
    for name, rows in data.items():
        topics = Counter(topic for _, topic in rows)
        print(f"{name}: {len(rows)} rows, {len(topics)} true topics")
        count, coverage, purity, seconds = measured(rows, vectors=False)
        print(
            f"  words only           themes {count:>2}  coverage {coverage:6.1%}  "
            f"purity {purity:6.1%}  {seconds:5.1f} s"
        )
        for chars, per_topic, outliers, concepts, starts in itertools.product(
            args.chars, args.per_topic, args.outliers, args.concepts, args.starts
        ):
            discovery.KMEANS_STARTS = starts
            embedding.TEXT_CHARS = chars
            discovery.VECTOR_ROWS_PER_TOPIC = per_topic
            discovery.OUTLIER_SHARE = outliers
            discovery.CONCEPT_WEIGHT = concepts
            count, coverage, purity, seconds = measured(rows, vectors=True)
            print(
                f"  starts {starts:>2} chars {chars:>3} n/{per_topic:<3} out {outliers:.2f} "
                f"concepts {concepts:.1f}"
                f"  themes {count:>2}  "
                f"coverage {coverage:6.1%}  purity {purity:6.1%}  {seconds:5.1f} s",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
