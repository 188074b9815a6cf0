"""Input files in every encoding and delimiter a spreadsheet exports, and inputs that are not
CSV at all, end to end: `runlens run feedback-analysis FILE --workspace DIR --json` with the
offline model, then `runlens validate` on what it left.

A readable file completes, with how it was read in `runtime/run.json` (`input_format`) and in
the index header; an unreadable one ends the run `failed` at the input step with a message
naming the file and the place (exit 1, records consistent); a path that is no file, or an
unknown `--encoding`, is a usage error (exit 2) before any run starts.
"""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest

from evidence.helpers import xlsx_bytes  # tests/ is on sys.path (its conftest.py)

from .helpers import index_header, invoke, run, run_record

ROWS = [
    ("fb_1", "Le café était froid et le serveur très impoli, à éviter."),
    ("fb_2", "Die Lieferung war pünktlich, aber die Verpackung beschädigt. Größe passt nicht."),
    ("fb_3", "El envío tardó mucho, ¡qué decepción! La aplicación no funciona."),
    ("fb_4", "The export to Excel takes forever, over five minutes."),
    ("fb_5", "Login fails every morning with an invalid token error."),
]
CHINESE = [
    ("z1", "导出周报太慢了，每次都要等三分钟。"),
    ("z2", "登录经常失败，提示验证码错误。"),
    ("z3", "仪表盘做得很漂亮，老板很喜欢。"),
    ("z4", "这个月为什么多扣了两个席位的钱？"),
]


def csv_text(rows: list[tuple[str, str]], delimiter: str = ",") -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\r\n")
    writer.writerow(["feedback_id", "text", "channel"])
    writer.writerows((key, text, "app") for key, text in rows)
    return out.getvalue()


# -- files that are read: (rows, codec, delimiter, the encoding recorded) --------------------

READABLE = [
    pytest.param(ROWS, "latin-1", ",", "cp1252", id="latin-1"),
    pytest.param(ROWS, "cp1252", ",", "cp1252", id="cp1252"),
    pytest.param(CHINESE, "gbk", ",", "gb18030", id="gbk"),
    pytest.param(ROWS + CHINESE, "utf-16-le", ",", "utf-16-le", id="utf-16-le-no-bom"),
    pytest.param(ROWS + CHINESE, "utf-16-be", ",", "utf-16-be", id="utf-16-be-no-bom"),
    pytest.param(ROWS + CHINESE, "utf-16", ",", "utf-16", id="utf-16-bom"),
    pytest.param(ROWS + CHINESE, "utf-8", "\t", "utf-8", id="tsv"),
    pytest.param(ROWS, "cp1252", ";", "cp1252", id="semicolon-cp1252"),
]


@pytest.mark.parametrize(("rows", "codec", "delimiter", "encoding"), READABLE)
def test_readable_inputs_complete_and_record_how_they_were_read(
    tmp_path: Path, rows: list[tuple[str, str]], codec: str, delimiter: str, encoding: str
) -> None:
    source = tmp_path / "feedback.csv"
    source.write_bytes(csv_text(rows, delimiter).encode(codec))
    workspace = tmp_path / "ws"
    result, payload = run(source, workspace)
    assert result.exit_code == 0, payload["error_message"]
    assert payload["status"] == "completed"
    recorded = run_record(workspace)["input_format"]
    assert (recorded["encoding"], recorded["delimiter"]) == (encoding, delimiter)
    assert 0.9 <= recorded["encoding_confidence"] <= 1
    header = index_header(workspace)
    assert {name: header[name] for name in recorded} == recorded
    # The evidence quoted is the text in its own characters, and validates again from input/.
    analysis = json.loads((workspace / "artifacts" / "feedback_analysis.json").read_text("utf-8"))
    texts = dict(rows)
    for item in analysis["items"]:
        assert item["evidence_text"] in texts[item["feedback_id"]]
    assert invoke("validate", workspace, "--json").exit_code == 0


def test_encoding_forces_the_reading(tmp_path: Path) -> None:
    source = tmp_path / "feedback.csv"
    source.write_bytes(csv_text(ROWS).encode("latin-1"))
    workspace = tmp_path / "ws"
    result, payload = run(source, workspace, "--encoding", "latin-1")
    assert result.exit_code == 0, payload["error_message"]
    assert run_record(workspace)["input_format"] == {
        "format": "csv",
        "encoding": "iso8859-1",
        "encoding_confidence": 1.0,
        "encoding_method": "given",
        "delimiter": ",",
        "sheet": None,
        "id_column": "feedback_id",
        "text_column": "text",
        "id_rule": "column",
    }
    assert invoke("validate", workspace, "--json").exit_code == 0  # rebuilt in iso8859-1


# -- files that end the run failed at the input step -----------------------------------------


UNREADABLE = [
    pytest.param(
        random.Random(7).randbytes(20_000),
        (),
        "feedback.csv: cannot tell its text encoding: it is not UTF-8",
        id="random-bytes",
    ),
    pytest.param(
        b"\x89PNG\r\n\x1a\n" + random.Random(8).randbytes(2_000),
        (),
        "feedback.csv: looks like a PNG image, not a CSV text file",
        id="png-renamed",
    ),
    pytest.param(
        xlsx_bytes(),
        (),
        "feedback.csv: cannot be read as an Excel workbook (",
        id="damaged-xlsx-renamed",
    ),
    pytest.param(
        csv_text([*ROWS[:2], ("fb\x003", "nul in the id")]).encode(),
        (),
        "feedback.csv, row 3 (line 4): feedback_id 'fb\\x003' contains the control "
        "character U+0000",
        id="nul-in-id",
    ),
    pytest.param(
        csv_text([*ROWS[:1], ("fb\x1b[2J", "escape sequence in the id")]).encode(),
        (),
        "feedback.csv, row 2 (line 3): feedback_id 'fb\\x1b[2J' contains the control "
        "character U+001B",
        id="control-in-id",
    ),
    pytest.param(
        csv_text(ROWS).encode("latin-1"),
        ("--encoding", "utf-8"),
        "feedback.csv: not UTF-8 text, the encoding given: undecodable byte 0xe9 at byte "
        f"offset {csv_text(ROWS).encode('latin-1').index(0xE9)} (row 1, line 2)",
        id="not-in-the-named-encoding",
    ),
]


