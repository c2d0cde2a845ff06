"""`cartograph cards`: list, show, verify, re-sign, import and prune signed cards, and their
history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from cartograph.cards.model import Card


@click.group()
def cards() -> None:
    """Inspect the signed capability cards in the workspace."""


@cards.command("list")
@json_option()
@pass_app
@handle_errors
def cards_list(app: AppContext, as_json: bool) -> None:
    """One line per verified card: server, tools, generator, key id, signing time."""
    from cartograph.storage import open_store

    loaded = open_store(app.workspace).load_verified()
    rows = []
    for name, card in sorted(loaded.cards.items()):
        sig = card.signature
        rows.append(
            {
                "server": name,
                "tools": len(card.tools),
                "summary": card.capability.summary,
                "generator": f"{card.provenance.generator}/{card.provenance.generator_version}",
                "key_id": sig.key_id if sig else None,
                "signed_at": sig.signed_at if sig else None,
            }
        )
    if as_json:
        emit_json(
            {
                "cards": rows,
                "failures": [
                    {"path": str(f.path), "server": f.server, "reason": f.reason}
                    for f in loaded.failures
                ],
            }
        )
        return
    table = new_table(title=f"{len(rows)} verified cards, {loaded.tool_count()} tools")
    for col in ("server", "tools", "generator", "key id", "signed at", "summary"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(
            r["server"],
            str(r["tools"]),
            r["generator"],
            r["key_id"] or "",
            r["signed_at"] or "",
            r["summary"],
        )
    stdout.print(table)
    for f in loaded.failures:
        stderr.print(f"[red]left out[/] {f.path}: {f.reason}", highlight=False)


@cards.command("show")
@click.argument("server")
@click.option(
    "--version",
    "version",
    type=click.IntRange(1),
    metavar="N",
    help="Show version N of the card from the store's history (`cards history SERVER`).",
)
@json_option("Print the whole signed card as JSON.")
@pass_app
@handle_errors
def cards_show(app: AppContext, server: str, version: int | None, as_json: bool) -> None:
    """Show one server's card (verified first; a card that fails is not shown)."""
    from cartograph.storage import open_store

    store = open_store(app.workspace)
    card = store.read_card(server) if version is None else store.read_version(server, version)
    if as_json:
        emit_json(card.stored_payload())
        return
    sig = card.signature
    if version is not None:
        stdout.print(f"version {version} of the card of {server}", highlight=False)
    stdout.print(
        f"[bold]{card.identity.server}[/] ({card.identity.transport}) "
        f"{card.identity.endpoint or ''}",
        highlight=False,
    )
    stdout.print(card.capability.summary, highlight=False)
    if card.capability.domains:
        stdout.print("domains: " + ", ".join(card.capability.domains), highlight=False)
    stdout.print(
        f"signed by {sig.key_id if sig else '-'} at {sig.signed_at if sig else '-'}; "
        f"generator {card.provenance.generator}/{card.provenance.generator_version}",
        highlight=False,
    )
    table = new_table()
    for col in ("tool", "summary", "example"):
        table.add_column(col, overflow="fold")
    for t in card.tools:
        ex = t.examples[0] if t.examples else None
        table.add_row(
            t.name,
            t.summary,
            f"{ex.task}\n{json.dumps(ex.arguments, ensure_ascii=False)}" if ex else "",
        )
    stdout.print(table)
    _show_listings(card)


def _show_listings(card: Card) -> None:
    """The card's prompts, resources and resource templates, one line each."""
    for p in card.prompts:
        stdout.print(f"prompt {p.name}: {p.summary}", highlight=False, markup=False)
    for r in [*card.resources, *card.resource_templates]:
        stdout.print(f"resource {r.address}: {r.summary}", highlight=False, markup=False)


