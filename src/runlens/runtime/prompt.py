"""The system prompt: the plugin's skill, its prompt fragments, and what will be checked.

A model is told exactly what the validators will check, from the same contracts the
validators use, so the instructions and the gate cannot drift apart.
"""

from __future__ import annotations

from runlens.contracts import ArtifactContract
from runlens.plugins.base import Plugin

_RUNTIME_RULES = """\
## How this run works
- You work only through the tools. Paths are relative to the run's workspace; you may read
  anywhere in it and write only under artifacts/. runtime/ and input/ are read-only.
- When every deliverable is written, answer with a short final message and no tool call.
  RunLens then validates every deliverable; the run completes only if all checks pass.
- Evidence must be real: every cited id must exist in the input, and every quoted text must be
  copied verbatim from the row it cites (no paraphrase, no translation, no ellipsis)."""


def describe_contract(contract: ArtifactContract) -> str:
    lines = [f"### {contract.name} ({contract.display_name})"]
    if contract.description:
        lines.append(contract.description)
    lines.append("Required deliverable." if contract.required else "Optional deliverable.")
    if contract.rules is not None:
        if contract.rules.required_fields:
            lines.append("Required fields: " + ", ".join(contract.rules.required_fields) + ".")
        for path, allowed in contract.rules.enum_fields.items():
            lines.append(f"`{path}` must be one of: " + ", ".join(allowed) + ".")
    if contract.json_schema is not None:
        lines.append("It must satisfy this JSON Schema (draft 2020-12):")
        lines.append(_compact_json(contract.json_schema))
    if contract.required_headings:
        rules = contract.heading_rules
        how = []
        if rules is not None and rules.ordered:
            how.append("in this order")
        if rules is not None and rules.unique:
            how.append("each exactly once")
        suffix = f" ({', '.join(how)})" if how else ""
        lines.append(f"Markdown headings required{suffix}:")
        lines.extend(f"    {heading}" for heading in contract.required_headings)
    for path in contract.evidence_fields:
        lines.append(f"Every id at `{path}` must exist in the input's id column.")
    for quote in contract.evidence_quotes:
        lines.append(
            f"`{quote.text}` must be a verbatim, non-empty fragment of the text of the row whose "
            f"id is at `{quote.id}` in the same item."
        )
    return "\n".join(lines)


def build_system_prompt(plugin: Plugin) -> str:
    parts = [plugin.skill.strip()]
    if plugin.prompt_fragments:
        parts.append(
            "## Output requirements\n"
            + "\n".join(f"- {fragment}" for fragment in plugin.prompt_fragments)
        )
    parts.append(
        "## Deliverables and how they are checked\n"
        + "\n\n".join(describe_contract(contract) for contract in plugin.contracts)
    )
    parts.append(_RUNTIME_RULES)
    return "\n\n".join(parts) + "\n"


def _compact_json(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
