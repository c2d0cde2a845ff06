"""The proxy an agent talks to: three MCP tools (discover, call, status) over every upstream.

``Proxy`` (core.py) holds the operations; ``server.py`` serves them over stdio or streamable
HTTP; the resolver ranks and renders from signed cards; the audit log records every answer.
"""

from cartograph.proxy.core import Proxy, ProxySettings
from cartograph.proxy.server import TOOLS, build_server, serve_http, serve_stdio

__all__ = ["TOOLS", "Proxy", "ProxySettings", "build_server", "serve_http", "serve_stdio"]
