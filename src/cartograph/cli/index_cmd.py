"""`cartograph index`: build the retrieval index from the verified cards, or describe it."""

from __future__ import annotations

import time
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
    """Rebuild the index from the cards that verify (cards that fail are left out), and bring
    the reorder stage's vectors up to date (unless it is off)."""
    from cartograph.index import load_embedder
    from cartograph.index.reorder import open_index_and_stage
    from cartograph.storage import open_store

    embedder = load_embedder(spec) if spec else None
    ws = app.workspace
    store = open_store(ws)
    started = time.perf_counter()
    idx, status, stage = open_index_and_stage(ws, store, embedder, rebuild=True)
    info = {
        "path": store.index_where,
        "tools": len(idx),
        "servers": len(idx.servers),
        "embedder": idx.embedder.name,
        "model": idx.embedder.model,
        "build_seconds": round(idx.build_seconds, 2),
        "reorder": None if stage is None else stage.model,
        "seconds": round(time.perf_counter() - started, 2),
        "cards_left_out": status.skipped_cards,
    }
    if as_json:
        emit_json(info)
        return
    stdout.print(
        f"indexed {info['tools']} tools on {info['servers']} servers with {info['embedder']} "
        f"in {info['build_seconds']} s -> {info['path']}"
    )
    if stage is not None:
        stdout.print(
            f"the reorder stage ({stage.embedder.name}, orders hybrid's top 5) has its vectors; "
            f"{info['seconds']} s in all"
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


@index.command("tune")
@click.option("--epochs", type=click.IntRange(1, 20), default=1, show_default=True)
@click.option("--lr", type=click.FloatRange(1e-7, 1e-3), default=2e-5, show_default=True)
@click.option("--threads", type=click.IntRange(1, 256), default=2, show_default=True)
@click.option(
    "--force", is_flag=True, help="Keep the adapted model even if the held-out check says no."
)
@click.option(
    "--remove", is_flag=True, help="Delete the adapted model; discover uses the shipped one."
)
@json_option()
@pass_app
@handle_errors
def index_tune(
    app: AppContext, epochs: int, lr: float, threads: int, force: bool, remove: bool, as_json: bool
) -> None:
    """Adapt the encoder to this catalog from its signed cards alone (needs the train extra).

    Pseudo-queries (each tool's example tasks and summary) train all-MiniLM-L6-v2; a fifth of
    the tools is held out, and the model is kept in <home>/models/adapted/ only if it ranks
    their pseudo-queries better than the shipped model. Discover then uses it until the cards
    change (it falls back to the shipped model with a warning until you run this again).
    """
    from cartograph.index.adapt_train import TuneSettings, remove_adapted, tune
    from cartograph.storage import open_store
    from cartograph.trust.store import TrustStore

    ws = app.workspace
    if remove:
        gone = remove_adapted(ws.root)
        info: dict[str, Any] = {"removed": gone}
        if as_json:
            emit_json(info)
        else:
            stdout.print("adapted model removed" if gone else "no adapted model to remove")
        return
    loaded = open_store(ws).load_verified(TrustStore.for_workspace(ws))
    settings = TuneSettings(epochs=epochs, lr=lr, threads=threads, force=force)
    result = tune(ws.root, loaded.cards, settings)
    info = {"kept": result.manifest["kept"], "folder": str(result.folder or ""), **result.manifest}
    if as_json:
        emit_json(info)
        return
    held = result.manifest["held_out"]
    train = result.manifest["training"]
    stdout.print(
        f"tuned on {train['pairs']} pseudo-queries of {result.manifest['tools']} tools in "
        f"{train['wall_s']} s; held-out tools R@1/R@5: shipped {held['base']['r1']:.3f}/"
        f"{held['base']['r5']:.3f}, adapted {held['adapted']['r1']:.3f}/"
        f"{held['adapted']['r5']:.3f}"
    )
    if result.kept:
        stdout.print(f"kept -> {result.folder}; the next discover rebuilds the index with it")
    else:
        stderr.print("[yellow]not kept[/]: it does not rank the held-out tools better")
