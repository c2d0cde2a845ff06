"""`cartograph tokens`: tokens a client receives with every upstream exposed vs. the proxy."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cartograph.cli.common import (
    AppContext,
    emit_json,
    handle_errors,
    json_option,
    k_option,
    new_table,
    pass_app,
    stdout,
)
from cartograph.evaluate.tokenizers import DEFAULT_TOKENIZER, TOKENIZERS

if TYPE_CHECKING:
    from cartograph.evaluate.tokenizers import Tokenizer
    from cartograph.evaluate.tokens import TokenReport


@click.command()
@k_option("Tools per discover response.", flag="--k", most=20)
@click.option(
    "--tokenizer",
    type=click.Choice(TOKENIZERS),
    default=DEFAULT_TOKENIZER,
    show_default=True,
    help="Which offline tokenizer counts.",
)
@click.option(
    "--tasks",
    "tasks_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Sample tasks, one a line (default: the cards' own example tasks).",
)
@click.option(
    "--sample",
    type=click.IntRange(1),
    default=20,
    show_default=True,
    help="How many of the cards' example tasks to use (spread evenly).",
)
@click.option(
    "--snapshot",
    "snapshot_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Snapshot for the direct side (default: the latest in <home>/snapshots/).",
)
@json_option("Print the report as JSON.")
@pass_app
@handle_errors
def tokens(
    app: AppContext,
    k: int,
    tokenizer: str,
    tasks_file: Path | None,
    sample: int,
    snapshot_path: Path | None,
    as_json: bool,
) -> None:
    """Tokens an MCP client receives: every upstream's tools/list vs. the proxy's.

    The direct side is one tools/list response per upstream with the tools of the latest
    snapshot; the proxy side is the real proxy's tools/list plus its discover response for
    each task, both as JSON-RPC messages on the wire. The completed-task view adds the extra
    discover turn and gives the break-even catalog size.
    """
    import anyio

    from cartograph.evaluate.tokenizers import load_tokenizer
    from cartograph.evaluate.tokens import example_tasks, read_tasks
    from cartograph.proxy.memory import measure_tokens
    from cartograph.storage import open_store

    ws = app.workspace
    tok = load_tokenizer(tokenizer)
    if tasks_file:
        tasks = read_tasks(tasks_file)
    else:
        tasks = example_tasks(open_store(ws).load_verified().cards, sample)
    (report,) = anyio.run(lambda: measure_tokens(ws, tasks, tok, (k,), snapshot_path=snapshot_path))
    if as_json:
        emit_json(report.to_json())
        return
    stdout.print(
        f"tokenizer [bold]{tok.name}[/] ({tok.source}); {report.servers} servers, "
        f"{report.tools} tools, snapshot {report.snapshot}",
        highlight=False,
    )
    _print_tasks(report, tok, k)
    _print_completed(report, tok)


def _print_tasks(report: TokenReport, tok: Tokenizer, k: int) -> None:
    table = new_table(title=f"tokens before the first tool call (k={k}, {tok.name})")
    for col in ("task", "all tools/list", "proxy list + discover", "discover", "tools", "saving"):
        table.add_column(col, overflow="fold", justify="left" if col == "task" else "right")
    for row in report.rows:
        table.add_row(
            row.task,
            f"{row.direct:,}",
            f"{row.proxy:,}",
            f"{row.discover_response:,}",
            str(row.returned),
            f"{row.saving:.1%}",
        )
    table.add_section()
    table.add_row(
        "mean",
        f"{report.direct_list:,}",
        f"{report.mean('proxy'):,.0f}",
        f"{report.mean('discover_response'):,.0f}",
        "",
        f"{1 - report.mean('proxy') / report.direct_list:.1%}" if report.direct_list else "",
    )
    stdout.print(table)


def _print_completed(report: TokenReport, tok: Tokenizer) -> None:
    view = new_table(title=f"completed task (adds the discover turn; {tok.name})")
    view.add_column("measure")
    view.add_column("tokens", justify="right")
    view.add_row(
        "direct: every tools/list + task, one turn", f"{report.mean('direct_completed'):,.0f}"
    )
    view.add_row(
        "proxy: 2 x (proxy tools/list + task) + discover call + response",
        f"{report.mean('proxy_completed'):,.0f}",
    )
    view.add_row("tokens per tool in a full tools/list", f"{report.tokens_per_tool:,.1f}")
    view.add_row("discover tokens per returned tool", f"{report.per_returned_tool:,.1f}")
    view.add_row("break-even catalog size (tools)", f"{report.break_even_tools:,.1f}")
    stdout.print(view)
    stdout.print(
        f"below about {report.break_even_tools:.0f} tools exposing everything is cheaper; "
        f"this catalog has {report.tools}.",
        highlight=False,
    )
