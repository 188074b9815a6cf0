"""TableInput: the tabular input tool any plugin declares once (CSV, TSV, XLSX)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook

from runlens import EvidenceIndex, InputError, Plugin, TableInput, Tool, ToolContext, ToolError
from runlens.tools.workspace import Workspace

TICKETS = TableInput(tool_name="read_tickets", id_column="ticket_id", text_column="body")


class Run:
    """A tool context over one input file, recording what the input tool reports."""

    def __init__(self, tmp_path: Path, source: Path, **options: str) -> None:
        self.workspace = Workspace(tmp_path / "ws")
        self.workspace.create()
        self.indexed: list[Path] = []
        self.warnings: list[str] = []
        self.context = ToolContext(
            run_id="r",
            workspace=self.workspace,
            input_path=source,
            on_evidence_index=lambda path, _index: self.indexed.append(path),
            warn=self.warnings.append,
            **options,  # type: ignore[arg-type]
        )


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_csv_is_paged_indexed_and_reported_once(tmp_path: Path) -> None:
    source = write(
        tmp_path / "tickets.csv",
        "ticket_id,body,queue\nt1,Printer is on fire,hw\nt2,VPN drops every hour,net\n"
        "t3,Password reset loops,it\n",
    )
    run = Run(tmp_path, source)
    page = TICKETS.read(run.context, offset=0, limit=2)
    assert page["total_rows"] == 3
    assert page["columns"] == ["ticket_id", "body", "queue"]
    assert [row["ticket_id"] for row in page["rows"]] == ["t1", "t2"]
    assert page["next_offset"] == 2
    assert TICKETS.read(run.context, offset=2)["next_offset"] is None
    # The index is built once, written where the workspace keeps it, and reported once.
    assert run.indexed == [run.workspace.evidence_index]
    index = EvidenceIndex.load(run.workspace.evidence_index)
    assert index.text("t2") == "VPN drops every hour"
    assert (index.id_column, index.text_column) == ("ticket_id", "body")
    table, loaded = TICKETS.load(run.context)
    assert loaded.text("t3") == "Password reset loops" and table.total_rows == 3
    assert run.indexed == [run.workspace.evidence_index] and run.warnings == []


def test_a_tsv_and_a_workbook_sheet_are_read_the_same_way(tmp_path: Path) -> None:
    tsv = write(tmp_path / "tickets.tsv", "ticket_id\tbody\nt1\tDisk, almost full\n")
    (tsv_run := Run(tmp_path / "a", tsv)).workspace.create()
    assert TICKETS.read(tsv_run.context)["rows"] == [
        {"ticket_id": "t1", "body": "Disk, almost full"}
    ]

    book = Workbook()
    notes = book.worksheets[0]
    notes.title = "Notes"
    notes.append(["nothing here"])
    sheet = book.create_sheet("Tickets")
    sheet.append(["ticket_id", "body"])
    sheet.append(["t9", "Screen flickers"])
    book.save(tmp_path / "tickets.xlsx")
    run = Run(tmp_path / "b", tmp_path / "tickets.xlsx", input_sheet="Tickets")
    assert TICKETS.read(run.context)["rows"] == [{"ticket_id": "t9", "body": "Screen flickers"}]
    assert EvidenceIndex.load(run.workspace.evidence_index).text("t9") == "Screen flickers"


def test_a_missing_column_names_the_option_that_names_it(tmp_path: Path) -> None:
    source = write(tmp_path / "tickets.csv", "ticket_id,message\nt1,Printer jammed\n")
    with pytest.raises(InputError, match=r"name the column to use with --text-column"):
        TICKETS.load(Run(tmp_path / "a", source).context)
    named = Run(tmp_path / "b", source, input_id_column="number")
    with pytest.raises(InputError, match=r"'number'.*named with --id-column"):
        TICKETS.load(named.context)
    # The user's columns replace the declared ones.
    chosen = Run(tmp_path / "c", source, input_text_column="message")
    _, index = TICKETS.load(chosen.context)
    assert index.text("t1") == "Printer jammed" and index.text_column == "message"


def test_without_an_id_column_rows_are_numbered_with_a_warning(tmp_path: Path) -> None:
    source = write(tmp_path / "notes.csv", "body\nFirst complaint\n\nSecond complaint\n")
    run = Run(tmp_path, source)
    page = TICKETS.read(run.context)
    assert [row["ticket_id"] for row in page["rows"]] == ["row-1", "row-2"]
    [warning] = run.warnings
    assert "no 'ticket_id' column" in warning and "--id-column" in warning
    index = EvidenceIndex.load(run.workspace.evidence_index)
    assert index.text("row-2") == "Second complaint"
    assert index.input_format["id_rule"] == "row-number"


def test_the_tool_pages_within_its_limits(tmp_path: Path) -> None:
    small = TableInput(tool_name="read_rows", id_column="id", text_column="text", max_page=2)
    tool = small.tool()
    assert tool.name == "read_rows"
    assert tool.parameters["properties"]["limit"]["maximum"] == 2
    assert "Evidence Index" in tool.description
    source = write(tmp_path / "rows.csv", "id,text\na,one\nb,two\nc,three\n")
    run = Run(tmp_path, source)
    assert tool.function == small.read
    assert len(small.read(run.context, offset=0, limit=50)["rows"]) == 2
    with pytest.raises(ToolError, match="past the last row"):
        small.read(run.context, offset=4)
    described = TableInput("read_rows", "id", "text", description="Read the orders.")
    assert described.tool().description == "Read the orders."


def test_an_unknown_encoding_is_an_input_error(tmp_path: Path) -> None:
    source = write(tmp_path / "rows.csv", "ticket_id,body\nt1,x\n")
    with pytest.raises(InputError, match=r"rows\.csv: .*no-such-codec"):
        TICKETS.load(Run(tmp_path, source, input_encoding="no-such-codec").context)


def test_a_plugin_declares_its_input_once(tmp_path: Path) -> None:
    def own(context: ToolContext) -> tuple[Tool, ...]:
        return (Tool("count_tickets", "Count them.", {"type": "object"}, lambda context: 3),)

    def plugin(**tools: Any) -> Plugin:
        return Plugin(
            name="tickets",
            description="Ticket triage",
            skill="",
            prompt_fragments=(),
            contracts=(),
            plan=(),
            input=TICKETS,
            **tools,
        )

    source = write(tmp_path / "t.csv", "ticket_id,body\nt1,x\n")
    context = Run(tmp_path, source).context
    with_tools = plugin(tools=own)
    assert [tool.name for tool in with_tools.build_tools(context)] == [
        "read_tickets",
        "count_tickets",
    ]
    assert [tool.name for tool in plugin().build_tools(context)] == ["read_tickets"]
    assert (with_tools.input_tool, with_tools.id_column, with_tools.text_column) == (
        "read_tickets",
        "ticket_id",
        "body",
    )
