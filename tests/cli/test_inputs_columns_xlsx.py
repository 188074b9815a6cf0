"""Inputs people have, end to end through the CLI with the offline model: columns named
otherwise (`--id-column`, `--text-column`), no id column at all (ids `row-<n>`, a warning),
tab-separated files in UTF-8 and UTF-16, and Excel workbooks (first sheet or `--sheet`).

Each run must complete, record how its input was read (run.json `input_format` and the index
header), and pass `runlens validate` again from `input/` and from `--source`; each problem
must fail the run at the input step with a message naming the file and the place.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from evidence.helpers import canonical_hash, workbook_bytes  # tests/ is on sys.path

from .helpers import index_header, invoke, run, run_record

REVIEWS = [
    ("r-101", "The export to Excel takes forever, over five minutes every time."),
    ("r-102", "Login fails every morning with an invalid token error."),
    ("r-103", "I love the new dashboard, it is clear and fast."),
    ("r-104", "Billing charged us twice this month, please refund."),
]


def table_text(header: list[str], rows: Sequence[tuple[str, ...]], delimiter: str = ",") -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def reviews_csv(delimiter: str = ",") -> str:
    rows = [(key, text, "app") for key, text in REVIEWS]
    return table_text(["review_id", "review_body", "channel"], rows, delimiter)


def index_items(workspace: Path) -> dict[str, Any]:
    document = json.loads((workspace / "runtime" / "evidence_index.json").read_text("utf-8"))
    return dict(document["items"])


def analysed_ids(workspace: Path) -> list[str]:
    analysis = json.loads((workspace / "artifacts" / "feedback_analysis.json").read_text("utf-8"))
    return [item["feedback_id"] for item in analysis["items"]]


def assert_completed_and_valid(result: Result, payload: dict[str, Any], workspace: Path) -> None:
    assert result.exit_code == 0, payload["error_message"]
    assert payload["status"] == "completed"
    recorded = run_record(workspace)["input_format"]
    header = index_header(workspace)
    assert {name: header[name] for name in recorded} == recorded
    again = invoke("validate", workspace, "--json")
    assert again.exit_code == 0, again.output


def assert_failed_at_input(result: Result, payload: dict[str, Any], message: str) -> None:
    assert result.exit_code == 1
    assert payload["status"] == "failed"
    assert payload["error_message"] == f"input error: {message}"


# -- columns named otherwise -----------------------------------------------------------------


def test_renamed_columns_are_mapped_with_options(tmp_path: Path) -> None:
    source = tmp_path / "reviews.csv"
    source.write_text(reviews_csv(), encoding="utf-8")
    workspace = tmp_path / "ws"
    result, payload = run(
        source, workspace, "--id-column", "review_id", "--text-column", "review_body"
    )
    assert_completed_and_valid(result, payload, workspace)
    header = index_header(workspace)
    assert (header["id_column"], header["text_column"], header["id_rule"]) == (
        "review_id",
        "review_body",
        "column",
    )
    assert sorted(analysed_ids(workspace)) == [key for key, _ in REVIEWS]
    assert payload["warnings"] == []
    # Rebuilt from --source with the columns the run recorded, not the plugin's defaults.
    from_source = invoke("validate", workspace, "--source", source, "--json")
    assert from_source.exit_code == 0, from_source.output
    rebuilt = json.loads((workspace / "runtime" / "evidence_index.source.json").read_text())
    assert list(rebuilt["items"]) == [key for key, _ in REVIEWS]


def test_without_the_options_the_missing_text_column_says_how_to_name_it(tmp_path: Path) -> None:
    source = tmp_path / "reviews.csv"
    source.write_text(reviews_csv(), encoding="utf-8")
    result, payload = run(source, tmp_path / "ws")
    assert_failed_at_input(
        result,
        payload,
        "reviews.csv: missing column 'text' (found: review_id, review_body, channel); "
        "name the column to use with --text-column",
    )


def test_a_named_id_column_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    source = tmp_path / "reviews.csv"
    source.write_text(reviews_csv(), encoding="utf-8")
    workspace = tmp_path / "ws"
    result, payload = run(
        source, workspace, "--id-column", "reviewid", "--text-column", "review_body"
    )
    assert_failed_at_input(
        result,
        payload,
        "reviews.csv: missing column 'reviewid' (found: review_id, review_body, channel; "
        "closest: 'review_id'); named with --id-column",
    )
    assert not (workspace / "runtime" / "evidence_index.json").exists()


def test_an_empty_column_name_is_a_usage_error(tmp_path: Path) -> None:
    source = tmp_path / "reviews.csv"
    source.write_text(reviews_csv(), encoding="utf-8")
    result = invoke(
        "run", "feedback-analysis", source, "--workspace", tmp_path / "ws", "--text-column", "  "
    )
    assert result.exit_code == 2
    assert "Invalid value for '--text-column': must not be empty" in result.stderr
    assert not (tmp_path / "ws").exists()


# -- no id column ----------------------------------------------------------------------------


def test_a_file_without_ids_gets_row_number_ids_and_a_warning(tmp_path: Path) -> None:
    source = tmp_path / "texts.csv"
    # A blank line and an all-empty row are not rows: row-3 is the third text.
    lines = table_text(["text", "channel"], [(REVIEWS[n][1], "app") for n in range(3)])
    header_line, first, *rest = lines.split("\r\n")
    source.write_text("\r\n".join([header_line, first, "", ",", *rest]), encoding="utf-8")
    workspace = tmp_path / "ws"
    result, payload = run(source, workspace)
    assert_completed_and_valid(result, payload, workspace)
    assert sorted(analysed_ids(workspace)) == ["row-1", "row-2", "row-3"]
    header = index_header(workspace)
    assert (header["id_column"], header["id_rule"], header["columns"]) == (
        "feedback_id",
        "row-number",
        ["text", "channel"],
    )
    items = index_items(workspace)
    assert items["row-3"] == {
        "row_hash": canonical_hash({"text": REVIEWS[2][1], "channel": "app"}),
        "text": REVIEWS[2][1],
        "metadata": {"channel": "app"},  # every column but the text: the ids are derived
    }
    warning = (
        "texts.csv has no 'feedback_id' column: rows are identified by their row number "
        "(row-1 is the first data row; blank rows are not counted). Name the id column with "
        "--id-column if the file has one."
    )
    assert payload["warnings"] == [warning]
    assert run_record(workspace)["warnings"] == [warning]
    assert run_record(workspace)["input_format"]["id_rule"] == "row-number"
    from_source = invoke("validate", workspace, "--source", source, "--json")
    assert from_source.exit_code == 0, from_source.output


def test_the_verdict_shows_the_derived_ids_warning(tmp_path: Path) -> None:
    source = tmp_path / "texts.csv"
    source.write_text(table_text(["text"], [(text,) for _, text in REVIEWS]), encoding="utf-8")
    result = invoke("run", "feedback-analysis", source, "--workspace", tmp_path / "ws")
    assert result.exit_code == 0, result.output
    assert "Warning:" in result.stdout
    assert "texts.csv has no 'feedback_id' column" in " ".join(result.stdout.split())


# -- tab-separated files ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codec", "encoding"),
    [("utf-8", "utf-8"), ("utf-16", "utf-16"), ("utf-16-le", "utf-16-le")],
    ids=["utf-8", "utf-16-bom", "utf-16-le-no-bom"],
)
def test_tab_separated_files(tmp_path: Path, codec: str, encoding: str) -> None:
    source = tmp_path / "export.txt"
    rows = [
        (key, text, "app")
        for key, text in [*REVIEWS, ("r-105", "导出周报太慢了，每次都要等三分钟。")]
    ]
    source.write_bytes(table_text(["feedback_id", "text", "channel"], rows, "\t").encode(codec))
    workspace = tmp_path / "ws"
    result, payload = run(source, workspace)
    assert_completed_and_valid(result, payload, workspace)
    recorded = run_record(workspace)["input_format"]
    assert (recorded["format"], recorded["encoding"], recorded["delimiter"]) == (
        "csv",
        encoding,
        "\t",
    )
    assert index_items(workspace)["r-105"]["text"] == "导出周报太慢了，每次都要等三分钟。"


# -- Excel workbooks -------------------------------------------------------------------------

SHEET: list[list[object]] = [
    ["review_id", "review_body", "rating", "score", "created_at", "verified"],
    ["r-101", REVIEWS[0][1], 2, 2.5, datetime(2024, 3, 5), True],
    ["r-102", REVIEWS[1][1], 1, 1.0, datetime(2024, 3, 6, 14, 30), False],
    [],
    ["r-103", REVIEWS[2][1], 5, None, None, None],
]


@pytest.fixture
def workbook(tmp_path: Path) -> Path:
    path = tmp_path / "reviews.xlsx"
    path.write_bytes(
        workbook_bytes(
            {"Reviews": SHEET, "Notes": [["text"], [REVIEWS[3][1]], ["Support was quick."]]}
        )
    )
    return path


def test_a_workbook_first_sheet_with_numbers_and_dates(tmp_path: Path, workbook: Path) -> None:
    workspace = tmp_path / "ws"
    result, payload = run(
        workbook, workspace, "--id-column", "review_id", "--text-column", "review_body"
    )
    assert_completed_and_valid(result, payload, workspace)
    header = index_header(workspace)
    assert (header["format"], header["sheet"], header["encoding"], header["delimiter"]) == (
        "xlsx",
        "Reviews",
        None,
        None,
    )
    items = index_items(workspace)
    assert list(items) == ["r-101", "r-102", "r-103"]
    # The documented cell-to-text rule, applied by hand.
    assert items["r-102"]["row_hash"] == canonical_hash(
        {
            "review_id": "r-102",
            "review_body": REVIEWS[1][1],
            "rating": "1",
            "score": "1",
            "created_at": "2024-03-06T14:30:00",
            "verified": "FALSE",
        }
    )
    assert items["r-101"]["row_hash"] == canonical_hash(
        {
            "review_id": "r-101",
            "review_body": REVIEWS[0][1],
            "rating": "2",
            "score": "2.5",
            "created_at": "2024-03-05",
            "verified": "TRUE",
        }
    )
    from_source = invoke("validate", workspace, "--source", workbook, "--json")
    assert from_source.exit_code == 0, from_source.output


def test_a_workbook_sheet_by_name(tmp_path: Path, workbook: Path) -> None:
    workspace = tmp_path / "ws"
    result, payload = run(workbook, workspace, "--sheet", "Notes")
    assert_completed_and_valid(result, payload, workspace)
    assert index_header(workspace)["sheet"] == "Notes"
    assert sorted(analysed_ids(workspace)) == ["row-1", "row-2"]
    assert payload["warnings"][0].startswith("reviews.xlsx, sheet 'Notes' has no 'feedback_id'")
    from_source = invoke("validate", workspace, "--source", workbook, "--json")
    assert from_source.exit_code == 0, from_source.output


def test_a_sheet_that_is_not_there_names_the_sheets(tmp_path: Path, workbook: Path) -> None:
    result, payload = run(workbook, tmp_path / "ws", "--sheet", "notes")
    assert_failed_at_input(
        result,
        payload,
        "reviews.xlsx: no sheet named 'notes' (sheets: Reviews, Notes; closest: 'Notes')",
    )


def test_a_bad_id_in_a_workbook_names_the_cell(tmp_path: Path) -> None:
    path = tmp_path / "reviews.xlsx"
    path.write_bytes(workbook_bytes({"S": [["feedback_id", "text"], ["a", "x"], ["a", "y"]]}))
    result, payload = run(path, tmp_path / "ws")
    assert_failed_at_input(
        result,
        payload,
        "reviews.xlsx, sheet 'S', row 2 (cell A3): duplicate feedback_id 'a' "
        "(first at row 1, cell A2)",
    )


def test_a_sheet_option_for_a_csv_file_is_an_input_error(tmp_path: Path) -> None:
    source = tmp_path / "reviews.csv"
    source.write_text(reviews_csv(), encoding="utf-8")
    result, payload = run(source, tmp_path / "ws", "--sheet", "Reviews")
    assert_failed_at_input(
        result,
        payload,
        "reviews.csv: a sheet was named ('Reviews'), but this is a CSV text file, not an Excel "
        "workbook",
    )


def test_validate_source_reads_as_the_run_did_unless_told_otherwise(
    tmp_path: Path, workbook: Path
) -> None:
    workspace = tmp_path / "ws"
    result, payload = run(workbook, workspace, "--sheet", "Notes")
    assert result.exit_code == 0, payload["error_message"]
    rebuilt_path = workspace / "runtime" / "evidence_index.source.json"
    # A CSV export of the same sheet: the recorded sheet does not apply (no usage error), the
    # id rule does. (The run's index is of the workbook, so judged against this file it is
    # `evidence_index_tampered`: exit 1.)
    export = tmp_path / "notes.csv"
    export.write_text(table_text(["text"], [(REVIEWS[3][1],), ("Support was quick.",)]))
    judged = invoke("validate", workspace, "--source", export, "--json")
    assert judged.exit_code == 1, judged.output
    codes = {finding["code"] for finding in json.loads(judged.stdout)["findings"]}
    assert codes == {"evidence_index_tampered"}
    rebuilt = json.loads(rebuilt_path.read_text(encoding="utf-8"))
    assert (rebuilt["format"], rebuilt["sheet"], rebuilt["id_rule"]) == ("csv", None, "row-number")
    assert list(rebuilt["items"]) == ["row-1", "row-2"]
    # The options override the record.
    other = invoke(
        "validate", workspace, "--source", workbook, "--sheet", "Reviews",
        "--id-column", "review_id", "--text-column", "review_body", "--json",
    )  # fmt: skip
    assert other.exit_code == 0, other.output
    rebuilt = json.loads(rebuilt_path.read_text(encoding="utf-8"))
    assert (rebuilt["sheet"], rebuilt["id_column"], rebuilt["id_rule"]) == (
        "Reviews",
        "review_id",
        "column",
    )
    alone = invoke("validate", workspace, "--sheet", "Notes")
    assert alone.exit_code == 2
    assert "--sheet says how to read the --source file: give --source too" in alone.stderr


# -- a cover sheet first -----------------------------------------------------------------------

COVER = [["Quarterly feedback export"], [], ["Prepared by the support team"]]


def test_a_cover_sheet_first_points_at_the_sheet_with_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "export.xlsx"
    table = [["feedback_id", "text"], *([key, text] for key, text in REVIEWS)]
    path.write_bytes(workbook_bytes({"Cover": COVER, "Responses": table, "Notes": [["note"]]}))
    result, payload = run(path, tmp_path / "ws")
    assert_failed_at_input(
        result,
        payload,
        "export.xlsx, sheet 'Cover', the first sheet, has no column 'text' (found: Quarterly "
        "feedback export); the workbook's sheets: 'Cover', 'Responses', 'Notes'; sheet "
        "'Responses' has the column 'text': read it with --sheet Responses",
    )
    assert "--text-column" not in payload["error_message"]
    result, payload = run(path, tmp_path / "ws2", "--sheet", "Responses")
    assert_completed_and_valid(result, payload, tmp_path / "ws2")


def test_a_cover_sheet_and_no_sheet_with_the_columns_lists_every_header(tmp_path: Path) -> None:
    path = tmp_path / "My export.xlsx"
    table = [["review_id", "review_body"], *([key, text] for key, text in REVIEWS)]
    path.write_bytes(workbook_bytes({"Cover": COVER, "Survey 2": table}))
    result, payload = run(path, tmp_path / "ws", "--id-column", "review_id")
    assert_failed_at_input(
        result,
        payload,
        "My export.xlsx, sheet 'Cover', the first sheet, has no column 'review_id' (found: "
        "Quarterly feedback export); the workbook's sheets: 'Cover', 'Survey 2'; no other "
        "sheet has the columns 'review_id', 'text' in its header ('Survey 2': review_id, "
        "review_body): name the sheet to read with --sheet, and its columns with --id-column "
        "and --text-column",
    )


def test_one_sheet_without_the_column_still_advises_the_column_option(tmp_path: Path) -> None:
    path = tmp_path / "only.xlsx"
    path.write_bytes(workbook_bytes({"Cover": COVER}))
    result, payload = run(path, tmp_path / "ws")
    assert_failed_at_input(
        result,
        payload,
        "only.xlsx, sheet 'Cover': missing column 'text' (found: Quarterly feedback export); "
        "name the column to use with --text-column",
    )
