"""A Markdown deliverable as safe HTML, with its citations linked and its findings beside it.

The document is untrusted (a model wrote it). markdown-it parses it as CommonMark with GFM
tables and strikethrough, the dialect the validators read (`runlens.validation.rendered`),
with raw HTML off, so `<script>` and `<img onerror>` come out as text. Links keep only the
schemes a reader may follow (`safe_href`); an image is loaded only when `image_href` gives its
address (a validated image deliverable of the run, served inert from the same origin), else
it shows as its alt text and its address, as text.

Citations come from the run store (`CitationRow`, location `line N`): the quotation each one
names and the id after it become links to the row's evidence page, styled `verified` or
`failed`, a failed one with its reason in `title` and in a visible note. Findings with a
line are shown after the block that holds that line (markdown-it maps blocks to lines);
findings without one head the document.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape

from runlens.store.rows import CitationRow, FindingRow
from runlens.validation import read_markdown

#: Schemes a link in a deliverable may use; anything else is shown as text.
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
#: Quotation marks a citation's quote may stand between (the contracts' marks and kin).
_OPENING_MARKS = frozenset("“\"「『‘'«„")
_CLOSING_MARKS = frozenset("”\"」』’'»“")
#: Characters browsers drop from a URL before reading its scheme (`java\tscript:`).
_IGNORED_IN_URL = re.compile(r"[\x00-\x20\x7f]+")
#: The blocks a finding is shown after: those that hold text and map to lines.
_LEAF_OPENERS = frozenset({"paragraph_open", "heading_open", "table_open"})
_LEAF_SINGLES = frozenset({"fence", "code_block", "html_block", "hr"})
#: A token type the parser never makes: pre-rendered, already escaped HTML of this module.
_HTML = "runlens_html"


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
class _Cited:
    """A citation being placed in its block: whether its quote and its id are linked yet."""

    row: CitationRow
    quote_linked: bool = False
    id_linked: bool = False
    #: A failed one's reason has been shown (after its id, or after its block).
    noted: bool = False

    @property
    def placed(self) -> bool:
        return self.quote_linked or self.id_linked


@dataclass
class _Env:
    """What the render rules need: the links to make and where the findings go."""

    evidence_href: Callable[[str], str]
    link_href: Callable[[str], str] | None
    #: The address to load an image from, None when it must not be loaded.
    image_href: Callable[[str], str | None] | None = None
    #: Lines with a finding of their own (shown beside the block, so a failed citation there
    #: needs no second note).
    finding_lines: frozenset[int] = frozenset()


def render_markdown(
    text: str,
    *,
    citations: Sequence[CitationRow] = (),
    findings: Sequence[FindingRow] = (),
    evidence_href: Callable[[str], str],
    link_href: Callable[[str], str] | None = None,
    image_href: Callable[[str], str | None] | None = None,
) -> Markup:
    """`text` as HTML: every citation a link to `evidence_href(row_id)`, findings beside the
    block of their line. `link_href` rewrites relative links (to point at the artifact view of
    a file beside the document); other links are kept when `safe_href` allows them.
    `image_href` says where an image may be loaded from (None: shown as text)."""
    parser = _parser()
    tokens = parser.parse(text)
    cited = _citations_by_line(citations)
    placed = _place_findings(tokens, findings)
    lines = frozenset(f.line for f in findings if f.line)
    env = _Env(evidence_href, link_href, image_href, lines)
    tokens = list(_annotate(tokens, cited, placed, env))
    header = findings_note([f for f in findings if f.line is None])
    body = parser.renderer.render(tokens, parser.options, {"runlens": env})
    return Markup(header + body)


def _parser() -> MarkdownIt:
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
) -> Iterator[Token]:
    """The token stream with line anchors before leaf blocks, citations linked in their
    inline content (a citation found nowhere in its block gets a link of its own after it),
    and the findings' notes after their blocks."""
    leaves = list(_leaves(tokens))
    starts = {opener: first for opener, _, first, _ in leaves}
    ends = {closer: (first, last) for _, closer, first, last in leaves}
    states = {c.ordinal: _Cited(c) for rows in cited.values() for c in rows}
    block_lines: tuple[int, int] | None = None
    for index, token in enumerate(tokens):
        if index in starts:
            yield _html(f'<span class="line-anchor" id="line-{starts[index]}"></span>')
        if token.map is not None:
            block_lines = (token.map[0] + 1, token.map[1])
        if token.type == "inline" and token.children is not None and block_lines is not None:
            pending = _in_lines(cited, states, *block_lines)
            if pending:
                token.children = _link_citations(token.children, pending, env)
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
    cited: dict[int, list[CitationRow]], states: dict[int, _Cited], first: int, last: int
) -> list[_Cited]:
    rows = [c for line in range(first, last + 1) for c in cited.get(line, [])]
    return [states[row.ordinal] for row in sorted(rows, key=lambda r: (r.line or 0, r.column or 0))]


