"""A run in a long-lived process leaves no tool thread behind (`runlens.tools.threads`)."""

from __future__ import annotations

import threading
from typing import Any

from .conftest import RunScript, turns_for

Documents = tuple[dict[str, Any], dict[str, Any], str]


def test_a_finished_run_leaves_no_tool_thread(
    run_script: RunScript, good_documents: Documents
) -> None:
    before = set(threading.enumerate())
    outcome = run_script(turns_for(*good_documents))
    assert outcome.exit_code == 0, outcome.output
    called = [event for event in outcome.events if event["type"] == "tool.called"]
    assert len(called) == 4  # the input, then three deliverables
    left = [
        t for t in threading.enumerate() if t not in before and t.name.startswith("runlens-tool")
    ]
    for thread in left:  # told to stop when the run ended: gone at once
        thread.join(5)
    assert [thread for thread in left if thread.is_alive()] == []
