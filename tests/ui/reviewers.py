"""Reviewers for the UI tests, made as `runlens reviewers add` makes them: a key under the
home's `reviewers/` folder and a row in the home's store holding the token's SHA-256 only.

`HOSTILE_NOTE` is the note every page must show as text: a script tag, Markdown emphasis and
a `javascript:` link.
"""

from __future__ import annotations

from pathlib import Path

#: A reviewer's note that would run, or render, if any page let it.
HOSTILE_NOTE = "<script>alert(1)</script> **x** [a](javascript:alert(1))"
#: How the note's markup must appear in a page's HTML: escaped.
HOSTILE_NOTE_ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt; **x** [a](javascript:alert(1))"


def add_reviewer(home: Path, db_url: str, name: str) -> str:
    """A new reviewer `name` with a key in `home` and a row in the store at `db_url`; their
    UI token (printed once by the CLI, here returned)."""
    from runlens.review.reviewers import new_reviewer_key, new_token, token_digest
    from runlens.store.db import open_store
    from runlens.verdict.keys import public_pem

    key = new_reviewer_key(name, home)
    token = new_token()
    store = open_store(db_url)
    try:
        store.add_reviewer(name, key.keyid, public_pem(key.public_key), token_digest(token))
    finally:
        store.close()
    return token


def assert_inert(html: str) -> None:
    """The hostile note is in `html`, escaped, and none of its markup is live."""
    assert HOSTILE_NOTE_ESCAPED in html, "the note is not shown (escaped) on the page"
    assert "<script>alert(1)" not in html
    assert 'href="javascript:' not in html.lower()
    assert "<strong>x</strong>" not in html and "<em>x</em>" not in html
