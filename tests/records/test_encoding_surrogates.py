"""Records stay valid UTF-8 JSON whatever text reaches them, lone surrogates included."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from runlens.records.encoding import dumps_compact, dumps_indented


@pytest.mark.parametrize("dumps", [dumps_compact, dumps_indented])
@pytest.mark.parametrize("text", ["x\ud800y", "\udcff", "ok \U0001f600 \udfff"])
def test_a_lone_surrogate_is_written_as_its_escape_and_reads_back(
    dumps: Callable[[Any], bytes], text: str
) -> None:
    encoded = dumps({"output": text, "nested": [text]})
    encoded.decode("utf-8")  # valid UTF-8, not surrogate bytes
    assert json.loads(encoded) == {"output": text, "nested": [text]}
