"""The insight chart: an SVG a reader takes in at a glance, and the check of any such chart.

`chart_svg(summary)` draws, from the aggregated analysis (`summarize_analysis`):

1. the listed pain points as horizontal bars of their rows, each bar split by sentiment
   (negative, mixed, neutral, positive), its row count at its end;
2. when the input has a date column (`summary["breakdowns"]`, a trend), the rows per period
   as columns, the negative rows of each period in a darker part, its row count above it.

The same summary always gives the same bytes. Every text from the data (theme names, period
labels) is XML-escaped, stripped of characters XML cannot hold, and cut to a bounded length.

Every number the chart shows sits in a `<text>` whose `data-figure` names the figure it
states (`theme.<key>.rows`, `theme.<key>.negative`, `breakdown.<column>.<value>.rows`: the
keys of `runlens_feedback.figures`); every label naming a bar sits in a `<text>` whose
`data-label` names a figure of the bar, and must be (a prefix of, when cut with `…`) one of
that figure's names. `check_chart(svg, figures)` checks a chart written by anyone, a model
included, with a real XML parser (expat) that refuses document types and entity
declarations (so no entity expansion and no external entities), and reports:

- `invalid_chart`: not well-formed XML, or not an `<svg>` root in the SVG namespace;
- `unsafe_chart`: an element outside a small allow-list (no `script`, `foreignObject`,
  `image`, `use`, `a`, `style`, animation ...), an event-handler attribute (`on...`), a link
  (`href`, `xlink:href`), `url(`, `javascript:`, `data:`, `@import` or `expression(` in any
  attribute, a processing instruction, a document type or an entity declaration;
- `figure_mismatch`: a number that differs from the figure its `data-figure` names (at the
  precision written), or a label that is not one of its figure's names;
- `unsupported_figure`: a number in a text that names no figure (or a figure that does not
  exist), or a second number in a text (a text states one figure).
"""

from __future__ import annotations

import re
import xml.parsers.expat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runlens import Figure, stated_numbers
from runlens_feedback.analyst.groups import group_label
from runlens_feedback.analyst.labels import Lang
from runlens_feedback.breakdowns import SPECIAL_LABELS

SVG_NS = "http://www.w3.org/2000/svg"
#: The chart's file name, next to the report (which links it by this name).
CHART_FILE = "insight_chart.svg"
#: Bigger than any chart this module draws by far; a bigger file is not checked.
MAX_CHART_BYTES = 1_000_000
LABEL_CHARS = 34
ELLIPSIS = "…"

_SENTIMENT_COLOURS = (
    ("negative", "#d64541"),
    ("mixed", "#f2a93b"),
    ("neutral", "#a8a8a8"),
    ("positive", "#3fa34d"),
)
_NAMES = {
    "en": {
        "title": "Pain points: rows by sentiment",
        "trend": "Rows by {period} of {column} (darker: negative)",
        "month": "month",
        "week": "week",
        "positive": "positive",
        "neutral": "neutral",
        "negative": "negative",
        "mixed": "mixed",
    },
    "zh": {
        "title": "痛点：按情感划分的条数",
        "trend": "按{period}统计 {column} 的条数（深色：负面）",
        "month": "月",
        "week": "周",
        "positive": "正面",
        "neutral": "中性",
        "negative": "负面",
        "mixed": "混合",
    },
}
_WIDTH = 800
_LABEL_WIDTH = 250
_BAR_WIDTH = 460
_ROW_HEIGHT = 30
_TOP = 56
_TREND_HEIGHT = 170
#: Characters XML 1.0 cannot hold (C0 controls but tab/newline/return, lone surrogates,
#: U+FFFE/U+FFFF).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


# -- drawing --------------------------------------------------------------------------------


def escape(data: str) -> str:
    """`data` with `&`, `<` and `>` escaped, as `xml.sax.saxutils.escape` writes them (whose
    module loads urllib and http.client, which drawing a chart does not call)."""
    return data.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")


def quoteattr(data: str) -> str:
    """`data` escaped and quoted as an attribute value, as `xml.sax.saxutils.quoteattr`
    writes it: line breaks and tabs as character references, and double quotes unless the
    value holds a double quote and no single one."""
    data = escape(data).replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    if '"' not in data:
        return f'"{data}"'
    if "'" not in data:
        return f"'{data}'"
    return '"{}"'.format(data.replace('"', "&quot;"))


