"""The ``cartograph`` command line: a thin shell over the library packages.

Each command group lives in its own module here and is registered in :data:`COMMANDS`. Modules
are imported only when their command runs (or for ``--help``), so ``cartograph serve`` does not
pay for Rift's SciPy and ``cartograph cards list`` does not pay for the embedding model.
"""

from __future__ import annotations

import importlib

import click

from cartograph.cli.common import AppContext, configure_logging

# command name -> (module, attribute holding the click command or group)
COMMANDS: dict[str, tuple[str, str]] = {
    "keys": ("cartograph.cli.keys_cmd", "keys"),
    "cards": ("cartograph.cli.cards_cmd", "cards"),
    "bootstrap": ("cartograph.cli.bootstrap_cmd", "bootstrap"),
    "serve": ("cartograph.cli.serve_cmd", "serve"),
    "rift": ("cartograph.cli.rift_cmd", "rift"),
    "discover": ("cartograph.cli.discover_cmd", "discover"),
    "eval": ("cartograph.cli.eval_cmd", "eval_"),
    "index": ("cartograph.cli.index_cmd", "index"),
    "clients": ("cartograph.cli.clients_cmd", "clients"),
    "tokens": ("cartograph.cli.tokens_cmd", "tokens"),
    "stubs": ("cartograph.cli.stubs_cmd", "stubs"),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attr = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(module), attr)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--home",
    envvar="CARTOGRAPH_HOME",
    type=click.Path(file_okay=False),
    help="Workspace directory (keys, cards, index, snapshots, logs). "
    "Default: $CARTOGRAPH_HOME or ./.cartograph",
)
@click.option(
    "--store",
    envvar="CARTOGRAPH_STORE",
    metavar="URL",
    help="Shared store for cards, index, audit log and quarantine: postgresql://USER@HOST/DB "
    "(several proxy replicas on one store; docs/scale-out.md). Default: $CARTOGRAPH_STORE, "
    "else the workspace files.",
)
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug).")
@click.version_option(package_name="cartograph")
@click.pass_context
def main(ctx: click.Context, home: str | None, store: str | None, verbose: int) -> None:
    """Cartograph: one MCP proxy in front of many servers, with signed capability cards."""
    configure_logging(verbose)
    ctx.obj = AppContext(home=home, verbose=verbose, store=store)
