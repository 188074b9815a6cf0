"""The run's journal: what a replayed run takes from its checkpoints, and what it does again.

`PositionalJournal` keeps steps the way DBOS does (by position, each with its name, a
mismatched name an error), in memory, so the replay logic of the runtime is tested here on
its own; `tests/workers` replays real runs through DBOS and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import runlens.runtime.journal as journal
from runlens.errors import ProviderError
from runlens.models.base import Model
from runlens.models.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from runlens.models.registry import ModelContext, resolve_model
from runlens.plugins import load_plugin
from runlens.records.events import EventLog
from runlens.runtime.journal import (
    Journal,
    JsonObject,
    ReplayDiverged,
    RequestDigests,
    error_from_json,
    error_to_json,
    request_digest,
    response_from_json,
    response_to_json,
)
from runlens.runtime.run import Run, RunResult, RunSettings

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_feedback.csv"


class PositionalJournal(Journal):
    """Steps by position, as DBOS keeps them: replayed while recorded, then run and kept."""

    durable = True

    def __init__(self, recorded: Sequence[tuple[str, JsonObject]] = ()) -> None:
        self.recorded = list(recorded)
        self.position = 0
        self.ran: list[str] = []

    async def step(
        self, name: str, body: Callable[[], Awaitable[JsonObject]]
    ) -> tuple[JsonObject, bool]:
        position, self.position = self.position, self.position + 1
        if position < len(self.recorded):
            recorded_name, value = self.recorded[position]
            if recorded_name != name:
                raise RuntimeError(f"step {position}: {recorded_name} recorded, {name} asked")
            return value, True
        value = await body()
        self.recorded.append((name, value))
        self.ran.append(name)
        return value, False


class CountingModel(Model):
    """The offline analyst, counting the calls that reach it."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.calls = 0

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> ModelResponse:
        self.calls += 1
        return await self.inner.complete(messages, tools)


def _offline() -> CountingModel:
    plugin = load_plugin("feedback-analysis")
    return CountingModel(resolve_model("offline", ModelContext(plugin=plugin)))


def _run(
    workspace: Path,
    journal: Journal,
    model: Model,
    replay: Sequence[dict[str, Any]] = (),
    diverged: list[int] | None = None,
) -> tuple[Run, RunResult]:
    run = Run(
        plugin=load_plugin("feedback-analysis"),
        input_path=SAMPLE,
        model=model,
        workspace=workspace,
        settings=RunSettings(validator_plugins=False),
        run_id="run_journal_test",
        journal=journal,
        replay_events=replay,
        on_replay_diverged=diverged.append if diverged is not None else None,
    )
    return run, asyncio.run(run.execute())


def _artifacts(workspace: Path) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted((workspace / "artifacts").iterdir())
    }


def _events(run: Run) -> list[dict[str, Any]]:
    return [event.to_dict() for event in run.events.events]


def test_a_full_replay_sends_no_model_call_and_ends_with_the_same_records(tmp_path: Path) -> None:
    first_model = _offline()
    journal = PositionalJournal()
    first, result = _run(tmp_path / "first", journal, first_model)
    assert result.status == "completed"
    names = [name for name, _ in journal.recorded]
    assert sum(name.startswith("model.") for name in names) == first_model.calls
    assert any(name.startswith("tool.read_feedback_csv") for name in names)
    assert "validation.1" in names

    replay_model = _offline()
    replayed, again = _run(
        tmp_path / "again", PositionalJournal(journal.recorded), replay_model, _events(first)
    )
    assert again.status == "completed"
    assert replay_model.calls == 0
    assert _artifacts(tmp_path / "again") == _artifacts(tmp_path / "first")
    # Every event is the one first published: same seq, time, type and data.
    assert _events(replayed) == _events(first)
    assert replayed.created_at == first.created_at


def test_a_partial_replay_sends_only_the_calls_after_the_last_checkpoint(tmp_path: Path) -> None:
    journal = PositionalJournal()
    first, _ = _run(tmp_path / "first", journal, _offline())
    model_steps = [i for i, (name, _) in enumerate(journal.recorded) if name.startswith("model.")]
    # The worker died after its second model call was checkpointed: keep what came before.
    kept = journal.recorded[: model_steps[1] + 1]
    events = _events(first)[:8]
    model = _offline()
    resumed = PositionalJournal(kept)
    replayed, result = _run(tmp_path / "again", resumed, model, events)
    assert result.status == "completed"
    assert model.calls == len(model_steps) - 2
    assert [name for name in resumed.ran if name.startswith("model.")] == [
        journal.recorded[i][0] for i in model_steps[2:]
    ]
    assert _artifacts(tmp_path / "again") == _artifacts(tmp_path / "first")
    assert [e["seq"] for e in _events(replayed)] == list(range(1, len(_events(first)) + 1))
    assert _events(replayed)[:8] == events


def test_a_different_question_on_replay_is_refused_not_answered(tmp_path: Path) -> None:
    journal = PositionalJournal()
    _run(tmp_path / "first", journal, _offline())
    name, value = journal.recorded[0]
    assert name.startswith("model.turn.")
    tampered = [("model.turn.0000000000000000", value), *journal.recorded[1:]]
    model = _offline()
    with pytest.raises(RuntimeError, match="recorded"):
        _run(tmp_path / "again", PositionalJournal(tampered), model)
    assert model.calls == 0


def test_a_tool_that_comes_to_another_result_on_replay_is_reported(tmp_path: Path) -> None:
    journal = PositionalJournal()
    _run(tmp_path / "first", journal, _offline())
    position = next(
        i for i, (name, _) in enumerate(journal.recorded) if name == "tool.read_feedback_csv"
    )
    tampered = list(journal.recorded)
    tampered[position] = ("tool.read_feedback_csv", {**tampered[position][1], "content": "x"})
    with pytest.raises(ReplayDiverged, match=r"tool\.read_feedback_csv came to a different"):
        _run(tmp_path / "again", PositionalJournal(tampered), _offline())


