"""`cartograph keys`: the operator's signing key, the trust store and the revocation list."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cartograph import clock
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
from cartograph.errors import UsageError
from cartograph.workspace import Workspace

if TYPE_CHECKING:
    from cartograph.trust.store import Revocation, TrustedKey, TrustStore

_DURATION = re.compile(r"^(\d+)([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _duration(text: str) -> timedelta:
    match = _DURATION.match(text.strip())
    if not match:
        raise UsageError(f"--grace {text!r}: use a number and a unit, e.g. 30m, 12h, 7d")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def _time(option: str, text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return clock.parse(text)
    except ValueError:
        raise UsageError(
            f"{option} {text!r}: use ISO 8601, e.g. 2027-01-31 or 2027-01-31T12:00:00Z"
        ) from None


@click.group()
def keys() -> None:
    """Manage the operator key that signs cards, the keys trusted here, and revocations."""


@keys.command("init")
@click.option("--force", is_flag=True, help="Replace an existing key (old cards stop verifying).")
@json_option()
@pass_app
@handle_errors
def keys_init(app: AppContext, force: bool, as_json: bool) -> None:
    """Create the operator key pair (private key file mode 0600) and print its key id."""
    from cartograph.trust.lifecycle import init_key

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
@json_option()
@pass_app
@handle_errors
def keys_show(app: AppContext, as_json: bool) -> None:
    """Show the operator key id and every trusted key id."""
    from cartograph.trust.keys import load_key
    from cartograph.trust.store import TrustStore

    ws = app.workspace
    key = load_key(ws)
    trusted = TrustStore.for_workspace(ws).key_ids()
    if as_json:
        emit_json({"key_id": key.key_id, "trusted": trusted})
        return
    stdout.print(f"operator key: {key.key_id}")
    for kid in trusted:
        stdout.print(f"trusted: {kid}")


@keys.command("list")
@json_option()
@pass_app
@handle_errors
def keys_list(app: AppContext, as_json: bool) -> None:
    """Every key trusted here: id, name, origin, validity window, state; and the revocations.

    Exits 1 when the trust store is in fault (then no card verifies).
    """
    from cartograph.trust.keys import load_key
    from cartograph.trust.store import TrustStore

    ws = app.workspace
    store = TrustStore.for_workspace(ws)
    current = load_key(ws).key_id if ws.private_key.is_file() else None
    rows = [_key_row(store, entry, current) for entry in store.entries()]
    orphans = [r for kid, r in sorted(store.revoked.items()) if store.entry(kid) is None]
    if as_json:
        emit_json(_keys_json(ws, store, rows, orphans))
    else:
        table = new_table(title=f"{len(rows)} key(s) in the trust store")
        for col in ("key id", "name", "origin", "not before", "not after", "state"):
            table.add_column(col, overflow="fold")
        for r in rows:
            state = r["state"] + (" (current)" if r["current"] else "")
            if r["revoked_reason"]:
                state += f": {r['revoked_reason']}"
            table.add_row(
                r["key_id"],
                r["name"],
                r["origin"],
                r["not_before"] or "-",
                r["not_after"] or "-",
                state,
            )
        stdout.print(table)
        for r in orphans:
            stdout.print(f"revoked (not in the store): {r.key_id} {r.reason}", highlight=False)
        if store.revocation_serial:
            stdout.print(
                f"revocation list #{store.revocation_serial}, signed by {store.revocation_signer}",
                highlight=False,
            )
        if store.fault:
            stderr.print(f"[bold red]TRUST STORE FAULT:[/] {store.fault}", highlight=False)
    if store.fault:
        raise SystemExit(1)


def _key_row(store: TrustStore, entry: TrustedKey, current: str | None) -> dict[str, Any]:
    revoked = store.revoked.get(entry.key_id)
    return {
        "key_id": entry.key_id,
        "name": entry.name,
        "origin": entry.origin,
        "current": entry.key_id == current,
        "not_before": clock.format_time(entry.not_before) if entry.not_before else None,
        "not_after": clock.format_time(entry.not_after) if entry.not_after else None,
        "state": store.state(entry.key_id),
        "revoked_reason": revoked.reason if revoked else None,
    }


def _keys_json(
    ws: Workspace, store: TrustStore, rows: list[dict[str, Any]], orphans: list[Revocation]
) -> dict[str, Any]:
    from cartograph.trust.revocation import revocations_file

    return {
        "keys": rows,
        "revoked_unknown": [
            {"key_id": r.key_id, "revoked_at": r.revoked_at, "reason": r.reason} for r in orphans
        ],
        "revocation_list": {
            "path": str(revocations_file(ws)),
            "serial": store.revocation_serial,
            "signed_by": store.revocation_signer,
        },
        "fault": store.fault,
    }


@keys.command("rotate")
@click.option(
    "--grace",
    default="0s",
    show_default=True,
    help="How long the old key stays valid after now (e.g. 12h, 7d), for signers still using it.",
)
@json_option()
@pass_app
@handle_errors
def keys_rotate(app: AppContext, grace: str, as_json: bool) -> None:
    """Make a new operator key; the old key's window ends now (+ grace).

    Cards the old key signed before then stay valid. New cards are signed by the new key;
    `cartograph cards resign` re-signs the store with it.
    """
    from cartograph.trust.lifecycle import rotate_key

    rotation = rotate_key(app.workspace, grace=_duration(grace))
    out = {
        "old_key_id": rotation.old_key_id,
        "key_id": rotation.new_key.key_id,
        "old_not_after": clock.format_time(rotation.old_not_after),
        "revocation_list_resigned": rotation.revocation_list_resigned,
    }
    if as_json:
        emit_json(out)
        return
    stdout.print(
        f"new operator key {out['key_id']}; {out['old_key_id']} trusted for cards "
        f"signed until {out['old_not_after']}",
        highlight=False,
    )
    stdout.print("re-sign the store with it: cartograph cards resign", highlight=False)


@keys.command("revoke")
@click.argument("key_id")
@click.option("--reason", default="", help="Why (kept in the signed revocation list).")
@json_option()
@pass_app
@handle_errors
def keys_revoke(app: AppContext, key_id: str, reason: str, as_json: bool) -> None:
    """Revoke KEY_ID: every card it signed is refused, whatever its signing time.

    The revocation list is signed by the current operator key. To keep the cards of a key
    you retire, rotate and `cards resign` before revoking it.
    """
    from cartograph.trust.revoke import revoke_key

    revocation = revoke_key(app.workspace, key_id, reason=reason)
    if as_json:
        emit_json(
            {
                "key_id": revocation.key_id,
                "revoked_at": revocation.revoked_at,
                "reason": revocation.reason,
            }
        )
    else:
        stdout.print(f"revoked {revocation.key_id} at {revocation.revoked_at}", highlight=False)


@keys.command("reset-revocations")
@click.option("--yes", is_flag=True, help="Confirm: every earlier revocation must be redone.")
@pass_app
@handle_errors
def keys_reset_revocations(app: AppContext, yes: bool) -> None:
    """Issue a new, empty revocation list (when the old one is lost or tampered)."""
    from cartograph.trust.revoke import reset_revocations

    if not yes:
        raise UsageError("this forgets every revocation; pass --yes, then revoke each key again")
    serial = reset_revocations(app.workspace)
    stdout.print(f"issued empty revocation list #{serial}; revoke each key again", highlight=False)


@keys.command("trust")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", help="A name for the key's owner (default: the file name).")
@click.option("--not-before", help="Accept cards signed from then on (ISO 8601).")
@click.option("--not-after", help="Accept cards signed until then (ISO 8601).")
@json_option()
@pass_app
@handle_errors
def keys_trust(
    app: AppContext,
    file: Path,
    name: str | None,
    not_before: str | None,
    not_after: str | None,
    as_json: bool,
) -> None:
    """Trust another operator's Ed25519 public key (a PEM FILE) for cards signed in a window."""
    from cartograph.trust.lifecycle import trust_key

    entry = trust_key(
        app.workspace,
        file,
        name=name,
        not_before=_time("--not-before", not_before),
        not_after=_time("--not-after", not_after),
    )
    if as_json:
        emit_json(entry.to_json())
    else:
        stdout.print(
            f"trusted {entry.key_id} ({entry.name}) for cards signed in {entry.window()}",
            highlight=False,
        )
