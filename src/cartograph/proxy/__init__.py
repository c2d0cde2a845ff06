"""The proxy an agent talks to: three MCP tools (discover, call, status) over every upstream.

``Proxy`` (core.py) holds the operations; ``server.py`` serves them over stdio or streamable
HTTP; the resolver ranks and renders from signed cards; the audit log records every answer.

Names resolve on first access, so that importing a submodule (the CLI's option lists) does
not load the whole package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cartograph.lazy import exports

if TYPE_CHECKING:  # resolved lazily at run time, see __getattr__
    from cartograph.proxy.core import Proxy, ProxySettings
    from cartograph.proxy.server import build_server, serve_http, serve_stdio
    from cartograph.proxy.tools import TOOLS

_EXPORTS: dict[str, tuple[str, str]] = {
    "Proxy": ("cartograph.proxy.core", "Proxy"),
    "ProxySettings": ("cartograph.proxy.core", "ProxySettings"),
    "TOOLS": ("cartograph.proxy.tools", "TOOLS"),
    "build_server": ("cartograph.proxy.server", "build_server"),
    "serve_http": ("cartograph.proxy.server", "serve_http"),
    "serve_stdio": ("cartograph.proxy.server", "serve_stdio"),
}

__all__ = ["TOOLS", "Proxy", "ProxySettings", "build_server", "serve_http", "serve_stdio"]


__getattr__, __dir__ = exports(__name__, globals(), _EXPORTS)
