"""`runlens verify` on real scripted runs: what holds, and each way a verdict stops holding
(a changed byte, a forged or foreign signature, edited subjects, a replayed statement)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.verdict.conftest import SAMPLE, SCRIPTS, SignedRun, invoke, scripted_run

from runlens.evidence import file_sha256
from runlens.verdict.dsse import sign_envelope
from runlens.verdict.keys import init_key, public_path
from runlens.verdict.statement import canonical_json, decode_statement
from runlens.verdict.verify import verify_workspace

CHECKS = [
    "signature",
    "statement",
    "source_lock",
    "evidence_index",
    "contracts",
    "validators",
    "reviews",
]


def verify_json(run: SignedRun, *args: object) -> tuple[int, dict[str, Any]]:
    result = invoke("verify", run.workspace, "--json", *args, home=run.home)
    assert "Traceback" not in result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return result.exit_code, document


def checks(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["check"]: check for check in document["checks"]}


def failed(document: dict[str, Any]) -> dict[str, str]:
    return {c["check"]: c["detail"] for c in document["checks"] if not c["ok"]}


def resign(
    run: SignedRun, statement: dict[str, Any], key_home: Path, name: str = "default"
) -> None:
    """Replace the run's envelope by one of `statement` signed with KEY_HOME's key NAME."""
    from runlens.verdict.keys import load_private_key, private_path

    key = load_private_key(private_path(name, key_home), name, "home")
    envelope = sign_envelope(canonical_json(statement), key)
    run.envelope_path.write_text(json.dumps(envelope), encoding="utf-8")


def test_a_completed_run_verifies(passing_run: SignedRun) -> None:
    code, document = verify_json(passing_run)

    assert code == 0
    assert document["verified"] is True
    names = [check["check"] for check in document["checks"]]
    assert [n for n in names if not n.startswith("subject:")] == CHECKS
    assert sorted(n for n in names if n.startswith("subject:")) == [
        "subject:artifacts/feedback_analysis.json",
        "subject:artifacts/insight_report.md",
        "subject:artifacts/product_backlog.json",
        "subject:input/sample_feedback.csv",
        "subject:runtime/evidence_index.json",
    ]
    assert all(check["ok"] for check in document["checks"])


def test_the_statement_says_what_was_judged(passing_run: SignedRun) -> None:
    statement = decode_statement(passing_run.envelope)
    predicate = statement["predicate"]
    record = passing_run.record

    assert predicate["run_id"] == record["run_id"] and predicate["status"] == "completed"
    assert predicate["plugin"]["name"] == "feedback-analysis"
    assert predicate["model"] == record["model"]
    assert predicate["findings"] == [] and predicate["reviews"] == []
    assert predicate["evidence_index_sha256"] == record["evidence_index_sha256"]
    assert "RequiredOutputValidationHook" in predicate["validators"]
    assert predicate["citations"]["quotes"] > 0 and predicate["coverage"]["rows_cited"] > 0
    assert predicate["created_at"] == record["created_at"]
    assert predicate["finished_at"] == record["finished_at"]
    keyid = passing_run.envelope["signatures"][0]["keyid"]
    assert predicate["signer"] == {"keyid": keyid, "name": "default", "source": "home"}
    assert "source_lock" in predicate
    for subject in statement["subject"]:
        path = passing_run.workspace / subject["name"]
        assert subject["digest"] == {"sha256": file_sha256(path)}


def test_the_first_run_of_a_home_makes_its_key_with_a_notice(passing_run: SignedRun) -> None:
    keyid = passing_run.envelope["signatures"][0]["keyid"]
    assert "made signing key" in passing_run.result.stderr
    assert keyid in passing_run.result.stderr
    assert passing_run.result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "name",
    ["artifacts/insight_report.md", "input/sample_feedback.csv", "runtime/evidence_index.json"],
)
def test_a_changed_byte_is_caught_and_named(fresh_copy: Callable[[], SignedRun], name: str) -> None:
    run = fresh_copy()
    path = run.workspace / name
    expected = file_sha256(path)
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    actual = file_sha256(path)

    code, document = verify_json(run)

    assert code == 1 and document["verified"] is False
    detail = failed(document)[f"subject:{name}"]
    assert f"{name} changed: expected sha256 {expected}, actual {actual}" == detail
    assert checks(document)["signature"]["ok"] is True


def test_a_changed_input_fails_the_rebuilt_index_too(fresh_copy: Callable[[], SignedRun]) -> None:
    run = fresh_copy()
    path = run.workspace / "input" / "sample_feedback.csv"
    path.chmod(0o644)
    path.write_text(path.read_text(encoding="utf-8").replace("fb_001,", "fb_001,X", 1))

    _, document = verify_json(run)

    assert "1 row(s) changed: fb_001" in failed(document)["evidence_index"]


def test_a_deliverable_added_after_signing_is_named(fresh_copy: Callable[[], SignedRun]) -> None:
    run = fresh_copy()
    (run.workspace / "artifacts" / "extra.md").write_text("# added later\n")

    code, document = verify_json(run)

    assert code == 1
    detail = failed(document)["subject:artifacts/extra.md"]
    assert "on disk but not in the statement" in detail


def test_a_missing_deliverable_is_named(fresh_copy: Callable[[], SignedRun]) -> None:
    run = fresh_copy()
    (run.workspace / "artifacts" / "product_backlog.json").unlink()

    _, document = verify_json(run)

    problems = failed(document)
    assert (
        "product_backlog.json is missing (expected sha256"
        in problems["subject:artifacts/product_backlog.json"]
    )
    assert "missing_file" in problems["validators"]


def test_a_forged_signature_fails(fresh_copy: Callable[[], SignedRun]) -> None:
    run = fresh_copy()
    envelope = run.envelope
    raw = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    raw[10] ^= 0x80
    envelope["signatures"][0]["sig"] = base64.b64encode(bytes(raw)).decode()
    run.envelope_path.write_text(json.dumps(envelope))

    code, document = verify_json(run)

    assert code == 1
    assert failed(document)["signature"].startswith("bad signature")


def test_a_statement_signed_by_another_key_fails(
    fresh_copy: Callable[[], SignedRun], tmp_path: Path
) -> None:
    run = fresh_copy()
    stranger = tmp_path / "stranger"
    statement = decode_statement(run.envelope)
    statement["predicate"]["signer"]["keyid"] = init_key("default", stranger).keyid
    resign(run, statement, stranger)

    code, document = verify_json(run)

    assert code == 1
    assert failed(document)["signature"].startswith("unknown key")
    # ... and passes with that key named: --key decides whom to trust.
    code, document = verify_json(run, "--key", public_path("default", stranger))
    assert code == 0, failed(document)


def test_edited_subjects_fail_whoever_signed_them(
    fresh_copy: Callable[[], SignedRun], tmp_path: Path
) -> None:
    run = fresh_copy()
    report = run.workspace / "artifacts" / "insight_report.md"
    report.write_text(report.read_text(encoding="utf-8") + "\nA claim added later.\n")
    statement = decode_statement(run.envelope)
    forged_digest = file_sha256(report)
    for subject in statement["subject"]:
        if subject["name"] == "artifacts/insight_report.md":
            subject["digest"]["sha256"] = forged_digest

    # Re-signed by a key nobody trusts: the hashes now match, the signature does not.
    init_key("default", tmp_path / "mallory")
    resign(run, statement, tmp_path / "mallory")
    _, document = verify_json(run)
    assert failed(document)["signature"].startswith("unknown key")
    assert checks(document)["subject:artifacts/insight_report.md"]["ok"] is True

    # Signed by the right key over wrong digests: the signature holds, the hash does not.
    statement["subject"][0]["digest"]["sha256"] = "0" * 64
    resign(run, statement, run.home)
    code, document = verify_json(run)
    assert code == 1
    assert checks(document)["signature"]["ok"] is True
    name = statement["subject"][0]["name"]
    assert f"expected sha256 {'0' * 64}" in failed(document)[f"subject:{name}"]


def test_a_statement_replayed_from_another_run_fails(
    passing_run: SignedRun, fresh_copy: Callable[[], SignedRun]
) -> None:
    other = scripted_run(passing_run.home, "passing.json", "run_other")
    assert other.result.exit_code == 0
    target = fresh_copy()
    target.envelope_path.write_bytes(other.envelope_path.read_bytes())

    code, document = verify_json(target)

    assert code == 1
    assert checks(document)["signature"]["ok"] is True  # a genuine statement ...
    detail = failed(document)["statement"]  # ... about another run
    assert other.record["run_id"] in detail and target.record["run_id"] in detail


def test_a_source_lock_edited_in_run_json_is_named(fresh_copy: Callable[[], SignedRun]) -> None:
    target = fresh_copy()
    path = target.workspace / "runtime" / "run.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["source_lock"]["rows"] == 89
    record["source_lock"]["ref"] = {"uri": "https://example.com/another-export.csv"}
    record["source_lock"]["rows"] = 90
    path.write_text(json.dumps(record), encoding="utf-8")

    code, document = verify_json(target)

    assert code == 1
    assert failed(document)["source_lock"].endswith("differs from the signed one: ref, rows")
    assert checks(document)["signature"]["ok"] is True


def test_a_run_that_failed_validation_is_signed_with_its_findings(passing_run: SignedRun) -> None:
    run = scripted_run(passing_run.home, "missing_heading.json", "run_failed")
    assert run.result.exit_code == 1
    assert run.record["status"] == "failed"
    predicate = decode_statement(run.envelope)["predicate"]
    assert predicate["status"] == "failed"
    codes = {finding["code"] for finding in predicate["findings"]}
    assert "missing_heading" in codes

    code, document = verify_json(run)
    assert code == 0, failed(document)
    assert "re-run: the same" in checks(document)["validators"]["detail"]


def test_a_finding_edited_out_of_the_statement_is_named(
    passing_run: SignedRun, tmp_path: Path
) -> None:
    run = scripted_run(passing_run.home, "missing_heading.json", "run_failed_edit")
    statement = decode_statement(run.envelope)
    dropped = statement["predicate"]["findings"].pop(0)
    resign(run, statement, run.home)

    _, document = verify_json(run)

    detail = failed(document)["validators"]
    assert detail.startswith("found now but not signed:")
    assert f"[{dropped['code']}]" in detail


def test_an_unloadable_signing_key_leaves_the_run_finished_and_unsigned(tmp_path: Path) -> None:
    bad = tmp_path / "broken.pem"
    bad.write_text("not a key")
    run = scripted_run(tmp_path, "passing.json", "run_unsigned", RUNLENS_SIGNING_KEY=str(bad))

    assert run.result.exit_code == 0
    assert run.record["status"] == "completed"
    assert not run.envelope_path.exists()
    warning = next(w for w in run.record["warnings"] if w.startswith("verdict not signed"))
    assert str(bad) in warning
    code, document = verify_json(run)
    assert code == 1
    assert "never signed" in failed(document)["signature"]


def test_runlens_signing_key_signs_and_is_named(tmp_path: Path) -> None:
    made = init_key("release", tmp_path / "vault")
    key_file = tmp_path / "vault" / "keys" / "release.pem"
    run = scripted_run(tmp_path, "passing.json", "run_env_key", RUNLENS_SIGNING_KEY=str(key_file))

    assert run.envelope["signatures"][0]["keyid"] == made.keyid
    signer = decode_statement(run.envelope)["predicate"]["signer"]
    assert signer == {"keyid": made.keyid, "name": "release", "source": "env"}
    assert not (tmp_path / "keys").exists()
    code, _ = verify_json(run, "--key", tmp_path / "vault" / "keys" / "release.pub.pem")
    assert code == 0


def test_the_private_key_is_in_no_file_of_the_workspace_or_the_store(
    passing_run: SignedRun,
) -> None:
    private_pem = (passing_run.home / "keys" / "default.pem").read_bytes()
    body = b"".join(line for line in private_pem.splitlines() if b"-----" not in line)
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(private_pem, password=None)
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    needles = [body, raw, raw.hex().encode(), base64.b64encode(raw)]
    scanned = 0
    for path in passing_run.home.rglob("*"):
        if not path.is_file() or path.parent.name == "keys":
            continue
        data = path.read_bytes()
        scanned += 1
        assert not any(needle in data for needle in needles), path
    assert scanned > 10  # the workspace's records and the run store (runlens.db)
    assert (passing_run.home / "runlens.db").is_file()


def test_verify_changes_nothing_in_the_workspace(fresh_copy: Callable[[], SignedRun]) -> None:
    run = fresh_copy()

    def tree() -> dict[str, str]:
        return {
            p.relative_to(run.workspace).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in run.workspace.rglob("*")
            if p.is_file()
        }

    before = tree()
    assert verify_workspace(run.workspace, home=run.home).verified
    code, _ = verify_json(run, "--source", run.workspace / "input" / "sample_feedback.csv")
    assert code == 0
    assert tree() == before


def test_verify_by_run_id_prints_every_check(passing_run: SignedRun) -> None:
    run = scripted_run(passing_run.home, "passing.json", None)
    assert run.workspace.name == run.record["run_id"]

    result = invoke("verify", run.record["run_id"][-6:], home=passing_run.home)

    assert result.exit_code == 0, result.output
    assert result.output.startswith("VERIFIED")
    assert "✓ signature" in result.output and "✓ validators" in result.output


def test_a_runs_human_verdict_says_it_is_signed_and_how_to_check_it(
    passing_run: SignedRun,
) -> None:
    result = invoke(
        "run", "feedback-analysis", SAMPLE, "--model", f"scripted:{SCRIPTS / 'passing.json'}",
        home=passing_run.home,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    keyid = passing_run.envelope["signatures"][0]["keyid"]
    run_id = next(
        line.split()[-1] for line in result.stdout.splitlines() if "runlens verify" in line
    )
    assert f"Verdict signed by key {keyid[:16]}…" in result.stdout
    assert invoke("verify", run_id, home=passing_run.home).exit_code == 0


def test_model_written_text_reaches_the_terminal_escaped(
    fresh_copy: Callable[[], SignedRun],
) -> None:
    run = fresh_copy()
    (run.workspace / "artifacts" / "\x1b[2Jevil[red].md").write_text("x")

    result = invoke("verify", run.workspace, home=run.home)

    assert result.exit_code == 1
    assert "\x1b" not in result.output
    assert "\\x1b[2Jevil[red].md" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no_such_run"], "no run 'no_such_run'"),
        (["{html}"], "report.html: no RunLens export: the file has no <script"),
        (["{workspace}", "--key", "{missing}"], "cannot be read"),
        (["{workspace}", "--source", "{missing}"], "no such file"),
    ],
)
def test_usage_errors_exit_2(
    passing_run: SignedRun, tmp_path: Path, args: list[str], message: str
) -> None:
    html = tmp_path / "report.html"
    html.write_text("<html></html>")
    values = {"html": html, "workspace": passing_run.workspace, "missing": tmp_path / "nope"}
    result = invoke("verify", *[a.format(**values) for a in args], home=passing_run.home)

    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_a_run_given_a_keys_home_signs_with_that_homes_key(tmp_path: Path) -> None:
    """A worker's runs sign with its own home's key (`RunSettings.keys_home`, set from the
    worker's `--home`), whatever `RUNLENS_HOME` says."""

    from runlens.plugins import load_plugin
    from runlens.runtime.run import RunSettings, run_plugin
    from runlens.testing import ScriptedModel

    worker_home = tmp_path / "worker-home"
    worker_key = init_key("default", worker_home)
    result = asyncio.run(
        run_plugin(
            load_plugin("feedback-analysis"),
            SAMPLE,
            ScriptedModel.from_file(SCRIPTS / "passing.json"),
            workspace=worker_home / "run_w",
            settings=RunSettings(keys_home=worker_home),
        )
    )

    assert result.status.value == "completed"
    run = SignedRun(worker_home, worker_home / "run_w", None)  # type: ignore[arg-type]
    assert run.envelope["signatures"][0]["keyid"] == worker_key.keyid
    assert verify_workspace(run.workspace, home=worker_home).verified


def test_a_workers_run_signs_with_the_workers_home_key(tmp_path: Path) -> None:
    """`open_run` as a worker calls it (`Durable.home`: the worker's `--home`): the run signs
    with that home's key, the envelope reaches the run store, the private key does not."""
    from tests.verdict.conftest import SAMPLE, SCRIPTS

    from runlens.plugins import load_plugin
    from runlens.runtime.journal import Journal
    from runlens.start import Durable, RunOptions, open_run
    from runlens.store.db import open_store
    from runlens.workers.workflow import run_to_end

    worker_home = tmp_path / "worker"
    worker_key = init_key("default", worker_home)
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    durable = Durable(
        journal=Journal(),
        replay_events=(),
        on_replay_diverged=lambda seq: None,
        worker="w1",
        home=worker_home,
    )
    options = RunOptions(plugin="feedback-analysis", model=f"scripted:{SCRIPTS / 'passing.json'}")
    run, mirror = open_run(
        store,
        options,
        load_plugin("feedback-analysis"),
        SAMPLE,
        worker_home / "run_w1",
        run_id="run_w1",
        origin="cli",
        durable=durable,
    )
    assert run_to_end(run).status == "completed"
    mirror.finish()

    copied = tmp_path / "from-store"
    store.materialize("run_w1", copied, paths=["runtime/verdict.dsse.json"])
    envelope = json.loads((copied / "runtime" / "verdict.dsse.json").read_text())
    assert envelope["signatures"][0]["keyid"] == worker_key.keyid
    pem = (worker_home / "keys" / "default.pem").read_bytes()
    body = b"".join(line for line in pem.splitlines() if b"-----" not in line)
    for stored in tmp_path.glob("store.db*"):  # the database and its journal files
        assert body not in stored.read_bytes(), stored


def test_a_run_cancelled_in_its_repair_round_signs_no_stale_verdict(tmp_path: Path) -> None:
    """The last verdict judged files the model was still changing: nothing is signed."""

    from tests.verdict.conftest import SAMPLE, SCRIPTS

    from runlens import cancellation
    from runlens.plugins import load_plugin
    from runlens.runtime.run import Run, RunSettings
    from runlens.testing import FunctionModel

    turns = json.loads((SCRIPTS / "missing_heading.json").read_text(encoding="utf-8"))["turns"]
    runs: list[Run] = []

    def answer(messages: object, tools: object) -> dict[str, Any]:
        model = runs[0].model
        assert isinstance(model, FunctionModel)
        if model.calls < len(turns):
            turn: dict[str, Any] = turns[model.calls]
            return turn
        runs[0].cancel("cancelled during the repair round")
        cancellation.checkpoint()
        return {"content": "never reached"}

    run = Run(
        plugin=load_plugin("feedback-analysis"),
        input_path=SAMPLE,
        model=FunctionModel(answer),
        workspace=tmp_path / "ws",
        settings=RunSettings(repair_turns=1, keys_home=tmp_path),
    )
    runs.append(run)

    async def execute() -> None:
        with contextlib.suppress(asyncio.CancelledError):  # how a cancelled run ends
            await run.execute()

    asyncio.run(execute())

    assert run.status.value == "cancelled"
    assert run.report is not None  # round 1 judged the files ...
    assert not (tmp_path / "ws" / "runtime" / "verdict.dsse.json").exists()  # ... as they were


def test_a_statement_naming_another_signer_than_the_key_that_signed_it_fails(
    fresh_copy: Callable[[], SignedRun], tmp_path: Path
) -> None:
    run = fresh_copy()
    statement = decode_statement(run.envelope)
    init_key("default", tmp_path / "trusted-too")
    resign(run, statement, tmp_path / "trusted-too")  # keeps the original signer entry

    _, document = verify_json(run, "--key", public_path("default", tmp_path / "trusted-too"))

    named = statement["predicate"]["signer"]["keyid"]
    assert failed(document)["signature"].endswith(f"but the statement names signer {named}")
