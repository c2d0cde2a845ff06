"""Server-level facts for the bootstrap generator: the product/vendor name (from the server
name, serverInfo and package), whether a tool reads or writes, and the server's capability
text (what it is for, the main objects it acts on, read vs write, domain tags).

Pure functions.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from cartograph.generate.bootstrap.lexicon import NOT_PRODUCT, domains_for
from cartograph.generate.text import STOPWORDS, wordset
from cartograph.upstream.snapshot import ServerSnapshot

_NAME_PART = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+[A-Za-z]*|[^\W\d_A-Za-z]+")

READ_VERBS = wordset(
    """get list search find query read fetch lookup describe check validate analyze analyse
    calculate compute count compare diff summarize translate recommend extract parse render
    screenshot navigate geocode predict track monitor export download load transcribe"""
)
WRITE_VERBS = wordset(
    """create add insert update edit set delete remove send post write save generate convert
    run execute start stop upload move copy merge close publish schedule cancel invite assign
    archive comment subscribe resolve deploy install import click play"""
)


@dataclass(frozen=True)
class Product:
    """How users name the server: display words (cased as published) and match words."""

    display: str
    words: tuple[str, ...]
    vendor: str | None = None


def product_of(server: ServerSnapshot) -> Product:
    """The product/vendor name from the server name, serverInfo name and package name."""
    sources: list[str] = [server.name]
    info_name = (server.server_info or {}).get("name")
    if isinstance(info_name, str):
        sources.append(info_name)
    vendor: str | None = None
    if server.package:
        scope, _, rest = server.package.rpartition("/")
        scope = scope.lstrip("@")
        sources.append(rest)
        if scope and scope.lower() not in NOT_PRODUCT and "/" not in scope:
            vendor = scope
    display: list[str] = []
    seen: set[str] = set()
    for source in sources:
        parts = [p for p in _NAME_PART.findall(source) if p.lower() not in NOT_PRODUCT]
        for part in parts:
            if part.lower() not in seen and len(display) < 4:
                seen.add(part.lower())
                display.append(_cased(part))
        if display:
            break  # the first source that names something wins; the rest only add a vendor
    if not display:
        display = [_cased(server.name)]
    words = tuple(w.lower() for w in display)
    if vendor and vendor.lower() in words:
        vendor = None
    return Product(" ".join(display), words, vendor)


def _cased(part: str) -> str:
    if part.islower() and part.isascii():
        return part.upper() if len(part) <= 3 and part.isalpha() else part.capitalize()
    return part


def tool_mode(tool: dict[str, Any], verb: str | None) -> str:
    """``read``, ``destructive``, ``write`` or ``unknown``: annotations first, then the verb."""
    ann = tool.get("annotations")
    if isinstance(ann, dict):
        if ann.get("readOnlyHint") is True:
            return "read"
        if ann.get("destructiveHint") is True:
            return "destructive"
        if ann.get("readOnlyHint") is False:
            return "write"
    if verb in READ_VERBS:
        return "read"
    if verb in {"delete", "remove"}:
        return "destructive"
    if verb in WRITE_VERBS:
        return "write"
    return "unknown"


@dataclass(frozen=True)
class ToolFacts:
    """What the capability text needs from each tool (computed by the tool composer)."""

    verb: str | None
    objects: tuple[str, ...]
    mode: str
    words: tuple[str, ...]


def capability_text(
    product: Product,
    facts: list[ToolFacts],
    sample_tasks: list[str],
    about: list[str] | None = None,
) -> tuple[str, str, list[str]]:
    """(summary, usage, domains) for the whole server; ``about``: hint words from the server's
    own instructions, already filtered."""
    verbs = Counter(f.verb for f in facts if f.verb)
    objects: Counter[str] = Counter()
    for f in facts:
        objects.update(set(f.objects))
    domains = domains_for([list(f.words) for f in facts], product.words)
    top_verbs = [v for v, _ in sorted(verbs.items(), key=lambda kv: (-kv[1], kv[0]))[:6]]
    ranked = [
        o
        for o, _ in sorted(objects.items(), key=lambda kv: (-kv[1], kv[0]))
        if o not in STOPWORDS and len(o) > 1
    ]
    top_objects = [o for o in ranked if o not in product.words][:8] or ranked[:4]
    modes = Counter(f.mode for f in facts)
    n = len(facts)
    reads = modes.get("read", 0)
    writes = modes.get("write", 0) + modes.get("destructive", 0)
    head = f"{product.display}"
    if product.vendor:
        head += f" (by {product.vendor})"
    action = ", ".join(top_verbs) if top_verbs else "work with"
    what = ", ".join(top_objects) if top_objects else "its data"
    summary = f"{head}: tools to {action} {what}."
    if domains:
        summary += f" Domain: {', '.join(domains)}."
    counts = f"{n} tool{'s' if n != 1 else ''}"
    if reads or writes:
        counts += f": {reads} read-only, {writes} that change data"
        if modes.get("destructive"):
            counts += f" ({modes['destructive']} destructive)"
    usage = f"Use it for tasks in {product.display}. {counts}."
    if about:
        usage += f" About the server: {', '.join(about)}."
    if sample_tasks:
        usage += " For example: " + "; ".join(sample_tasks[:3]) + "."
    return summary, usage, domains
