"""A report's text blocks are worked out once per text and shared by every reader of the
round (citations, figures): each call gives the same blocks, in order, as a new reading."""

from __future__ import annotations

from runlens.validation import rendered
from runlens.validation.rendered import text_blocks

REPORT = """# Report

Intro with a “quote” — fb_1.

| Theme | Rows |
|---|---|
| Billing | 12 |

- item one
- item `code` two

```
verbatim
```
"""


def test_every_call_gives_the_blocks_of_one_reading() -> None:
    rendered._text_blocks.cache_clear()
    first = list(text_blocks(REPORT))
    again = list(text_blocks(REPORT))
    assert [block.text for block in first] == [
        "Report",
        "Intro with a “quote” — fb_1.",
        "Theme",
        "Rows",
        "Billing",
        "12",
        "item one",
        "item code two",
        "verbatim",
    ]
    assert again == first
    assert all(a is b for a, b in zip(again, first, strict=True))  # read once, shared
    assert rendered._text_blocks.cache_info().hits == 1


def test_another_text_is_read_anew() -> None:
    changed = REPORT.replace("Billing", "Export")
    texts = [block.text for block in text_blocks(changed)]
    assert "Export" in texts and "Billing" not in texts
    assert [b.positions for b in text_blocks(REPORT)] != [b.positions for b in text_blocks("x")]
