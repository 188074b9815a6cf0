"""Which numbers in a document are claims about the data, written as digits or as words.

The figure sections of a report are checked strictly (`runlens.validation.figures`): every
number there is tied to a figure. Everywhere else a report is prose a person writes freely
(years, versions, "top 3", "P0", "within 30 days", a target), so there a number is checked
only when it is a *claim about the data*, and then it must equal some figure of its kind.

A claim is:

- a percentage (a share), unless it is a target, a bound or an estimate (a word such as
  `target`, `goal`, `below`, `under`, `over`, `more than`, `at least`, `about`, `~`, `目标`,
  `低于`, `超过`, `约` stands before it in its clause) or one end of a range (`10–20%`,
  `10 to 20%`);
- a count of the data's units: a number followed, within four words that are fillers (`of`,
  `the`, `its`, `analysed`, ...), other numbers or words naming a figure (`negative`, a
  theme's name), by a word for rows, reviews, users, customers, comments, responses,
  tickets, entries, records or items (`89 rows`, `1 of its 1 problem rows`,
  `12 negative reviews`; in Chinese a unit such as `条`, `位`, `名`, `人`, `份`, `行`, `个用户`
  right after it, `共89条`), unless it is a bound, an estimate, one end of a range, a rank
  (`top 3 rows`, `first 10`, `前3`, `第3`) or a year (`in 2026`, `2026年`).

Numbers may be written as words: English number words of two or more parts or of one word
other than "one" (`eighty-eight rows`, `twelve users`, `twenty percent`), read by `text2num`;
Chinese numerals other than a lone `一` (`八十八条`, `百分之三十`), read by `cn2an`. "one" and
`一` are left alone: they are as often a pronoun or an article as a count.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from decimal import Decimal

from text_to_num import text2num

from runlens.validation.numbers import SpanSet, StatedNumber

Span = tuple[int, int]

#: Nouns for what a tabular input's rows are, in English (singular and plural are both read).
UNIT_NOUNS = frozenset(
    [
        "row",
        "rows",
        "review",
        "reviews",
        "user",
        "users",
        "customer",
        "customers",
        "comment",
        "comments",
        "response",
        "responses",
        "respondent",
        "respondents",
        "ticket",
        "tickets",
        "entry",
        "entries",
        "record",
        "records",
        "item",
        "items",
        "people",
        "person",
        "persons",
        "message",
        "messages",
        "post",
        "posts",
        "tweet",
        "tweets",
        "complaint",
        "complaints",
        "submission",
        "submissions",
        "answer",
        "answers",
        "mention",
        "mentions",
    ]
)
#: Words that may stand between a count and its unit noun.
FILLERS = frozenset(
    [
        "of",
        "the",
        "its",
        "their",
        "these",
        "those",
        "all",
        "analysed",
        "analyzed",
        "more",
        "other",
        "distinct",
        "total",
        "unique",
        "in",
        "out",
        "separate",
        "new",
        "individual",
    ]
)
#: Chinese units that count rows, right after the number.
_ZH_UNITS = re.compile(r"\s*(?:条|位|名|人|份|行|则|个(?:用户|客户|评论|回复|样本))")
#: Words before a number that make it a target, a bound or an estimate (lower case).
QUALIFIERS = (
    "target", "goal", "aim", "below", "under", "over", "above", "more than", "less than",
    "fewer than", "at least", "at most", "up to", "about", "around", "approximately",
    "roughly", "nearly", "almost", "some", "~", "≈", "<", ">", "≤", "≥", "目标", "低于",
    "高于", "超过", "不到", "不超过", "至少", "至多", "约", "大约", "近", "将近", "降至",
    "降到", "提升到", "以内", "reduce", "cut", "raise", "increase", "decrease", "grow",
)  # fmt: skip
#: Words before a number that make it a rank or an ordinal.
_RANKS = re.compile(
    r"(?:\b(?:top|first|last|bottom|next|step|phase|sprint|week|day)|[前第后])\s*$", re.I
)
_YEAR_BEFORE = re.compile(
    r"\b(?:in|since|by|until|till|from|before|after|during|of|through)\s+$", re.I
)
_RANGE_BEFORE = re.compile(
    r"(?:[0-9零一二两三四五六七八九十百千万]\s*[-–—~～至]|(?<![0-9])[0-9]{1,3}(?:\.[0-9]+)?%?\s+to)\s*$"
)
_RANGE_AFTER = re.compile(r"^\s*%?\s*(?:[-–—~～至]|to)\s*[0-9]")
_CLAUSE_START = re.compile(r"[,;:，；：。.!?！？()（）\[\]【】\n]")
_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*|[0-9][0-9.,]*", re.UNICODE)
_PLUS_AFTER = re.compile(r"^\s*\+")

_EN_NUMBER_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
]
_EN_WORD = "(?:" + "|".join(sorted(_EN_NUMBER_WORDS, key=len, reverse=True)) + ")"
_EN_RUN = re.compile(rf"\b{_EN_WORD}(?:(?:\s*-\s*|\s+and\s+|\s+){_EN_WORD})*\b", re.I)
_EN_PERCENT = re.compile(r"\s*(?:percent|per cent)\b", re.I)
_ZH_DIGITS = "零〇一二两三四五六七八九十百千万亿"
_ZH_RUN = re.compile(f"(百分之)?([{_ZH_DIGITS}]+)")


def word_numbers(text: str, skip: Sequence[Span] = ()) -> list[StatedNumber]:
    """Numbers written as words (module docstring) outside the `skip` spans, each a claim
    only if `is_claim` says so."""
    hidden = SpanSet(skip)
    found: list[StatedNumber] = []
    for match in _EN_RUN.finditer(text):
        words = match.group()
        if words.casefold() == "one" or hidden.overlaps(*match.span()):
            continue
        try:
            value = text2num(re.sub(r"\s*-\s*", "-", words.casefold()), "en")
        except ValueError:
            continue
        found.append(_stated(text, match.start(), match.end(), value, _EN_PERCENT))
    for match in _ZH_RUN.finditer(text):
        digits = match.group(2)
        if (digits == "一" and not match.group(1)) or hidden.overlaps(*match.span()):
            continue
        try:
            value = _chinese_value(digits)
        except (ValueError, KeyError, TypeError):
            continue
        if match.group(1):
            found.append(
                StatedNumber(match.group(), Decimal(value), 0, True, match.start(), match.end())
            )
        elif _ZH_UNITS.match(text, match.end()):
            found.append(StatedNumber(digits, Decimal(value), 0, False, *match.span(2)))
    return sorted(found, key=lambda number: number.start)


def _chinese_value(digits: str) -> int:
    """The value of a run of Chinese numerals; cn2an is imported on first use (it takes a
    second to import, and most documents hold no Chinese numeral)."""
    import cn2an

    return int(cn2an.cn2an(digits, "smart"))


def _stated(text: str, start: int, end: int, value: int, percent: re.Pattern[str]) -> StatedNumber:
    sign = percent.match(text, end)
    stop = sign.end() if sign else end
    return StatedNumber(text[start:stop], Decimal(value), 0, bool(sign), start, stop)


def is_claim(text: str, number: StatedNumber, names: Collection[str] = ()) -> bool:
    """Whether `number`, stated in `text`, is a claim about the data (module docstring).
    `names`: the case-folded words that name figures, which may stand between a count and
    its unit."""
    before = text[: number.start]
    clause = before[max((m.end() for m in _CLAUSE_START.finditer(before)), default=0) :]
    if _qualified(clause) or _RANGE_BEFORE.search(before) or _RANGE_AFTER.match(text[number.end :]):
        return False
    if number.percent:
        return True
    if _RANKS.search(before) or _PLUS_AFTER.match(text[number.end :]):
        return False
    if _is_year(text, number, before):
        return False
    if _ZH_UNITS.match(text, number.end):
        return True
    return _counts_units(text[number.end :], names)


def _qualified(clause: str) -> bool:
    folded = clause.casefold()
    words = set(re.findall(r"[a-z]+", folded))
    return any(
        (qualifier in words)
        if qualifier.isascii() and qualifier.isalpha() and " " not in qualifier
        else qualifier in folded
        for qualifier in QUALIFIERS
    )


def _is_year(text: str, number: StatedNumber, before: str) -> bool:
    if number.decimals or not (1900 <= number.value <= 2100) or "," in number.text:
        return False
    return bool(_YEAR_BEFORE.search(before)) or text.startswith("年", number.end)


def _counts_units(after: str, names: Collection[str]) -> bool:
    """Whether a unit noun follows within four filler, number or figure-naming words, with no
    clause break in between."""
    position = 0
    for _ in range(5):
        match = _WORD.search(after, position)
        if match is None or _CLAUSE_START.search(after, position, match.start()):
            return False
        word = match.group().casefold()
        if word in UNIT_NOUNS:
            return True
        if not (word in FILLERS or word in names or word[0].isdigit()):
            return False
        position = match.end()
    return False
