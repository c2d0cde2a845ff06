"""`cartograph discover`: rank the workspace's signed tools for a task in plain words."""

from __future__ import annotations

import json
from typing import Any

import click

from cartograph.cli.common import (
    AppContext,
    emit_json,
    handle_errors,
    json_option,
    k_option,
    method_option,
    new_table,
    pass_app,
    stderr,
    stdout,
)
from cartograph.errors import ConfigError
from cartograph.index.names import DEFAULT_METHOD, METHODS, Method


@click.command()
@click.argument("task")
@k_option("How many tools to return.")
@method_option(METHODS, "Ranking method.", default=DEFAULT_METHOD)
@click.option(
    "--keyword",
    "-w",
    "keywords",
    multiple=True,
    help="A product name or identifier that must weigh in (lexical channel); repeatable.",
)
@click.option(
    "--rerank/--no-rerank",
    default=None,
    help="Rerank stage one's top 20 with the cross-encoder (default: $CARTOGRAPH_RERANK, else "
    "the workspace's `rerank` setting, else off).",
)
@json_option("Print the answer as JSON.")
@pass_app
@handle_errors
def discover(
    app: AppContext,
    task: str,
    k: int,
    method: Method,
    keywords: tuple[str, ...],
    rerank: bool | None,
    as_json: bool,
) -> None:
    """Rank the tools of the verified cards for TASK; show summaries, arguments and an example
    (--json: the whole input schemas).

    The index in <home>/index/ is loaded when it matches the verified cards and rebuilt
    (with the reason logged) when it is missing, stale or altered. --json prints what the
    proxy's discover tool answers: {"tools": [{server, tool, summary, usage, input_schema,
    examples}], "note"}.
    """
    from cartograph.index import open_index_with_status
    from cartograph.index.abstain import judge
    from cartograph.index.answer import render_answer
    from cartograph.index.rerank import workspace_reranker
    from cartograph.storage import open_store

    ws = app.workspace
    if ws.store is None and not ws.root.is_dir():
        raise ConfigError(
            f"no workspace at {ws.root}: pass --home DIR (or set $CARTOGRAPH_HOME), or create "
            "one with `cartograph bootstrap --config mcp.json`"
        )
    index, status = open_index_with_status(ws, open_store(ws))
    if status.action == "rebuilt":
        stderr.print(f"[yellow]index rebuilt[/]: {status.reason}", highlight=False)
    index.reranker = workspace_reranker(ws, rerank)
    hits = index.search(task, k=k, method=method, keywords=keywords)
    note = judge(hits, index.embedder.model)  # abstained: the tools are the nearest, not fits
    answer = render_answer(status.cards, hits, note, weak=note is not None)
    if as_json:
        emit_json(answer.to_json())
        return
    scores = {(h.server, h.tool): h.score for h in hits}
    ranked = f"{method} + rerank" if index.reranker else method
    table = new_table(title=f"{task!r} ({ranked}, {len(index)} tools)", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("tool (server)", overflow="fold", min_width=14, ratio=2)
    table.add_column("score", justify="right")
    table.add_column("summary", overflow="fold", ratio=3)
    table.add_column("arguments (* required)", overflow="fold", ratio=2)
    for i, t in enumerate(answer.tools, 1):
        arguments = schema_brief(t.input_schema)
        if t.examples:
            arguments += "\ne.g. " + json.dumps(t.examples[0], ensure_ascii=False)[:120]
        score = f"{scores[(t.server, t.tool)]:.3f}"
        table.add_row(str(i), f"{t.tool}\n({t.server})", score, t.summary, arguments)
    stdout.print(table)
    if answer.note:
        stderr.print(answer.note, highlight=False)


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
