"""What the pages show, built from a run's rows and files: URLs, times and durations, findings
grouped by deliverable, deliverables rendered (JSON, Markdown, images, text), the reader's
selection, and a source row cut into marked quote spans.

Artifacts are read only through `runlens.ui.files` (contract-named files of the run, opened
inside its workspace without following links). Everything here returns data or HTML that
`markdown` and `json_view` escaped; the templates (`pages`) escape the rest.
"""

from __future__ import annotations

import functools
import json
import posixpath
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from markupsafe import Markup

from runlens.records.status import LIVE
from runlens.store.rows import (
    ArtifactRow,
    CitationRow,
    FindingRow,
    RunDetail,
    RunSummary,
    parse_time,
)
from runlens.ui.compare import artifact_kind, contract_id_fields
from runlens.ui.files import WorkspaceFileError, open_in_workspace
from runlens.ui.integrity import (
    ChangedArtifact,
    artifact_change,
    change_of,
    opened_sha256,
    sha256_of,
)
from runlens.ui.json_view import render_json_readable, render_json_tree
from runlens.ui.markdown import is_relative, render_markdown

#: The largest artifact a page renders (bigger ones are offered raw only).
RENDER_LIMIT = 8 * 1024 * 1024


# -- URLs and formatting (also the templates' globals and filters) ----------------------------


def run_url(run_id: str) -> str:
    return f"/runs/{quote(run_id, safe='')}"


def artifact_url(run_id: str, name: str) -> str:
    return f"{run_url(run_id)}/artifacts/{quote(name, safe='/')}"


def raw_url(run_id: str, name: str) -> str:
    return f"/api/runs/{quote(run_id, safe='')}/artifacts/{quote(name, safe='/')}"


def evidence_url(run_id: str, row_id: str) -> str:
    return f"{run_url(run_id)}/evidence/{quote(row_id, safe='')}"


def rows_url(run_id: str, **filters: str) -> str:
    """The run's analysed rows, with `filters` as query parameters (empty ones left out)."""
    kept = {name: value for name, value in filters.items() if value}
    return f"{run_url(run_id)}/rows" + (f"?{urlencode(kept)}" if kept else "")


def is_live(run: RunSummary) -> bool:
    return run.status in LIVE  # `queued` waits for a worker to take it


#: What the verdict banner says of a run in each status that has no error message. The
#: banner carries them all (`data-text-<status>`), so the page's script keeps the text in
#: step with the status as the run moves on.
VERDICT_TEXTS = {
    "queued": (
        "Queued: submitted to the workers, waiting for one of them to take it; "
        "this page follows it live."
    ),
    "created": "Created: the run's process is starting; this page follows it live.",
    "running": (
        "Running: the model is working on the input (reading it, writing the deliverables); "
        "this page follows it live."
    ),
    "validating": (
        "Validating: every deliverable is being checked against its contract and every "
        "quote against its source row; this page follows it live."
    ),
    "completed": (
        "Every deliverable passed its contract and every checked quote traces to its source row."
    ),
    "failed": "The run ended failed.",
    "cancelled": "The run was cancelled.",
    "interrupted": "The run was interrupted: its process stopped before it ended.",
    "damaged": "The run's records cannot be read.",
}


def verdict_text(run: RunSummary) -> str:
    """The banner's sentence: the error message when there is one, else the status's."""
    if run.error_message:
        return run.error_message
    return VERDICT_TEXTS.get(run.status, f"The run ended {run.status}.")


def model_label(spec: str) -> str:
    """A model spec short enough for a table cell: a file path given to a provider
    (`scripted:/tmp/.../turns.json`) shown by its file name (`scripted:turns.json`)."""
    provider, sep, rest = spec.partition(":")
    if sep and ("/" in rest or "\\" in rest):
        name = rest.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        return f"{provider}:{name or rest}"
    return spec


@functools.lru_cache(maxsize=32)
def declared_plan(plugin_name: str) -> tuple[dict[str, Any], ...]:
    """The plan the installed plugin declares, every step `pending`: what a run shows before
    its first record is written (its steps then update live). Empty when the plugin is not
    installed or does not load. Cached: installed plugins do not change while serving."""
    from runlens.plugins.loader import load_plugin

    try:
        plugin = load_plugin(plugin_name)
    except Exception:  # a plugin that does not load must not break the page
        return ()
    return tuple(
        {
            "id": step.step_id,
            "title": step.title,
            "status": "pending",
            "success_criteria": [c.describe() for c in step.success_criteria],
        }
        for step in plugin.plan
    )


def shown_plan(run: RunDetail) -> list[dict[str, Any]]:
    """The run's plan as the store has it, or, for a live run with none recorded yet, the
    plugin's declared plan (all steps pending)."""
    if run.plan:
        return run.plan
    if is_live(run):
        return [dict(step) for step in declared_plan(run.plugin)]
    return []


