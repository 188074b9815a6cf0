"""The analyst's word lists and tables, read once from the package data in `lexicon/`.

Every loader is cached, so the files are parsed once per process; the returned objects are
immutable, which keeps the analyst deterministic and safe to share between threads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from types import MappingProxyType

from runlens_feedback.analyst.labels import Lang

_DATA = "runlens_feedback.analyst.lexicon"


@dataclass(frozen=True)
class Lexicon:
    """Sentiment words and modifiers of one language."""

    lang: Lang
    valences: Mapping[str, float]
    neutral: frozenset[str]
    negators: frozenset[str]
    intensifiers: Mapping[str, float]
    contrast: frozenset[str]
    concessive: frozenset[str]
    barriers: frozenset[str]
    summary: Mapping[str, float]
    reservation: Mapping[str, float]
    post: Mapping[str, float]

    def modifier_words(self) -> frozenset[str]:
        """Every word with a modifier role."""
        return (
            self.negators
            | frozenset(self.intensifiers)
            | self.contrast
            | self.concessive
            | self.barriers
            | frozenset(self.summary)
            | frozenset(self.reservation)
            | frozenset(self.post)
        )


@dataclass(frozen=True)
class ThemeSpec:
    """One row of the theme table (`lexicon/themes.json`)."""

    key: str
    kind: str
    label_en: str
    label_zh: str
    keywords_en: tuple[str, ...]
    keywords_zh: tuple[str, ...]
    action_en: str
    action_zh: str
    title: str
    title_zh: str
    acceptance_criteria: tuple[str, ...]
    metric: str

    def keywords(self, lang: Lang) -> tuple[str, ...]:
        return self.keywords_zh if lang == "zh" else self.keywords_en

    def label(self, lang: Lang) -> str:
        return self.label_zh if lang == "zh" else self.label_en

    def action(self, lang: Lang) -> str:
        return self.action_zh if lang == "zh" else self.action_en

    def backlog_title(self, lang: Lang) -> str:
        """The backlog item's title in `lang` (empty for a theme that makes none)."""
        return self.title_zh if lang == "zh" else self.title


def _read(name: str) -> str:
    return files(_DATA).joinpath(name).read_text(encoding="utf-8")


def _rows(name: str) -> Iterator[list[str]]:
    for line in _read(name).splitlines():
        if line.strip() and not line.startswith("#"):
            yield line.split("\t")


def _valences(lang: Lang) -> dict[str, float]:
    """Every lexicon entry of `lang`; valence 0 marks a known neutral word."""
    table: dict[str, float] = {}
    sources = ("en_afinn165.txt", "en_domain.txt") if lang == "en" else ("zh_sentiment.txt",)
    for source in sources:  # later files override earlier ones
        for word, value in _rows(source):
            table[word.lower() if lang == "en" else word] = float(value)
    return table


@cache
def lexicon(lang: Lang) -> Lexicon:
    """The sentiment lexicon and modifiers of `lang`."""
    roles: dict[str, dict[str, float]] = {}
    for row_lang, kind, word, value in _rows("modifiers.txt"):
        if row_lang == lang:
            roles.setdefault(kind, {})[word] = float(value)
    entries = _valences(lang)
    return Lexicon(
        lang=lang,
        valences=MappingProxyType({word: value for word, value in entries.items() if value}),
        neutral=frozenset(word for word, value in entries.items() if not value),
        negators=frozenset(roles.get("negator", {})),
        intensifiers=MappingProxyType(roles.get("intensifier", {})),
        contrast=frozenset(roles.get("contrast", {})),
        concessive=frozenset(roles.get("concessive", {})),
        barriers=frozenset(roles.get("barrier", {})),
        summary=MappingProxyType(roles.get("summary", {})),
        reservation=MappingProxyType(roles.get("reservation", {})),
        post=MappingProxyType(roles.get("post", {})),
    )


@cache
def themes() -> tuple[ThemeSpec, ...]:
    """The theme table, in tie-breaking order."""
    raw = json.loads(_read("themes.json"))["themes"]
    return tuple(
        ThemeSpec(
            key=entry["key"],
            kind=entry.get("kind", "area"),
            label_en=entry["label_en"],
            label_zh=entry["label_zh"],
            keywords_en=tuple(entry["keywords_en"]),
            keywords_zh=tuple(entry["keywords_zh"]),
            action_en=entry["action_en"],
            action_zh=entry["action_zh"],
            title=entry["title"],
            title_zh=entry.get("title_zh", ""),
            acceptance_criteria=tuple(entry["acceptance_criteria"]),
            metric=entry["metric"],
        )
        for entry in raw
    )


@cache
def theme_by_key() -> Mapping[str, ThemeSpec]:
    """The theme table by key."""
    return MappingProxyType({spec.key: spec for spec in themes()})


@cache
def stopwords(lang: Lang) -> frozenset[str]:
    """Words never used as a fallback theme keyword."""
    return frozenset(row[0] for row in _rows(f"stopwords_{lang}.txt"))


@cache
def impact_cues(lang: Lang) -> Mapping[str, tuple[str, ...]]:
    """Severity cue patterns of `lang` by kind: `critical`, `blocking`, `scale`."""
    cues: dict[str, list[str]] = {}
    for row_lang, kind, pattern in _rows("impact.txt"):
        if row_lang == lang:
            cues.setdefault(kind, []).append(pattern)
    return MappingProxyType({kind: tuple(patterns) for kind, patterns in cues.items()})
