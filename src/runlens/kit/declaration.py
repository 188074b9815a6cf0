"""The conformance checks of a plugin's declaration, made without running it.

Each check takes the plugin and returns its problems, one sentence each; none means passed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from runlens.contracts import ArtifactContract
from runlens.contracts.paths import split
from runlens.models.scripted import ScriptedModel
from runlens.plugins.base import Plugin
from runlens.tools.workspace import ARTIFACTS

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def describe_error(error: BaseException) -> str:
    """An exception as one line: its type and its message."""
    return f"{type(error).__name__}: {' '.join(str(error).split())}"


def contract_problems(plugin: Plugin) -> list[str]:
    """At least one contract; each an `ArtifactContract`, declared once, under `artifacts/`,
    with only the rules its kind of file can have."""
    problems = [] if plugin.contracts else ["the plugin declares no artifact contracts"]
    seen: set[str] = set()
    for contract in plugin.contracts:
        if not isinstance(contract, ArtifactContract):
            problems.append(f"{contract!r} is not an ArtifactContract")
            continue
        if contract.name in seen:
            problems.append(f"{contract.name}: declared twice")
        seen.add(contract.name)
        problems.extend(_rule_problems(contract))
    return problems


def _rule_problems(contract: ArtifactContract) -> Iterator[str]:
    name, kind = contract.name, contract.kind
    parts = name.split("/")
    if parts[0] != ARTIFACTS or len(parts) < 2:
        yield f"{name}: must be under {ARTIFACTS}/, the only folder a run may write"
    json_rules = {
        "schema": contract.rules is not None,
        "json_schema": contract.json_schema is not None,
        "evidence_fields": bool(contract.evidence_fields),
        "evidence_quotes": bool(contract.evidence_quotes),
        "coverage": contract.coverage is not None,
    }
    markdown_rules = {
        "required_headings": bool(contract.required_headings),
        "heading_rules": contract.heading_rules is not None,
        "citations": contract.citations is not None,
    }
    if kind != "json":
        yield from (
            f"{name}: {rule} needs a .json artifact" for rule, on in json_rules.items() if on
        )
    if kind != "markdown":
        yield from (
            f"{name}: {rule} needs a .md artifact" for rule, on in markdown_rules.items() if on
        )
    for heading in contract.required_headings:
        if not heading.startswith("#") or not heading.lstrip("#").startswith(" "):
            yield f"{name}: required heading {heading!r} is not a Markdown heading ('# Title')"
    if contract.citations is not None:
        for section in contract.citations.evidence_sections:
            if section not in contract.required_headings:
                yield f"{name}: evidence section {section!r} is not a required heading"


def json_schema_problems(plugin: Plugin) -> list[str]:
    """Every `json_schema` is a valid draft 2020-12 schema (and says so, if it says)."""
    problems = []
    for contract in plugin.contracts:
        if contract.json_schema is None:
            continue
        declared = contract.json_schema.get("$schema")
        if declared is not None and str(declared).rstrip("#") != DRAFT_2020_12:
            problems.append(f"{contract.name}: $schema is {declared!r}, not {DRAFT_2020_12}")
        try:
            Draft202012Validator.check_schema(contract.json_schema)
        except SchemaError as error:
            where = "/".join(str(part) for part in error.path) or "the root"
            problems.append(f"{contract.name}: invalid JSON Schema at {where}: {error.message}")
    return problems


def evidence_path_problems(plugin: Plugin) -> list[str]:
    """Every dotted path a contract's rules walk is a property its JSON Schema declares: a
    misspelt path would otherwise find nothing and check nothing."""
    problems = []
    for contract in plugin.contracts:
        paths = list(_declared_paths(contract))
        if contract.json_schema is None:
            if paths:
                named = ", ".join(path for _, path in paths)
                problems.append(f"{contract.name}: names {named} but has no json_schema")
            continue
        problems.extend(
            f"{contract.name}: {rule} {path!r} is not a property its JSON Schema declares"
            for rule, path in paths
            if not schema_has_path(contract.json_schema, split(path))
        )
    return problems


def _declared_paths(contract: ArtifactContract) -> Iterator[tuple[str, str]]:
    """Every dotted path the contract's rules walk, with the rule that names it."""
    yield from (("evidence field", path) for path in contract.evidence_fields)
    yield from (("row field", path) for path in contract.row_fields)
    for quote in contract.evidence_quotes:
        yield "evidence quote text", quote.text
        yield "evidence quote id", quote.id
    if contract.coverage is not None:
        yield "coverage ids", contract.coverage.ids
        if contract.coverage.excused_ids:
            yield "coverage excused ids", contract.coverage.excused_ids
    if contract.rules is not None:
        yield from (("required field", path) for path in contract.rules.required_fields)
        yield from (("enum field", path) for path in contract.rules.enum_fields)


def schema_has_path(schema: Any, keys: tuple[str, ...], root: Any = None) -> bool:
    """Whether the JSON Schema declares the property the dotted path leads to: arrays on
    the way are walked into (as the rule language walks lists), local `$ref`s and the
    branches of `allOf`/`anyOf`/`oneOf` followed."""
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return False
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#"):
        target = _resolve_pointer(root, reference)
        if target is not None and schema_has_path(target, keys, root):
            return True
    for combinator in ("allOf", "anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list) and any(
            schema_has_path(branch, keys, root) for branch in branches
        ):
            return True
    if not keys:
        return True
    if isinstance(schema.get("items"), dict) and schema_has_path(schema["items"], keys, root):
        return True
    properties = schema.get("properties")
    if isinstance(properties, dict) and keys[0] in properties:
        return schema_has_path(properties[keys[0]], keys[1:], root)
    return False


