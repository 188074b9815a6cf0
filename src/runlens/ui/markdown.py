"""A Markdown deliverable as safe HTML, with its citations linked and its findings beside it.

The document is untrusted (a model wrote it). markdown-it parses it as CommonMark with GFM
tables and strikethrough, the dialect the validators read (`runlens.validation.rendered`),
with raw HTML off, so `<script>` and `<img onerror>` come out as text. Links keep only the
schemes a reader may follow (`safe_href`); an image is loaded only when `image_href` gives its
address (a validated image deliverable of the run, served inert from the same origin), else
it shows as its alt text and its address, as text.

Citations come from the run store (`CitationRow`, location `line N`): the quotation each one
names and the id after it become links to the row's evidence page, styled `verified` or
`failed`, a failed one with its reason in `title` and in a visible note (`runlens.ui.citing`:
the characters at the spans the validator recorded, or for a run recorded before spans
were, where a search finds them). Findings with a line are shown after the block that holds
that line (markdown-it maps blocks to lines); findings without one head the document.

Parsing is most of what showing a report costs, and a report is shown again and again: the
parse of a document (up to `_KEPT_PARSE_CHARS`) is kept, for the last `_KEPT_PARSES`
documents, as markdown-it's tokens, which nothing here changes afterwards (a block whose
citations are linked is a copy with new children).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape

from runlens.store.rows import CitationRow, FindingRow
from runlens.ui.citing import Cited, Linker, link_text
from runlens.validation.rendered import InlineOffsets

#: Schemes a link in a deliverable may use; anything else is shown as text.
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
#: Characters browsers drop from a URL before reading its scheme (`java\tscript:`).
_IGNORED_IN_URL = re.compile(r"[\x00-\x20\x7f]+")
#: The blocks a finding is shown after: those that hold text and map to lines.
_LEAF_OPENERS = frozenset({"paragraph_open", "heading_open", "table_open"})
_LEAF_SINGLES = frozenset({"fence", "code_block", "html_block", "hr"})
#: A token type the parser never makes: pre-rendered, already escaped HTML of this module.
_HTML = "runlens_html"
#: How many documents' parses are kept, and up to which size (in characters) one is.
_KEPT_PARSES = 16
_KEPT_PARSE_CHARS = 1 << 20


def safe_href(url: str) -> bool:
    """Whether a link may point at `url`: http, https, mailto, a relative path or a `#` anchor.

    The scheme is read the way a browser reads it, after dropping the whitespace and control
    characters it ignores, case-insensitively; a colon before any `/`, `?` or `#` starts a
    scheme, so `javascript:`, `JAVASCRIPT:`, `java%0Ascript:`, `data:` and `vbscript:` fail.
    """
    cleaned = _IGNORED_IN_URL.sub("", url)
    for index, char in enumerate(cleaned):
        if char in "/?#":
            return True
        if char == ":":
            return cleaned[:index].lower() in SAFE_SCHEMES
    return True


def is_relative(url: str) -> bool:
    """A link to a file beside the document (`chart.svg`, `../x.md`), not `/x`, `#x` or `x:`."""
    cleaned = _IGNORED_IN_URL.sub("", url)
    if not cleaned or cleaned[0] in "/#?" or cleaned.startswith("//"):
        return False
    head = re.split(r"[/?#]", cleaned, maxsplit=1)[0]
    return ":" not in head


@dataclass
class _Env:
    """What the render rules need: the links to make and where the findings go."""

    linker: Linker
    link_href: Callable[[str], str] | None
    #: The address to load an image from, None when it must not be loaded.
    image_href: Callable[[str], str | None] | None = None


def render_markdown(
    text: str,
    *,
    citations: Sequence[CitationRow] = (),
    findings: Sequence[FindingRow] = (),
    evidence_href: Callable[[str], str],
    link_href: Callable[[str], str] | None = None,
    image_href: Callable[[str], str | None] | None = None,
    stale: Mapping[str, str] | None = None,
) -> Markup:
    """`text` as HTML: every citation a link to `evidence_href(row_id)`, findings beside the
    block of their line. `link_href` rewrites relative links (to point at the artifact view of
    a file beside the document); other links are kept when `safe_href` allows them.
    `image_href` says where an image may be loaded from (None: shown as text). `stale` (row
    id -> change) marks the citations of rows a newer input changed."""
    parser = _parser()
    parsed = _parsed(text) if len(text) <= _KEPT_PARSE_CHARS else tuple(parser.parse(text))
    cited = _citations_by_line(citations)
    placed = _place_findings(parsed, findings)
    lines = frozenset(f.line for f in findings if f.line)
    env = _Env(Linker(evidence_href, lines, dict(stale or {})), link_href, image_href)
    tokens = list(_annotate(parsed, cited, placed, env, InlineOffsets(text)))
    header = findings_note([f for f in findings if f.line is None])
    body = parser.renderer.render(tokens, parser.options, {"runlens": env})
    return Markup(header + body)


@functools.lru_cache(maxsize=_KEPT_PARSES)
def _parsed(text: str) -> tuple[Token, ...]:
    """`text`'s tokens, kept: the callers read them and never change them."""
    return tuple(_parser().parse(text))


