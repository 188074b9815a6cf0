"""Step 5 of choosing how to read a CSV file (`runlens.evidence._detect`): a legacy
(single- or double-byte) encoding, from the characters each candidate decodes the samples to.

- GB18030 (so GBK/GB2312, what Excel exports in Chinese) when nearly all characters are
  GB2312's, unless a Korean/Japanese/Big5 reading is clearly less messy;
- Windows-1252 (so Latin-1) when the text reads as Western European words: accented
  letters inside words, never runs of three or more non-ASCII characters;
- otherwise charset-normalizer's best match (Big5, Shift-JIS, Windows-1251 ...).

Confidence is (1 - mess) x the share of plausible characters x (1 - 2^-(n+1)) for n
non-ASCII characters seen (`_weight`): one `é` alone is a guess (0.75), a paragraph is not.
A GB18030 reading's mess is measured without its words of Latin letters.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from runlens.evidence._encoding import (
    BY_DETECTOR,
    BY_GB2312,
    BY_WESTERN,
    CP1252,
    GB18030,
    TextFormat,
)
from runlens.evidence._samples import _decode_samples, _non_ascii, _Sample

#: Share of GB2312 characters among the non-ASCII ones for a GB18030 reading.
GB2312_SHARE = 0.95
#: Share of plausible non-ASCII characters for a Windows-1252 reading.
WESTERN_SHARE = 0.9
#: How much messier than the least messy other CJK reading GB18030 may be and still win.
GB_MESS_MARGIN = 0.05
#: Characters of a reading the mess measure looks at.
_MESS_CHARS = 20_000
_HIGH_BYTES = bytes(range(0x80, 0x100))
#: Marks that sit inside Western words: apostrophes, the Catalan middle dot, dashes.
_IN_WORD_MARKS = frozenset("’‘´`·–—-")
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
_NON_ASCII_WORD = re.compile(r"[^\x00-\x7f\s]+")
#: A word of Latin letters (pinyin's tone marks included). What it looks like says nothing
#: about which CJK code page a file is in, but one odd word (a long run of pinyin vowels, an
#: accented token) makes the whole of a clean GB18030 reading look messy.
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
#: Detector names for encodings RunLens reads with a superset codec instead.
_SUPERSETS = {"gbk": GB18030, "gb2312": GB18030, "gb18030": GB18030}
#: Detector matches never taken: wide encodings (step 3 decides those), UTF-8, 7-bit codecs.
_NOT_PROPOSED = ("utf_16", "utf_32", "utf_8", "utf_7", "ascii", "hz", "iso2022")
_HALFWIDTH_KANA = dict.fromkeys(range(0xFF61, 0xFFA0))
#: Single-byte code pages asked about one by one when the detector finds nothing plausible.
_CODE_PAGES = (
    "cp1250",
    "cp1251",
    "koi8_r",
    "koi8_u",
    "cp1253",
    "cp1254",
    "cp1255",
    "cp1256",
    "cp1257",
    "cp1258",
    "iso8859_2",
    "iso8859_5",
    "iso8859_7",
    "iso8859_15",
    "cp850",
    "mac_roman",
)
_CJK_RIVALS = ("big5", "cp950", "cp932", "shift_jis", "euc_jp", "euc_jis", "cp949", "euc_kr")


def _legacy(samples: Sequence[_Sample], exclude: Iterable[str] = ()) -> TextFormat | None:
    """The best legacy (single- or double-byte) encoding for the samples, or None."""
    excluded = set(exclude)
    detected: list[_Match] | None = None

    def matches() -> list[_Match]:
        nonlocal detected
        if detected is None:
            detected = _detector_matches(samples)
        return detected

    if GB18030 not in excluded:
        text = _decode_samples(samples, GB18030)
        if text is not None:
            share, count = _gb2312_share(text)
            if count and share >= GB2312_SHARE:
                mess = _mess(text)
                rivals = [m.chaos for m in matches() if m.encoding.startswith(_CJK_RIVALS)]
                if not rivals or mess <= min(rivals) + GB_MESS_MARGIN:
                    confidence = (1 - _mess(_LATIN_WORD.sub(" ", text))) * share * _weight(count)
                    return TextFormat(GB18030, round(confidence, 3), BY_GB2312)
    if CP1252 not in excluded:
        text = _decode_samples(samples, CP1252)
        if text is not None:
            share, count = _western_share(text)
            if count and share >= WESTERN_SHARE:
                return TextFormat(CP1252, round(share * _weight(count), 3), BY_WESTERN)
    proposed = _first_plausible(samples, matches(), excluded)
    if proposed is None:
        # The detector stops early when one reading looks clean; ask about the common
        # single-byte code pages one by one (KOI8-R text looks clean as half-width katakana).
        proposed = _first_plausible(samples, _detector_matches(samples, _CODE_PAGES), excluded)
    return proposed


def _first_plausible(
    samples: Sequence[_Sample], matches: Sequence[_Match], excluded: set[str]
) -> TextFormat | None:
    for match in matches:
        encoding = _codec_name(match)
        if encoding in excluded or encoding == CP1252:
            continue  # Windows-1252 is read only as Western European text (above)
        text = _decode_samples(samples, encoding)
        if text is None:
            continue
        share, count = _word_share(text) if _single_byte(encoding) else _cjk_share(text)
        if share < WESTERN_SHARE:
            continue  # mojibake: `ĺĄ˝` is what UTF-8 bytes look like in Windows-1250
        confidence = (1 - match.chaos) * share * _weight(count)
        return TextFormat(encoding, round(confidence, 3), BY_DETECTOR)
    return None


@dataclass(frozen=True, slots=True)
class _Match:
    encoding: str
    chaos: float
    alternatives: tuple[str, ...]


def _detector_matches(
    samples: Sequence[_Sample], only: Sequence[str] | None = None
) -> list[_Match]:
    """charset-normalizer's matches for the samples (among `only`, if given), best first,
    without the encodings it may propose that RunLens decides on otherwise (UTF-8/16/32,
    7-bit codecs)."""
    from charset_normalizer import from_bytes  # imported only for files that are not UTF-8

    data = b"\n".join(sample.lines()[0] for sample in samples)
    found = []
    for match in from_bytes(data, cp_isolation=list(only) if only else None):
        name = str(match.encoding)
        if name.startswith(_NOT_PROPOSED):
            continue
        found.append(_Match(name, float(match.chaos), tuple(match.could_be_from_charset)))
    return found


def _codec_name(match: _Match) -> str:
    """The codec to read a detector match with: GB18030 for the GB family, Windows-1252 when
    it decodes the samples identically, else the detector's own name, as Python knows it."""
    if CP1252 in match.alternatives:
        return CP1252
    name = codecs.lookup(match.encoding).name
    return _SUPERSETS.get(name, name)


