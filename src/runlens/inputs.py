"""Input tools: the tool a plugin's model reads the run's input with, declared once.

    INPUT = TableInput(tool_name="read_tickets", id_column="ticket_id", text_column="body")
    Plugin(..., input=INPUT)

`TableInput` is a tabular input: a CSV or TSV file, or a sheet of an .xlsx workbook, told
apart by content (`runlens.evidence`). Its tool pages through the rows; its first call (or the
first `load`) opens the file, checks it and builds the Evidence Index every citation is
checked against. The plugin names the id and text columns; the user may name others
(`--id-column`, `--text-column`), a sheet (`--sheet`) and the encoding (`--encoding`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runlens.errors import InputError, ToolError, UserError
from runlens.evidence import EvidenceIndex, MissingColumnError, SourceTable, check_encoding_name
from runlens.tools.base import Tool, ToolContext

#: Where the loaded input is kept in `ToolContext.state`: one input per run.
_LOADED = "runlens.inputs.table"

_DESCRIPTION = (
    "Read the run's input (a CSV or TSV file, or a workbook sheet) one page at a time. The "
    "first call checks the columns and builds the Evidence Index that every citation is "
    "checked against. Returns {source, total_rows, columns, rows, next_offset}; next_offset "
    "is null after the last page."
)


@dataclass(frozen=True, slots=True)
class TableInput:
    """A plugin's tabular input: the tool that reads it, and its id and text columns.

    `id_column` and `text_column` are the columns a row is identified and quoted by, unless
    the user names others. `description` replaces the tool's standard description;
    `max_page` is the most rows one call returns.
    """

    tool_name: str
    id_column: str
    text_column: str
    description: str | None = None
    max_page: int = 200
    default_page: int = 100

    def tool(self) -> Tool:
        """The paging tool: `(offset=0, limit=default_page)` -> `{source, total_rows,
        columns, rows, next_offset}`. Needs no run context to be built."""
        return Tool(
            name=self.tool_name,
            description=self.description or _DESCRIPTION,
            parameters={
                "type": "object",
                "properties": {
                    "offset": {"type": "integer", "minimum": 0, "default": 0},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": self.max_page,
                        "default": min(self.default_page, self.max_page),
                    },
                },
                "additionalProperties": False,
            },
            function=self.read,
        )

    def read(self, context: ToolContext, offset: int = 0, limit: int | None = None) -> Any:
        """One page of rows (the tool's function)."""
        table, _ = self.load(context)
        if offset > table.total_rows:
            raise ToolError(f"offset {offset} is past the last row ({table.total_rows} rows)")
        wanted = self.default_page if limit is None else limit
        return table.page(offset, min(wanted, self.max_page))

    def load(self, context: ToolContext) -> tuple[SourceTable, EvidenceIndex]:
        """Open the input once per run: check its columns, build and record the Evidence Index.

        The input is `context.input_path`: a CSV file or a sheet of an .xlsx workbook
        (`context.input_sheet`, else the first). Its encoding and delimiter are detected (or
        the encoding is the one the user named, `context.input_encoding`). The columns are
        `context.input_id_column` / `context.input_text_column`, else the declared ones. A
        named column must exist; when the user names no id column and the file has no
        `id_column`, the rows get ids from their row numbers (`row-<n>`, the n-th data row)
        and the run gets a warning. The index records all of that (`index.input_format`), so
        a rebuild reads the file the same way; it is written to the workspace's
        `evidence_index` and reported through `context.on_evidence_index`. An unusable input
        raises `InputError`, which ends the run `failed` at the input step.
        """
        loaded: tuple[SourceTable, EvidenceIndex] | None = context.state.get(_LOADED)
        if loaded is None:
            table = self._open(context)
            index = table.evidence_index(
                table.derived_id_column or self._id_column(context), self._text_column(context)
            )
            path = context.workspace.evidence_index
            index.write(path)
            if context.on_evidence_index is not None:
                context.on_evidence_index(path, index)
            loaded = context.state[_LOADED] = (table, index)
        return loaded

    def _id_column(self, context: ToolContext) -> str:
        return context.input_id_column or self.id_column

    def _text_column(self, context: ToolContext) -> str:
        return context.input_text_column or self.text_column

    def _open(self, context: ToolContext) -> SourceTable:
        source = context.input_path.name
        if context.input_encoding is not None:
            try:
                check_encoding_name(context.input_encoding)
            except UserError as error:
                raise InputError(f"{source}: {error}", file=source) from None
        id_column, text_column = self._id_column(context), self._text_column(context)
        named_id = context.input_id_column is not None
        try:
            table = SourceTable.open(
                context.input_path,
                required_columns=(id_column, text_column) if named_id else (text_column,),
                encoding=context.input_encoding,
                sheet=context.input_sheet,
            )
        except MissingColumnError as error:
            raise self._with_option(error, context) from None
        if named_id or id_column in table.columns:
            return table
        if context.warn is not None:
            context.warn(
                f"{table.label} has no {id_column!r} column: rows are identified by their row "
                "number (row-1 is the first data row; blank rows are not counted). Name the id "
                "column with --id-column if the file has one."
            )
        return table.with_row_number_ids(id_column)

    def _with_option(self, error: MissingColumnError, context: ToolContext) -> MissingColumnError:
        """The error, saying which option names the missing column (or named it)."""
        options = {
            self._id_column(context): ("--id-column", context.input_id_column is not None),
            self._text_column(context): ("--text-column", context.input_text_column is not None),
        }
        option, named = options.get(error.field or "", ("", False))
        if not option:
            return error
        hint = f"named with {option}" if named else f"name the column to use with {option}"
        return MissingColumnError(
            f"{error}; {hint}",
            file=error.file or "",
            field=error.field or "",
            columns=error.columns,
        )