@cards.command("verify")
@json_option()
@pass_app
@handle_errors
def cards_verify(app: AppContext, as_json: bool) -> None:
    """Verify every card's signature and its key's trust; exit 1 when any card fails.

    Each failure says which file and why: tampered, unsigned, malformed, or a key that is
    unknown, revoked, or outside its validity window at the card's signing time.
    """
    from cartograph.storage import open_store
    from cartograph.trust.store import TrustStore

    ws = app.workspace
    trust = TrustStore.for_workspace(ws)
    loaded = open_store(ws).load_verified(trust)
    ok = sorted(loaded.cards)
    bad = [
        {"path": str(f.path), "server": f.server, "kind": f.kind, "reason": f.reason}
        for f in loaded.failures
    ]
    if as_json:
        emit_json({"verified": ok, "failed": bad, "trust_fault": trust.fault})
    else:
        if trust.fault:
            stdout.print(f"[bold red]TRUST STORE FAULT:[/] {trust.fault}", highlight=False)
        stdout.print(f"{len(ok)} card(s) verified, {len(bad)} failed")
        for b in bad:
            stdout.print(f"[red]FAIL[/] ({b['kind']}) {b['path']}: {b['reason']}", highlight=False)
    if bad or trust.fault:
        raise SystemExit(1)


@cards.command("resign")
@click.option(
    "--include-peers",
    is_flag=True,
    help="Also re-sign cards imported from other operators (you vouch for them then).",
)
@json_option()
@pass_app
@handle_errors
def cards_resign(app: AppContext, include_peers: bool, as_json: bool) -> None:
    """Re-sign every card that verifies with the current operator key (after `keys rotate`).

    Cards that fail verification are not re-signed (exit 1): regenerate them with
    `cartograph bootstrap`.
    """
    from cartograph.storage import open_store
    from cartograph.trust.keys import load_key

    ws = app.workspace
    result = open_store(ws).resign(load_key(ws), include_peers=include_peers)
    failed = [{"path": str(f.path), "kind": f.kind, "reason": f.reason} for f in result.failures]
    if as_json:
        emit_json(
            {
                "key_id": result.key_id,
                "resigned": result.resigned,
                "kept": result.kept,
                "failed": failed,
            }
        )
    else:
        stdout.print(
            f"re-signed {len(result.resigned)} card(s) with {result.key_id}; "
            f"{len(result.kept)} kept as they were, {len(failed)} not re-signed",
            highlight=False,
        )
        for server, why in sorted(result.kept.items()):
            if not why.startswith("already"):
                stdout.print(f"kept {server}: {why}", highlight=False)
        for f in failed:
            stdout.print(
                f"[red]NOT RE-SIGNED[/] ({f['kind']}) {f['path']}: {f['reason']}", highlight=False
            )
    if failed:
        raise SystemExit(1)


@cards.command("import")
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--rename",
    "rename_prefix",
    metavar="PREFIX",
    help="Keep a clashing card as PREFIX+server (bound by an alias record you sign).",
)
@json_option()
@pass_app
@handle_errors
def cards_import(app: AppContext, source: Path, rename_prefix: str | None, as_json: bool) -> None:
    """Import another operator's signed cards from SOURCE (a workspace or a cards/ directory).

    Cards keep their own signatures and provenance. A card whose key is not trusted here is
    refused, naming the key (`cartograph keys trust FILE` first). A server name that clashes
    with a card here by another key is refused unless --rename. Exit 1 when any card is
    refused.
    """
    from cartograph.cards.federation import import_store
    from cartograph.storage import open_store

    ws = app.workspace
    result = import_store(ws, open_store(ws).import_target(), source, rename_prefix=rename_prefix)
    refused = [
        {"path": str(f.path), "server": f.server, "kind": f.kind, "reason": f.reason}
        for f in result.refused
    ]
    if as_json:
        emit_json(
            {
                "imported": result.imported,
                "updated": result.updated,
                "unchanged": result.unchanged,
                "renamed": result.renamed,
                "refused": refused,
            }
        )
    else:
        stdout.print(
            f"imported {len(result.imported)}, updated {len(result.updated)}, "
            f"unchanged {len(result.unchanged)}, renamed {len(result.renamed)}, "
            f"refused {len(refused)}",
            highlight=False,
        )
        for old, new in sorted(result.renamed.items()):
            stdout.print(f"renamed {old} -> {new}", highlight=False)
        for f in refused:
            stdout.print(
                f"[red]REFUSED[/] ({f['kind']}) {f['path']}: {f['reason']}", highlight=False
            )
    if refused:
        raise SystemExit(1)


