"""Which terms a passage is searched for (`FigureNames.occurrences` and `hiding`): a term whose
first word `_spans` would look for as plain text, and that the passage does not hold, is left
out at once; every other term is searched. The spans found are those of searching every
term, checked on passages and labels made of what case-folding and word boundaries hinge on."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from runlens.validation.figure_names import NOWHERE, FigureNames, Folded
from runlens.validation.figure_rules import Figure, Place
from runlens.validation.numbers import Span, SpanSet

CHARS = "aAeEsS\u017fkK\u212aiI\u0131\u0130_09 \t\n:-.ßﬁσςΣéÉжЖ分析未7"
term = st.text(alphabet=CHARS, min_size=0, max_size=6)
text = st.text(alphabet=CHARS, max_size=40)
labels = st.lists(st.tuples(term) | st.tuples(term, term), min_size=1, max_size=6)


def _every_term(names: FigureNames, text: str, ignored: SpanSet) -> dict[str, list[Span]]:
    """`occurrences` as it searched before: every term, the contained spans dropped."""
    folded = Folded(text)
    found = {}
    for term_ in names.terms:
        spans = [span for span in folded.find(term_) if not ignored.contains(*span)]
        if spans:
            found[term_] = spans
    inner = set()
    reach = -1
    for start, end in sorted(
        {s for spans in found.values() for s in spans}, key=lambda s: (s[0], -s[1])
    ):
        if end <= reach:
            inner.add((start, end))
        reach = max(reach, end)
    kept = {t: [s for s in spans if s not in inner] for t, spans in found.items()}
    return {t: spans for t, spans in kept.items() if spans}


def _names(labels_: list[tuple[str, ...]], rows: list[str]) -> FigureNames:
    figures = [Figure(f"f{n}", n, "count", (label,)) for n, label in enumerate(labels_)]
    if rows:
        place = Place(((labels_[0][0] or "t",),), tuple(rows), (("rows",),))
        figures.append(Figure("placed", 1, "count", (), place=place))
    return FigureNames(figures)


@settings(max_examples=300, deadline=None)
@given(labels, st.lists(term, max_size=3), text)
@example([("rows",), ("Rows", "ß")], ["2024"], "Rows rows ROWS SS ß 2024")
@example([("ΣΑΣ",), ("ﬁle",)], ["v2"], "σας ΣΑΣ ﬁle FILE file v2 V2")
@example([("\u0130tems",), ("k",)], [], "i\u0307tems \u0130TEMS \u212a k")
@example([("items",), ("\u017fize",)], [], "\u0131tems size")  # dotless i: not plain text
def test_the_terms_searched_find_what_searching_every_term_finds(
    labels_: list[tuple[str, ...]], rows: list[str], passage: str
) -> None:
    names = _names(labels_, rows)
    assert names.occurrences(passage) == _every_term(names, passage, NOWHERE)
    ignored = SpanSet(((0, 3),))
    assert names.occurrences(passage, ignored) == _every_term(names, passage, ignored)
    folded = Folded(passage)
    every = [span for term_ in names.digit_terms for span in folded.find(term_)]
    assert names.hiding(passage) == every


def test_a_term_absent_from_the_passage_is_not_searched() -> None:
    names = _names([("billing",), ("export", "slow")], [])
    searched = [t for t, _, _ in names._searched]
    assert list(Folded("nothing here").candidates(names._searched)) == []
    assert list(Folded("Billing is slow").candidates(names._searched)) == ["billing", "slow"]
    assert sorted(searched) == ["billing", "export", "slow"]
