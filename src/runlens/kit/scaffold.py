"""`runlens new-plugin NAME`: write a working plugin package from the template in the wheel.

The template (`runlens/kit/template/`, files ending in `.tmpl` so nothing imports or lints
them as this package's code) is a small ticket-triage plugin. Writing it is all or nothing:
the files go into a hidden folder next to the target, which is renamed into place only once
every file is written.
"""

from __future__ import annotations

import keyword
import re
import shutil
import sys
import uuid
from dataclasses import dataclass
from importlib.metadata import version
from importlib.resources import files
from importlib.resources.abc import Traversable
from importlib.util import find_spec
from pathlib import Path

from runlens.errors import UserError
from runlens.plugins.loader import available_plugins

SUFFIX = ".tmpl"
#: The folder standing for the package in the template's paths.
PACKAGE_FOLDER = "__package__"
#: A plugin name: lowercase words of letters and digits joined by single hyphens.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
MAX_NAME_LENGTH = 50
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


@dataclass(frozen=True, slots=True)
class NewPlugin:
    """A plugin package written by `create_plugin`."""

    name: str
    package: str
    root: Path
    files: tuple[str, ...]

    @property
    def fixture(self) -> Path:
        return self.root / "src" / self.package / "conformance" / "tickets.csv"

    @property
    def passing_model(self) -> Path:
        return self.root / "src" / self.package / "conformance" / "passing.yaml"


def package_name(name: str) -> str:
    """The Python package of plugin `name`, or a `UserError` saying what a name must be."""
    if not NAME_PATTERN.fullmatch(name) or len(name) > MAX_NAME_LENGTH:
        raise UserError(
            f"invalid plugin name {name!r}: use lowercase letters, digits and single hyphens, "
            f"starting with a letter, at most {MAX_NAME_LENGTH} characters (e.g. ticket-triage)"
        )
    package = name.replace("-", "_")
    if keyword.iskeyword(package) or package in sys.stdlib_module_names:
        raise UserError(f"invalid plugin name {name!r}: {package!r} is a Python built-in name")
    if package == "runlens" or package == "tests":
        raise UserError(f"invalid plugin name {name!r}: {package!r} is taken by RunLens")
    if name in available_plugins():
        raise UserError(f"a plugin named {name!r} is already installed: choose another name")
    if find_spec(package) is not None:
        raise UserError(
            f"a Python module named {package!r} is already importable: choose another name"
        )
    return package


def create_plugin(name: str, parent: Path) -> NewPlugin:
    """Write the package of plugin `name` to `parent/name`; nothing is left on failure."""
    package = package_name(name)
    if not parent.is_dir():
        raise UserError(f"{parent} is not a directory")
    target = parent / name
    if target.exists() or target.is_symlink():
        raise UserError(f"{target} already exists: choose another --dir, or remove it first")
    values = {
        "name": name,
        "package": package,
        "title": " ".join(word.capitalize() for word in name.split("-")),
        "runlens_version": version("runlens"),
    }
    staging = parent / f".{name}.partial-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        written = _write_tree(files("runlens.kit").joinpath("template"), staging, values)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return NewPlugin(name, package, target, tuple(sorted(written)))


def _write_tree(template: Traversable, staging: Path, values: dict[str, str]) -> list[str]:
    written: list[str] = []
    pending: list[tuple[Traversable, tuple[str, ...]]] = [(template, ())]
    while pending:
        folder, parts = pending.pop()
        for entry in folder.iterdir():
            name = values["package"] if entry.name == PACKAGE_FOLDER else entry.name
            if entry.is_dir():
                pending.append((entry, (*parts, name)))
            elif name.endswith(SUFFIX):
                relative = "/".join((*parts, name.removesuffix(SUFFIX)))
                path = staging.joinpath(relative)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(render(entry.read_text(encoding="utf-8"), values), "utf-8")
                written.append(relative)
    return written


def render(text: str, values: dict[str, str]) -> str:
    """`text` with every `{{key}}` replaced by its value; an unknown key is a bug."""

    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"template placeholder {{{{{key}}}}} has no value")
        return values[key]

    return _PLACEHOLDER.sub(value, text)


__all__ = ["NAME_PATTERN", "NewPlugin", "create_plugin", "package_name", "render"]
