"""An upstream's list requests, as sent: tools, prompts, resources and resource templates.

:func:`list_raw` follows ``nextCursor`` through every page of one list method and returns the
items as the dicts the server sent (the SDK's models are bypassed, so unknown fields survive).
:func:`list_listings` asks for prompts/list, resources/list and resources/templates/list of an
upstream whose capabilities advertise them, and tolerates one that does not answer them (a
server that advertises resources without templates, say, or answers with a malformed page):
what it cannot list is ``None``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from mcp import ClientSession, MCPError
from mcp.shared.dispatcher import ProgressFnT

from cartograph.errors import UpstreamError

logger = logging.getLogger(__name__)

MAX_PAGES = 1000

_KEYS: dict[str, str] = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}
_IDENTITY = {
    "tools": "name",
    "prompts": "name",
    "resources": "uri",
    "resourceTemplates": "uriTemplate",
}


async def send_raw(
    session: ClientSession,
    method: str,
    params: dict[str, Any] | None,
    *,
    progress: ProgressFnT | None = None,
) -> dict[str, Any]:
    """``method`` in the session's negotiated era, its result as the dict the server sent.

    ``ClientSession.send_request`` checks a result against the revision's wire models first,
    and those reject what real publishers send (an input schema without ``"type"``, an output
    schema that is not an object). This stamps the request as the session does (the
    2026-07-28 ``_meta`` envelope and headers, or nothing on a 2025 session) and returns the
    raw result. With ``progress``, the request carries a progress token and each
    ``notifications/progress`` the server sends for it is handed to ``progress``."""
    data: dict[str, Any] = {"method": method}
    if params is not None:
        data["params"] = params
    opts: dict[str, Any] = {} if progress is None else {"on_progress": progress}
    session._stamp(data, opts)  # pyright: ignore[reportPrivateUsage, reportArgumentType]
    dispatcher = session._dispatcher  # pyright: ignore[reportPrivateUsage]
    return await dispatcher.send_raw_request(method, data.get("params"), opts)  # pyright: ignore[reportArgumentType]


async def list_raw(
    session: ClientSession, server: str, method: str, *, max_pages: int = MAX_PAGES
) -> list[dict[str, Any]]:
    """Every item of ``method`` (e.g. ``prompts/list``), all pages, as the dicts sent.

    Raises :class:`UpstreamError` on a page that breaks the protocol (no list, an item without
    its name or URI, a repeated cursor)."""
    key = _KEYS[method]
    ident = _IDENTITY[key]
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    for page_no in range(1, max_pages + 1):
        raw = await send_raw(session, method, {"cursor": cursor} if cursor is not None else None)
        page = raw.get(key)
        if not isinstance(page, list):
            raise UpstreamError(server, f"{method} page {page_no} has no {key!r} list")
        for i, item in enumerate(page):
            if not isinstance(item, dict) or not isinstance(item.get(ident), str):
                raise UpstreamError(
                    server, f"{method} page {page_no}: {key}[{i}] has no {ident!r} string"
                )
            items.append(item)
        nxt = raw.get("nextCursor")
        if nxt is None or nxt == "":
            return items
        if not isinstance(nxt, str) or nxt in seen:
            raise UpstreamError(server, f"{method} repeats or mangles its cursor {nxt!r}")
        seen.add(nxt)
        cursor = nxt
    raise UpstreamError(server, f"{method} did not end after {max_pages} pages")


@dataclass(frozen=True)
class Listings:
    """What an upstream listed besides its tools (None: not advertised, or not answered)."""

    prompts: list[dict[str, Any]] | None = None
    resources: list[dict[str, Any]] | None = None
    resource_templates: list[dict[str, Any]] | None = None


def advertised(capabilities: types.ServerCapabilities | None) -> tuple[bool, bool]:
    """Whether the upstream's capabilities advertise (prompts, resources)."""
    if capabilities is None:
        return False, False
    return capabilities.prompts is not None, capabilities.resources is not None


async def list_listings(
    session: ClientSession, server: str, capabilities: types.ServerCapabilities | None
) -> Listings:
    """prompts/list, resources/list and resources/templates/list where advertised."""
    prompts, resources = advertised(capabilities)
    return Listings(
        prompts=await _tolerant(session, server, "prompts/list") if prompts else None,
        resources=await _tolerant(session, server, "resources/list") if resources else None,
        resource_templates=await _tolerant(session, server, "resources/templates/list")
        if resources
        else None,
    )


async def _tolerant(
    session: ClientSession, server: str, method: str
) -> list[dict[str, Any]] | None:
    """The items of ``method``, or None when the upstream refuses the method or answers it
    with something that is not a listing (its tools stay usable either way)."""
    try:
        return await list_raw(session, server, method)
    except MCPError as exc:
        logger.info(
            "%s: %s not answered (%s); recorded as absent", server, method, exc.error.message
        )
    except UpstreamError as exc:
        logger.warning("%s: %s is malformed (%s); recorded as absent", server, method, exc.reason)
    return None
