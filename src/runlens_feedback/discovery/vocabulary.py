"""Step 1 of theme discovery: the terms of one text (`terms`).

Kept words (stopwords, generic words and generic sentiment left out, simple plurals
folded), adjacent bigrams, and the concepts that bridge languages: a kept word that is an
unambiguous keyword of the analyst's theme table adds that theme as a concept term
("导出", "export" -> "≈export"). The package docstring (`runlens_feedback.discovery`) has
every rule.
"""

from __future__ import annotations

from functools import cache


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Words every domain uses: never a theme's defining term.
GENERIC_WORDS = _words(
    """
    thing things stuff product products item items lot lots way ways time times day days
    year years week month today yesterday tomorrow people person guy guys anyone everyone
    something anything everything nothing someone bit kind sort type place part end star
    stars review reviews one two three four five ten also even still really quite pretty
    much many lot little big small get got getting go going went gone make made makes come
    came use used using want wanted like liked know think thought say said tell told feel
    felt look looks looked seem seems seemed give gave take took put let back way well
    just actually definitely probably maybe overall sure able etc though although however
    would could should might must will can may shall don didn doesn isn wasn aren weren
    haven hasn won wouldn couldn shouldn ive im youre thats theres dont cant wont
    东西 感觉 觉得 一个 一下 一点 一些 没有 什么 时候 这个 那个 这样 那样 怎么 真的 还是
    就是 但是 而且 因为 所以 已经 可能 应该 一直 以后 之前 现在 今天 昨天 知道 看到 出来
    起来 进去 不是 不会 不能 还有 非常 比较 特别 有点 有些 实在 确实 简直 总体 整体 方面
    问题 情况 地方 时间 买家 卖家 大家 自己 我们 你们 他们 的话 本来 其实 然后 反正
    优点 缺点 总结 评价 补充 其他 其它 pro pros con cons summary
    只能 不到 每次 经常 需要 能够 以及 或者 还要 总是 不了 不够 得到 进行 一样 这些 那些
    hour hours minute minutes second seconds 小时 分钟 秒钟 两个 几个 几次 一次 两次 好几
    """
)
#: Sentiment words too weak to pass the valence rule but still generic.
GENERIC_SENTIMENT = _words(
    """
    good great bad nice fine okay ok best worst better worse love loved loves hate hated
    like liked awesome amazing excellent terrible horrible awful poor perfect decent
    happy unhappy disappointed disappointing satisfied recommend recommended favorite
    favourite wonderful fantastic lovely worth enjoy enjoyed
    好 不错 很好 挺好 还好 太差 很差 差劲 一般 还行 可以 满意 失望 喜欢 推荐 值得 好评 差评
    垃圾 完美 棒 赞 好用 好看 好吃 难用 难看 难吃 超级 特别好
    """
)
_GENERIC_VALENCE = 2.0


@cache
def _excluded() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from runlens_feedback.analyst.resources import impact_cues, lexicon, stopwords

    cues = [
        pattern.lower()
        for lang in ("en", "zh")
        for patterns in impact_cues(lang).values()
        for pattern in patterns
        if " " not in pattern
    ]
    exact = {cue for cue in cues if not cue.endswith("*")}
    prefixes = tuple(cue.rstrip("*") for cue in cues if cue.endswith("*"))

    def concrete(word: str) -> bool:
        return word in exact or word.startswith(prefixes)

    words: set[str] = set(ENGLISH_STOP_WORDS) | GENERIC_WORDS | GENERIC_SENTIMENT
    for lang in ("en", "zh"):
        lex = lexicon(lang)
        words |= stopwords(lang) | lex.modifier_words()
        words |= {
            word
            for word, value in lex.valences.items()
            if abs(value) >= _GENERIC_VALENCE and not concrete(word)
        }
    return frozenset(words)


def _singular(word: str) -> str:
    """Simple plurals folded ("chapters", "dishes"); "-ies" is left to `_plural_folds`,
    which knows the corpus ("movies" -> "movie", "batteries" -> "battery")."""
    if word.endswith("ies"):
        return word
    if word.endswith(("shes", "ches", "sses", "xes", "zzes")) and len(word) > 5:
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def _kept(word: str, cjk: bool, excluded: frozenset[str]) -> str | None:
    if cjk:
        return word if len(word) >= 2 and word not in excluded else None
    word = word.replace("'", "")
    if len(word) < 3 or not word.isalpha() or word in excluded:
        return None
    single = _singular(word)
    return None if single in excluded else single


def _words_of(text: str, *, keep: bool = False) -> list[tuple[str, bool] | None]:
    """(word, is Chinese) in order: the analyst's tokens (`analyst.tokens`) without offsets,
    with None where punctuation or a symbol stands between two words (no phrase spans it).
    `keep`: keep the Chinese words for the analysis of the same text (`tokens.cjk_words`)."""
    from runlens_feedback.analyst.tokens import _CJK_RUN, _LATIN_TOKEN, cjk_words, normalise_latin

    words: list[tuple[str, bool] | None] = []
    segmented = iter(cjk_words(text, keep=keep))
    end = 0  # where the last word ended

    def latin_words(stop: int) -> None:
        nonlocal end
        for latin in _LATIN_TOKEN.finditer(text, end, stop):
            if text[end : latin.start()].strip():
                words.append(None)
            words.append((normalise_latin(latin.group()), False))
            end = latin.end()

    for run in _CJK_RUN.finditer(text):
        latin_words(run.start())
        if text[end : run.start()].strip():
            words.append(None)
        words.extend((word, True) for word in next(segmented))
        end = run.end()
    latin_words(len(text))
    return words