@cards.command("history")
@click.argument("server")
@json_option()
@pass_app
@handle_errors
def cards_history(app: AppContext, server: str, as_json: bool) -> None:
    """List the kept versions of one server's card, oldest first, each verified.

    The newest is the current card. How many are kept is the `card_history` setting of
    config.json (default 20). Exit 1 when a kept version does not verify.
    """
    from cartograph.errors import CartographError
    from cartograph.storage import open_store
    from cartograph.trust.store import TrustStore

    ws = app.workspace
    store = open_store(ws)
    trust = TrustStore.for_workspace(ws)
    rows = []
    for v in store.card_history(server):
        row: dict[str, object] = {"version": v.version, "written_at": v.written_at}
        row["sha256"] = v.sha256
        try:
            card = store.read_version(server, v.version, trust)
        except CartographError as exc:
            row["failed"] = str(exc)
        else:
            sig = card.signature
            row["key_id"] = sig.key_id if sig else None
            row["signed_at"] = sig.signed_at if sig else None
            row["tools"] = len(card.tools)
        rows.append(row)
    if as_json:
        emit_json({"server": server, "versions": rows})
    else:
        table = new_table(title=f"{len(rows)} kept version(s) of the card of {server}")
        for col in ("version", "written at", "key id", "signed at", "tools"):
            table.add_column(col, overflow="fold")
        for r in rows:
            if "failed" in r:
                table.add_row(str(r["version"]), str(r["written_at"]), "[red]FAILED[/]", "", "")
            else:
                table.add_row(
                    str(r["version"]),
                    str(r["written_at"]),
                    str(r["key_id"] or ""),
                    str(r["signed_at"] or ""),
                    str(r["tools"]),
                )
        stdout.print(table)
        if not rows:
            stderr.print(
                f"no kept versions of the card of {server!r} in {store.label} (a card written "
                "before history was kept gets its first at its next write)",
                highlight=False,
            )
        for r in rows:
            if "failed" in r:
                stderr.print(f"[red]version {r['version']}[/]: {r['failed']}", highlight=False)
    if any("failed" in r for r in rows):
        raise SystemExit(1)


@cards.command("prune")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="mcp.json whose servers are kept. Default: the one recorded by the last bootstrap.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
@handle_errors
def cards_prune(app: AppContext, config_path: str | None, dry_run: bool, as_json: bool) -> None:
    """Remove the cards of servers the config no longer names.

    The proxy neither offers nor calls them (they have no config entry), but they stay in the
    index and in `cards list` until pruned; their history stays. Cards that fail verification
    are left alone.
    """
    from cartograph.config import load_config
    from cartograph.errors import UsageError
    from cartograph.storage import open_store
    from cartograph.workspace import read_settings

    ws = app.workspace
    chosen = config_path or read_settings(ws).mcp_config
    if not chosen:
        raise UsageError(
            "no --config given and none recorded in the workspace; pass --config path/to/mcp.json"
        )
    fleet = load_config(Path(chosen))
    store = open_store(ws)
    stale = sorted(set(store.load_verified().cards) - set(fleet.servers))
    removed = [] if dry_run else [s for s in stale if store.remove_card(s)]
    if as_json:
        emit_json({"config": str(fleet.path), "stale": stale, "removed": removed})
        return
    if not stale:
        stdout.print(f"nothing to prune: every card's server is in {fleet.path}", highlight=False)
        return
    verb = "would remove" if dry_run else "removed"
    stdout.print(
        f"{verb} {len(stale) if dry_run else len(removed)} card(s) of servers not in "
        f"{fleet.path}: {', '.join(stale if dry_run else removed)}",
        highlight=False,
    )
