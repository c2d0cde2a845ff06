"""`cartograph keys`: the operator's Ed25519 signing key."""

from __future__ import annotations

import click

from cartograph.cards.seal import TrustStore, init_key, load_key
from cartograph.cli.common import AppContext, emit_json, handle_errors, pass_app, stdout


@click.group()
def keys() -> None:
    """Manage the operator key that signs capability cards."""


@keys.command("init")
@click.option("--force", is_flag=True, help="Replace an existing key (old cards stop verifying).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
@handle_errors
def keys_init(app: AppContext, force: bool, as_json: bool) -> None:
    """Create the operator key pair (private key file mode 0600) and print its key id."""
    ws = app.workspace
    key = init_key(ws, force=force)
    if as_json:
        emit_json(
            {
                "key_id": key.key_id,
                "private_key": str(ws.private_key),
                "public_key": str(ws.public_key),
            }
        )
    else:
        stdout.print(key.key_id)


@keys.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
@handle_errors
def keys_show(app: AppContext, as_json: bool) -> None:
    """Show the operator key id and every trusted key id."""
    ws = app.workspace
    key = load_key(ws)
    trusted = TrustStore.for_workspace(ws).key_ids()
    if as_json:
        emit_json({"key_id": key.key_id, "trusted": trusted})
        return
    stdout.print(f"operator key: {key.key_id}")
    for kid in trusted:
        stdout.print(f"trusted: {kid}")
