"""`cartograph clients`: API keys for HTTP clients of the proxy, and each client's policy.

The key is printed once by ``add`` and stored only as a hash; ``revoke`` takes effect on the
next request of a running proxy (it re-reads the store when the file changes).
"""

from __future__ import annotations

from pathlib import Path

import click

from cartograph.cli.common import (
    AppContext,
    emit_json,
    handle_errors,
    json_option,
    new_table,
    pass_app,
    policy_option,
    stderr,
    stdout,
)
from cartograph.errors import UsageError


@click.group()
def clients() -> None:
    """Manage the clients allowed to use `serve --transport http` (API keys and policies)."""


@clients.command("add")
@click.argument("name")
@click.option("--allow", multiple=True, metavar="GLOB", help="server.tool pattern it may use.")
@click.option("--deny", multiple=True, metavar="GLOB", help="server.tool pattern it may not use.")
@policy_option()
@click.option("--calls-per-minute", type=float, help="Tool calls per minute (discover too).")
@click.option("--max-concurrent", type=int, help="Tool calls running at once.")
@click.option("--requests-per-minute", type=float, help="HTTP requests per minute (429 above).")
@click.option(
    "--admin",
    is_flag=True,
    help="It may act from the console: queue a quarantine lift or a card regeneration.",
)
@json_option()
@pass_app
@handle_errors
def clients_add(
    app: AppContext,
    name: str,
    allow: tuple[str, ...],
    deny: tuple[str, ...],
    policy_file: str | None,
    calls_per_minute: float | None,
    max_concurrent: int | None,
    requests_per_minute: float | None,
    admin: bool,
    as_json: bool,
) -> None:
    """Register client NAME and print its API key (shown once, stored hashed)."""
    from cartograph.access.clients import ClientStore
    from cartograph.access.policy import Policy, load_policy

    if policy_file and (allow or deny or calls_per_minute or max_concurrent or requests_per_minute):
        raise UsageError("give either --policy FILE or the --allow/--deny/limit options")
    if policy_file:
        policy = load_policy(Path(policy_file))
    else:
        for value in (calls_per_minute, max_concurrent, requests_per_minute):
            if value is not None and value <= 0:
                raise UsageError("limits must be positive")
        policy = Policy(
            allow=allow or ("*",),
            deny=deny,
            calls_per_minute=calls_per_minute,
            max_concurrent=max_concurrent,
            requests_per_minute=requests_per_minute,
        )
    store = ClientStore.of(app.workspace.ensure())
    key = store.add(name, policy, admin=admin)
    if as_json:
        emit_json({"client": name, "key": key, "policy": policy.to_json(), "admin": admin})
        return
    stdout.print(key, highlight=False)
    stderr.print(f"client {name!r} added; the key above is shown once: store it now")


@clients.command("revoke")
@click.argument("name")
@pass_app
@handle_errors
def clients_revoke(app: AppContext, name: str) -> None:
    """Revoke client NAME's key (a running proxy refuses it from its next request)."""
    from cartograph.access.clients import ClientStore

    record = ClientStore.of(app.workspace).revoke(name)
    stdout.print(f"client {name!r} revoked at {record.revoked} (key id {record.key_id})")


@clients.command("list")
@json_option()
@pass_app
@handle_errors
def clients_list(app: AppContext, as_json: bool) -> None:
    """List clients: key id, created, revoked, policy (never a key)."""
    from cartograph.access.clients import ClientStore

    records = ClientStore.of(app.workspace).records()
    if as_json:
        emit_json(
            [
                {"client": r.name, **{k: v for k, v in r.to_json().items() if k != "key_sha256"}}
                for r in records.values()
            ]
        )
        return
    table = new_table()
    table.add_column("client", no_wrap=True)  # a name is never cut; the rest folds
    table.add_column("key id", no_wrap=True)
    table.add_column("created", overflow="fold", min_width=10)
    table.add_column("revoked", overflow="fold", min_width=7)
    table.add_column("policy", overflow="fold", min_width=10)
    table.add_column("limits", overflow="fold", min_width=10)
    for r in records.values():
        p = r.policy.to_json()
        policy = " ".join(
            [*(f"+{rule}" for rule in r.policy.allow), *(f"-{rule}" for rule in r.policy.deny)]
        )
        table.add_row(
            r.name,
            r.key_id,
            r.created[:10],
            (r.revoked or "")[:10],
            policy + (" admin" if r.admin else ""),
            " ".join(f"{short}={p[k]:g}" for k, short in _LIMITS.items() if k in p),
        )
    stdout.print(table)


_LIMITS = {
    "calls_per_minute": "calls/min",
    "max_concurrent": "concurrent",
    "requests_per_minute": "req/min",
}
