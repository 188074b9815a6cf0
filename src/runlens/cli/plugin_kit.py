"""`runlens plugins`, `runlens new-plugin NAME`, `runlens check-plugin NAME`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from runlens.cli.common import echo_json, exit_on_user_error, terminal_safe

if TYPE_CHECKING:
    from rich.console import Console

    from runlens.kit.conformance import ConformanceReport
    from runlens.kit.listing import InstalledPlugin

_STATUS_STYLE = {"passed": "green", "failed": "bold red", "skipped": "yellow"}


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for machines.")
def plugins_command(as_json: bool) -> None:
    """List the installed plugins with their deliverables.

    A plugin that fails to load is listed with its error.
    """
    from rich.console import Console

    from runlens.kit.listing import installed_plugins

    found = installed_plugins()
    if as_json:
        echo_json({"plugins": [entry.to_json() for entry in found]})
        return
    console = Console(highlight=False)
    if not found:
        console.print("No plugins installed (entry point group runlens.plugins).")
        return
    for entry in found:
        _print_plugin(console, entry)


def _print_plugin(console: Console, entry: InstalledPlugin) -> None:
    from rich.markup import escape
    from rich.padding import Padding
    from rich.table import Table

    source = f"{entry.distribution} {entry.version}" if entry.distribution else entry.entry_point
    console.print(f"[bold]{escape(entry.name)}[/] [dim]({escape(source)})[/]")
    plugin = entry.plugin
    if plugin is None:
        console.print(f"  [red]failed to load:[/] {escape(terminal_safe(entry.error or ''))}")
        console.print()
        return
    console.print(f"  {escape(plugin.description)}")
    offline = "yes" if plugin.offline_model is not None else "no (needs --model)"
    console.print(f"  input tool {escape(plugin.input_tool)} · offline model {offline}")
    table = Table(box=None, padding=(0, 2), pad_edge=False)
    table.add_column("deliverable", style="bold", overflow="fold")
    for column in ("label", "required", "kind"):
        table.add_column(column)
    for contract in plugin.contracts:
        table.add_row(
            escape(contract.name),
            escape(contract.display_name),
            "yes" if contract.required else "no",
            contract.kind,
        )
    console.print(Padding(table, (0, 0, 1, 2)))


@click.command("new-plugin")
@click.argument("name")
@click.option(
    "--dir",
    "parent",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=Path("."),
    show_default=True,
    help="Folder to write the package folder NAME into.",
)
@exit_on_user_error()
def new_plugin_command(name: str, parent: Path) -> None:
    """Write a working plugin package NAME (a small ticket-triage example) to DIR/NAME.

    NAME is lowercase letters, digits and hyphens, e.g. ticket-triage; the package is the
    name with underscores. Exit 0 when written, 2 for a bad name or an existing folder.
    """
    from runlens.kit.scaffold import create_plugin

    created = create_plugin(name, parent)
    root = created.root
    click.echo(f"Wrote plugin {created.name} (package {created.package}) to {root}:")
    for relative in created.files:
        click.echo(f"  {relative}")
    click.echo("Next:")
    click.echo(f"  pip install -e {root}")
    click.echo(f"  runlens check-plugin {created.name}")
    click.echo(
        f"  runlens run {created.name} {created.fixture} --model scripted:{created.passing_model}"
    )


@click.command("check-plugin")
@click.argument("name")
@click.option(
    "--workspace",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Keep the conformance runs' workspaces here (default: a temporary folder).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for machines.")
def check_plugin_command(name: str, workspace: Path | None, as_json: bool) -> None:
    """Run the conformance suite on the installed plugin NAME.

    Contracts, JSON Schemas, evidence paths, plan and tools are checked; then the plugin's
    passing scripted model must complete a run on its fixture, its fabricating one must fail
    with the expected findings, and both runs' records must be complete.
    Exit 0 when every check passed, 1 when one failed, 2 for an unknown plugin.
    """
    from runlens.cli.common import usage_errors
    from runlens.kit.conformance import check_installed_plugin

    with usage_errors():
        report = check_installed_plugin(name, workspace=workspace)
    if as_json:
        echo_json(report.to_json())
    else:
        _print_report(report)
    raise SystemExit(0 if report.passed else 1)


def _print_report(report: ConformanceReport) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False)
    table = Table(title=f"Conformance of {escape(report.plugin)}", title_justify="left")
    table.add_column("check", style="bold")
    table.add_column("status")
    table.add_column("what is checked")
    for result in report.checks:
        style = _STATUS_STYLE[result.status]
        lines = [escape(result.title)]
        if result.status != "passed":
            lines.extend(f"[dim]- {escape(terminal_safe(detail))}[/]" for detail in result.details)
        table.add_row(result.check, f"[{style}]{result.status}[/]", "\n".join(lines))
    console.print(table)
    verdict = "[green]passed[/]" if report.passed else "[bold red]failed[/]"
    console.print(f"{escape(report.plugin)}: {verdict}")