#: What U+FFFD becomes when UTF-8 is read as GBK, and what the replacement character leaves.
_DAMAGE_MARKS = ("\ufffd", "锟斤拷")


def damaged(text: str) -> bool:
    """Whether a text is mojibake (UTF-8 read in another encoding, by ftfy's badness
    heuristic, or the replacement character and its GBK reading): no theme is made of it."""
    if text.isascii():  # every mojibake pattern of ftfy holds a non-ASCII character
        return False
    import ftfy.badness

    return any(mark in text for mark in _DAMAGE_MARKS) or ftfy.badness.is_bad(text)


#: The prefix of a concept term (step 1): no tokenised word starts with it.
CONCEPT = "≈"
AREA_WEIGHT = 2
PROBLEM_WEIGHT = 3
#: Table themes that name no subject of their own: never a concept.
_NOT_CONCEPTS = frozenset(["feature_request", "praise"])


@cache
def _concept_patterns() -> tuple[
    dict[str, str], tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]
]:
    """The theme table's unambiguous one-word keywords as (exact English words, English
    prefixes, Chinese substrings), each with its concept term (`CONCEPT` + table key)."""
    from runlens_feedback.analyst.resources import themes
    from runlens_feedback.analyst.themes import AMBIGUOUS_KEYWORDS

    exact: dict[str, str] = {}
    prefixes: list[tuple[str, str]] = []
    chinese: list[tuple[str, str]] = []
    for spec in themes():
        if spec.key in _NOT_CONCEPTS:
            continue
        concept = CONCEPT + spec.key
        for pattern in (*spec.keywords_en, *spec.keywords_zh):
            if " " in pattern or pattern in AMBIGUOUS_KEYWORDS:
                continue
            if not pattern.isascii():
                if len(pattern) >= 2:
                    chinese.append((pattern, concept))
            elif pattern.endswith("*"):
                prefixes.append((pattern[:-1].lower(), concept))
            else:
                exact.setdefault(pattern.lower(), concept)
    return exact, tuple(prefixes), tuple(chinese)


#: What a keyword's trailing `*` stands for in a concept (`concept_of`): inflections, so
#: "fee*" takes "fees" but not "feet" or "feeling".
_ENDINGS = _words("s es ed d ing er ers ion ions ation ations ment ments y ies ied ic ics ity") | {
    ""
}


@cache
def _concept_weight(concept: str) -> int:
    """How many times a concept counts in a row: `AREA_WEIGHT` for a table theme of kind
    "area" (export, dashboards), `PROBLEM_WEIGHT` for one of kind "problem" (billing,
    sign-in, crashes), so a row about a wrong charge that mentions an email is billing."""
    from runlens_feedback.analyst.resources import themes

    kinds = {CONCEPT + spec.key: spec.kind for spec in themes()}
    return PROBLEM_WEIGHT if kinds.get(concept) == "problem" else AREA_WEIGHT


@cache
def concept_of(term: str) -> str | None:
    """The concept of a kept word (step 1): the theme-table theme whose unambiguous keyword
    it is ("导出", "export", "exporting" -> "≈export"; "仪表盘", "dashboard" ->
    "≈dashboards_reports"), so one topic written in two languages shares a term."""
    exact, prefixes, chinese = _concept_patterns()
    if term.isascii():
        found = exact.get(term)
        if found is None:
            found = next(
                (
                    c
                    for prefix, c in prefixes
                    if term.startswith(prefix) and term[len(prefix) :] in _ENDINGS
                ),
                None,
            )
        return found
    return next((c for word, c in chinese if word in term), None)


def terms(text: str, *, keep: bool = False) -> list[str]:
    """The terms of one text (package docstring, step 1): kept words, adjacent bigrams and the
    words' concepts (`concept_of`, each once); none for a damaged text (`damaged`). `keep`:
    keep its segmentation for the analysis of the same text (`analyst.tokens.cjk_words`)."""
    return [] if damaged(text) else undamaged_terms(text, keep=keep)


def undamaged_terms(text: str, *, keep: bool = False) -> list[str]:
    """`terms` of a text known not to be `damaged`."""
    excluded = _excluded()
    found: list[str] = []
    concepts: dict[str, None] = {}
    previous_cjk: bool | None = None
    previous_term: str | None = None
    for found_word in _words_of(text, keep=keep):
        if found_word is None:  # punctuation: no phrase spans it
            previous_term = None
            continue
        word, cjk = found_word
        term = _kept(word, cjk, excluded)
        if term is None:
            previous_term = None
            previous_cjk = cjk
            continue
        found.append(term)
        concept = concept_of(term)
        if concept is not None:
            concepts[concept] = None
        if previous_term is not None and previous_cjk == cjk and previous_term != term:
            found.append(previous_term + term if cjk else f"{previous_term} {term}")
        previous_cjk, previous_term = cjk, term
    for concept in concepts:
        found.extend([concept] * _concept_weight(concept))
    return found


def _plural_folds(rows: list[list[str]]) -> dict[str, str]:
    """ "-ies" words mapped to the singular the sample uses: "movie" when it has "movie",
    else "battery" when it has "battery"; left alone otherwise."""
    vocabulary = {term for row in rows for term in row if " " not in term}
    folds: dict[str, str] = {}
    for word in vocabulary:
        if word.endswith("ies") and len(word) > 4:
            for singular in (word[:-1], word[:-3] + "y"):
                if singular in vocabulary:
                    folds[word] = singular
                    break
    return folds


def _fold(row: list[str], folds: dict[str, str]) -> list[str]:
    if not folds:
        return row
    return [
        " ".join(folds.get(part, part) for part in term.split(" "))
        if " " in term
        else folds.get(term, term)
        for term in row
    ]
