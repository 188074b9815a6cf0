"""A package's public names imported on first use (PEP 562), so that a command importing
the package for one name does not pay for the modules behind the others."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose public names live in the modules
    `homes` maps them to. A name is imported the first time it is asked for, then kept in
    the package's namespace (later lookups skip `__getattr__`)."""
    namespace = import_module(package).__dict__
    listed = tuple(public)

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *listed})

    return __getattr__, __dir__