def format_time(value: str | None) -> str:
    """An ISO 8601 time as `2026-12-01 17:38:00 UTC`."""
    parsed = parse_time(value)
    if parsed is None:
        return value or ""
    return parsed.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def compact_json(value: Any, limit: int = 240) -> str:
    """A value as one line of JSON, cut at `limit` characters."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the run page ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArtifactFindings:
    """The findings of one artifact, for the run page (an artifact the run lists or not)."""

    name: str
    label: str
    listed: bool
    findings: tuple[FindingRow, ...]


#: The heading of the findings about the run as a whole (those naming no artifact).
RUN_FINDINGS_LABEL = "The run as a whole"


def group_findings(run: RunDetail) -> list[ArtifactFindings]:
    """The run's findings by artifact, in the run's artifact order; those about the run as a
    whole (`artifact` "") first, as they concern every deliverable, and those naming a file
    the run does not list last."""
    labels = {row.name: row.label or row.name for row in run.artifacts}
    labels_shown = {**labels, "": RUN_FINDINGS_LABEL}
    order = ["", *(row.name for row in run.artifacts)]
    order += [f.artifact for f in run.findings if f.artifact not in labels]
    groups: list[ArtifactFindings] = []
    for name in dict.fromkeys(order):
        found = tuple(f for f in run.findings if f.artifact == name)
        if found:
            label = labels_shown.get(name, name)
            groups.append(ArtifactFindings(name, label, name in labels, found))
    return groups


def finding_location(finding: FindingRow) -> str:
    """Where a finding points: its JSON path, or its Markdown line (and column)."""
    if finding.line is not None:
        column = f", column {finding.column}" if finding.column is not None else ""
        return f"line {finding.line}{column}"
    return finding.path


def summarize_event(event: dict[str, Any]) -> str:
    """One line of an event's data for the timeline."""
    data = event.get("data")
    if not isinstance(data, dict) or not data:
        return ""
    return compact_json(data, 200)


# -- artifacts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedArtifact:
    """An artifact's bytes, or why they cannot be shown."""

    data: bytes | None
    problem: str | None = None
    #: Set when the bytes are not the ones the run's validation judged.
    change: ChangedArtifact | None = None


def read_artifact(run: RunDetail, name: str, limit: int = RENDER_LIMIT) -> LoadedArtifact:
    """The file of one of the run's contract-named artifacts, opened inside its workspace."""
    row = next((row for row in run.artifacts if row.name == name), None)
    if row is None:
        return LoadedArtifact(None, f"{name!r} is not a deliverable of run {run.run_id}")
    try:
        opened = open_in_workspace(Path(run.workspace), name)
    except WorkspaceFileError as error:
        return LoadedArtifact(None, str(error), artifact_change(run, row))
    if opened.size > limit:
        try:
            change = change_of(row, opened_sha256(opened)) if run.is_terminal else None
        finally:
            opened.close()
        return LoadedArtifact(
            None, f"{name} is {opened.size} bytes: too large to show here", change
        )
    data = b"".join(opened.chunks())
    return LoadedArtifact(data, change=change_of(row, sha256_of(data)) if run.is_terminal else None)


def artifact_bytes(run: RunDetail, name: str) -> bytes | None:
    return read_artifact(run, name).data


@dataclass(frozen=True)
class RenderedArtifact:
    """An artifact ready for a page: rendered HTML, an image, or a problem to show."""

    row: ArtifactRow
    kind: str
    html: Markup | None = None
    problem: str | None = None
    #: Set when the file on disk is not the one the run's validation judged.
    change: ChangedArtifact | None = None


def view_kind(name: str) -> str:
    """`json`, `markdown`, `image` (SVG, shown in an `<img>`) or `text`."""
    kind = artifact_kind(name)
    if kind != "other":
        return kind
    return "image" if name.lower().endswith(".svg") else "text"


def render_artifact(
    run: RunDetail,
    row: ArtifactRow,
    citations: Sequence[CitationRow],
    *,
    readable: bool = False,
    stale: Mapping[str, str] | None = None,
) -> RenderedArtifact:
    """One artifact as HTML: JSON as a tree (or, `readable`, tables), Markdown rendered with
    its citations linked, SVG as an image (scripts never run in an `<img>`), text verbatim."""
    kind = view_kind(row.name)
    loaded = read_artifact(run, row.name)
    change = loaded.change
    if loaded.data is None:
        return RenderedArtifact(row, kind, problem=loaded.problem, change=change)
    if kind == "image":  # the page shows the raw file in an <img>; the bytes proved it exists
        return RenderedArtifact(row, kind, change=change)
    try:
        text = loaded.data.decode("utf-8-sig")
    except UnicodeDecodeError:
        not_text = f"{row.name} is not UTF-8 text; open the raw file"
        return RenderedArtifact(row, kind, problem=not_text, change=change)
    html, problem = render_text(
        run,
        row.name,
        kind,
        text,
        citations,
        evidence_href=lambda row_id: evidence_url(run.run_id, row_id),
        link_href=lambda href: beside(run, row.name, href),
        image_href=lambda href: shown_image(run, row.name, href),
        readable=readable,
        stale=stale,
    )
    return RenderedArtifact(row, kind, html=html, problem=problem, change=change)


