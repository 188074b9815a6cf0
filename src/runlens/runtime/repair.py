"""The repair message: aggregated findings phrased so a model can act on them.

Grouped by artifact; each finding says where (the concrete path), what is wrong, and what is
allowed, and a JSON block carries the same findings for models that prefer structure.
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence

from runlens.contracts import ArtifactContract
from runlens.validation import ValidationReport
from runlens.validation.findings import Finding

MAX_LISTED = 40

_ADVICE = {
    "missing_file": "Write this file with write_file.",
    "invalid_json": "Rewrite the whole file as valid JSON.",
    "missing_field": "Add the missing field.",
    "invalid_enum": "Use one of the allowed values exactly as written.",
    "schema_violation": "Change the value so it satisfies the schema.",
    "missing_heading": "Add the heading exactly as written, as a Markdown heading line.",
    "heading_order": "Reorder the sections so the headings appear in the required order.",
    "duplicate_heading": "Keep this heading once.",
    "unknown_evidence_id": "Cite only ids that exist in the input (read it again if unsure).",
    "evidence_text_mismatch": (
        "Replace the quote with text copied character for character from that row."
    ),
    "empty_evidence_text": "Quote a non-empty fragment of the cited row.",
    "weak_evidence_quote": (
        "Quote more of the row: whole words, at least the length the message gives (what "
        "would have been accepted is in the message)."
    ),
    "unsourced_quote": (
        "Follow the quotation with a dash and the id of the row it quotes, or remove it."
    ),
    "unknown_reference": "Remove the id, or replace it with the id of a real row of the input.",
    "rows_not_covered": (
        "Add an analysis item for each listed row, or list it in failed_batches with the reason."
    ),
    "evidence_theme_mismatch": (
        "Cite only rows analysed under the backlog item's theme, or correct the theme."
    ),
    "secret_in_artifact": (
        "Remove the credential from the file and from its name; never write keys or tokens "
        "into a deliverable."
    ),
    "figure_mismatch": (
        "Write {expected} instead of {stated} (the figure `{figure}`), or, if {stated} is "
        "another figure, put the words that name that figure next to it."
    ),
    "unsupported_figure": (
        "Remove {stated}, or replace it with a figure computed from the data, written next "
        "to the words that name it; state no numbers of your own."
    ),
}


def _line(finding: Finding) -> str:
    where = finding.path or "(whole file)"
    allowed = finding.details.get("allowed")
    hint = f" Allowed: {', '.join(map(str, allowed))}." if isinstance(allowed, list) else ""
    return f"- {where} [{finding.code}]: {finding.message}.{hint} {_advice(finding)}".rstrip()


def _advice(finding: Finding) -> str:
    """The advice for the finding's code, its `{fields}` filled from the finding's details
    (none when the details lack one: a plugin may reuse a code without them)."""
    advice = _ADVICE.get(finding.code, "")
    fields = {name for _, name, _, _ in string.Formatter().parse(advice) if name}
    return advice.format_map(finding.details) if fields <= finding.details.keys() else ""


def repair_message(
    report: ValidationReport, contracts: Sequence[ArtifactContract], remaining: int
) -> str:
    """The user message that starts a repair round."""
    by_artifact: dict[str, list[Finding]] = {}
    for finding in report.findings:
        by_artifact.setdefault(finding.artifact or "(run)", []).append(finding)
    labels = {contract.name: contract.display_name for contract in contracts}
    sections = []
    for artifact, findings in by_artifact.items():
        shown = findings[:MAX_LISTED]
        more = len(findings) - len(shown)
        lines = [f"### {artifact} ({labels.get(artifact, 'run')})", *map(_line, shown)]
        if more:
            lines.append(f"- … and {more} more findings of the same kinds")
        sections.append("\n".join(lines))
    accepted = [name for name, status in report.artifacts.items() if status == "validated"]
    payload = [
        finding.model_dump(exclude={"validator"}) for finding in report.findings[:MAX_LISTED]
    ]
    return "\n\n".join(
        [
            "Validation failed: the deliverables were checked and these problems were found. "
            "Fix every one of them by rewriting the affected files with the tools, then reply "
            f"with a short final message. Repair rounds left after this one: {remaining}.",
            *sections,
            "Already accepted (leave unchanged): " + (", ".join(accepted) or "none") + ".",
            "The same findings as JSON:\n```json\n"
            + json.dumps(payload, ensure_ascii=False, indent=1)
            + "\n```",
        ]
    )
