"""The citations of a usual deliverable are judged in one pass, exactly as value by value.

`_Checker.check_plain` handles a list of objects whose every id is a row and every quote is
verified; at anything else it gives up, leaving the collector untouched, and `check_each`
judges the document. These tests hold both to the same collector on generated documents:
clean ones (every kind of accepted quote: whole rows, padded, fragments, decomposed accents,
repeated words of several rows) and ones with one flaw each at a random place.
"""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from tests.feedback.helpers import generated_rows, write_csv

from runlens.contracts import ArtifactContract, EvidenceQuote
from runlens.evidence import EvidenceIndex, build_evidence_index
from runlens.validation.base import Collector
from runlens.validation.evidence import _Checker, _plain_shape

ROWS = 1_600
CONTRACT = ArtifactContract(
    name="out.json",
    evidence_fields=("items.feedback_id",),
    evidence_quotes=(EvidenceQuote(text="items.evidence_text", id="items.feedback_id"),),
)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> EvidenceIndex:
    rows = generated_rows(ROWS, seed=11)
    rows[3]["text"] = "Cafe\u0301 menu crashes on save"  # decomposed: quoted as NFC below
    rows[4]["text"] = "  padded row text here  "
    path = tmp_path_factory.mktemp("index") / "rows.csv"
    write_csv(path, rows)
    return build_evidence_index(path, id_column="feedback_id", text_column="text")


def _accepted(text: str, rng: random.Random) -> str:
    """A quote of `text` the check accepts: the whole row, padded, NFC, or whole words."""
    words = text.split()
    kind = rng.randrange(4)
    if kind == 1:
        return f"  {text} "
    if kind == 2:
        return unicodedata.normalize("NFC", text)
    if kind == 3 and len(words) > 4 and text.isascii():
        return " ".join(words[1:4])
    return text


def _clean(index: EvidenceIndex, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    texts = dict(index.texts())
    ids = [row_id for row_id, text in texts.items() if text.strip()]
    items = []
    for _ in range(ROWS + 200):  # rows cited twice, in another order
        row_id = rng.choice(ids)
        items.append({"feedback_id": row_id, "evidence_text": _accepted(texts[row_id], rng)})
    return items


_FLAWS = (
    lambda item: item.update(feedback_id="fb_missing"),
    lambda item: item.update(feedback_id=7),
    lambda item: item.update(evidence_text="   "),
    lambda item: item.update(evidence_text=None),
    lambda item: item.update(evidence_text=item["evidence_text"][1:6]),
    lambda item: item.update(evidence_text="not these words at all"),
    lambda item: item.pop("evidence_text"),
    lambda item: item.pop("feedback_id"),
)


def _judged(index: EvidenceIndex, document: Any, *, plain: bool) -> tuple[Any, bool]:
    collector = Collector("EvidenceCitationValidationHook")
    checker = _Checker(collector, index, CONTRACT, lambda: dict(index.texts()))
    handled = checker.check_plain(document) if plain else False
    if not handled:
        checker.check_each(document)
    result = collector.result()
    return (
        [f.model_dump() for f in result.findings],
        result.summary,
        result.quotes,
        result.id_citations,
    ), handled


@pytest.mark.parametrize("seed", range(4))
def test_a_clean_document_is_judged_in_one_pass_as_value_by_value(
    index: EvidenceIndex, seed: int
) -> None:
    document = {"items": _clean(index, seed), "failed_batches": []}
    one_pass, handled = _judged(index, document, plain=True)
    assert handled
    assert one_pass == _judged(index, document, plain=False)[0]
    assert len(one_pass[2]) == len(document["items"])


@pytest.mark.parametrize("flaw", range(len(_FLAWS)))
def test_a_flawed_document_is_judged_value_by_value(index: EvidenceIndex, flaw: int) -> None:
    document = {"items": _clean(index, flaw)}
    at = random.Random(flaw).randrange(len(document["items"]))
    _FLAWS[flaw](document["items"][at])
    collector = Collector("EvidenceCitationValidationHook")
    checker = _Checker(collector, index, CONTRACT, lambda: dict(index.texts()))
    assert not checker.check_plain(document)
    assert collector.result() == Collector("EvidenceCitationValidationHook").result()
    # And `check` gives what value by value gives.
    collector = Collector("EvidenceCitationValidationHook")
    _Checker(collector, index, CONTRACT, lambda: dict(index.texts())).check(document)
    result = collector.result()
    expected, _ = _judged(index, document, plain=False)
    assert (
        [f.model_dump() for f in result.findings],
        result.summary,
        result.quotes,
        result.id_citations,
    ) == expected
    # Each flaw shows: a finding, an id cited without its quote, or an item not cited.
    assert result.findings or result.id_citations or len(result.quotes) < len(document["items"])


def test_other_shapes_are_judged_value_by_value(index: EvidenceIndex) -> None:
    items = _clean(index, 9)
    for document in ({"items": items[:999]}, {"items": [*items[:1500], ["nested"]]}, items):
        assert _judged(index, document, plain=True)[1] is False
    for contract in (
        CONTRACT.model_copy(update={"evidence_fields": ()}),
        CONTRACT.model_copy(update={"evidence_fields": ("items.feedback_id", "items.other")}),
        CONTRACT.model_copy(update={"evidence_quotes": (EvidenceQuote(text="a.b.c", id="a.b.d"),)}),
    ):
        assert _plain_shape(contract) is None
    assert _plain_shape(CONTRACT) == ("items", "evidence_text", "feedback_id")


def test_the_benchmark_workspace_shape_is_plain(tmp_path: Path) -> None:
    from runlens_feedback.contracts import ANALYSIS_CONTRACT

    assert _plain_shape(ANALYSIS_CONTRACT) == ("items", "evidence_text", "feedback_id")
