"""The Evidence Index a validation round trusts is worked out from the file's header line
when the file is byte for byte the index rebuilt from its source; anything else is judged
from the whole file, exactly as before (`runlens.validation.trust`)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from runlens.evidence import EvidenceIndex
from runlens.validation import ValidationContext, ValidationReport
from runlens.validation.trust import UntrustedIndex, open_index
from runlens_feedback.contracts import CONTRACTS

if TYPE_CHECKING:
    from tests.conftest import FeedbackWorkspace


def test_an_untouched_index_is_the_rebuilt_one(feedback_workspace: FeedbackWorkspace) -> None:
    index = open_index(ValidationContext(feedback_workspace.root, CONTRACTS))
    assert isinstance(index, EvidenceIndex)
    assert index.text("fb_003") == "希望仪表盘可以自定义指标顺序。"
    written = EvidenceIndex.load(feedback_workspace.index_path)
    assert index.sha256(written.header) == feedback_workspace.index_sha256


def test_rows_damaged_under_an_intact_header_line_are_unreadable(
    feedback_workspace: FeedbackWorkspace, validate: Callable[..., ValidationReport]
) -> None:
    """The header line alone would rebuild the index: the damage below it is still found."""
    path = feedback_workspace.index_path
    header, _, rows = path.read_bytes().partition(b"\n")
    path.write_bytes(header + b"\n" + rows.replace(b'"fb_002":', b'"fb_001":', 1))  # id twice
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    untrusted = open_index(ValidationContext(feedback_workspace.root, CONTRACTS))
    assert isinstance(untrusted, UntrustedIndex)
    assert (untrusted.code, untrusted.reason.split(":")[0]) == (
        "evidence_index_missing",
        "unreadable",
    )
    report = validate(feedback_workspace, expected_index_sha256=sha)
    assert not report.passed
    assert {f.code for f in report.findings} == {"evidence_index_missing"}
