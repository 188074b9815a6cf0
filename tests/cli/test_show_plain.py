"""`runlens show` reads an ended run's records whole, as plain objects
(`runlens.records.plain`), without the pydantic views of `runlens.records.readers`: its
output is the views' output, byte for byte, for runs in every state and records holding
hostile text; a record that is not whole is read through the views, which name what is
damaged."""

from __future__ import annotations

import json
import shutil
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from runlens.cli import cli, show
from runlens.records import plain, readers

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_feedback.csv"
SCRIPTS = ROOT / "examples" / "scripts"

#: Each plain record and the view it stands for.
PAIRS: dict[type[plain.Plain], type[readers.View]] = {
    plain.PlainPlanStep: readers.PlanStepView,
    plain.PlainLoopLimits: readers.LoopLimitsView,
    plain.PlainMetrics: readers.MetricsView,
    plain.PlainRunRecord: readers.RunRecordView,
    plain.PlainFinding: readers.FindingView,
    plain.PlainManifestInput: readers.ManifestInputView,
    plain.PlainManifestArtifact: readers.ManifestArtifactView,
    plain.PlainManifest: readers.ManifestView,
    plain.PlainEvent: readers.EventView,
}

HOSTILE = (
    "",
    "[bold red]markup[/] [link=http://x]link[/link] \\[escaped]",
    "e\u0301 ❤\ufe0f 👨\u200d👩\u200d👧 🇨🇳 한국어 שלום \u202eevil\u202c 导出周报太慢了",
    "\x1b[31mANSI\x1b[0m \r\n tab\there \x00 nul",
    "\u00a0\u2028 separators \ufeff",
    "x" * 100_000,
    "lone surrogates \ud800 \udfff \udcff (JSON escapes a model wrote) and a pair \ud83d\ude00",
)