@pytest.mark.parametrize(("data", "options", "message"), UNREADABLE)
def test_unreadable_inputs_fail_the_run_at_the_input_step(
    tmp_path: Path, data: bytes, options: tuple[str, ...], message: str
) -> None:
    source = tmp_path / "feedback.csv"
    source.write_bytes(data)
    workspace = tmp_path / "ws"
    result, payload = run(source, workspace, *options)
    assert result.exit_code == 1
    assert payload["status"] == "failed"
    assert payload["error_message"].startswith(f"input error: {message}")
    record = run_record(workspace)
    assert (record["status"], record["error_message"]) == ("failed", payload["error_message"])
    assert record["plan"][0]["status"] == "failed"
    assert record["input_format"] is None and record["evidence_index_sha256"] is None
    assert not (workspace / "runtime" / "evidence_index.json").exists()


# -- usage errors: no run starts -------------------------------------------------------------


def test_a_directory_as_input_is_a_usage_error(tmp_path: Path) -> None:
    folder = tmp_path / "inputs"
    folder.mkdir()
    workspace = tmp_path / "ws"
    result = invoke("run", "feedback-analysis", folder, "--workspace", workspace, "--json")
    assert result.exit_code == 2
    assert f"Error: input file is a directory, not a file: {folder}" in result.stderr
    assert not workspace.exists()
    missing = invoke("run", "feedback-analysis", tmp_path / "nope.csv", "--workspace", workspace)
    assert missing.exit_code == 2
    assert "Error: input file not found: " in missing.stderr


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("klingon-8", "unknown encoding 'klingon-8'"),
        ("rot13", "'rot13' is not a character encoding"),
    ],
)
def test_an_unknown_encoding_is_a_usage_error_naming_it(
    tmp_path: Path, name: str, message: str
) -> None:
    source = tmp_path / "feedback.csv"
    source.write_text(csv_text(ROWS), encoding="utf-8")
    workspace = tmp_path / "ws"
    result = invoke(
        "run", "feedback-analysis", source, "--workspace", workspace, "--encoding", name
    )
    assert result.exit_code == 2
    assert "Invalid value for '--encoding'" in result.stderr and message in result.stderr
    assert not workspace.exists()


# -- runlens validate --source ... --encoding ------------------------------------------------


@pytest.fixture
def latin1_run(tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "feedback.csv"
    source.write_bytes(csv_text(ROWS).encode("latin-1"))
    workspace = tmp_path / "ws"
    result, payload = run(source, workspace)
    assert result.exit_code == 0, payload["error_message"]
    return source, workspace


def test_validate_source_reads_the_encoding_given_or_detected(
    latin1_run: tuple[Path, Path],
) -> None:
    source, workspace = latin1_run
    for options in ((), ("--encoding", "latin-1"), ("--encoding", "cp1252")):
        result = invoke("validate", workspace, "--source", source, "--json", *options)
        assert result.exit_code == 0, result.output
    rebuilt = json.loads(
        (workspace / "runtime" / "evidence_index.source.json").read_text(encoding="utf-8")
    )
    assert (rebuilt["encoding"], rebuilt["encoding_method"]) == ("cp1252", "given")


def test_validate_usage_errors(latin1_run: tuple[Path, Path], tmp_path: Path) -> None:
    source, workspace = latin1_run
    folder = invoke("validate", workspace, "--source", tmp_path)
    assert folder.exit_code == 2
    assert f"Error: source CSV is a directory, not a file: {tmp_path}" in folder.stderr
    unknown = invoke("validate", workspace, "--source", source, "--encoding", "nope")
    assert unknown.exit_code == 2 and "unknown encoding 'nope'" in unknown.stderr
    alone = invoke("validate", workspace, "--encoding", "latin-1")
    assert alone.exit_code == 2 and "give --source too" in alone.stderr
    wrong = invoke("validate", workspace, "--source", source, "--encoding", "utf-8")
    assert wrong.exit_code == 2
    assert "not UTF-8 text, the encoding given: undecodable byte 0xe9" in wrong.stderr


def test_an_index_recording_an_unusable_encoding_is_tampered(latin1_run: tuple[Path, Path]) -> None:
    _, workspace = latin1_run
    index_path = workspace / "runtime" / "evidence_index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    index["encoding"] = "rot13"
    index_path.write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")
    record_path = workspace / "runtime" / "run.json"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    record["evidence_index_sha256"] = None  # hide the recorded hash: the source still decides
    record_path.write_text(json.dumps(record), encoding="utf-8")
    result = invoke("validate", workspace, "--json")
    assert result.exit_code == 1
    codes = {finding["code"] for finding in json.loads(result.stdout)["findings"]}
    assert "evidence_index_tampered" in codes
    assert "'rot13' is not a character encoding" in result.stdout
