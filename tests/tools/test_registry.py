"""Tool-call checking: the fast path never accepts what jsonschema rejects."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from runlens.models.messages import ToolCall
from runlens.schema import compiled
from runlens.tools.files import FILE_TOOLS
from runlens.tools.registry import ToolRegistry
from runlens_feedback.tools import build_tools

TOOLS = [*FILE_TOOLS, *build_tools(None)]  # type: ignore[arg-type]
REGISTRY = ToolRegistry(TOOLS)

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 500)
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=5,
)
keys = st.sampled_from(["path", "content", "offset", "limit", "batch_size", "concurrency", "x"])
arguments = st.dictionaries(keys, values, max_size=4)


@settings(max_examples=400, deadline=None)
@given(tool=st.sampled_from(TOOLS), args=arguments)
def test_fast_path_agrees_with_jsonschema(tool: Any, args: dict[str, Any]) -> None:
    checker = compiled(tool.parameters)
    errors = list(Draft202012Validator(tool.parameters).iter_errors(args))
    if checker.surely_valid(args):
        assert errors == [], (tool.name, args)
    outcome = REGISTRY.check_call(ToolCall("c1", tool.name, args))
    assert (outcome is None) == (errors == []), (tool.name, args, outcome)


def test_rejections_are_worded_by_jsonschema() -> None:
    outcome = REGISTRY.check_call(ToolCall("c1", "read_feedback_csv", {"limit": 0}))
    assert outcome is not None and outcome.error_kind == "invalid_arguments"
    assert outcome.content == (
        "invalid arguments for read_feedback_csv at limit: 0 is less than the minimum of 1"
    )


def test_unknown_tool_lists_the_available_ones() -> None:
    outcome = REGISTRY.check_call(ToolCall("c1", "rm_rf", {}))
    assert outcome is not None and outcome.error_kind == "unknown_tool"
    assert "read_feedback_csv" in outcome.content and "write_file" in outcome.content
