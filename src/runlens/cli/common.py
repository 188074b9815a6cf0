"""What every `runlens` command shares: turning user errors into exit code 2, printing JSON.

A person's mistake (a missing workspace, an unknown plugin, a bad CSV) gets one line,
`Error: <message>`, on stderr and exit code 2: never a traceback. Anything else is a bug and
is allowed to show one.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

import click

from runlens.errors import UserError, one_line

P = ParamSpec("P")
R = TypeVar("R")

USAGE_EXIT_CODE = 2


class UsageFailure(click.ClickException):
    """A click error that exits 2, the code SPEC section 10 gives usage errors."""

    exit_code = USAGE_EXIT_CODE


@contextmanager
def usage_errors(*also: type[Exception]) -> Iterator[None]:
    """Inside a click command: `UserError` (and the `also` types) exit 2 with one line.

    `also` is for errors that are user input problems in that command but not in general,
    e.g. `InputError` for `runlens validate --source` (a bad CSV is the user's input), while
    `runlens run` records the same error as a failed run instead.
    """
    caught: tuple[type[Exception], ...] = (UserError, *also)
    try:
        yield
    except caught as error:
        raise UsageFailure(one_line(error)) from error


def exit_on_user_error(
    *also: type[Exception],
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator form of `usage_errors` for a whole click callback."""

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with usage_errors(*also):
                return func(*args, **kwargs)

        return wrapper

    return decorate


#: C0 and C1 control characters (and DEL), except tab and newline: a model's text (a finding's
#: message, an error) could otherwise move the cursor, clear the screen or retitle the window.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def terminal_safe(text: str) -> str:
    """`text` with control characters shown as `\\xNN` escapes, and lone surrogates (no
    terminal can be sent one) as `\\uNNNN`, for a terminal."""
    return _CONTROL.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code > 0xFF else f"\\x{code:02x}"


def json_text(payload: Any) -> str:
    """`payload` as indented JSON, UTF-8 text kept readable; a lone surrogate (which no
    UTF-8 output takes) is written as its JSON escape, so the JSON reads back the same."""
    text = json.dumps(payload, ensure_ascii=False, indent=2)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def echo_json(payload: dict[str, Any]) -> None:
    """Print exactly one JSON object on stdout (UTF-8 text kept readable)."""
    click.echo(json_text(payload))


__all__ = [
    "USAGE_EXIT_CODE",
    "UsageFailure",
    "echo_json",
    "exit_on_user_error",
    "one_line",
    "terminal_safe",
    "usage_errors",
]
