"""What a run reads or starts once per process instead of once per run, and still gets right."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

import pytest

from runlens.atomic import write_atomic
from runlens.evidence import file_sha256
from runlens.models.messages import ModelResponse, ToolCall, Usage
from runlens.records import manifest as manifest_module
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


def _created_by_pathlib(workspace: Workspace) -> None:
    """How a run made the folders before: the lock's claim made `runtime/` (and the root),
    then `Workspace.create` each folder with `Path.mkdir(exist_ok=True)`."""
    workspace.runtime.mkdir(parents=True, exist_ok=True)
    workspace.root.mkdir(parents=True, exist_ok=True)
    for folder in (workspace.input, workspace.artifacts, workspace.runtime):
        folder.mkdir(exist_ok=True)


def _outcome(make: Callable[[], None]) -> tuple[str, ...]:
    try:
        make()
    except OSError as error:
        return (type(error).__name__, str(error.errno))
    return ()


def _tree(root: Path) -> list[tuple[str, bool]]:
    return sorted((p.relative_to(root).as_posix(), p.is_dir()) for p in root.rglob("*"))


@pytest.mark.parametrize(
    "setup",
    ["fresh", "deep", "exists", "partly", "root_is_file", "runtime_is_file", "input_is_file"],
)
def test_workspace_create_makes_what_path_mkdir_made(tmp_path: Path, setup: str) -> None:
    """One `mkdir` per new folder, and the same folders and errors as `Path.mkdir`."""
    results = []
    for way in ("new", "old"):
        base = tmp_path / way
        base.mkdir()
        root = base / "a" / "b" / "ws" if setup == "deep" else base / "ws"
        if setup in ("exists", "partly", "runtime_is_file", "input_is_file"):
            (root / "artifacts").mkdir(parents=True)
        if setup == "exists":
            (root / "input").mkdir()
            (root / "runtime").mkdir()
        if setup == "root_is_file":
            root.write_text("x", encoding="utf-8")
        if setup == "runtime_is_file":
            (root / "runtime").write_text("x", encoding="utf-8")
        if setup == "input_is_file":
            (root / "input").write_text("x", encoding="utf-8")
        workspace = Workspace(root)
        make: Callable[[], None] = (
            workspace.create if way == "new" else functools.partial(_created_by_pathlib, workspace)
        )
        results.append((_outcome(make), _tree(base)))
    assert results[0] == results[1]
    if setup == "root_is_file":  # as the lock's claim failed on it before
        assert results[0][0] == ("NotADirectoryError", str(errno.ENOTDIR))


def test_a_workspace_makes_its_paths_on_first_use_and_keeps_them(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "ws")
    assert workspace.run_record is workspace.run_record
    assert workspace.root == (tmp_path / "ws").resolve()
    for attribute, relative in (
        ("artifacts", "artifacts"),
        ("runtime", "runtime"),
        ("input", "input"),
        ("evidence_index", Workspace.EVIDENCE_INDEX),
        ("run_record", Workspace.RUN_RECORD),
        ("events", Workspace.EVENTS),
        ("trace", Workspace.TRACE),
        ("system_prompt", Workspace.SYSTEM_PROMPT),
        ("lock", Workspace.LOCK),
        ("citations", Workspace.CITATIONS),
        ("manifest", Workspace.MANIFEST),
    ):
        assert getattr(workspace, attribute) == workspace.root / relative


def test_a_lock_claimed_wakes_the_heartbeat_only_when_its_interval_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    heartbeat = lock_module._HEARTBEAT
    first = WorkspaceLock.claim(Workspace(tmp_path / "first"), "run_first")  # thread up
    try:
        deadline = time.monotonic() + 10
        while heartbeat._interval != lock_module.HEARTBEAT_SECONDS:  # waiting it out
            assert time.monotonic() < deadline
            time.sleep(0.01)
        woken: list[bool] = []
        monkeypatch.setattr(heartbeat._wake, "set", lambda: woken.append(True))
        # Made without its `runtime/`: the claim makes it.
        second = WorkspaceLock.claim(Workspace(tmp_path / "second"), "run_second")
        second.release()
        assert woken == []
        monkeypatch.setattr(lock_module, "HEARTBEAT_SECONDS", 0.05)
        third = WorkspaceLock.claim(Workspace(tmp_path / "third"), "run_third")
        third.release()
        assert woken == [True]
    finally:
        first.release()


def test_an_atomic_write_to_a_bare_file_name_lands_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_atomic(Path("record.json"), b"{}")
    write_atomic(tmp_path / "sub" / "deeper.json", b"[]")  # its folder made on the way
    assert (tmp_path / "record.json").read_bytes() == b"{}"
    assert (tmp_path / "sub" / "deeper.json").read_bytes() == b"[]"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["deeper.json", "record.json", "sub"]


def test_the_runs_digests_are_file_sha256(tmp_path: Path) -> None:
    for size in (0, 1, 4096, (1 << 20) - 1, 1 << 20, (1 << 20) + 17, 3 << 20):
        path = tmp_path / f"f{size}"
        path.write_bytes(os.urandom(size))
        assert _FileDigests()(path) == file_sha256(path)
    with pytest.raises(FileNotFoundError):
        _FileDigests()(tmp_path / "missing")


def _size_before(path: Path) -> int | None:
    """What `artifact_entry` read before: `is_file()`, then `stat().st_size`."""
    return path.stat().st_size if path.is_file() else None


def test_an_artifacts_size_is_read_as_is_file_and_stat_read_it(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_bytes(b"12345")
    (tmp_path / "folder").mkdir()
    (tmp_path / "link.txt").symlink_to(tmp_path / "file.txt")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for name in (
        "file.txt",
        "folder",
        "link.txt",
        "dangling",
        "loop",
        "missing",
        "file.txt/under_a_file",
        "nul\x00inside",
    ):
        path = tmp_path / name
        assert manifest_module._regular_size(path) == _size_before(path), name
