"""One way to start a run: the command line, the upload form and the queue build the same
`RunOptions` from the same inputs, and refuse a model that cannot be used by the one check."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from runlens.cli.run import run_command, run_options
from runlens.errors import UserError
from runlens.plugins import load_plugin
from runlens.start import SCRIPTED_IN_QUEUE, RunOptions, check_model
from runlens.ui.uploads import LaunchError, form_options
from runlens.workers.request import RunRequest

PLUGIN = "feedback-analysis"
SAMPLE_CSV = Path(__file__).resolve().parents[1] / "examples" / "sample_feedback.csv"
#: `run_options`' parameters, as `runlens run` parses them.
_OPTION_PARAMS = (
    "plugin_name",
    "model_spec",
    "repair_turns",
    "max_turns",
    "max_tool_calls",
    "wall_time",
    "encoding",
    "id_column",
    "text_column",
    "sheet",
    "source_ref",
    "submitted_by",
    "rerun_of",
    "review_findings",
)


def from_command_line(*args: str) -> RunOptions:
    """The options `runlens run ARGS` builds."""
    params = run_command.make_context("run", list(args)).params
    return run_options(**{name: params[name] for name in _OPTION_PARAMS})


def test_the_three_entries_build_the_same_options_for_the_same_inputs() -> None:
    command_line = from_command_line(
        PLUGIN,
        "in.csv",
        "--model",
        "offline",
        "--repair-turns",
        "2",
        "--id-column",
        " ticket ",
        "--text-column",
        "body",
        "--encoding",
        "utf-8",
        "--sheet",
        " Sheet 1",
    )
    form = form_options(
        {
            "plugin": PLUGIN,
            "model": "offline",
            "repair_turns": "2",
            "id_column": "ticket",
            "text_column": "body",
            "encoding": "utf-8",
            "sheet": " Sheet 1",
        },
        allow_scripted_models=False,
    )
    queued = RunRequest.from_json(
        {
            "run_id": "r1",
            "plugin": PLUGIN,
            "model": "offline",
            "input_name": "in.csv",
            "repair_turns": 2,
            "id_column": "ticket",
            "text_column": "body",
            "encoding": "utf-8",
            "sheet": " Sheet 1",
        }
    ).options
    assert command_line == form == queued
    assert command_line.settings() == form.settings()
    # The UI's child process is `runlens run` given the options' own arguments.
    assert from_command_line(PLUGIN, "in.csv", *form.run_arguments()) == form


def test_limits_travel_the_command_line_and_the_queue_alike() -> None:
    options = from_command_line(
        PLUGIN,
        "in.csv",
        "--max-turns=5",
        "--max-tool-calls=9",
        "--wall-time=30.5",
        "--sheet=-dash",
    )
    assert options == RunOptions(
        plugin=PLUGIN, max_turns=5, max_tool_calls=9, wall_time=30.5, sheet="-dash"
    )
    assert from_command_line(PLUGIN, "in.csv", *options.run_arguments()) == options
    request = RunRequest(run_id="r2", input_name="in.csv", options=options)
    assert RunRequest.from_json(request.to_json()) == request


def test_a_run_queued_by_the_current_version_is_read_as_it_was_written() -> None:
    written = {
        "run_id": "20260101-000000-abcdef",
        "plugin": PLUGIN,
        "model": "openai:m",
        "input_name": "in.csv",
        "repair_turns": 1,
        "max_turns": None,
        "max_tool_calls": 12,
        "wall_time": None,
        "encoding": None,
        "id_column": None,
        "text_column": "text",
        "sheet": None,
    }
    request = RunRequest.from_json(dict(written))
    assert request.to_json() == written
    assert request.options.max_tool_calls == 12 and request.input_path == "input/in.csv"
    with pytest.raises(UserError, match="unknown fields: colour"):
        RunRequest.from_json({**written, "colour": "blue"})


def test_scripted_models_are_refused_where_their_file_may_not_be() -> None:
    plugin = load_plugin(PLUGIN)
    assert check_model("scripted:x.json", plugin) == "scripted:x.json"
    with pytest.raises(UserError, match="worker elsewhere"):
        check_model("scripted:x.json", plugin, refuse_scripted=SCRIPTED_IN_QUEUE)
    with pytest.raises(LaunchError, match="names a file on the server"):
        form_options({"plugin": PLUGIN, "model": "scripted:x.json"}, allow_scripted_models=False)


@pytest.fixture
def no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_BASE_URL")):
            monkeypatch.delenv(name)


@pytest.mark.usefixtures("no_provider_keys")
def test_a_model_without_credentials_is_refused_by_the_one_check_from_all_three(
    tmp_path: Path,
) -> None:
    from runlens.store.db import open_store
    from runlens.workers.workflow import WorkerContext, execute

    model = "openai:gpt-4o"
    # The upload form (checked in the server, whose environment a run would have).
    with pytest.raises(LaunchError) as refused:
        form_options({"plugin": PLUGIN, "model": model}, allow_scripted_models=False)
    assert refused.value.status_code == 422
    message = str(refused.value)
    assert message.startswith(f"model {model!r} cannot be used here: ")
    assert "OPENAI_API_KEY" in message

    # The command line: a usage error, before a workspace is made.
    url = f"sqlite:///{tmp_path / 'runlens.db'}"
    workspace = tmp_path / "w"
    args = [PLUGIN, str(SAMPLE_CSV), f"--model={model}", f"--workspace={workspace}"]
    done = CliRunner().invoke(run_command, [*args, f"--database-url={url}"])
    assert done.exit_code == 2, done.output
    assert message in " ".join(done.output.split())
    assert not workspace.exists()

    # The queue: the worker that takes the run ends it `failed` before it starts.
    store = open_store(url)
    try:
        store.upsert_run(
            "q1", plugin=PLUGIN, model=model, status="queued", input_name="in.csv", workspace=""
        )
        store.put_files("q1", {"input/in.csv": SAMPLE_CSV.read_bytes()})
        logged: list[str] = []
        request: dict[str, Any] = RunRequest(
            run_id="q1", input_name="in.csv", options=RunOptions(plugin=PLUGIN, model=model)
        ).to_json()
        context = WorkerContext(store, tmp_path / "worker", "w1", logged.append)
        ended = execute(context, request)
        assert ended == {"run_id": "q1", "status": "failed", "error_message": message}
        row = store.get_run("q1")
        assert row is not None and row.status == "failed" and row.error_message == message
    finally:
        store.close()


def test_a_source_ref_travels_the_command_line_and_the_queue() -> None:
    options = from_command_line(PLUGIN, "in.csv", "--source-ref=s3://bucket/export.csv")
    assert options == RunOptions(plugin=PLUGIN, source_ref="s3://bucket/export.csv")
    assert options.settings().source_ref == "s3://bucket/export.csv"
    assert from_command_line(PLUGIN, "in.csv", *options.run_arguments()) == options
    request = RunRequest(run_id="r3", input_name="in.csv", options=options)
    assert request.to_json()["source_ref"] == "s3://bucket/export.csv"
    assert RunRequest.from_json(request.to_json()) == request
    # Without one, the queued run has the shape earlier workers read.
    plain = RunRequest(run_id="r4", input_name="in.csv", options=RunOptions(plugin=PLUGIN))
    assert "source_ref" not in plain.to_json()
    with pytest.raises(UserError, match="source_ref must be a string"):
        RunRequest.from_json({**request.to_json(), "source_ref": 3})


def test_a_submitter_and_a_reviews_findings_travel_the_command_line_and_the_queue() -> None:
    findings = ('Reviewer bob requested changes to run r0: "-- not <b>this</b>\\nline"', "two")
    options = RunOptions(
        plugin=PLUGIN, submitted_by="alice", rerun_of="r0", review_findings=findings
    )
    # The UI starts a rerun as `runlens run` with the options' own arguments.
    assert from_command_line(PLUGIN, "in.csv", *options.run_arguments()) == options
    settings = options.settings()
    assert (settings.submitted_by, settings.rerun_of, settings.review_findings) == (
        "alice",
        "r0",
        findings,
    )
    request = RunRequest(run_id="r5", input_name="in.csv", options=options)
    written = request.to_json()
    assert written["review_findings"] == list(findings) and written["submitted_by"] == "alice"
    assert RunRequest.from_json(json.loads(json.dumps(written))) == request
    # Unused, they are left out: a worker of an earlier version still takes the run.
    plain = RunRequest(run_id="r6", input_name="in.csv", options=RunOptions(plugin=PLUGIN))
    assert not {"submitted_by", "rerun_of", "review_findings"} & set(plain.to_json())
    with pytest.raises(UserError, match="review_findings must be a list of strings"):
        RunRequest.from_json({**written, "review_findings": "one"})
    with pytest.raises(UserError, match="submitted_by must be a string"):
        RunRequest.from_json({**written, "submitted_by": ["alice"]})