@functools.cache
def _parser() -> MarkdownIt:
    """The process's parser and renderer (neither keeps anything of a document between
    calls: the renderer is handed its state in `env`)."""
    parser = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    parser.validateLink = safe_href  # type: ignore[method-assign]
    renderer = parser.renderer
    assert isinstance(renderer, RendererHTML)
    parser.add_render_rule(_HTML, _render_html)
    parser.add_render_rule("link_open", _render_link_open)
    parser.add_render_rule("image", _render_image)
    parser.add_render_rule("th_open", _render_cell_open)
    parser.add_render_rule("td_open", _render_cell_open)
    return parser


def _render_html(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return tokens[idx].content


def _render_link_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    href = str(token.attrs.get("href", ""))
    state: _Env = env["runlens"]
    if not safe_href(href):  # the parser refuses these already; never emit one regardless
        href = "#"
    elif state.link_href is not None and is_relative(href):
        href = state.link_href(href)
    attributes = [("href", href)]
    if "title" in token.attrs:
        attributes.append(("title", str(token.attrs["title"])))
    if not href.startswith(("/", "#")) and not is_relative(href):
        attributes.append(("rel", "nofollow noopener noreferrer"))
    joined = "".join(f' {name}="{escape(value)}"' for name, value in attributes)
    return f"<a{joined}>"


def _render_cell_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A table cell, its column's alignment as a class: the pages' policy forbids inline
    styles, which is how markdown-it writes it."""
    token = tokens[idx]
    style = str(token.attrs.get("style", ""))
    align = style.removeprefix("text-align:")
    if align in {"left", "center", "right"}:
        return f'<{token.tag} class="align-{align}">'
    return f"<{token.tag}>"


def _render_image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    source = str(token.attrs.get("src", ""))
    state: _Env = env["runlens"]
    loaded = state.image_href(source) if state.image_href is not None else None
    if loaded is not None:
        return str(
            Markup('<img class="md-figure" src="{}" alt="{}" loading="lazy">').format(loaded, alt)
        )
    return str(
        Markup(
            '<span class="md-image" title="image not loaded">[{}: {}] <code>{}</code></span>'
        ).format("image", alt or "no description", source)
    )


def _citations_by_line(citations: Sequence[CitationRow]) -> dict[int, list[CitationRow]]:
    by_line: dict[int, list[CitationRow]] = {}
    for citation in citations:
        line = citation.line if citation.line is not None else _line_of(citation.location)
        if line is not None:
            by_line.setdefault(line, []).append(citation)
    return by_line


def _line_of(location: str) -> int | None:
    match = re.fullmatch(r"line (\d+)", location.strip())
    return int(match.group(1)) if match else None


def _leaves(tokens: Sequence[Token]) -> Iterator[tuple[int, int, int, int]]:
    """(opener index, closer index, first line, last line) of each leaf block; 1-based lines."""
    for index, token in enumerate(tokens):
        if token.map is None:
            continue
        first, end = token.map[0] + 1, token.map[1]
        if token.type in _LEAF_SINGLES:
            yield index, index, first, end
        elif token.type in _LEAF_OPENERS:
            closer = _closer(tokens, index)
            yield index, closer, first, end


def _closer(tokens: Sequence[Token], opener: int) -> int:
    depth = 0
    for index in range(opener, len(tokens)):
        depth += tokens[index].nesting
        if depth == 0:
            return index
    return len(tokens) - 1


def _place_findings(
    tokens: Sequence[Token], findings: Sequence[FindingRow]
) -> dict[int, list[FindingRow]]:
    """Token index -> findings to show after it: the leaf holding the finding's line, else the
    last leaf before that line, else the first leaf."""
    leaves = list(_leaves(tokens))
    placed: dict[int, list[FindingRow]] = {}
    for finding in findings:
        if finding.line is None:
            continue
        holder = next((c for _, c, first, last in leaves if first <= finding.line <= last), None)
        if holder is None:
            before = [c for _, c, first, _ in leaves if first <= finding.line]
            holder = before[-1] if before else (leaves[0][1] if leaves else None)
        if holder is not None:
            placed.setdefault(holder, []).append(finding)
    return placed


def _annotate(
    tokens: Sequence[Token],
    cited: dict[int, list[CitationRow]],
    placed: dict[int, list[FindingRow]],
    env: _Env,
    written: InlineOffsets,
) -> Iterator[Token]:
    """The token stream with line anchors before leaf blocks, citations linked in their
    inline content (a citation found nowhere in its block gets a link of its own after it),
    and the findings' notes after their blocks. `written` says where each character of an
    inline token is written, for the citations the validator located."""
    leaves = list(_leaves(tokens))
    starts = {opener: first for opener, _, first, _ in leaves}
    ends = {closer: (first, last) for _, closer, first, last in leaves}
    states = {c.ordinal: Cited(c) for rows in cited.values() for c in rows}
    block_lines: tuple[int, int] | None = None
    for index, token in enumerate(tokens):
        if index in starts:
            yield _html(f'<span class="line-anchor" id="line-{starts[index]}"></span>')
        if token.map is not None:
            block_lines = (token.map[0] + 1, token.map[1])
        if token.type == "inline" and token.children is not None and block_lines is not None:
            pending = _in_lines(cited, states, *block_lines)
            located = any(c.located for c in pending)
            offsets = written.text_offsets(token) if located else written.skip(token)
            if pending:  # a copy: the parsed tokens are kept for the next view (`_parsed`)
                linked = _link_citations(token.children, offsets, pending, env)
                token = dataclasses.replace(token, children=linked)
        yield token
        if index in ends:
            in_block = _in_lines(cited, states, *ends[index])
            orphans = [c for c in in_block if not c.placed]
            if orphans:
                yield _html(_orphans_html(orphans, env))
            unnoted = [c for c in in_block if c.row.status == "failed" and not c.noted]
            if unnoted:
                yield _html(_notes_html(unnoted, env))
        if index in placed:
            yield _html(findings_note(placed[index]))
    rest = [c for c in states.values() if not c.placed]
    if rest:
        yield _html(_orphans_html(rest, env))


def _in_lines(
    cited: dict[int, list[CitationRow]], states: dict[int, Cited], first: int, last: int
) -> list[Cited]:
    rows = [c for line in range(first, last + 1) for c in cited.get(line, [])]
    return [states[row.ordinal] for row in sorted(rows, key=lambda r: (r.line or 0, r.column or 0))]


def _orphans_html(orphans: list[Cited], env: _Env) -> str:
    """Links for citations whose quotation and id could not be found in their block's text."""
    for cited in orphans:
        cited.id_linked = cited.noted = True
    linker = env.linker
    links = " ".join(linker.quote(c.row, None) + linker.note(c.row) for c in orphans)
    return f'<p class="cite-orphans">{links}</p>'


def _notes_html(failed: list[Cited], env: _Env) -> str:
    """The reasons of failed citations whose id was not found after their quotation."""
    for cited in failed:
        cited.noted = True
    notes = "".join(env.linker.note(c.row) for c in failed)
    return f'<p class="cite-orphans">{notes}</p>' if notes else ""


def _link_citations(
    children: list[Token],
    offsets: Sequence[tuple[int, ...] | None],
    pending: list[Cited],
    env: _Env,
) -> list[Token]:
    """Replace the text tokens of one block's inline content so each citation's quotation and
    the id after it are links (`offsets`: where each text child's characters are written)."""
    return [
        _html(
            link_text(child.content, offsets[n] if n < len(offsets) else None, pending, env.linker)
        )
        if child.type == "text"
        else child
        for n, child in enumerate(children)
    ]


def findings_note(findings: Sequence[FindingRow], *, aside: bool = True) -> str:
    """The findings placed at one spot of a rendered artifact, each with its `finding-N`
    anchor: an `<aside>` beside a Markdown block, or (`aside=False`) a bare list inside a
    JSON tree node. Empty when there are none."""
    if not findings:
        return ""
    items = Markup("").join(
        Markup('<li id="finding-{}"><code>{}</code> {}</li>').format(f.ordinal, f.code, f.message)
        for f in findings
    )
    if not aside:
        return str(Markup('<ul class="findings-note">{}</ul>').format(items))
    return str(Markup('<aside class="findings-note"><ul>{}</ul></aside>').format(items))


def _html(content: str) -> Token:
    token = Token(_HTML, "", 0)
    token.content = content
    return token