def _gb2312_share(text: str) -> tuple[float, int]:
    """(share of the non-ASCII characters GB18030 codes in GB2312's area or in four bytes,
    how many non-ASCII characters there are).

    GB2312's area (lead and trail bytes 0xA1-0xFE) holds the everyday characters and
    punctuation of Chinese text; four-byte codes (`81-FE 30-39 81-FE 30-39`) are GB18030's
    own and all but impossible by accident. What other encodings' bytes decode to in GB18030
    lies mostly in GBK's extension areas instead.
    """
    count = good = 0
    for char, times in Counter(text).items():
        if char <= "\x7f":
            continue
        count += times
        code = char.encode(GB18030)
        if len(code) == 4 or (len(code) == 2 and code[0] >= 0xA1 and code[1] >= 0xA1):
            good += times
    return (good / count if count else 0.0), count


def _western_share(text: str) -> tuple[float, int]:
    """(share of plausible non-ASCII characters in Western European text, how many).

    Plausible: in a run of at most two non-ASCII characters, and a letter, an in-word mark,
    or a symbol that is not wedged between two letters (`by³a` is not a word).
    """
    count = plausible = 0
    for run in _NON_ASCII_RUN.finditer(text):
        chars = run.group()
        count += len(chars)
        if len(chars) > 2:
            continue
        start, end = run.start(), run.end()
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        for position, char in enumerate(chars):
            left = before if position == 0 else chars[position - 1]
            right = after if position == len(chars) - 1 else chars[position + 1]
            wedged = left.isalpha() and right.isalpha()
            if char.isalpha() or char in _IN_WORD_MARKS or not wedged:
                plausible += 1
    return (plausible / count if count else 0.0), count


def _word_share(text: str) -> tuple[float, int]:
    """(share of plausible non-ASCII characters in alphabetic text, how many): any script,
    but words are letters (and combining marks) only, never switching from lower to upper
    case inside; other characters are not glued to letters in one run (`å„½`) nor wedged
    between two letters (`by³a`)."""
    count = plausible = 0
    for run in _NON_ASCII_WORD.finditer(text):
        chars = run.group()
        count += len(chars)
        kinds = {_letter(char) for char in chars if char not in _IN_WORD_MARKS}
        if len(kinds) > 1:
            continue  # letters and symbols glued together: mojibake
        start, end = run.start(), run.end()
        for position in range(start, end):
            char = text[position]
            left = text[position - 1] if position else " "
            right = text[position + 1] if position + 1 < len(text) else " "
            if _letter(char):
                plausible += not (left.islower() and char.isupper())
            elif char in _IN_WORD_MARKS or not (_letter(left) and _letter(right)):
                plausible += 1
    return (plausible / count if count else 0.0), count


def _cjk_share(text: str) -> tuple[float, int]:
    """(share of plausible non-ASCII characters in a double-byte reading, how many): all but
    half-width katakana, which single-byte Cyrillic or Greek text turns into in Shift-JIS."""
    count = _non_ascii(text)
    if not count:
        return 0.0, 0
    halfwidth = len(text) - len(text.translate(_HALFWIDTH_KANA))
    return (count - halfwidth) / count, count


def _letter(char: str) -> bool:
    return char.isalpha() or unicodedata.category(char).startswith("M")


def _single_byte(encoding: str) -> bool:
    """Whether `encoding` maps each byte to one character (Windows-125x, ISO 8859, KOI8 ...)."""
    return len(_HIGH_BYTES.decode(encoding, "replace")) == len(_HIGH_BYTES)


def _mess(text: str) -> float:
    from charset_normalizer.md import mess_ratio

    return float(mess_ratio(text[:_MESS_CHARS], maximum_threshold=1.0))


def _weight(count: int) -> float:
    """How much `count` pieces of evidence are worth: 0.75 for one, nearly 1 from eight."""
    return 1 - 0.5 ** (count + 1)
