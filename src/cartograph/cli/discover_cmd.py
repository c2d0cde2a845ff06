"""`cartograph discover`: rank the workspace's signed tools for a task in plain words."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

from cartograph.cli.common import AppContext, emit_json, handle_errors, pass_app, stderr, stdout
from cartograph.errors import ConfigError
from cartograph.index import DEFAULT_METHOD, METHODS, open_index_with_status
from cartograph.index.discover import discover as discover_answer
from cartograph.storage import open_store


@click.command()
@click.argument("task")
@click.option(
    "-k",
    "k",
    type=click.IntRange(1, 100),
    default=5,
    show_default=True,
    help="How many tools to return.",
)
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default=DEFAULT_METHOD,
    show_default=True,
    help="Ranking method.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@pass_app
@handle_errors
def discover(app: AppContext, task: str, k: int, method: str, as_json: bool) -> None:
    """Rank the tools of the verified cards for TASK; show summaries, arguments and an example
    (--json: the whole input schemas).

    The index in <home>/index/ is loaded when it matches the verified cards and rebuilt
    (with the reason logged) when it is missing, stale or altered.
    """
    ws = app.workspace
    if ws.store is None and not ws.root.is_dir():
        raise ConfigError(
            f"no workspace at {ws.root}: pass --home DIR (or set $CARTOGRAPH_HOME), or create "
            "one with `cartograph bootstrap --config mcp.json`"
        )
    index, status = open_index_with_status(ws, open_store(ws))
    if status.action == "rebuilt":
        stderr.print(f"[yellow]index rebuilt[/]: {status.reason}", highlight=False)
    answer = discover_answer(index, status.cards, task, k=k, method=method)
    if as_json:
        emit_json(answer)
        return
    table = Table(title=f"{task!r} ({method}, {len(index)} tools)", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("tool (server)", overflow="fold", min_width=14, ratio=2)
    table.add_column("score", justify="right")
    table.add_column("summary", overflow="fold", ratio=3)
    table.add_column("arguments (* required)", overflow="fold", ratio=2)
    for i, r in enumerate(answer["results"], 1):
        ex = r["example"]
        arguments = schema_brief(r["input_schema"])
        if ex and ex["arguments"]:
            arguments += "\ne.g. " + json.dumps(ex["arguments"], ensure_ascii=False)[:120]
        table.add_row(
            str(i), f"{r['tool']}\n({r['server']})", f"{r['score']:.3f}", r["summary"], arguments
        )
    stdout.print(table)


def schema_brief(schema: dict[str, Any], most: int = 8) -> str:
    """``name*: type, ...`` for a tool's input schema: what a reader needs at a glance."""
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return "(none)"
    required = set(schema.get("required") or [])
    parts = []
    for name, spec in list(props.items())[:most]:
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        kind = "|".join(map(str, kind)) if isinstance(kind, list) else str(kind)
        parts.append(f"{name}{'*' if name in required else ''}: {kind}")
    more = len(props) - most
    return ", ".join(parts) + (f", +{more} more" if more > 0 else "")
