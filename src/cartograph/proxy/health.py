"""A serving proxy's health on the store's board, for ``cartograph console`` and other replicas.

:func:`publish_health` runs beside the gateway while the proxy serves (:meth:`Proxy.running
<cartograph.proxy.core.Proxy.running>`): every :data:`PUBLISH_EVERY_S` it writes
:func:`health_record` (the unrestricted status, compacted: each server's tools, session states,
starts, crashes, last error and held tools) to the store's health board
(:mod:`cartograph.storage.health`), and once more marked ``stopped`` on the way out. A board
that cannot be written is logged once per outage and never stops the proxy.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio

from cartograph.errors import CartographError
from cartograph.proxy.status import build_status
from cartograph.storage import replica_name

if TYPE_CHECKING:
    from cartograph.proxy.core import Proxy

logger = logging.getLogger(__name__)

PUBLISH_EVERY_S = 15.0


def health_record(proxy: Proxy, state: str = "serving") -> dict[str, Any]:
    """What this replica publishes: its status, every server, no policy applied."""
    status = build_status(proxy)
    servers = []
    for s in status.servers:
        sessions = [] if isinstance(s.sessions, str) else s.sessions
        errors = [r.last_error for r in sessions if r.last_error]
        servers.append(
            {
                "server": s.server,
                "tools": s.tools,
                "sessions": [r.state for r in sessions] if sessions else s.sessions,
                "starts": sum(r.starts for r in sessions),
                "crashes": sum(r.crashes for r in sessions),
                "last_error": errors[-1] if errors else None,
                "quarantined": [h.tool for h in s.quarantined or []],
            }
        )
    return {
        "state": state,
        "pid": os.getpid(),
        "endpoint": proxy.endpoint,
        "started": datetime.fromtimestamp(proxy.started, UTC).isoformat(timespec="seconds"),
        "gateway": status.gateway,
        "index": status.index.state,
        "totals": status.totals.model_dump(exclude_none=True),
        "servers": servers,
    }


async def publish_health(proxy: Proxy, every: float = PUBLISH_EVERY_S) -> None:
    """Publish ``proxy``'s health every ``every`` seconds until cancelled, then ``stopped``."""
    board, replica = proxy.store.health_board(), replica_name()
    failing = False

    async def publish(state: str) -> None:
        nonlocal failing
        record = health_record(proxy, state)  # on the loop, as the gateway's state must be read
        try:
            await anyio.to_thread.run_sync(board.publish, replica, record)
        except (CartographError, OSError) as exc:
            if not failing:
                logger.warning("%s: cannot publish this replica's health: %s", board.where, exc)
            failing = True
        else:
            failing = False

    try:
        while True:
            await publish("serving")
            await anyio.sleep(every)
    finally:
        with anyio.move_on_after(5, shield=True):
            await publish("stopped")