def _invoke(home: Path, *args: object) -> str:
    result = CliRunner(env={"COLUMNS": "200", "RUNLENS_HOME": str(home)}).invoke(
        cli, [*map(str, args)]
    )
    assert result.exit_code == 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with a completed run and one that failed with findings (scripted models)."""
    home = tmp_path_factory.mktemp("home")
    for name, script in (("run_20261201T101500Z_a00001", "passing.json"),
                         ("run_20261201T101500Z_a00002", "bad_priority.json")):  # fmt: skip
        CliRunner(env={"COLUMNS": "200", "RUNLENS_HOME": str(home)}).invoke(
            cli,
            ["run", "feedback-analysis", str(SAMPLE), "--workspace", str(home / name),
             "--model", f"scripted:{SCRIPTS / script}", "--json"],
        )  # fmt: skip
        assert (home / name / "runtime" / "run.json").is_file()
    return home


def _run_id(workspace: Path) -> str:
    """The run id `runtime/run.json` records (not the folder's name: `--workspace` named it)."""
    run_id = json.loads((workspace / "runtime" / "run.json").read_text("utf-8"))["run_id"]
    assert isinstance(run_id, str)
    return run_id


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.chmod(0o644)
    path.write_text(json.dumps(document), encoding="utf-8")


def _append_event(workspace: Path, kind: str, data: dict[str, Any]) -> None:
    log = workspace / "runtime" / "events.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    event = {"seq": last["seq"] + 1, "ts": last["ts"], "run_id": last["run_id"], "type": kind}
    log.chmod(0o644)
    log.write_text("\n".join([*lines, json.dumps({**event, "data": data})]) + "\n", "utf-8")


def _cancelled(workspace: Path) -> None:
    def change(record: dict[str, Any]) -> None:
        record.update(status="cancelled", error_message="cancelled by the user")
        record["plan"][1].update(status="failed", reason="cancelled while under way")
        record["plan"][2]["status"] = "pending"
        del record["plan"][3]["title"]

    _edit(workspace / "runtime" / "run.json", change)
    _append_event(workspace, "run.cancelled", {"reason": "cancelled by the user"})


def _interrupted(workspace: Path) -> None:
    def change(record: dict[str, Any]) -> None:
        record.update(status="interrupted", error_message="interrupted: its process ended")
        record["plan"][0]["status"] = "running"
        record["warnings"] = []

    _edit(workspace / "runtime" / "run.json", change)
    _append_event(workspace, "run.interrupted", {"error_message": None})


def _hostile(workspace: Path) -> None:
    def record(document: dict[str, Any]) -> None:
        document.update(error_message=HOSTILE[1], warnings=list(HOSTILE), model=HOSTILE[2])
        document["plan"][0].update(title=HOSTILE[3], reason=HOSTILE[4], extra={"x": HOSTILE})
        document["plan"][1].update(title=None, success_criteria=[])
        document["plan"][2].update(success_criteria=list(HOSTILE[:3]))
        document["source_lock"] = {"bytes_sha256": HOSTILE[2], "odd": [HOSTILE[1]]}
        document["unknown key"] = {"nested": [1, 2.5, None, True]}

    def manifest(document: dict[str, Any]) -> None:
        first = document["artifacts"][0]
        first.update(label=HOSTILE[2], status=HOSTILE[1], required=False)
        first["findings"] = [
            {"validator": "v", "artifact": first["name"], "code": HOSTILE[1], "path": None,
             "message": text, "details": {"k": text}}
            for text in HOSTILE
        ]  # fmt: skip
        document["artifacts"][1].update(status="missing", required=False, findings=[])
        document["findings"] = [
            {"validator": "v", "artifact": HOSTILE[2], "code": "c", "path": HOSTILE[3],
             "message": HOSTILE[4]},
            {"code": "", "message": ""},
        ]  # fmt: skip

    _edit(workspace / "runtime" / "run.json", record)
    _edit(workspace / "manifest.json", manifest)
    _append_event(workspace, "plugin.event", {"name": HOSTILE[2], "data": {"a": HOSTILE[1]}})
    _append_event(workspace, "tool.called", {"name": HOSTILE[3], "arguments": {HOSTILE[4]: 1}})
    _append_event(workspace, HOSTILE[1], {"x": HOSTILE[5], "y": [1]})
    _append_event(workspace, "model.called", {"turn": None, "tool_calls": None})


def _no_manifest(workspace: Path) -> None:
    (workspace / "manifest.json").unlink()


def _changed(workspace: Path) -> None:
    report = workspace / "artifacts" / "insight_report.md"
    report.chmod(0o644)
    report.write_text("changed", encoding="utf-8")


#: Ended runs whose records are whole, made from the completed run (or the failed one).
WHOLE: dict[str, tuple[str, Callable[[Path], None] | None]] = {
    "completed": ("a00001", None),
    "failed with findings": ("a00002", None),
    "cancelled": ("a00001", _cancelled),
    "interrupted": ("a00001", _interrupted),
    "hostile text": ("a00002", _hostile),
    "no manifest": ("a00001", _no_manifest),
    "changed since the run": ("a00001", _changed),
}


@pytest.fixture
def home(runs: Path, tmp_path: Path) -> Iterator[Path]:
    copy = tmp_path / "home"
    shutil.copytree(runs, copy, ignore=shutil.ignore_patterns("runlens.db*"))
    yield copy


def _both(home: Path, monkeypatch: pytest.MonkeyPatch, *args: object) -> tuple[str, str]:
    """`runlens show ARGS` as it reads records (plain where whole), and through the views."""
    shown = _invoke(home, "show", *args)
    with monkeypatch.context() as patched:
        patched.setattr(show, "read_ended_run", lambda workspace: None)
        viewed = _invoke(home, "show", *args)
    return shown, viewed


@pytest.mark.parametrize("case", WHOLE, ids=list(WHOLE))
def test_show_prints_a_whole_run_as_its_views_do(
    home: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    suffix, damage = WHOLE[case]
    workspace = home / f"run_20261201T101500Z_{suffix}"
    if damage is not None:
        damage(workspace)
    assert show.read_ended_run(workspace) is not None  # the plain path is the one taken
    for args in ((workspace.name,), (workspace,), (suffix, "--no-events")):
        shown, viewed = _both(home, monkeypatch, *args)
        assert shown == viewed
    assert "damaged record" not in shown
    if damage is _hostile:  # lone surrogates print as their escapes; a pair read whole
        assert "lone surrogates \\ud800 \\udfff \\udcff (JSON escapes" in shown
        assert "and a pair 😀" in shown


def test_show_prints_a_reviewed_run_as_its_views_do(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _run_id(home / "run_20261201T101500Z_a00002")
    _invoke(home, "runs")  # the store made, the home indexed
    _invoke(home, "reviewers", "add", "alice")
    _invoke(home, "review", run_id, "--request-changes", "--note", HOSTILE[1], "--as", "alice")
    shown, viewed = _both(home, monkeypatch, run_id)
    assert shown == viewed
    assert "review: changes-requested" in shown


@pytest.mark.parametrize("hostile", [False, True], ids=["as run", "hostile text"])
def test_a_run_only_in_the_store_is_shown_from_it(
    home: Path, monkeypatch: pytest.MonkeyPatch, hostile: bool
) -> None:
    workspace = home / "run_20261201T101500Z_a00002"
    if hostile:
        _hostile(workspace)
    _invoke(home, "runs")
    run_id = _run_id(workspace)
    shutil.move(workspace, home.parent / "elsewhere")
    calls: list[Path] = []
    monkeypatch.setattr(show, "read_ended_run", lambda workspace: calls.append(workspace))
    shown = _invoke(home, "show", run_id)
    assert "is not on this machine: shown from the run store" in shown
    assert calls == []
    if hostile:
        assert "lone surrogates \\ud800 \\udfff \\udcff (JSON escapes" in shown


#: Records that are not whole: each is read through the views, which name the damage.
NOT_WHOLE: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "a number where a string is declared": (
        "runtime/run.json", lambda record: record.update(error_message=5)
    ),
    "an integer where a number is declared": (
        "runtime/run.json", lambda record: record.update(limits={"wall_time_seconds": 3})
    ),
    "a boolean where an integer is declared": (
        "runtime/run.json", lambda record: record["metrics"].update(turns=True)
    ),
    "a plan step that is a string": (
        "runtime/run.json", lambda record: record["plan"].append("step")
    ),
    "a finding whose details are a list": (
        "manifest.json", lambda manifest: manifest["findings"].append({"details": []})
    ),
    "a required flag that is a string": (
        "manifest.json", lambda manifest: manifest["artifacts"][0].update(required="no")
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", NOT_WHOLE, ids=list(NOT_WHOLE))
def test_a_record_that_is_not_whole_is_read_through_the_views(
    home: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    relative, change = NOT_WHOLE[case]
    workspace = home / "run_20261201T101500Z_a00001"
    _edit(workspace / relative, change)
    assert show.read_ended_run(workspace) is None
    shown, viewed = _both(home, monkeypatch, workspace.name)
    assert shown == viewed


def test_an_event_that_is_not_whole_is_read_through_the_views(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = home / "run_20261201T101500Z_a00001"
    _append_event(workspace, "tool.called", {"name": "x"})
    assert show.read_ended_run(workspace) is not None
    log = workspace / "runtime" / "events.jsonl"
    lines = log.read_text("utf-8").splitlines()
    last = {**json.loads(lines[-1]), "seq": "12"}
    log.write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n", "utf-8")
    assert show.read_ended_run(workspace) is None
    shown, viewed = _both(home, monkeypatch, workspace.name)
    assert shown == viewed
    assert "damaged record" in shown


def test_a_live_run_is_read_through_the_views(home: Path) -> None:
    workspace = home / "run_20261201T101500Z_a00001"
    _edit(workspace / "runtime" / "run.json", lambda record: record.update(status="running"))
    assert show.read_ended_run(workspace) is None


# -- the plain records hold what the views hold ---------------------------------------------


def _shape(annotation: Any) -> Any:
    """`annotation` with each plain record named by its view (and `X | None` as a set)."""
    if isinstance(annotation, type) and issubclass(annotation, plain.Plain):
        return PAIRS[annotation]
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return frozenset(_shape(arg) for arg in get_args(annotation))
    if origin is not None:
        return (origin, tuple(_shape(arg) for arg in get_args(annotation)))
    return annotation


def test_each_plain_record_declares_its_views_keys_types_and_defaults() -> None:
    for record, view in PAIRS.items():
        hints = get_type_hints(record)
        del hints["raw"], hints["model_fields_set"]
        assert list(hints) == list(view.model_fields), record
        for name, hint in hints.items():
            assert _shape(hint) == _shape(view.model_fields[name].annotation), (record, name)
        empty, default = record({}), view()
        for name in hints:
            assert getattr(empty, name) == getattr(default, name), (record, name)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def _value_of(hint: Any) -> st.SearchStrategy[Any]:
    """Values of the type `hint` declares, and near misses: an integer where a number is
    declared (which a view converts), a boolean where an integer is (which it drops)."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        typed = st.one_of(*(_value_of(arg) for arg in get_args(hint)))
    elif origin is list:
        typed = st.lists(_value_of(get_args(hint)[0]), max_size=3)
    elif origin is dict:
        typed = st.dictionaries(st.text(max_size=4), _value_of(get_args(hint)[1]), max_size=3)
    elif isinstance(hint, type) and issubclass(hint, plain.Plain):
        typed = _raw_of(hint)
    else:
        typed = {
            str: st.text(),
            int: st.integers() | st.booleans(),
            float: st.floats() | st.integers(),
            bool: st.booleans(),
            type(None): st.none(),
        }.get(hint, _JSON)
    return typed


def _raw_of(record: type[plain.Plain]) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects with some of `record`'s keys (values of their type or not) and others."""
    hints = get_type_hints(record)
    del hints["raw"], hints["model_fields_set"]
    values = {name: _deferred(hint) for name, hint in hints.items()}
    return st.fixed_dictionaries({}, optional={**values, "other": _JSON})


def _deferred(hint: Any) -> st.SearchStrategy[Any]:
    """`_value_of(hint)`, made when first drawn (records hold records)."""
    return st.deferred(lambda: _value_of(hint))


def _same(whole: Any, view: Any) -> None:
    if isinstance(whole, plain.Plain):
        assert isinstance(view, readers.View)
        assert whole.model_fields_set == view.model_fields_set
        for name in type(view).model_fields:
            _same(getattr(whole, name), getattr(view, name))
    elif isinstance(whole, list):
        assert isinstance(view, list) and len(whole) == len(view)
        for a, b in zip(whole, view, strict=True):
            _same(a, b)
    else:
        assert whole == view and type(whole) is type(view), (whole, view)


@pytest.mark.parametrize("record", [plain.PlainRunRecord, plain.PlainManifest, plain.PlainEvent])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_whole_record_holds_what_its_view_holds(
    record: type[plain.Plain], data: st.DataObject
) -> None:
    raw = data.draw(_raw_of(record))
    whole = record.whole(raw)
    view, damaged = PAIRS[record].lenient(raw)
    if whole is not None:
        assert damaged == []
        _same(whole, view)


def test_a_workspace_the_store_holds_as_it_is_is_not_synced_again(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runlens.store import sync

    workspace = home / "run_20261201T101500Z_a00001"
    _invoke(home, "show", workspace.name)  # the store now holds the run as it is
    called: list[str] = []

    def counted(name: str) -> Callable[..., Any]:
        real = getattr(sync, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            called.append(name)
            return real(*args, **kwargs)

        return call

    for name in ("sync_workspace", "local_workspace"):
        monkeypatch.setattr(sync, name, counted(name))
    for run in (workspace.name, _run_id(workspace), workspace):
        assert "completed" in _invoke(home, "show", run, "--no-events")
    assert called == []
    # Its record changed since the store read it: the sync reads the workspace again.
    _edit(workspace / "runtime" / "run.json", lambda record: record.update(warnings=["new"]))
    assert "Warning: new" in _invoke(home, "show", workspace.name, "--no-events")
    assert called == ["sync_workspace"]
    # ... and writes it: the next `show` finds the store in step again.
    called.clear()
    assert "Warning: new" in _invoke(home, "show", workspace.name, "--no-events")
    assert called == []
