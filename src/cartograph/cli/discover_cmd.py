"""`cartograph discover`: rank the workspace's signed tools for a task in plain words."""

from __future__ import annotations

import json

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
from cartograph.index.names import DEFAULT_METHOD, METHODS, Method


@click.command()
@click.argument("task")
@k_option("How many tools to return.")
@method_option(METHODS, "Ranking method.", default=DEFAULT_METHOD)
@json_option("Print the answer as JSON.")
@pass_app
@handle_errors
def discover(app: AppContext, task: str, k: int, method: Method, as_json: bool) -> None:
    """Rank the tools of the verified cards for TASK; show summaries, schemas and examples.

    The index in <home>/index/ is loaded when it matches the verified cards and rebuilt
    (with the reason logged) when it is missing, stale or altered. --json prints what the
    proxy's discover tool answers: {"tools": [{server, tool, summary, usage, input_schema,
    examples}], "note"}.
    """
    from cartograph.index import open_index_with_status
    from cartograph.index.answer import render_answer
    from cartograph.storage import open_store

    ws = app.workspace
    index, status = open_index_with_status(ws, open_store(ws))
    if status.action == "rebuilt":
        stderr.print(f"[yellow]index rebuilt[/]: {status.reason}", highlight=False)
    hits = index.search(task, k=k, method=method)
    answer = render_answer(status.cards, hits)
    if as_json:
        emit_json(answer.to_json())
        return
    scores = {(h.server, h.tool): h.score for h in hits}
    table = new_table(title=f"{task!r} ({method}, {len(index)} tools)", show_lines=True)
    for col in ("#", "server", "tool", "score", "summary", "input schema", "example"):
        table.add_column(col, overflow="fold")
    for i, t in enumerate(answer.tools, 1):
        table.add_row(
            str(i),
            t.server,
            t.tool,
            f"{scores[(t.server, t.tool)]:.4f}",
            t.summary,
            json.dumps(t.input_schema, ensure_ascii=False),
            json.dumps(t.examples[0], ensure_ascii=False) if t.examples else "",
        )
    stdout.print(table)
    if answer.note:
        stderr.print(answer.note, highlight=False)
