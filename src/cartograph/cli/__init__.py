"""The ``cartograph`` command line: a thin shell over the library packages.

Each command group lives in its own module here and is registered in :data:`COMMANDS` with the
one line ``cartograph --help`` shows for it, so listing the commands imports none of them. A
command's module is imported when that command runs or shows its own ``--help``, and imports the
library packages it calls only when it runs: ``cartograph serve`` does not pay for Rift's SciPy,
``cartograph cards list`` does not pay for the embedding model, and ``--help`` pays for click.
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

import click

from cartograph.cli.common import (
    AppContext,
    configure_logging,
    home_option,
    limit_blas_threads,
    store_option,
)


class Entry(NamedTuple):
    """Where a command lives and what ``cartograph --help`` says of it."""

    module: str
    attr: str
    summary: str  # the first paragraph of the command's docstring (tests/e2e/test_cli.py checks it)


COMMANDS: dict[str, Entry] = {
    "keys": Entry(
        "cartograph.cli.keys_cmd",
        "keys",
        "Manage the operator key that signs cards, the keys trusted here, and revocations.",
    ),
    "cards": Entry(
        "cartograph.cli.cards_cmd",
        "cards",
        "Inspect the signed capability cards in the workspace.",
    ),
    "bootstrap": Entry(
        "cartograph.cli.bootstrap_cmd",
        "bootstrap",
        "Snapshot every upstream, generate capability cards, sign them, and store them.",
    ),
    "serve": Entry(
        "cartograph.cli.serve_cmd",
        "serve",
        "Serve the proxy: three tools (discover, status, call) in front of every upstream.",
    ),
    "rift": Entry(
        "cartograph.cli.rift_cmd",
        "rift",
        "Find tools whose signed cards are too close to tell apart.",
    ),
    "discover": Entry(
        "cartograph.cli.discover_cmd",
        "discover",
        "Rank the tools of the verified cards for TASK; show summaries, arguments and an "
        "example (--json: the whole input schemas).",
    ),
    "eval": Entry(
        "cartograph.cli.eval_cmd",
        "eval_",
        "Score ranking methods on a query set over the workspace's index, side by side.",
    ),
    "index": Entry(
        "cartograph.cli.index_cmd",
        "index",
        "Build or describe the retrieval index (in <home>/index/, or in the shared store).",
    ),
    "clients": Entry(
        "cartograph.cli.clients_cmd",
        "clients",
        "Manage the clients allowed to use `serve --transport http` (API keys and policies).",
    ),
    "tokens": Entry(
        "cartograph.cli.tokens_cmd",
        "tokens",
        "Tokens an MCP client receives: every upstream's tools/list vs. the proxy's.",
    ),
    "console": Entry(
        "cartograph.cli.console_cmd",
        "console",
        "Serve the operator's console alone: every replica's health, cards, audit and Rift.",
    ),
    "jobs": Entry(
        "cartograph.cli.jobs_cmd",
        "jobs",
        "Console actions queued for the operator's key: list them, run them.",
    ),
    "stubs": Entry(
        "cartograph.cli.stubs_cmd",
        "stubs",
        "Write a Python package to OUT_DIR: one module per server, one async function per tool.",
    ),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use, and listed without importing."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            entry = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(entry.module), entry.attr)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands section of ``--help``, as click writes it, from :data:`COMMANDS`."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            # a stand-in command with the registered help shortens it the way click does
            cmd = self.commands.get(name) or click.Command(name, help=COMMANDS[name].summary)
            rows.append((name, cmd.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@home_option
@store_option
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug).")
@click.version_option(package_name="cartograph")
@click.pass_context
def main(ctx: click.Context, home: str | None, store: str | None, verbose: int) -> None:
    """Cartograph: one MCP proxy in front of many servers, with signed capability cards."""
    limit_blas_threads()
    configure_logging(verbose)
    ctx.obj = AppContext(home=home, verbose=verbose, store=store)