def render_text(
    run: RunDetail,
    name: str,
    kind: str,
    text: str,
    citations: Sequence[CitationRow],
    *,
    evidence_href: Callable[[str], str],
    link_href: Callable[[str], str],
    image_href: Callable[[str], str | None],
    readable: bool = False,
    stale: Mapping[str, str] | None = None,
) -> tuple[Markup | None, str | None]:
    """The deliverable `name` of `run` (its `text`, of `view_kind` `kind`) as HTML, with its
    findings placed and its citations linked by `evidence_href` (row id -> address); or why
    it cannot be shown. The pages and the exported file differ only in where links lead."""
    findings = [f for f in run.findings if f.artifact == name]
    if kind == "markdown":
        html = render_markdown(
            text,
            citations=citations,
            findings=findings,
            evidence_href=evidence_href,
            link_href=link_href,
            image_href=image_href,
            stale=stale,
        )
        return html, None
    if kind == "json":
        try:
            document = json.loads(text)
        except ValueError as error:
            return None, f"{name} is not valid JSON ({error})"
        render = render_json_readable if readable else render_json_tree
        html = render(
            document,
            findings=findings,
            citations=citations,
            evidence_href=evidence_href,
            id_paths=contract_id_fields(run.plugin).get(name, ()),
            stale=stale,
        )
        return html, None
    return Markup('<pre class="text-artifact">{}</pre>').format(text), None


def beside(run: RunDetail, name: str, href: str) -> str:
    """A relative link in an artifact, pointed at the artifact view of the file it names."""
    path, _, fragment = href.partition("#")
    target = posixpath.normpath(posixpath.join(posixpath.dirname(name), path.split("?")[0]))
    if target.startswith(("..", "/")) or target == ".":
        return "#"
    suffix = f"#{fragment}" if fragment else ""
    return artifact_url(run.run_id, target) + suffix


def shown_image(run: RunDetail, name: str, href: str) -> str | None:
    """Where the page loads an image a document beside it links (`insight_chart.svg`): the
    raw file of the run's validated image deliverable of that name, served with a sandbox
    policy and `nosniff` (an `<img>` runs no script anyway); None for anything else."""
    if not is_relative(href):
        return None
    target = posixpath.normpath(
        posixpath.join(posixpath.dirname(name), href.split("#")[0].split("?")[0])
    )
    listed = next((row for row in run.artifacts if row.name == target), None)
    if listed is None or listed.status != "validated" or view_kind(target) != "image":
        return None
    return raw_url(run.run_id, target)


def reader_artifacts(run: RunDetail) -> list[ArtifactRow]:
    """The deliverables a reader sees: meant for the user, not confidential, and present;
    Markdown first."""
    rows = [
        row
        for row in run.artifacts
        if row.audience == "user" and row.sensitivity != "confidential" and row.status != "missing"
    ]
    # Markdown first: the report is what a reader came for; figures and data follow it.
    return sorted(rows, key=lambda row: {"markdown": 0, "json": 2}.get(view_kind(row.name), 1))


# -- evidence ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    text: str
    marked: bool
    citations: int = 0


def marked_segments(text: str, spans: Iterable[tuple[int, int]]) -> list[Segment]:
    """The row's NFC text cut into plain and marked segments, overlapping or touching spans
    merged; a marked segment counts the quotes it covers. Spans outside the text are clipped."""
    normalized = unicodedata.normalize("NFC", text)
    clipped = sorted(
        (max(start, 0), min(end, len(normalized)))
        for start, end in spans
        if min(end, len(normalized)) > max(start, 0)
    )
    merged: list[list[int]] = []
    for start, end in clipped:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            merged[-1][2] += 1
        else:
            merged.append([start, end, 1])
    segments: list[Segment] = []
    position = 0
    for start, end, count in merged:
        if start > position:
            segments.append(Segment(normalized[position:start], False))
        segments.append(Segment(normalized[start:end], True, count))
        position = end
    if position < len(normalized) or not segments:
        segments.append(Segment(normalized[position:], False))
    return segments


def citation_href(run: RunDetail, citation: CitationRow) -> str:
    """Where a citation sits: the artifact view, at the citation's link."""
    return f"{artifact_url(run.run_id, citation.artifact)}#cite-{citation.ordinal}"
