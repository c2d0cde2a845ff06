"""`cartograph bootstrap`: snapshot the upstreams, generate and sign their cards.

Generation is always this explicit step; later commands load cards and never rewrite them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cartograph.cli.common import (
    AppContext,
    config_option,
    emit_json,
    handle_errors,
    json_option,
    new_table,
    pass_app,
    progress,
    stderr,
)
from cartograph.cli.common import stdout as out
from cartograph.errors import UsageError
from cartograph.generate import GENERATORS, GeneratorName
from cartograph.workspace import Workspace, read_settings, update_settings

if TYPE_CHECKING:
    from cartograph.errors import UpstreamError
    from cartograph.generate.attest import AttestResult
    from cartograph.generate.llm.client import LLMSettings
    from cartograph.storage import Store
    from cartograph.trust.keys import OperatorKey
    from cartograph.upstream.snapshot import Snapshot


@click.command()
@config_option(
    "mcp.json to federate (Claude Desktop / Claude Code / Cursor / VS Code shape). "
    "Default: the one recorded in the workspace by the last bootstrap."
)
@click.option(
    "--from-snapshot",
    "snapshot_path",
    type=click.Path(dir_okay=False, exists=True),
    help="Build cards from a recorded snapshot instead of starting servers: our "
    "snapshot format, a fleet catalog.json, or a corpus tools.jsonl.",
)
@click.option(
    "--server",
    "servers",
    multiple=True,
    metavar="NAME",
    help="Only (re)generate this server's card; repeatable. Others stay untouched.",
)
@click.option(
    "--generator",
    type=click.Choice(GENERATORS),
    default="bootstrap",
    show_default=True,
    help="Who writes the card text: the deterministic generator, or the operator's LLM "
    '(settings in the "llm" block of <home>/config.json; see docs/llm-generator.md).',
)
@click.option("--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1.")
@click.option("--llm-model", help="Model name sent to the endpoint.")
@click.option(
    "--llm-api-key-env", metavar="VAR", help="NAME of the environment variable holding the key."
)
@click.option("--llm-concurrency", type=click.IntRange(1), help="Model requests at once.")
@click.option(
    "--allow-fallback/--no-fallback",
    default=None,
    help="Use the bootstrap text for a tool the model cannot write (default: the workspace "
    "setting, else no fallback: the server fails).",
)
@click.option(
    "--timeout",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds each upstream may take to start and list its tools.",
)
@click.option(
    "--concurrency", type=int, default=8, show_default=True, help="Upstreams started at once."
)
@click.option("--no-index", is_flag=True, help="Do not build the retrieval index afterwards.")
@click.option("--strict", is_flag=True, help="Exit 1 when any upstream fails.")
@json_option()
@pass_app
@handle_errors
def bootstrap(
    app: AppContext,
    config_path: str | None,
    snapshot_path: str | None,
    servers: tuple[str, ...],
    generator: GeneratorName,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_api_key_env: str | None,
    llm_concurrency: int | None,
    allow_fallback: bool | None,
    timeout: float,
    concurrency: int,
    no_index: bool,
    strict: bool,
    as_json: bool,
) -> None:
    """Snapshot every upstream, generate capability cards, sign them, and store them."""
    from cartograph.upstream.snapshot import load_snapshot, save_snapshot

    ws = app.workspace.ensure()
    llm = None
    if generator == "llm":
        overrides = {
            "base_url": llm_base_url,
            "model": llm_model,
            "api_key_env": llm_api_key_env,
            "concurrency": llm_concurrency,
            "allow_fallback": allow_fallback,
        }
        llm = _llm_settings(ws, overrides)
    key = _operator_key(ws)
    upstream_errors: dict[str, UpstreamError] = {}
    configured: set[str] | None = None
    if snapshot_path:
        if config_path:
            raise UsageError("use either --config or --from-snapshot, not both")
        snapshot = load_snapshot(Path(snapshot_path))
        _check_names(servers, snapshot.servers, snapshot_path)
    else:
        snapshot, upstream_errors, configured = _snapshot_from_config(
            ws, config_path, servers, timeout, concurrency
        )
    saved = save_snapshot(
        snapshot, ws.snapshots_dir / f"{snapshot.created_at.replace(':', '')}.json"
    )
    from cartograph.storage import open_store

    store = open_store(ws)
    result = _attest(ws, store, snapshot, key, generator, servers, llm)
    index_note = None if no_index else _build_index(ws, store)
    _report(result, upstream_errors, saved, key.key_id, index_note, as_json)
    if configured is not None and not as_json:
        _say_unconfigured(store, configured)
    if not result.written or (strict and (upstream_errors or result.failed)):
        raise SystemExit(1)


def _llm_settings(ws: Workspace, overrides: dict[str, Any]) -> LLMSettings:
    """The LLM generator's settings: the workspace's "llm" block, then the options given."""
    from cartograph.generate.llm.client import settings_from

    llm = settings_from(read_settings(ws).llm, overrides, source=str(ws.config_file))
    llm.api_key()  # fail now, naming the variable, if it is named but unset
    return llm


def _attest(
    ws: Workspace,
    store: Store,
    snapshot: Snapshot,
    key: OperatorKey,
    generator: GeneratorName,
    servers: tuple[str, ...],
    llm: LLMSettings | None,
) -> AttestResult:
    """Generate, sign and store the cards, with a progress bar per server (and per tool)."""
    from cartograph.generate.attest import attest_snapshot

    with progress() as bar:
        task = bar.add_task("generating and signing cards", total=len(snapshot.servers))
        tool_task = None
        if llm is not None:
            n_tools = sum(
                len(s.tools) for n, s in snapshot.servers.items() if not servers or n in servers
            )
            tool_task = bar.add_task(f"asking {llm.model}", total=n_tools)

        def on_tool(_server: str, _tool: str, _outcome: str) -> None:
            if tool_task is not None:
                bar.advance(tool_task)

        return attest_snapshot(
            ws,
            snapshot,
            key,
            store=store,
            generator=generator,
            servers=servers or None,
            on_server=lambda _name: bar.advance(task),
            llm=llm,
            on_tool=on_tool,
        )


def _operator_key(ws: Workspace) -> OperatorKey:
    from cartograph.trust.keys import load_key
    from cartograph.trust.lifecycle import init_key

    if not ws.private_key.exists():
        key = init_key(ws)
        stderr.print(f"created operator key {key.key_id} in {ws.private_key}", highlight=False)
        return key
    return load_key(ws)


def _check_names(wanted: tuple[str, ...], known: Any, source: str) -> None:
    missing = [n for n in wanted if n not in known]
    if missing:
        raise UsageError(
            f"{source}: no server named {', '.join(map(repr, missing))}; "
            f"known: {', '.join(sorted(known))}"
        )


def _say_unconfigured(store: Store, configured: set[str]) -> None:
    """Name the cards this config no longer serves: they would linger in `cards list`."""
    stale = sorted(set(store.load_verified().cards) - configured)
    if stale:
        stderr.print(
            f"{len(stale)} card(s) of servers not in this config stay in the workspace, "
            f"neither offered nor callable: {', '.join(stale)}; `cartograph cards prune` "
            "removes them",
            highlight=False,
        )


def _snapshot_from_config(
    ws: Workspace,
    config_path: str | None,
    servers: tuple[str, ...],
    timeout: float,
    concurrency: int,
) -> tuple[Snapshot, dict[str, UpstreamError], set[str]]:
    import anyio

    from cartograph.config import load_config
    from cartograph.upstream.chain import outgoing_chain, with_chain
    from cartograph.upstream.connect import ServerDone, snapshot_servers

    if not config_path:
        recorded = read_settings(ws).mcp_config
        if recorded is None:
            raise UsageError(
                "no --config given and none recorded in the workspace; "
                "pass --config path/to/mcp.json"
            )
        config_path = recorded
    path = Path(config_path).resolve()
    fleet = load_config(path)
    _check_names(servers, fleet.servers, str(path))
    chain = outgoing_chain(ws, os.environ, "bootstrap")
    chosen = {
        n: with_chain(c, chain) for n, c in fleet.servers.items() if not servers or n in servers
    }
    if not chosen:
        raise UsageError(f"{path}: no enabled servers to bootstrap")
    update_settings(ws, mcp_config=str(path))
    stderr.print(
        f"starting {len(chosen)} upstream(s), {max(1, concurrency)} at a time, "
        f"{timeout:g} s each at most",
        highlight=False,
    )
    with progress() as bar:
        task = bar.add_task("starting upstreams", total=len(chosen))

        def on_progress(done: ServerDone) -> None:
            bar.advance(task)
            if not stderr.is_terminal:  # no bar to watch: one line per server as it ends
                what = "failed" if done.error else f"{done.tools} tools"
                stderr.print(
                    f"[{done.done}/{done.total}] {done.name}: {what} ({done.seconds:.1f} s)",
                    highlight=False,
                )

        async def run() -> Any:
            return await snapshot_servers(
                list(chosen.values()),
                timeout=timeout,
                concurrency=concurrency,
                on_progress=on_progress,
            )

        outcome = anyio.run(run)
    return outcome.snapshot, dict(outcome.failures), set(fleet.servers)


def _build_index(ws: Workspace, store: Store) -> str | None:
    try:
        from cartograph.index.reorder import open_index_and_stage
    except ImportError:
        return None

    with stderr.status("building the retrieval index"):
        index, _status, stage = open_index_and_stage(ws, store)
    note = f"index: {len(index.tool_ids)} tools, embedder {index.embedder.name}"
    return note + (f", top 5 ordered by {stage.embedder.name}" if stage else "")


def _report(
    result: AttestResult,
    upstream_errors: dict[str, UpstreamError],
    saved: Path,
    key_id: str,
    index_note: str | None,
    as_json: bool,
) -> None:
    if as_json:
        emit_json(_report_json(result, upstream_errors, saved, key_id, index_note))
        return
    table = new_table(title=f"{len(result.written)} cards signed by {key_id}")
    table.add_column("server")
    table.add_column("tools", justify="right")
    table.add_column("dropped directives", justify="right")
    table.add_column("summary", overflow="fold")
    for name, card in sorted(result.written.items()):
        dropped = sum(len(v) for v in result.dropped.get(name, {}).values())
        table.add_row(name, str(len(card.tools)), str(dropped or ""), card.capability.summary)
    out.print(table)
    for name, err in sorted(upstream_errors.items()):
        stderr.print(f"[red]failed[/] {name}: {err}", highlight=False)
        if err.stderr_tail:
            stderr.print(
                "  stderr: " + err.stderr_tail.strip().replace("\n", "\n          "),
                highlight=False,
            )
    for name, msg in sorted(result.failed.items()):
        if name not in upstream_errors:
            stderr.print(f"[red]failed[/] {name}: {msg}", highlight=False)
    if result.llm is not None:
        _report_llm(result)
    stderr.print(f"snapshot saved to {saved}", highlight=False)
    if index_note:
        stderr.print(index_note, highlight=False)


def _report_json(
    result: AttestResult,
    upstream_errors: dict[str, UpstreamError],
    saved: Path,
    key_id: str,
    index_note: str | None,
) -> dict[str, Any]:
    return {
        "snapshot": str(saved),
        "key_id": key_id,
        "cards": {
            n: {"tools": len(c.tools), "summary": c.capability.summary}
            for n, c in sorted(result.written.items())
        },
        "failed": {
            **{
                n: {"error": str(e), "stderr_tail": e.stderr_tail}
                for n, e in upstream_errors.items()
            },
            **{
                n: {"error": m, "stderr_tail": ""}
                for n, m in result.failed.items()
                if n not in upstream_errors
            },
        },
        "dropped_directives": result.dropped,
        "llm": result.llm.as_json() if result.llm else None,
        "index": index_note,
    }


def _report_llm(result: AttestResult) -> None:
    u = result.llm
    assert u is not None
    stderr.print(
        f"llm {u.model}: {u.requests} requests, {u.prompt_tokens} prompt + "
        f"{u.completion_tokens} completion tokens; {u.cache_hits} tools from cache, "
        f"{u.generated} generated, {u.rejected} answers rejected, "
        f"{sum(len(v) for v in u.fallbacks.values())} fell back to bootstrap, "
        f"{sum(len(v) for v in u.field_fallbacks.values())} kept bootstrap text in some fields",
        highlight=False,
    )
    for name, tools in sorted(u.fallbacks.items()):
        for tool, why in sorted(tools.items()):
            stderr.print(f"[yellow]fallback[/] {name}/{tool}: {why}", highlight=False)
    for name, fields_by_tool in sorted(u.field_fallbacks.items()):
        for tool, fields in sorted(fields_by_tool.items()):
            for field_name, why in fields.items():
                stderr.print(
                    f"[yellow]fallback[/] {name}/{tool} {field_name}: {why}", highlight=False
                )
