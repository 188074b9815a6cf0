"""What a row id looks like, so a document's id-shaped tokens can be checked against the index.

A reader takes `fb_017` in a report for a row of the source whether or not it stands in a
citation, so a token that looks like an id must name a row. "Looks like" is the contract's
`id_pattern` when it declares one; otherwise it is derived from the ids of the index:

- first each id with its digit runs generalised, the rest literal: `fb_001` -> `fb_[0-9]+`,
  `REV.0042` -> `REV\\.[0-9]+`, `用户-3` -> `用户\\-[0-9]+`;
- when that gives more than `MAX_SHAPES` shapes, letter runs are generalised too:
  `A-17` -> `[A-Za-z]+\\-[0-9]+`, `用户-3` -> `[^\\W\\d_]+\\-[0-9]+`;
- when even that gives too many, the ids have no shape (say, free-form keys).

Only a *distinctive* shape is looked for in running text: one with digits, letters, and
something besides them that prose does not produce by accident (a literal part such as `fb_`,
or a separator between generalised runs). Pure numbers (`1`, `2`, ...) are not distinctive:
every count in the report would look like an id; nor are digits with punctuation only
(`1.5`, `3-2`, `2026-01-05`, `#12`), which decimals, ranges, dates and ranks fit; nor is a
bare letters-then-digits class, which `P0` or `mp3` fit. A token in citation position (right
after a quotation and its dash or bracket) is taken as an id when it fits any shape,
distinctive or not, or when the ids have no shape at all: there the writer has said it is an
id.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Container, Iterable
from dataclasses import dataclass

#: Most shapes one index's ids may have before they are generalised further.
MAX_SHAPES = 16
_DIGITS = re.compile(r"[0-9]+")
_DIGIT_CLASS = "[0-9]+"
_ASCII_LETTERS = "[A-Za-z]+"
_LETTERS = r"[^\W\d_]+"  # a letter of any script
_LETTER = re.compile(_LETTERS)
_RUNS = re.compile(r"(?P<digits>[0-9]+)|(?P<letters>[^\W\d_]+)|(?P<other>.)", re.DOTALL)

#: A shape: its regular expression and whether it is distinctive.
Shape = tuple[str, bool]
#: What ids of one shape have in common, cheap to work out per id.
Key = tuple[str, ...]


@dataclass(frozen=True)
class IdShape:
    """The shapes of a source's row ids (module docstring)."""

    patterns: tuple[re.Pattern[str], ...]
    distinctive: tuple[re.Pattern[str], ...]

    @classmethod
    def declared(cls, pattern: str) -> IdShape:
        """The shape a contract declares (`MarkdownCitations.id_pattern`): distinctive."""
        compiled = re.compile(pattern)
        return cls((compiled,), (compiled,))

    @classmethod
    def of_ids(cls, ids: Collection[str]) -> IdShape:
        """The shape derived from the ids of an index."""
        for key_of, shape_of in ((_literal_key, _literal_shape), (_class_key, _class_shape)):
            keys = _distinct(key_of, ids)
            if keys is not None:
                shapes = sorted(shape_of(key) for key in keys)
                return cls(
                    tuple(re.compile(pattern) for pattern, _ in shapes),
                    tuple(re.compile(pattern) for pattern, distinctive in shapes if distinctive),
                )
        return cls((), ())

    def fits(self, token: str) -> bool:
        """Whether a token in citation position is an id (every token, for shapeless ids)."""
        return not self.patterns or self.matches(token)

    def matches(self, token: str) -> bool:
        """Whether the token has one of the ids' shapes (never, for shapeless ids)."""
        return any(p.fullmatch(token) for p in self.patterns)

    def stands_out(self, token: str) -> bool:
        """Whether a token in running text looks like an id."""
        return any(p.fullmatch(token) for p in self.distinctive)


def named_id(token: str, ids: Container[str], longest: int | None = None) -> str:
    """The id a token names: the token itself when it is an id, else the token with the
    punctuation around it (`fb_001,`, `(fb_017)`, `fb_3。`) stripped one character at a
    time until it is one; if it never is, the fully stripped token.

    `longest` is the length of the longest id, when known: a longer candidate is not looked
    up. A hostile document's token can be a megabyte of punctuation, so the work stays linear
    in the token's length.
    """

    def known(start: int, end: int) -> bool:
        return (longest is None or end - start <= longest) and token[start:end] in ids

    start, end = 0, len(token)
    if known(start, end):
        return token
    while end > start and _is_punctuation(token[end - 1]):
        end -= 1
        if known(start, end):
            return token[start:end]
    while start < end and _is_punctuation(token[start]):
        start += 1
        if known(start, end):
            return token[start:end]
    return token[start:end]


def _is_punctuation(char: str) -> bool:
    return unicodedata.category(char).startswith("P")


def _distinct(key_of: Callable[[str], Key], ids: Iterable[str]) -> set[Key] | None:
    """The distinct shape keys of `ids`, or None as soon as there are more than `MAX_SHAPES`.

    Keys are cheap to make; the regular expression is built once per distinct key.
    """
    keys: set[Key] = set()
    for row_id in ids:
        keys.add(key_of(row_id))
        if len(keys) > MAX_SHAPES:
            return None
    return keys


def _literal_key(row_id: str) -> Key:
    return tuple(_DIGITS.split(row_id))  # the literal parts; digit runs sit between them


def _literal_shape(literal: Key) -> Shape:
    pattern = _DIGIT_CLASS.join(re.escape(part) for part in literal)
    return pattern, len(literal) > 1 and any(_LETTER.search(part) for part in literal)


def _class_key(row_id: str) -> Key:
    return tuple(_run_class(run) for run in _RUNS.finditer(row_id))


def _run_class(run: re.Match[str]) -> str:
    if run["digits"]:
        return _DIGIT_CLASS
    if run["letters"]:
        return _ASCII_LETTERS if run["letters"].isascii() else _LETTERS
    return re.escape(run.group())


def _class_shape(classes: Key) -> Shape:
    separators = any(c not in (_DIGIT_CLASS, _ASCII_LETTERS, _LETTERS) for c in classes)
    letters = _ASCII_LETTERS in classes or _LETTERS in classes
    return "".join(classes), _DIGIT_CLASS in classes and letters and separators
