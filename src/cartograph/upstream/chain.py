"""The chain of Cartograph proxies a request has passed through, so a loop can be refused.

Each workspace has an id (:func:`workspace_id`: a digest of its home directory, or of its
shared store's URL, so replicas of one store share it). A proxy hands the chain it is part of
to what it reaches, two ways:

* every forwarded ``tools/call`` carries ``_meta["io.cartograph/chain"]``: the ids of the
  proxies it has passed, this one last (:func:`call_meta`);
* every stdio upstream it starts gets ``$CARTOGRAPH_CHAIN`` (:func:`with_chain`), so a
  ``cartograph serve`` started by a proxy knows its parents before it loads anything.

A proxy that finds its own id in a chain, or a chain of :data:`MAX_HOPS` proxies, refuses
(:func:`loop_problem`); other Cartograph instances stay allowed as upstreams.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from cartograph.config import StdioUpstream, UpstreamConfig
from cartograph.errors import ConfigError
from cartograph.workspace import Workspace

CHAIN_ENV = "CARTOGRAPH_CHAIN"
META_KEY = "io.cartograph/chain"
MAX_HOPS = 4
_ID_RE = re.compile(r"^[0-9a-f]{16}$")


def workspace_id(ws: Workspace) -> str:
    """A short stable id of ``ws``: the same for every process serving the same cards."""
    where = f"store:{_without_password(ws.store)}" if ws.store else f"home:{ws.root}"
    return hashlib.sha256(where.encode("utf-8")).hexdigest()[:16]


def _without_password(url: str) -> str:
    return re.sub(r"//([^:/@]*):[^@]*@", r"//\1@", url)


def parse_chain(raw: Any) -> tuple[str, ...]:
    """A chain from ``$CARTOGRAPH_CHAIN`` (comma-separated) or from ``_meta`` (a list). Entries
    that are not ids become ``"?"``: they count toward the hop limit but never match an id."""
    if isinstance(raw, str):
        items = [p.strip() for p in raw.split(",") if p.strip()]
    elif isinstance(raw, list | tuple):
        items = [str(p) for p in raw]
    else:
        return ()
    return tuple(p if _ID_RE.match(p) else "?" for p in items[: MAX_HOPS * 4])


def env_chain(environ: Mapping[str, str]) -> tuple[str, ...]:
    return parse_chain(environ.get(CHAIN_ENV, ""))


def meta_chain(meta: Any) -> tuple[str, ...]:
    """The chain in a request's ``_meta`` (the SDK's ``RequestParams.Meta`` or a dict)."""
    if meta is None:
        return ()
    extra = meta if isinstance(meta, dict) else (getattr(meta, "model_extra", None) or {})
    return parse_chain(extra.get(META_KEY))


def loop_problem(chain: tuple[str, ...], own: str) -> str | None:
    """Why ``chain`` must not reach the workspace ``own`` (None: it may)."""
    if own in chain:
        return (
            f"this request already passed through this Cartograph workspace ({own}): the "
            "config federates the proxy with itself; remove that server from the mcp.json"
        )
    if len(chain) >= MAX_HOPS:
        return (
            f"this request has passed {len(chain)} Cartograph proxies already, and at most "
            f"{MAX_HOPS} may be chained; federate the upstreams directly instead"
        )
    return None


def outgoing_chain(ws: Workspace, environ: Mapping[str, str], what: str) -> tuple[str, ...]:
    """The chain this process hands on (the one it was started in, then itself); raises
    :class:`ConfigError` when that chain already holds this workspace or is too long, so a
    proxy started by itself (``what``: "serve", "bootstrap") exits before loading anything."""
    own = workspace_id(ws)
    chain = env_chain(environ)
    problem = loop_problem(chain, own)
    if problem is not None:
        raise ConfigError(f"{what} refused (started by a Cartograph proxy): {problem}")
    return (*chain, own)


def call_meta(chain: tuple[str, ...]) -> dict[str, Any]:
    """The ``_meta`` a forwarded call carries."""
    return {META_KEY: list(chain)}


def with_chain(cfg: UpstreamConfig, chain: tuple[str, ...]) -> UpstreamConfig:
    """``cfg`` with ``$CARTOGRAPH_CHAIN`` in a stdio child's environment (HTTP: unchanged)."""
    if not chain or not isinstance(cfg, StdioUpstream):
        return cfg
    return cfg.model_copy(update={"env": {**cfg.env, CHAIN_ENV: ",".join(chain)}})
