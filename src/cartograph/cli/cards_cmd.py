"""`cartograph cards`: list, show and verify the signed card store."""

from __future__ import annotations

import json

import click
from rich.table import Table

from cartograph.cards.seal import TrustStore
from cartograph.cards.store import card_files, load_verified, read_verified_card
from cartograph.cli.common import AppContext, emit_json, handle_errors, pass_app, stderr, stdout
from cartograph.errors import CardError, CartographError, UsageError


@click.group()
def cards() -> None:
    """Inspect the signed capability cards in the workspace."""


@cards.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
@handle_errors
def cards_list(app: AppContext, as_json: bool) -> None:
    """One line per verified card: server, tools, generator, key id, signing time."""
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
    table = Table(title=f"{len(rows)} verified cards, {loaded.tool_count()} tools")
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
@click.option("--json", "as_json", is_flag=True, help="Print the whole signed card as JSON.")
@pass_app
@handle_errors
def cards_show(app: AppContext, server: str, as_json: bool) -> None:
    """Show one server's card (verified first; a card that fails is not shown)."""
    ws = app.workspace
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
    table = Table()
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
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
@handle_errors
def cards_verify(app: AppContext, as_json: bool) -> None:
    """Verify every card's signature; exit 1 when any card fails, listing each."""
    ws = app.workspace
    trust = TrustStore.for_workspace(ws)
    ok: list[str] = []
    bad: list[dict[str, str]] = []
    for path in card_files(ws):
        try:
            ok.append(read_verified_card(path, trust).identity.server)
        except (CardError, CartographError) as exc:
            bad.append({"path": str(path), "reason": str(exc)})
    if as_json:
        emit_json({"verified": ok, "failed": bad})
    else:
        stdout.print(f"{len(ok)} card(s) verified, {len(bad)} failed")
        for b in bad:
            stdout.print(f"[red]FAIL[/] {b['path']}: {b['reason']}", highlight=False)
    if bad:
        raise SystemExit(1)
