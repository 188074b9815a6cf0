"""What the analyst reads once and reuses gives what reading again gives: a clause's words
shared by every keyword set, the units of a clause seen before, the analysis of a text seen
before."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from runlens_feedback.analyst import document as document_module
from runlens_feedback.analyst import rows as rows_module
from runlens_feedback.analyst import tokens as tokens_module
from runlens_feedback.analyst.document import parse
from runlens_feedback.analyst.matching import clause_words, compile_keywords
from runlens_feedback.analyst.rows import analyze_rows, analyze_text
from runlens_feedback.analyst.text import split_clauses
from runlens_feedback.analyst.tokens import cjk_words, forget_segmentations, tokenize
from runlens_feedback.analyst.units import clause_units

PATTERNS = [
    "crash*",
    "log in",
    "can't log*",
    "export* fail*",
    "sso",
    "导出失败",
    "慢",
    "卡",
]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_segmentations()
    document_module._remembered.clear()
    yield
    forget_segmentations()
    document_module._remembered.clear()


def _tokens(text: str) -> list[tokens_module.Token]:
    return tokenize(text, 0, len(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The app crashes and crashed again", (2, 8)),
        ("I can't login, can't log in at all", (3, 2)),
        ("Exports failing since Monday; SSO too", (2, 0)),
        ("导出失败，太慢了，卡得不行", (3, 0)),
        ("这个月很满意", (0, 6)),
        ("all good here", (0, 13)),
        ("", (0, 0)),
    ],
)
def test_a_clause_read_once_scans_like_its_tokens(text: str, expected: tuple[int, int]) -> None:
    keywords = compile_keywords(PATTERNS)
    tokens = _tokens(text)
    assert keywords.scan(text, tokens) == expected
    assert keywords.scan_words(clause_words(text, tokens)) == expected


def test_a_set_without_prefixes_or_phrases_matches_no_latin_word() -> None:
    keywords = compile_keywords(["导出失败"])
    assert keywords.prefix_pattern is None
    assert keywords.scan("export failed", _tokens("export failed")) == (0, 13)


def test_a_prefix_matches_only_at_the_start_of_a_word() -> None:
    keywords = compile_keywords(["crash*"])
    assert keywords.scan("it was a car crash", _tokens("it was a car crash")) == (1, 13)
    assert keywords.scan("uncrashable", _tokens("uncrashable")) == (0, 11)


def test_a_remembered_clause_takes_its_units_where_it_starts() -> None:
    text = "太慢了。导出失败，太慢了。The export is really slow"
    for shift in ("", "好的，"):
        shifted = shift + text
        doc = parse(shifted)
        for index, clause in enumerate(split_clauses(shifted)):
            tokens = tokenize(shifted, clause.start, clause.end)
            fresh = clause_units(shifted, clause.start, clause.end, tokens)
            assert list(doc.units[index]) == fresh
    assert "太慢了" in document_module._remembered


def test_a_repeated_text_gets_its_own_id_and_flags() -> None:
    text = "导出报表太慢了，每次都要等5分钟"
    rows = [{"feedback_id": name, "text": text} for name in "abc"]
    rows.append({"feedback_id": "d", "text": text, "theme_hint": "slow_exports"})
    first, second, third, hinted = analyze_rows(rows)
    assert (first["feedback_id"], second["feedback_id"]) == ("a", "b")
    assert {**first, "feedback_id": "b"} == second == {**third, "feedback_id": "b"}
    assert list(first) == list(second)
    assert first["flags"] is not second["flags"]  # an item edited later edits no other
    assert hinted["theme"] == "slow_exports"
    assert analyze_text("e", text) == {**first, "feedback_id": "e"}


def test_a_repeated_text_releases_its_kept_words() -> None:
    text = "登录经常掉线，客服回复很及时"
    for _ in range(3):
        cjk_words(text, keep=True)
    assert tokens_module._kept[text][1] == 3
    analyze_rows([{"feedback_id": "a", "text": text}])
    assert tokens_module._kept[text][1] == 2
    analyze_rows([{"feedback_id": name, "text": text} for name in "bc"])
    assert text not in tokens_module._kept
    assert tokens_module._kept_chars == 0


def test_an_earlier_calls_analysis_is_never_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    """What one run computed is not handed to the next: a defective analysis (here a
    patched evidence picker) leaves nothing behind once the defect is gone."""
    text = "The export to Excel takes forever, over five minutes."
    rows = [{"feedback_id": name, "text": text} for name in ("e1", "e2")]
    with monkeypatch.context() as patched:
        patched.setattr(rows_module, "pick_evidence", lambda doc, theme: "words nobody wrote")
        assert {item["evidence_text"] for item in analyze_rows(rows)} == {"words nobody wrote"}
    items = analyze_rows(rows)
    assert [item["evidence_text"] in text for item in items] == [True, True]


def test_a_document_shares_one_reading_of_each_clause() -> None:
    doc = parse("The export crashed. 导出失败，太慢了")
    assert doc.clause_words(0) is doc.clause_words(0)
    for index in range(len(doc.clauses)):
        assert doc.clause_words(index) == clause_words(doc.clause_text(index), doc.tokens[index])


def test_a_memory_kept_across_calls_analyses_a_repeated_text_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "The export to Excel takes forever, over five minutes."
    parsed: list[str] = []

    def counting_parse(value: str) -> Any:
        parsed.append(value)
        return parse(value)

    monkeypatch.setattr(rows_module, "parse", counting_parse)
    memory: rows_module.Memory = {}
    first = analyze_rows([{"feedback_id": "a", "text": text}], memory=memory)
    second = analyze_rows([{"feedback_id": "b", "text": text}], memory=memory)
    hinted = analyze_rows(
        [{"feedback_id": "c", "text": text, "theme_hint": "slow_exports"}], memory=memory
    )
    assert parsed == [text, text]  # once without a hint, once with it
    assert second == [{**first[0], "feedback_id": "b"}]
    assert hinted[0]["theme"] == "slow_exports"
    analyze_rows([{"feedback_id": "d", "text": text}])  # no memory: its own call's
    assert parsed == [text, text, text]


def test_a_memory_holds_at_most_the_remembered_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows_module, "REMEMBERED_TEXTS", 2)
    memory: rows_module.Memory = {}
    texts = ["Login fails", "Export is slow", "Search is great"]
    analyze_rows([{"feedback_id": str(i), "text": t} for i, t in enumerate(texts)], memory=memory)
    assert [text for text, _ in memory] == texts[1:]  # the oldest went first


def _batch_messages(rows: list[dict[str, str]]) -> list[Any]:
    from runlens.models.messages import UserMessage
    from runlens_feedback.batches import batch_message

    return [UserMessage(batch_message(rows, "feedback_id", "text"))]


def test_the_offline_model_keeps_its_memory_for_one_run_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Within a run a repeated text is analysed once across batches; a new run (the main
    conversation starting again) analyses afresh, so a defect of an earlier run is not
    handed on."""
    import asyncio

    from runlens.models.messages import UserMessage
    from runlens_feedback.batches import SUBMIT_SPEC
    from runlens_feedback.offline import OfflineAnalyst

    text = "The export to Excel takes forever, over five minutes."
    analyst = OfflineAnalyst()

    def answer(feedback_id: str) -> Any:
        messages = _batch_messages([{"feedback_id": feedback_id, "text": text}])
        response = asyncio.run(analyst.complete(messages, [SUBMIT_SPEC]))
        arguments = response.tool_calls[0].arguments
        assert arguments is not None
        return arguments["items"][0]

    def start_run() -> None:
        response = asyncio.run(analyst.complete([UserMessage("Analyse the file.")], []))
        assert response.tool_calls[0].name == "read_feedback_csv"

    start_run()
    with monkeypatch.context() as patched:
        patched.setattr(rows_module, "pick_evidence", lambda doc, theme: "words nobody wrote")
        assert answer("a")["evidence_text"] == "words nobody wrote"
    assert answer("b")["evidence_text"] == "words nobody wrote"  # the same run remembers it
    start_run()
    assert answer("c")["evidence_text"] in text


