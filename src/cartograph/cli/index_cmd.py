"""`cartograph index`: build the retrieval index from the verified cards, or describe it."""

from __future__ import annotations

from typing import Any

import click

from cartograph.cli.common import (
    AppContext,
    emit_json,
    handle_errors,
    json_option,
    new_table,
    pass_app,
    stderr,
    stdout,
)


@click.group()
def index() -> None:
    """Build or describe the retrieval index (in <home>/index/, or in the shared store)."""


@index.command("build")
@click.option(
    "--embedder",
    "spec",
    default=None,
    help="Embedder spec: minilm-int8 (stock; the default), minilm-tools (trained for tools), "
    "minilm-exact, openai:<model>@<url>, "
    "st:<model>. Default: config.json 'embedder', $CARTOGRAPH_EMBEDDER, or minilm-int8.",
)
@json_option()
@pass_app
@handle_errors
def index_build(app: AppContext, spec: str | None, as_json: bool) -> None:
    """Rebuild the index from the cards that verify (cards that fail are left out)."""
    from cartograph.index import load_embedder, open_index_with_status
    from cartograph.storage import open_store

    embedder = load_embedder(spec) if spec else None
    ws = app.workspace
    store = open_store(ws)
    idx, status = open_index_with_status(ws, store, embedder, rebuild=True)
    info = {
        "path": store.index_where,
        "tools": len(idx),
        "servers": len(idx.servers),
        "embedder": idx.embedder.name,
        "model": idx.embedder.model,
        "build_seconds": round(idx.build_seconds, 2),
        "cards_left_out": status.skipped_cards,
    }
    if as_json:
        emit_json(info)
        return
    stdout.print(
        f"indexed {info['tools']} tools on {info['servers']} servers with {info['embedder']} "
        f"in {info['build_seconds']} s -> {info['path']}"
    )
    if status.skipped_cards:
        stderr.print(f"[yellow]{status.skipped_cards} card(s) left out[/] (see the log above)")


@index.command("info")
@json_option()
@pass_app
@handle_errors
def index_info(app: AppContext, as_json: bool) -> None:
    """Describe the saved index (without checking it against the cards)."""
    from cartograph.storage import open_store

    _show(open_store(app.workspace).index_info(), as_json)


def _show(info: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(info)
        return
    table = new_table(show_header=False)
    for key, value in info.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        table.add_row(key, str(value))
    stdout.print(table)
