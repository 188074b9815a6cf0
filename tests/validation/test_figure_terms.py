"""Finding a figure's term in a text (`figure_names.Folded.find`): every span the term's
pattern (`figure_names.pattern`: whole words, an optional plural, case-insensitive) finds with
`finditer`, found without compiling that pattern. Checked against the pattern itself on
texts and terms made of what its word boundaries and case-insensitivity hinge on."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from runlens.validation.figure_names import Folded, _spans, pattern

#: Letters and what joins words (`_LETTER`), the plural's letters in both cases and their
#: case-insensitive kin (long s, the Kelvin sign, dotless i, dotted I), other scripts,
#: digits, spaces of several kinds, punctuation and characters whose case-folding changes
#: their length (ß, ﬁ).
CHARS = "aAeEsS\u017fkK\u212aiI\u0131\u0130_09 \t\n\x1c\x85\u00a0\u2028\u3000:-.#@ßﬁσςΣéÉжЖ分析未"
text = st.text(alphabet=CHARS, max_size=40)
term = st.text(alphabet=CHARS, min_size=0, max_size=8)


def finditer(term: str, text: str) -> list[tuple[int, int]]:
    return [match.span() for match in pattern(term).finditer(text)]


@settings(max_examples=300, deadline=None)
@given(term=term, text=text)
@example(term="rows", text="rows, Rowses rowss rowe arrows rows_ rows2 rows")
@example(term="topic:mixed", text="topic:mixed topic: mixed topic:mixeds xtopic:mixed")
@example(term="high or critical", text="High  or\tcritical or critical highs or criticals")
@example(term="分析", text="未分析 分析 分析s")
@example(
    term="rows",
    text="rowsS rowsES rowsEs rows\u212a row\u017f rows\u017f \u212arows \u0131tems Kinds",
)
@example(term="s", text="sss es s ses")
@example(term="es", text="eses eseses es")
@example(term="high or critical", text="highor critical high orcritical high\x85or\u3000critical")
@example(term="其他 主题", text="其他主题 其他\u00a0主题 其他 主题们")
@example(term="items", text="\u0131tems \u0130tems ITEMS items\u0131 \u212aitems")
@example(term="kinds", text="\u212ainds \u017fkinds kind\u017f \u0131 kinds")
@example(term="", text="ab")
@example(term=" ", text="a b")
def test_a_term_is_found_where_its_pattern_matches(term: str, text: str) -> None:
    assert _spans(term, text) == finditer(term, text)
    folded, where = term.casefold(), Folded(text)
    assert _spans(folded, where.text, plain=where.plain) == finditer(folded, where.text)


#: ASCII, where a lowered text's terms of one word are searched as plain text (as in a
#: case-folded text without the dotless i).
ASCII = "aAeEsSkKiIxX_09 \t\n\x0b\x1c:-.#@"


@settings(max_examples=300, deadline=None)
@given(term=st.text(alphabet=ASCII, max_size=6), text=st.text(alphabet=ASCII, max_size=40))
@example(term="rows", text="rows, rowses rowss rowe arrows rows_ rows2 rows")
@example(term="s", text="sss es s ses")
@example(term="x", text="xx x_x xs xes")
def test_a_term_is_found_in_a_lowered_text_where_its_pattern_matches(term: str, text: str) -> None:
    lowered = text.lower()
    assert _spans(term, lowered, plain=True) == finditer(term, lowered)
    assert Folded(text).find(term) == finditer(term, lowered)


@settings(max_examples=200, deadline=None)
@given(
    term=term,
    words=st.lists(
        st.sampled_from(
            [
                "",
                "s",
                "es",
                "ses",
                "S",
                "ES",
                "eS",
                "\u017f",
                "\u212a",
                "\u0130",
                "x",
                "_",
                "1",
                " ",
            ]
        ),
        max_size=6,
    ),
)
def test_a_term_among_its_own_repetitions_and_plurals(term: str, words: list[str]) -> None:
    text = "".join(part for word in words for part in (term, word))
    assert _spans(term, text) == finditer(term, text)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Negatives are negative; NEGATIVE, negativeness", [(0, 9), (14, 22), (24, 32)]),
        ("Straße and STRASSE", [(0, 6), (11, 18)]),
    ],
)
def test_a_term_is_found_in_the_text_s_own_offsets(text: str, found: list[tuple[int, int]]) -> None:
    term = "negative" if text.startswith("Neg") else "straße".casefold()
    assert Folded(text).find(term) == found
