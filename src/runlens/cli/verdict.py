"""`runlens keys init|show` and `runlens verify`: the signing keys and the signed verdict.

`runlens verify` checks a run (by id or workspace folder) or an exported HTML file (`runlens
export RUN --html FILE`); it exits 0 when every check holds, 1 when any differs (each named),
2 for a usage error (no such run, a key file that is no Ed25519 public key, a file that is no
RunLens export).
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from runlens.cli.common import echo_json, exit_on_user_error, terminal_safe

HOME_HELP = (
    "Runs home whose keys/ folder holds the keys (default: $RUNLENS_HOME or ./runlens-runs)."
)


@click.group("keys")
def keys_command() -> None:
    """Make and show the Ed25519 keys that sign run verdicts ($RUNLENS_HOME/keys/)."""


@keys_command.command("init")
@click.option("--name", default="default", show_default=True, help="The key's name.")
@click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)
@exit_on_user_error()
def keys_init_command(name: str, home: Path | None) -> None:
    """Make a new key pair NAME.pem (private, mode 0600) and NAME.pub.pem; never overwrites."""
    from runlens.verdict.keys import init_key, private_path, public_path

    key = init_key(name, home)
    click.echo(f"private key: {private_path(name, home)} (mode 0600: keep it secret)")
    click.echo(f"public key:  {public_path(name, home)}")
    click.echo(f"key id:      {key.keyid}")


@keys_command.command("show")
@click.argument("name", default="default")
@click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)
@exit_on_user_error()
def keys_show_command(name: str, home: Path | None) -> None:
    """Print the public key NAME (PEM) and its key id."""
    from runlens.errors import UserError
    from runlens.verdict.keys import (
        key_id,
        load_private_key,
        load_public_key,
        private_path,
        public_path,
        public_pem,
    )

    public_file, private_file = public_path(name, home), private_path(name, home)
    if public_file.is_file():
        public_key = load_public_key(public_file)
    elif private_file.is_file():
        public_key = load_private_key(private_file, name, "home").public_key
    else:
        raise UserError(f"no key {name!r} in {public_file.parent} (make one: runlens keys init)")
    click.echo(public_pem(public_key), nl=False)
    click.echo(f"key id: {key_id(public_key)}")


@click.command("verify")
@click.argument("target")
@click.option(
    "--key",
    "keys",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="PUB.pem",
    help="A public key the verdict may be signed by (repeatable; default: every key of the home).",
)
@click.option(
    "--source",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help=(
        "Rebuild the Evidence Index from this file instead of the workspace's input/; for an "
        "exported file, check its cited rows against this file's rows."
    ),
)
@click.option("--home", type=click.Path(path_type=Path), help="Runs home (default: $RUNLENS_HOME).")
@click.option("--json", "as_json", is_flag=True, help="Print {verified, checks} as JSON.")
@exit_on_user_error()
def verify_command(
    target: str, keys: tuple[Path, ...], source: Path | None, home: Path | None, as_json: bool
) -> None:
    """Re-check the signed verdict of TARGET (a run id, a workspace folder or an exported
    HTML file).

    A run: signature, hashes, the Evidence Index rebuilt from the input, the validators
    re-run, the reviews. An exported file: the verdict's signature, each embedded file's
    hash, the export's signed manifest, the cited rows (against its row list, or --source),
    the reviews.

    Exit 0 when all hold, 1 when anything differs, 2 for a usage error."""
    from runlens.verdict.verify import verify_target

    report = verify_target(target, home=home, keys=keys, source=source)
    if as_json:
        echo_json(report.as_json())
    else:
        console = Console(highlight=False, soft_wrap=True)
        word, style = (
            ("VERIFIED", "bold green") if report.verified else ("NOT VERIFIED", "bold red")
        )
        failed = len(report.failed)
        summary = "every check holds" if not failed else f"{failed} check(s) failed"
        console.print(
            Text.assemble((word, style), "  ", terminal_safe(str(report.run_id)), "  ", summary)
        )
        for check in report.checks:
            mark = ("✓", "green") if check.ok else ("✗", "red")
            console.print(
                Text.assemble(
                    "  ",
                    mark,
                    " ",
                    (terminal_safe(check.check), "bold"),
                    "  ",
                    terminal_safe(check.detail),
                )
            )
    raise click.exceptions.Exit(0 if report.verified else 1)