def test_event_replay_keeps_recorded_events_and_stops_at_the_first_difference(
    tmp_path: Path,
) -> None:
    recorded = [
        {
            "seq": 1,
            "ts": "2026-01-01T00:00:00.000001+00:00",
            "type": "run.warned",
            "data": {"message": "a"},
        },
        {
            "seq": 2,
            "ts": "2026-01-01T00:00:01.000001+00:00",
            "type": "run.warned",
            "data": {"message": "b"},
        },
        {
            "seq": 3,
            "ts": "2026-01-01T00:00:02.000001+00:00",
            "type": "run.warned",
            "data": {"message": "c"},
        },
    ]
    diverged: list[int] = []
    log = EventLog(tmp_path / "events.jsonl", "r", replay=recorded, on_diverged=diverged.append)
    first = log.publish("run.warned", {"message": "a"})
    second = log.publish("run.validating", {"round": 1})
    third = log.publish("run.warned", {"message": "c"})
    log.close()
    assert first.ts == recorded[0]["ts"] and first.seq == 1
    assert diverged == [2]
    assert second.type == "run.validating" and second.ts != recorded[1]["ts"]
    assert third.ts != recorded[2]["ts"]  # after a difference nothing is taken as recorded
    lines = (tmp_path / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and recorded[0]["ts"] in lines[0]


def test_checkpoint_values_round_trip() -> None:
    response = ModelResponse(
        content="hé",
        tool_calls=(
            ToolCall("c1", "write_file", {"path": "a"}, '{"path":"a"}'),
            ToolCall("c2", "x", None, "{", "bad"),
        ),
        usage=Usage(3, None),
        model_name="m",
        finish_reason="tool_calls",
        notes=("fixed",),
    )
    assert response_from_json(response_to_json(response)) == response
    error = error_from_json(
        error_to_json(ProviderError("openai: HTTP 500", provider="openai", status_code=500))
    )
    assert (
        isinstance(error, ProviderError)
        and error.status_code == 500
        and str(error) == "openai: HTTP 500"
    )
    other = error_from_json(error_to_json(ValueError("no rows")))
    assert type(other).__name__ == "ValueError" and str(other) == "no rows"


def _conversation() -> list[Message]:
    return [
        SystemMessage("You analyse feedback."),
        UserMessage("Read feedback.csv."),
        AssistantMessage(None, (ToolCall("c1", "read_feedback_csv", {"path": "f.csv"}),)),
        ToolResultMessage("c1", "read_feedback_csv", "12 rows"),
        AssistantMessage("Done.", ()),
    ]


_TOOLS = (ToolSpec("read_feedback_csv", "Read the input.", {"type": "object"}),)


def _growing_names(digests: RequestDigests, conversation: Sequence[Message]) -> list[str]:
    """The names of a conversation asked the way the loop asks it: one list, appended to."""
    messages: list[Message] = []
    names = []
    for message in conversation:
        messages.append(message)
        names.append(digests(messages, _TOOLS))
    return names


def test_a_replayed_conversation_gives_the_same_step_names() -> None:
    first = _growing_names(RequestDigests(), _conversation())
    # A replay in a new process: new message objects, new digests, the same requests.
    assert _growing_names(RequestDigests(), _conversation()) == first
    assert first == [
        request_digest(_conversation()[: n + 1], _TOOLS) for n in range(len(_conversation()))
    ]
    assert len(set(first)) == len(first)


def test_a_changed_earlier_message_gives_another_name() -> None:
    digests = RequestDigests()
    messages = _conversation()
    before = digests(messages, _TOOLS)
    changed = [*messages[:1], UserMessage("Read other.csv."), *messages[2:]]
    assert request_digest(changed, _TOOLS) != before
    assert RequestDigests()(changed, _TOOLS) != before
    # The same list changed in place (same length, same last message) is digested again.
    messages[1] = UserMessage("Read other.csv.")
    assert digests(messages, _TOOLS) == request_digest(changed, _TOOLS) != before


def test_request_names_follow_the_request_whatever_was_digested_before() -> None:
    digests = RequestDigests()
    messages = _conversation()
    full = request_digest(messages, _TOOLS)
    assert digests(messages, _TOOLS) == full
    assert digests(messages[:3], _TOOLS) == request_digest(messages[:3], _TOOLS)
    del messages[3:]  # shrunk, then grown with other messages
    messages.append(ToolResultMessage("c1", "read_feedback_csv", "13 rows"))
    assert digests(messages, _TOOLS) == request_digest(messages, _TOOLS) != full
    assert digests(tuple(messages), ()) == request_digest(messages, ())
    assert request_digest(messages, ()) != request_digest(messages, _TOOLS)
    assert digests([], _TOOLS) == request_digest([], _TOOLS)


def test_a_run_without_a_durable_journal_digests_no_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serialised: list[object] = []
    canonical = journal.dumps_canonical

    def counted(value: Any) -> bytes:
        serialised.append(value)
        return canonical(value)

    monkeypatch.setattr(journal, "dumps_canonical", counted)
    model = _offline()
    _, result = _run(tmp_path / "plain", Journal(), model)
    assert result.status == "completed" and model.calls > 0
    assert serialised == []
    durable = PositionalJournal()
    _, result = _run(tmp_path / "durable", durable, _offline())
    assert result.status == "completed"
    assert sum(name.startswith("model.") for name, _ in durable.recorded) == model.calls
    assert serialised
