"""The system prompt: what the validators check, said once, small enough for a small model."""

from __future__ import annotations

from runlens.plugins import load_plugin
from runlens.runtime.prompt import build_system_prompt

#: The system prompt must leave most of an 8k-token context to the conversation: at about
#: 2.5 characters a token (mixed English and Chinese, small-model tokenizers), 9,500
#: characters is under 4k tokens.
PROMPT_BUDGET = 9_500


def test_the_feedback_prompt_fits_a_small_context() -> None:
    prompt = build_system_prompt(load_plugin("feedback-analysis"))
    assert len(prompt) <= PROMPT_BUDGET, f"{len(prompt)} characters"


def test_the_report_citation_form_is_stated_once_from_the_contract() -> None:
    prompt = " ".join(build_system_prompt(load_plugin("feedback-analysis")).split())
    assert "Cite each quote from the input as “the row's own words” — ROW_ID" in prompt
    assert "Under ## Evidence every quotation must cite a row." in prompt
    assert prompt.count("whole words only") == 2  # JSON evidence_text, report citations
