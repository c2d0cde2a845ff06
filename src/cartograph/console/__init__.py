"""The operator's console: servers, tools and their signed cards, a discover playground, the
audit trail, the quarantine and Rift, as server-rendered pages under ``/console``.

:func:`build_console` is the ASGI app ``serve --transport http`` mounts beside ``/mcp``
(docs/console.md); :mod:`cartograph.console.standalone` serves it alone (``cartograph
console``). The serving process never holds the operator's private key, so what needs it
(re-attesting a quarantined server, regenerating cards) is shown as the exact command to run,
and an admin may queue it as a job (:mod:`cartograph.console.actions`).
"""

from cartograph.console.app import build_console

__all__ = ["build_console"]