def test_a_clause_scanned_again_gives_the_first_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    import runlens_feedback.analyst.matching as matching

    monkeypatch.setattr(matching, "SCANNED_CLAUSES", 2)
    keywords = compile_keywords(PATTERNS)
    texts = ["The app crashes and crashed again", "导出失败，太慢了", "all good here"]
    fresh = [keywords._scan(clause_words(text, _tokens(text))) for text in texts]
    for _ in range(2):
        assert [keywords.scan(text, _tokens(text)) for text in texts] == fresh
    assert [clause.text for clause in keywords.scanned] == texts[1:]  # the oldest went first
    assert fresh == [(2, 8), (2, 0), (0, 13)]


def test_equal_clauses_read_apart_are_one_object(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clause read again (in another row, at another place) is the object made the first
    time, so a keyword set finds its remembered scan by identity; its hash agrees with
    equality, and at most `SCANNED_CLAUSES` clauses are kept."""
    import dataclasses

    import runlens_feedback.analyst.matching as matching

    monkeypatch.setattr(matching, "_READ", {})
    monkeypatch.setattr(matching, "SCANNED_CLAUSES", 2)
    text = "The app crashes, 导出失败"
    first = clause_words(text, _tokens(text))
    shifted = "Hi. " + text
    assert clause_words(text, tokenize(shifted, 4, len(shifted))) is first
    other = clause_words("The app crashed", _tokens("The app crashed"))
    assert other != first
    made = {f.name: getattr(first, f.name) for f in dataclasses.fields(first) if f.init}
    copy = matching.ClauseWords(**made)
    assert copy is not first and copy == first and hash(copy) == hash(first)
    assert copy != dataclasses.replace(first, offsets=(*first.offsets[:-1], 99))
    clause_words("all good here", _tokens("all good here"))
    assert [clause.text for clause in matching._READ] == ["The app crashed", "all good here"]
    again = clause_words(text, _tokens(text))  # dropped: made again, equal
    assert again is not first and again == first