def _orphans_html(orphans: list[_Cited], env: _Env) -> str:
    """Links for citations whose quotation and id could not be found in their block's text."""
    for cited in orphans:
        cited.id_linked = cited.noted = True
    links = " ".join(_citation_link(c.row, None, env) + _note(c.row, env) for c in orphans)
    return f'<p class="cite-orphans">{links}</p>'


def _notes_html(failed: list[_Cited], env: _Env) -> str:
    """The reasons of failed citations whose id was not found after their quotation."""
    for cited in failed:
        cited.noted = True
    notes = "".join(_note(c.row, env) for c in failed)
    return f'<p class="cite-orphans">{notes}</p>' if notes else ""


def _link_citations(children: list[Token], pending: list[_Cited], env: _Env) -> list[Token]:
    """Replace the text tokens of one block's inline content so each citation's quotation and
    the id after it are links."""
    return [
        _html(_link_text(child.content, pending, env)) if child.type == "text" else child
        for child in children
    ]


def _link_text(text: str, pending: list[_Cited], env: _Env) -> str:
    out: list[str] = []
    position = 0
    while True:
        found = _next_mention(text, position, pending)
        if found is None:
            break
        start, end, cited, is_quote = found
        out.append(str(escape(text[position:start])))
        if is_quote:
            cited.quote_linked = True
            out.append(_citation_link(cited.row, text[start:end], env))
        else:
            cited.id_linked = cited.noted = True
            out.append(_id_link(cited.row, text[start:end], env) + _note(cited.row, env))
        position = end
    out.append(str(escape(text[position:])))
    return "".join(out)


def _next_mention(
    text: str, position: int, pending: list[_Cited]
) -> tuple[int, int, _Cited, bool] | None:
    """The earliest unlinked quotation (with its marks) or id, after a linked quotation, in
    `text` from `position`: (start, end, citation, is_quote)."""
    best: tuple[int, int, _Cited, bool] | None = None
    for cited in pending:
        # The quote as the parser read the block (NUL as U+FFFD, CR LF as LF): the same
        # reading the validator judged it by (runlens.validation.read_markdown).
        quote = read_markdown(cited.row.quote) if cited.row.quote else cited.row.quote
        if not cited.quote_linked and quote:
            start = text.find(quote, position)
            if start >= 0:
                end = start + len(quote)
                if start > position and text[start - 1] in _OPENING_MARKS:
                    start -= 1
                if end < len(text) and text[end] in _CLOSING_MARKS:
                    end += 1
                if best is None or start < best[0]:
                    best = (start, end, cited, True)
                continue
        if (cited.quote_linked or not quote) and not cited.id_linked:
            start = _find_token(text, cited.row.row_id, position)
            if start >= 0 and (best is None or start < best[0]):
                best = (start, start + len(cited.row.row_id), cited, False)
    return best


def _find_token(text: str, token: str, position: int) -> int:
    """Where `token` stands alone (not inside a longer word) in `text` from `position`."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(token)}(?![\w-])")
    match = pattern.search(text, position)
    return match.start() if match else -1


def _citation_link(row: CitationRow, shown: str | None, env: _Env) -> str:
    """A link to the cited row around the quotation `shown` (or around the id, when the
    quotation is not in the text)."""
    text = shown if shown is not None else row.row_id
    link = Markup('<a class="cite cite-{}" id="cite-{}" href="{}" title="{}">{}</a>').format(
        row.status, row.ordinal, env.evidence_href(row.row_id), _title(row), text
    )
    return str(link)


def _note(row: CitationRow, env: _Env) -> str:
    """The visible reason of a failed citation: nothing for a verified one, nor for one whose
    line has a finding (shown beside the block, with the same reason)."""
    if row.status != "failed" or row.line in env.finding_lines:
        return ""
    return str(Markup(' <span class="cite-note">✕ {}</span>').format(_reason(row)))


def _id_link(row: CitationRow, shown: str, env: _Env) -> str:
    return str(
        Markup('<a class="cite-id cite-{}" href="{}" title="{}">{}</a>').format(
            row.status, env.evidence_href(row.row_id), _title(row), shown
        )
    )


def _title(row: CitationRow) -> str:
    if row.status == "verified":
        return f"verified quote of row {row.row_id}"
    return f"failed: {_reason(row)}"


def _reason(row: CitationRow) -> str:
    reason = row.reason or "the quote could not be traced to its row"
    return f"{row.code}: {reason}" if row.code else reason


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
