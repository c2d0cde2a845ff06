"""`cartograph cards`: list, show, verify, re-sign and import signed cards."""

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
from cartograph.errors import UsageError, VerificationError
from cartograph.workspace import Workspace

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
    from cartograph.cards.store import load_verified

    loaded = load_verified(app.workspace)
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


def _shared_card(ws: Workspace, server: str) -> Card:
    """One server's card from the shared store, verified (the failure's reason otherwise)."""
    from cartograph.cards.store import load_verified

    loaded = load_verified(ws)
    if server in loaded.cards:
        return loaded.cards[server]
    for failure in loaded.failures:
        if failure.server == server or failure.path.name == ws.card_path(server).name:
            raise VerificationError(failure.reason)
    raise UsageError(
        f"no card for server {server!r} in the shared store; "
        "`cartograph cards list` shows what there is"
    )


@cards.command("show")
@click.argument("server")
@json_option("Print the whole signed card as JSON.")
@pass_app
@handle_errors
def cards_show(app: AppContext, server: str, as_json: bool) -> None:
    """Show one server's card (verified first; a card that fails is not shown)."""
    from cartograph.cards.store import read_verified_card
    from cartograph.trust.store import TrustStore

    ws = app.workspace
    if ws.store is not None:
        card = _shared_card(ws, server)
    else:
        path = ws.card_path(server)
        if not path.is_file():
            raise UsageError(
                f"no card for server {server!r} in {ws.cards_dir}; "
                "`cartograph cards list` shows what there is"
            )
        card = read_verified_card(path, TrustStore.for_workspace(ws))
    if as_json:
        emit_json(card.model_dump(mode="json"))
        return
    sig = card.signature
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


@cards.command("verify")
@json_option()
@pass_app
@handle_errors
def cards_verify(app: AppContext, as_json: bool) -> None:
    """Verify every card's signature and its key's trust; exit 1 when any card fails.

    Each failure says which file and why: tampered, unsigned, malformed, or a key that is
    unknown, revoked, or outside its validity window at the card's signing time.
    """
    from cartograph.cards.store import load_verified
    from cartograph.trust.store import TrustStore

    ws = app.workspace
    trust = TrustStore.for_workspace(ws)
    loaded = load_verified(ws, trust)
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
    from cartograph.cards.store import resign_store
    from cartograph.trust.keys import load_key

    ws = app.workspace
    result = resign_store(ws, load_key(ws), include_peers=include_peers)
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

    result = import_store(app.workspace, source, rename_prefix=rename_prefix)
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
