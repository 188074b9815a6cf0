"""What a run reads or starts once per process instead of once per run, and still gets right."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from contextvars import ContextVar
from pathlib import Path

import pytest

from runlens.evidence import file_sha256
from runlens.models.messages import ModelResponse, ToolCall, Usage
from runlens.runtime import lock as lock_module
from runlens.runtime.journal import response_from_json, response_to_json
from runlens.runtime.lock import WorkspaceLock, read_holder
from runlens.runtime.loop import _as_from_json
from runlens.runtime.run_records import _FileDigests
from runlens.tools.workspace import Workspace
from runlens.validation import runner
from runlens.validation.base import ValidationContext, ValidatorResult
from runlens.validation.runner import _ValidatorBatch, run_validators
from runlens.verdict.statement import collect_subjects, deliverable_files


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_lock_records_the_start_time_of_the_process_that_claims_it(tmp_path: Path) -> None:
    """Read once per process, yet a forked child records its own start, not its parent's."""
    mine = lock_module.process_start_time(os.getpid())
    for name in ("first", "second"):
        held = WorkspaceLock.claim(Workspace(tmp_path / name), f"run_{name}")
        try:
            holder = read_holder(held.path)
            assert holder is not None and holder.process_start == mine
            assert holder.pid == os.getpid()
        finally:
            held.release()
    child = os.fork()
    if child == 0:  # the child: exit 0 only if its lock names its own start
        code = 1
        try:
            lock = WorkspaceLock.claim(Workspace(tmp_path / "child"), "run_child")
            recorded = read_holder(lock.path)
            own = lock_module.process_start_time(os.getpid())
            code = 0 if recorded is not None and recorded.process_start == own else 3
            lock.release()
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


class _Recording:
    """Records the thread it ran on and a context variable it saw, then sets that variable."""

    name = "recording"
    seen: ContextVar[str | None] = ContextVar("seen", default=None)

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.saw: list[str | None] = []

    def validate(self, context: ValidationContext) -> ValidatorResult:
        self.threads.append(threading.current_thread())
        self.saw.append(self.seen.get())
        self.seen.set("set by an earlier round")
        return ValidatorResult(validator=self.name, findings=(), summary=None)


def test_validation_rounds_reuse_an_idle_thread_each_in_a_fresh_context(tmp_path: Path) -> None:
    recording = _Recording()
    context = ValidationContext(workspace=tmp_path, contracts=())

    async def rounds() -> list[list[tuple[ValidatorResult, float]]]:
        return [await run_validators([(recording, 5)], context) for _ in range(3)]

    for results in asyncio.run(rounds()):
        ((result, _),) = results
        assert not result.blocked, result.summary
    assert len(set(recording.threads)) == 1  # one thread, given back between rounds
    assert recording.saw == [None, None, None]  # no round sees what another one set
    # Idle, it is not taken for a validator left running (`runlens` exits past those).
    assert not recording.threads[0].name.startswith("runlens-validators")


def test_an_abandoned_rounds_thread_never_runs_another_round(tmp_path: Path) -> None:
    """The exception `abandon` hands to a round's thread may still be on its way when the
    round ends: such a thread ends instead of going back among the idle ones."""
    recording = _Recording()
    context = ValidationContext(workspace=tmp_path, contracts=())
    kept = _ValidatorBatch([(recording, 5)], context)
    assert kept.release() is True
    abandoned = _ValidatorBatch([(recording, 5)], context)
    abandoned.abandon()
    assert abandoned.release() is False

    async def round_of(batch: _ValidatorBatch) -> None:
        await runner._in_daemon_thread(batch)

    asyncio.run(round_of(_ValidatorBatch([(recording, 5)], context)))
    idle = runner._IDLE.take()  # the thread of the round that ran, back among the idle
    assert idle is not None and idle.thread is recording.threads[-1]
    runner._IDLE.give(idle)
    gone = _ValidatorBatch([(recording, 5)], context)
    gone.abandon()  # before it starts: it runs nothing, and its thread ends
    with contextlib.suppress(TimeoutError):
        asyncio.run(asyncio.wait_for(round_of(gone), 0.5))
    idle.thread.join(5)
    assert not idle.thread.is_alive()
    assert runner._IDLE.take() is None
    assert len(recording.threads) == 1  # the abandoned round ran no validator


def _rglob_deliverables(root: Path) -> list[str]:
    """What `deliverable_files` listed through `Path.rglob`."""
    folder = root / "artifacts"
    if not folder.is_dir():
        return []
    return sorted(
        path.relative_to(root).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and not path.is_symlink()
    )


def test_deliverable_files_lists_what_rglob_listed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    assert deliverable_files(root) == [] == _rglob_deliverables(root)
    artifacts = root / "artifacts"
    (artifacts / "deep" / "deeper").mkdir(parents=True)
    (artifacts / "empty").mkdir()
    for name in ("report.md", ".hidden", "deep/a.json", "deep/deeper/b.csv", "名字.md"):
        (artifacts / name).write_text(name, encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("x", encoding="utf-8")
    (artifacts / "linked.txt").symlink_to(outside / "secret.txt")
    (artifacts / "linked_folder").symlink_to(outside, target_is_directory=True)
    (artifacts / "dangling").symlink_to(tmp_path / "nowhere")
    listed = deliverable_files(root)
    assert listed == _rglob_deliverables(root)
    assert listed == [
        "artifacts/.hidden",
        "artifacts/deep/a.json",
        "artifacts/deep/deeper/b.csv",
        "artifacts/report.md",
        "artifacts/名字.md",
    ]


def test_the_verdict_and_the_manifest_hash_each_file_once_and_alike(tmp_path: Path) -> None:
    calls: list[Path] = []
    root = tmp_path / "ws"
    (root / "artifacts").mkdir(parents=True)
    (root / "input").mkdir()
    (root / "artifacts" / "out.json").write_bytes(b'{"done": true}')
    (root / "input" / "in.csv").write_bytes(b"id,text\n1,a\n")
    digests = _FileDigests()

    def counted(path: Path) -> str:
        calls.append(path)
        return digests(path)

    subjects = collect_subjects(root, "input/in.csv", sha256=counted)
    assert subjects == collect_subjects(root, "input/in.csv")  # the same digests
    assert counted(root / "artifacts" / "out.json") == file_sha256(root / "artifacts" / "out.json")
    assert len(digests._known) == 2  # each file read once, however often asked


def test_a_response_skips_the_json_round_trip_only_when_it_would_come_back_equal() -> None:
    plain = ModelResponse(
        content="x",
        tool_calls=(ToolCall("c1", "note", {"text": "a"}, '{"text": "a"}'),),
        usage=Usage(3, 4),
        model_name="m",
        finish_reason="tool_calls",
        notes=("repaired",),
    )
    assert _as_from_json(plain)
    assert response_from_json(response_to_json(plain)) == plain
    listed = ModelResponse(tool_calls=[ToolCall("c1", "note", {})])  # type: ignore[arg-type]
    assert not _as_from_json(listed)  # goes through JSON: its calls come back as a tuple
    assert response_from_json(response_to_json(listed)).tool_calls == (ToolCall("c1", "note", {}),)

    class Subclass(ModelResponse):
        __slots__ = ()

    assert not _as_from_json(Subclass(content="x"))
