"""A model that echoes the provider key into a deliverable: the run fails, the key is nowhere."""

from __future__ import annotations

import copy
import json

import pytest

from runlens.verdict.statement import decode_statement, read_envelope
from runlens_feedback.contracts import ANALYSIS, REPORT

from .conftest import Documents, RunScript, turns_for, write_call

KEY = "sk-proj-ECHOED-0123456789abcdef"


def test_a_key_echoed_into_evidence_and_a_file_name_fails_and_is_redacted(
    run_script: RunScript, good_documents: Documents, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    analysis, backlog, report = copy.deepcopy(good_documents)
    analysis["items"][1]["evidence_text"] = f"Authorization: Bearer {KEY}"
    turns = turns_for(analysis, backlog, report)
    turns[1]["tool_calls"].append(write_call(f"artifacts/{KEY}.txt", "token"))
    outcome = run_script(turns)

    assert outcome.exit_code == 1
    assert KEY not in outcome.output
    payload = outcome.json
    assert payload["status"] == "failed"
    found = {(f["code"], f["artifact"]) for f in payload["findings"]}
    assert ("secret_in_artifact", ANALYSIS) in found
    assert ("secret_in_artifact", "artifacts/[REDACTED].txt") in found
    assert payload["artifacts"][ANALYSIS] == "rejected"
    assert payload["artifacts"][REPORT] == "validated"
    assert "secret in artifact" in payload["error_message"]
    for path in (outcome.workspace / "runtime").rglob("*"):
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY.encode() not in (outcome.workspace / "manifest.json").read_bytes()
    # The signed verdict's payload is base64: the key is kept out of the statement itself.
    statement = decode_statement(read_envelope(outcome.workspace) or {})
    assert "artifacts/[REDACTED].txt" in {s["name"] for s in statement["subject"]}
    assert KEY not in json.dumps(statement)


def test_a_short_token_is_still_kept_out_of_records(
    run_script: RunScript, good_documents: Documents, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "tok123"  # six characters: records blanked such values before, and still do
    monkeypatch.setenv("RUNLENS_UI_TOKEN", token)
    analysis, backlog, report = copy.deepcopy(good_documents)
    outcome = run_script(turns_for(analysis, backlog, report + f"\nToken: {token}\n"))
    assert outcome.exit_code == 1
    assert {f["code"] for f in outcome.json["findings"]} == {"secret_in_artifact"}
    for path in (outcome.workspace / "runtime").rglob("*"):
        assert token.encode() not in path.read_bytes(), path
