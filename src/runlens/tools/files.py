"""The workspace file tools every plugin gets: `write_file`, `read_file`, `list_files`."""

from __future__ import annotations

from runlens.atomic import write_atomic
from runlens.errors import ToolError
from runlens.tools.base import Tool, ToolContext

#: A model reading a huge file gets a prefix and a note rather than the whole file.
MAX_READ_CHARS = 200_000
MAX_LISTED = 500


def write_file(context: ToolContext, path: str, content: str) -> dict[str, object]:
    target = context.workspace.resolve_write(path)
    if target.is_dir():
        raise ToolError(f"write refused: {path!r} is a directory")
    data = content.encode("utf-8")
    write_atomic(target, data)
    return {"path": context.workspace.relative(target), "bytes": len(data)}


def read_file(context: ToolContext, path: str) -> str:
    target = context.workspace.resolve_read(path)
    if not target.is_file():
        raise ToolError(f"no such file: {path!r}")
    try:
        text = target.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ToolError(f"{path!r} is not UTF-8 text (byte offset {error.start})") from None
    if len(text) > MAX_READ_CHARS:
        return text[:MAX_READ_CHARS] + f"\n[truncated: {len(text)} characters in all]"
    return text


def list_files(context: ToolContext, path: str = ".") -> dict[str, object]:
    folder = context.workspace.resolve_read(path)
    if not folder.is_dir():
        raise ToolError(f"no such directory: {path!r}")
    entries = []
    for child in sorted(folder.rglob("*")):
        if child.is_file() and not child.name.startswith("."):
            entries.append(
                {"path": context.workspace.relative(child), "bytes": child.stat().st_size}
            )
            if len(entries) >= MAX_LISTED:
                break
    return {"files": entries, "truncated": len(entries) >= MAX_LISTED}


def _path_property(description: str) -> dict[str, object]:
    return {"type": "string", "description": description, "minLength": 1}


FILE_TOOLS = (
    Tool(
        name="write_file",
        description=(
            "Write a UTF-8 text file inside the workspace. Only paths under artifacts/ are "
            "writable, e.g. artifacts/product_backlog.json. Overwrites an existing file."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": _path_property("Workspace-relative path under artifacts/"),
                "content": {"type": "string", "description": "The whole file content"},
            },
            "required": ["path", "content"],
            "additionalProperties": False,
        },
        function=write_file,
    ),
    Tool(
        name="read_file",
        description="Read a UTF-8 text file anywhere inside the workspace.",
        parameters={
            "type": "object",
            "properties": {"path": _path_property("Workspace-relative path")},
            "required": ["path"],
            "additionalProperties": False,
        },
        function=read_file,
    ),
    Tool(
        name="list_files",
        description="List the files under a workspace folder (default: the whole workspace).",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string", "default": "."}},
            "additionalProperties": False,
        },
        function=list_files,
    ),
)
