"""Sentiment figures only: `bench_quality.py --no-themes` (kept so older docs still work).

See `bench_quality.py` and docs/quality.md for the corpora, the splits and the baselines.
"""

from __future__ import annotations

import sys

from bench_quality import main

if __name__ == "__main__":
    raise SystemExit(main(["--no-themes", *sys.argv[1:]]))