def xml_safe(text: str) -> str:
    """`text` with each character XML cannot hold replaced by U+FFFD (a figure key in an
    attribute is written, and compared, this way)."""
    return _NOT_XML.sub("\ufffd", text)


def _clean(text: object, limit: int = LABEL_CHARS) -> str:
    """Text for one line of the chart: XML-safe characters, spaces collapsed, at most
    `limit` characters (the cut marked by `…`)."""
    line = " ".join(_NOT_XML.sub(" ", str(text)).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + ELLIPSIS


def _text(x: float, y: float, content: str, **attributes: object) -> str:
    attrs = "".join(
        f" {name.replace('_', '-')}={quoteattr(xml_safe(str(value)))}"
        for name, value in attributes.items()
        if value is not None
    )
    return f'<text x="{x:g}" y="{y:g}"{attrs}>{escape(content)}</text>'


def _rect(x: float, y: float, width: float, height: float, fill: str) -> str:
    return f'<rect x="{x:g}" y="{y:g}" width="{width:g}" height="{height:g}" fill="{fill}"/>'


def chart_svg(summary: Mapping[str, Any], language: str = "en") -> str:
    """The chart of `summary` (module docstring), its words in `language` (`en` or `zh`)."""
    words = _NAMES.get(language, _NAMES["en"])
    pains = list(summary.get("pain_points") or [])
    trend = next(
        (c for c in (summary.get("breakdowns") or {}).get("columns", []) if c["kind"] == "trend"),
        None,
    )
    parts = [_text(16, 28, words["title"], font_size=18, font_weight="bold")]
    y = _TOP
    top = max((int(g["count"]) for g in pains), default=0)
    for group in pains:
        parts += _pain_bar(group, y, top, "zh" if language == "zh" else "en")
        y += _ROW_HEIGHT
    if not pains:
        parts.append(_text(16, y + 18, "—", fill="#666"))
        y += _ROW_HEIGHT
    parts += _legend(y + 8, words)
    y += 40
    if trend is not None:
        parts += _trend(trend, y, words)
        y += _TREND_HEIGHT + 40
    body = "\n  ".join(parts)
    return (
        f'<svg xmlns="{SVG_NS}" width="{_WIDTH}" height="{y}" viewBox="0 0 {_WIDTH} {y}" '
        'font-family="Helvetica, Arial, \'Noto Sans CJK SC\', sans-serif" font-size="13" '
        'role="img">\n'
        f"  <title>{escape(words['title'])}</title>\n"
        f'  <rect x="0" y="0" width="{_WIDTH}" height="{y}" fill="#ffffff"/>\n'
        f"  {body}\n</svg>\n"
    )


def _pain_bar(group: Mapping[str, Any], y: float, top: int, language: Lang) -> list[str]:
    key = f"theme.{group['key']}"
    count = int(group["count"])
    parts = [
        _text(
            _LABEL_WIDTH - 8,
            y + 17,
            _clean(group_label(group, language)),
            text_anchor="end",
            data_label=f"{key}.rows",
        )
    ]
    x = float(_LABEL_WIDTH)
    scale = _BAR_WIDTH / top if top else 0.0
    for sentiment, colour in _SENTIMENT_COLOURS:
        rows = int(group["sentiment"].get(sentiment, 0))
        if not rows:
            continue
        width = round(rows * scale, 1)
        parts.append(_rect(x, y + 4, width, _ROW_HEIGHT - 10, colour))
        if width >= 22:
            parts.append(
                _text(
                    x + width / 2,
                    y + 19,
                    str(rows),
                    text_anchor="middle",
                    fill="#ffffff",
                    font_size=11,
                    data_figure=f"{key}.{sentiment}",
                )
            )
        x += width
    parts.append(_text(x + 6, y + 19, str(count), data_figure=f"{key}.rows"))
    return parts


def _legend(y: float, words: Mapping[str, str]) -> list[str]:
    parts = []
    x = float(_LABEL_WIDTH)
    for sentiment, colour in _SENTIMENT_COLOURS:
        parts += [_rect(x, y, 12, 12, colour), _text(x + 17, y + 11, words[sentiment])]
        x += 110
    return parts


def _trend(column: Mapping[str, Any], y: float, words: Mapping[str, str]) -> list[str]:
    name = _clean(column["column"], 40)
    title = words["trend"].format(period=words[str(column["period"])], column=name)
    parts = [_text(16, y + 16, title, font_weight="bold")]
    values = list(column["values"])
    top = max((int(v["rows"]) for v in values), default=0)
    base = y + 32 + _TREND_HEIGHT - 40
    slot = (_WIDTH - 32) / max(len(values), 1)
    width = min(48.0, slot - 8)
    scale = (_TREND_HEIGHT - 60) / top if top else 0.0
    prefix = f"breakdown.{column['column']}"
    for n, entry in enumerate(values):
        special = entry.get("special")
        label = SPECIAL_LABELS[special][0] if special else str(entry["label"])
        key = f"{prefix}.{special or entry['value']}"
        x = 16 + n * slot + (slot - width) / 2
        rows, negative = int(entry["rows"]), int(entry["sentiment"].get("negative", 0))
        height, dark = round(rows * scale, 1), round(negative * scale, 1)
        parts += [
            _rect(x, base - height, width, height, "#9bb7d4"),
            _rect(x, base - dark, width, dark, "#2f5d8a"),
            _text(
                x + width / 2,
                base - height - 4,
                str(rows),
                text_anchor="middle",
                data_figure=f"{key}.rows",
            ),
            *(
                [
                    _text(
                        x + width / 2,
                        base - dark / 2 + 4,
                        str(negative),
                        text_anchor="middle",
                        fill="#ffffff",
                        font_size=11,
                        data_figure=f"{key}.negative",
                    )
                ]
                if dark >= 16
                else []
            ),
            _text(
                x + width / 2,
                base + 16,
                _clean(label, 12),
                text_anchor="middle",
                font_size=11,
                data_label=f"{key}.rows",
            ),
        ]
    return parts


# -- checking -------------------------------------------------------------------------------

_ALLOWED = frozenset(
    {"svg", "g", "rect", "text", "tspan", "title", "desc", "line", "path", "circle", "polyline",
     "polygon", "ellipse"}
)  # fmt: skip
_TEXTS = frozenset({"text", "tspan", "title", "desc"})
_UNSAFE_VALUE = re.compile(r"url\s*\(|javascript:|data:|@import|expression\s*\(", re.IGNORECASE)
_DATA = "data-"


@dataclass(frozen=True)
class ChartProblem:
    """One problem of a chart: its finding code, line (1-based) and message."""

    code: str
    line: int
    message: str
    details: dict[str, Any] = field(default_factory=dict)


class _Refused(Exception):
    pass


@dataclass
class _Element:
    name: str
    attributes: dict[str, str]
    line: int
    text: list[str] = field(default_factory=list)
    figure: str | None = None  # data-figure, own or inherited from the enclosing text
    label: str | None = None


def check_chart(svg: bytes, figures: Sequence[Figure]) -> list[ChartProblem]:
    """Every problem of the chart `svg` against `figures` (module docstring); numbers are
    checked only when `figures` is not empty (nothing to check them against otherwise)."""
    if len(svg) > MAX_CHART_BYTES:
        return [ChartProblem("unsafe_chart", 1, f"is {len(svg)} bytes, over {MAX_CHART_BYTES}")]
    parsed = _parse(svg)
    if isinstance(parsed, ChartProblem):
        return [parsed]
    elements, problems = parsed
    if figures:
        by_key = {xml_safe(figure.key): figure for figure in figures}
        hidden = _digit_terms(figures)
        for element in elements:
            if element.name in _TEXTS:
                problems += _check_text(element, by_key, hidden)
    return problems


def _parse(svg: bytes) -> ChartProblem | tuple[list[_Element], list[ChartProblem]]:
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
    elements: list[_Element] = []
    stack: list[_Element] = []
    problems: list[ChartProblem] = []

    def refuse(what: str) -> int:
        raise _Refused(what)

    def start(name: str, attributes: dict[str, str]) -> None:
        namespace, _, local = name.rpartition(" ")
        line = parser.CurrentLineNumber
        if not stack and (namespace != SVG_NS or local != "svg"):
            raise _Refused(f"root element is {local!r}, not an SVG <svg>")
        if namespace != SVG_NS or local not in _ALLOWED:
            problems.append(ChartProblem("unsafe_chart", line, f"element <{local}> not allowed"))
        for attribute, value in attributes.items():
            attr = attribute.rpartition(" ")[2]
            if attr.lower().startswith("on") or attr.lower() == "href":
                problems.append(
                    ChartProblem("unsafe_chart", line, f"attribute {attr!r} not allowed")
                )
            elif _UNSAFE_VALUE.search(value):
                problems.append(
                    ChartProblem("unsafe_chart", line, f"attribute {attr!r} refers outside")
                )
        plain = {a.rpartition(" ")[2]: v for a, v in attributes.items()}
        inherited = stack[-1] if stack and stack[-1].name in _TEXTS else None
        element = _Element(
            local,
            plain,
            line,
            figure=plain.get(_DATA + "figure", inherited.figure if inherited else None),
            label=plain.get(_DATA + "label", inherited.label if inherited else None),
        )
        stack.append(element)
        elements.append(element)

    def end(_: str) -> None:
        stack.pop()

    def characters(data: str) -> None:
        if stack:
            stack[-1].text.append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    parser.StartDoctypeDeclHandler = lambda *_: refuse("a document type declaration")
    parser.EntityDeclHandler = lambda *_: refuse("an entity declaration")
    parser.ExternalEntityRefHandler = lambda *_: refuse("an external entity")
    parser.ProcessingInstructionHandler = lambda *_: refuse("a processing instruction")
    try:
        parser.Parse(svg, True)
    except _Refused as refused:
        code = "invalid_chart" if "root element" in str(refused) else "unsafe_chart"
        return ChartProblem(code, parser.CurrentLineNumber, f"holds {refused}")
    except xml.parsers.expat.ExpatError as error:
        return ChartProblem("invalid_chart", error.lineno, f"is not well-formed XML: {error}")
    if not elements:
        return ChartProblem("invalid_chart", 1, "has no <svg> element")
    return elements, problems


def _digit_terms(figures: Sequence[Figure]) -> list[str]:
    """Terms of the figures' labels with digits in them: a number inside a name is no figure."""
    terms = {name for figure in figures for name in figure.names if any(c.isdigit() for c in name)}
    return sorted(terms, key=len, reverse=True)


def _hidden_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    folded = text.casefold()
    spans = []
    for term in terms:
        start = folded.find(term)
        while start >= 0:
            spans.append((start, start + len(term)))
            start = folded.find(term, start + 1)
    return spans


def _check_text(
    element: _Element, by_key: Mapping[str, Figure], hidden: Sequence[str]
) -> list[ChartProblem]:
    text = "".join(element.text)
    own_label = element.attributes.get(_DATA + "label")
    if own_label is not None:
        return _check_label(element, text, own_label, by_key)
    numbers = stated_numbers(text, _hidden_spans(text, hidden))
    if not numbers:
        return []
    keys = [element.figure] if element.figure else []
    problems = []
    for position, number in enumerate(numbers):
        figure = by_key.get(keys[position]) if position < len(keys) else None
        where = {"line": element.line, "stated": number.text}
        if figure is None:
            named = keys[position] if position < len(keys) else None
            problems.append(
                ChartProblem(
                    "unsupported_figure",
                    element.line,
                    f"{number.text} names no figure computed from the data"
                    + (f" ({named!r} is none)" if named else ""),
                    where,
                )
            )
        elif not figure.agrees(number):
            expected = figure.written(number.decimals)
            problems.append(
                ChartProblem(
                    "figure_mismatch",
                    element.line,
                    f"{number.text} states the figure `{figure.key}`, which is {expected}",
                    {**where, "figure": figure.key, "expected": expected},
                )
            )
    return problems


def _check_label(
    element: _Element, text: str, key: str, by_key: Mapping[str, Figure]
) -> list[ChartProblem]:
    """A bar's label must be one of its figure's names (or a prefix of one, cut with `…`)."""
    figure = by_key.get(key)
    shown = " ".join(text.split()).casefold()
    cut = shown.endswith(ELLIPSIS)
    stem = shown.removesuffix(ELLIPSIS).rstrip()
    if figure is not None and stem:
        names = figure.names
        if stem in names or (cut and any(name.startswith(stem) for name in names)):
            return []
    return [
        ChartProblem(
            "figure_mismatch",
            element.line,
            f"the label {text.strip()!r} does not name the figure `{key}`",
            {"line": element.line, "label": text.strip(), "figure": key},
        )
    ]
