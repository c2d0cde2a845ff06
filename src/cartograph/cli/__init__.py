"""The ``cartograph`` command line: a thin shell over the library packages.

Each command group lives in its own module here and is registered in :data:`COMMAND_MODULES`.
"""

from __future__ import annotations

import importlib

import click

from cartograph.cli.common import AppContext, configure_logging

# module name -> attribute holding the click command or group
COMMAND_MODULES: list[tuple[str, str]] = [
    ("cartograph.cli.keys_cmd", "keys"),
    ("cartograph.cli.cards_cmd", "cards"),
    ("cartograph.cli.bootstrap_cmd", "bootstrap"),
    ("cartograph.cli.serve_cmd", "serve"),
    ("cartograph.cli.rift_cmd", "rift"),
    ("cartograph.cli.discover_cmd", "discover"),
    ("cartograph.cli.eval_cmd", "eval_"),
    ("cartograph.cli.index_cmd", "index"),
]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--home",
    envvar="CARTOGRAPH_HOME",
    type=click.Path(file_okay=False),
    help="Workspace directory (keys, cards, index, snapshots, logs). "
    "Default: $CARTOGRAPH_HOME or ./.cartograph",
)
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug).")
@click.version_option(package_name="cartograph")
@click.pass_context
def main(ctx: click.Context, home: str | None, verbose: int) -> None:
    """Cartograph: one MCP proxy in front of many servers, with signed capability cards."""
    configure_logging(verbose)
    ctx.obj = AppContext(home=home, verbose=verbose)


for _module, _attr in COMMAND_MODULES:
    main.add_command(getattr(importlib.import_module(_module), _attr))