def _resolve_pointer(root: Any, reference: str) -> Any:
    node = root
    for part in reference.removeprefix("#").split("/"):
        if not part:
            continue
        key = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def plan_problems(plugin: Plugin) -> list[str]:
    """Steps declared once, each with criteria; an artifact criterion names a declared
    artifact (else the step could never complete)."""
    declared = sorted(contract.name for contract in plugin.contracts)
    problems = [] if plugin.plan else ["the plan has no steps"]
    seen: set[str] = set()
    for step in plugin.plan:
        if step.step_id in seen:
            problems.append(f"step {step.step_id!r}: declared twice")
        seen.add(step.step_id)
        if not step.success_criteria:
            problems.append(f"step {step.step_id!r}: has no success criteria")
        problems.extend(
            f"step {step.step_id!r}: criterion names {criterion.artifact!r}, which is not a "
            f"declared artifact ({', '.join(declared)})"
            for criterion in step.success_criteria
            if criterion.kind == "artifact_validated" and criterion.artifact not in declared
        )
    return problems


def review_declaration_problems(plugin: Plugin) -> list[str]:
    """The review policy is a `ReviewPolicy`; each correction a `Correction`, declared once,
    naming only declared artifacts (else no mark could ever carry it)."""
    from runlens.plugins.review import Correction, ReviewPolicy

    problems = []
    if not isinstance(plugin.review_policy, ReviewPolicy):
        problems.append(f"review_policy {plugin.review_policy!r} is not a ReviewPolicy")
    declared = sorted(contract.name for contract in plugin.contracts)
    seen: set[str] = set()
    for correction in plugin.corrections:
        if not isinstance(correction, Correction):
            problems.append(f"{correction!r} is not a Correction")
            continue
        if correction.name in seen:
            problems.append(f"correction {correction.name!r}: declared twice")
        seen.add(correction.name)
        problems.extend(
            f"correction {correction.name!r}: names {artifact!r}, which is not a declared "
            f"artifact ({', '.join(declared)})"
            for artifact in correction.artifacts
            if artifact not in declared
        )
    return problems


def tool_problems(plugin: Plugin) -> list[str]:
    """The tools build for a run; names are unique and leave the file tools alone; the input
    tool is one of them; every tool a plan step names exists; parameters are JSON Schemas."""
    from runlens.tools.base import ToolContext
    from runlens.tools.files import FILE_TOOLS
    from runlens.tools.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="runlens-tools-check-") as scratch:
        workspace = Workspace(Path(scratch))
        workspace.create()
        placeholder = workspace.input / "input.csv"
        placeholder.write_text("id,text\n", encoding="utf-8")
        try:
            tools = list(plugin.build_tools(ToolContext("tools-check", workspace, placeholder)))
        except Exception as error:
            return [f"building the plugin's tools raised {describe_error(error)}"]
    names = [tool.name for tool in tools]
    file_tools = {tool.name for tool in FILE_TOOLS}
    problems = [
        f"tool {name!r}: declared twice" for name in sorted(set(names)) if names.count(name) > 1
    ]
    problems.extend(
        f"tool {name!r}: is a file tool of the runtime" for name in names if name in file_tools
    )
    if plugin.input_tool not in names:
        problems.append(f"input tool {plugin.input_tool!r} is not among the plugin's tools")
    for step in plugin.plan:
        problems.extend(
            f"step {step.step_id!r}: names tool {tool!r}, which does not exist"
            for tool in step.tools
            if tool not in {*names, *file_tools}
        )
    for tool in tools:
        try:
            Draft202012Validator.check_schema(tool.parameters)
        except SchemaError as error:
            problems.append(
                f"tool {tool.name!r}: parameters are not a JSON Schema: {error.message}"
            )
    return problems


def sample_problems(plugin: Plugin) -> list[str]:
    """`Plugin.conformance` is declared, its files exist, both scripts parse, and it says
    which findings the fabrication must cause."""
    samples = plugin.conformance
    if samples is None:
        return [
            "no conformance samples declared: give the Plugin conformance=Conformance("
            "fixture=..., passing_model=..., fabricating_model=...)"
        ]
    problems = [
        f"{label} {path} is not a file"
        for label, path in (
            ("fixture", samples.fixture),
            ("passing_model", samples.passing_model),
            ("fabricating_model", samples.fabricating_model),
        )
        if not Path(path).is_file()
    ]
    if problems:
        return problems
    for script in (samples.passing_model, samples.fabricating_model):
        try:
            ScriptedModel.from_file(Path(script))
        except Exception as error:
            problems.append(describe_error(error))
    if not samples.expected_codes:
        problems.append("expected_codes is empty: name the findings the fabrication causes")
    return problems


__all__ = [
    "DRAFT_2020_12",
    "contract_problems",
    "describe_error",
    "evidence_path_problems",
    "json_schema_problems",
    "plan_problems",
    "sample_problems",
    "schema_has_path",
    "tool_problems",
]
