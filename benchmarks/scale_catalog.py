"""A synthetic tool catalog of any size, for the scale-out benchmark (benchmarks/scale_out.py).

Servers are (product, domain) pairs: a made-up product name and one of a few dozen domains,
each domain with its objects and the verbs that apply. Every server carries ``tools_per_server``
tools (verb x object), so many servers in one domain hold near-twins that differ by product:
the confusable, crowded catalog an organisation with thousands of tools has. Queries name a
product, a verb and an object in other words, and the tool they mean is known.
Deterministic for a given seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from cartograph.upstream.snapshot import ServerSnapshot, Snapshot

DOMAINS: dict[str, tuple[str, ...]] = {
    "billing": ("invoice", "payment", "refund", "subscription", "coupon", "customer"),
    "crm": ("contact", "lead", "deal", "account", "note", "pipeline"),
    "ticketing": ("ticket", "comment", "agent", "queue", "macro", "sla"),
    "code hosting": ("repository", "branch", "pull request", "issue", "release", "webhook"),
    "ci": ("pipeline", "job", "artifact", "runner", "build", "secret"),
    "chat": ("channel", "message", "thread", "reaction", "user", "reminder"),
    "email": ("email", "draft", "label", "attachment", "filter", "signature"),
    "calendar": ("event", "calendar", "invite", "room", "availability", "reminder"),
    "storage": ("file", "folder", "bucket", "share link", "version", "quota"),
    "docs": ("document", "page", "comment", "template", "space", "revision"),
    "monitoring": ("alert", "dashboard", "metric", "incident", "monitor", "log"),
    "hr": ("employee", "leave request", "payslip", "team", "review", "position"),
    "maps": ("place", "route", "geocode", "distance", "map", "traffic report"),
    "analytics": ("report", "funnel", "segment", "event", "cohort", "export"),
    "inventory": ("product", "stock level", "warehouse", "order", "supplier", "shipment"),
    "database": ("table", "query", "row", "index", "backup", "schema"),
    "cloud": ("instance", "volume", "network", "load balancer", "snapshot", "region"),
    "marketing": ("campaign", "audience", "newsletter", "landing page", "ad", "survey"),
    "security": ("user", "role", "api key", "audit event", "policy", "session"),
    "travel": ("flight", "hotel", "booking", "itinerary", "traveler", "fare"),
}
VERBS: dict[str, tuple[str, str]] = {  # verb -> (description phrase, a query paraphrase)
    "create": ("Create a new {o}", "make a new {o}"),
    "list": ("List the {o}s", "show me all {o}s"),
    "get": ("Get one {o} by its id", "fetch the details of a {o}"),
    "update": ("Update the fields of a {o}", "change a {o}"),
    "delete": ("Delete a {o} permanently", "remove a {o}"),
    "search": ("Search {o}s matching a text query", "find {o}s about"),
    "export": ("Export {o}s to CSV", "download a spreadsheet of {o}s"),
    "archive": ("Archive a {o} so it is hidden but kept", "put a {o} away without deleting"),
    "share": ("Share a {o} with another person", "give someone access to a {o}"),
    "count": ("Count the {o}s matching a filter", "how many {o}s are there"),
    "assign": ("Assign a {o} to a person", "hand a {o} over to a colleague"),
    "tag": ("Add tags to a {o}", "label a {o}"),
}
SYLLABLES = "ka lo mi ra ve xo zu ne ti qua bri dor fen gal hex jor kel lum nix orb pel".split()  # noqa: SIM905
FIELDS = ("id", "name", "owner", "status", "limit", "cursor", "query", "date", "note", "tags")


@dataclass(frozen=True)
class Query:
    text: str
    server: str
    tool: str


def product_names(n: int, rng: random.Random) -> list[str]:
    names: set[str] = set()
    while len(names) < n:
        names.add("".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 3)))))
    return sorted(names)


def tool_name(verb: str, obj: str) -> str:
    return f"{verb}_{obj.replace(' ', '_')}"


def synthetic_snapshot(tools: int, per_server: int = 50, seed: int = 7) -> Snapshot:
    """About ``tools`` tools in servers of ``per_server`` (the last server may hold fewer)."""
    rng = random.Random(seed)
    n_servers = max(1, -(-tools // per_server))
    products = product_names(n_servers, rng)
    domains = sorted(DOMAINS)
    servers: dict[str, ServerSnapshot] = {}
    left = tools
    for i, product in enumerate(products):
        domain = domains[i % len(domains)]
        pairs = [(v, o) for v in VERBS for o in DOMAINS[domain]]
        rng.shuffle(pairs)
        chosen = pairs[: min(per_server, left, len(pairs))]
        left -= len(chosen)
        name = f"{product}-{domain.replace(' ', '-')}"
        servers[name] = ServerSnapshot(
            name=name,
            tools=[_tool(product, domain, v, o, rng) for v, o in chosen],
            server_info={"name": f"{product.title()} {domain}", "version": "1.0.0"},
            instructions=f"{product.title()} is a {domain} service.",
            transport="stdio",
        )
        if left <= 0:
            break
    return Snapshot(servers=servers, created_at="2026-11-30T00:00:00Z")


def _tool(product: str, domain: str, verb: str, obj: str, rng: random.Random) -> dict[str, Any]:
    phrase = VERBS[verb][0].format(o=obj)
    fields = rng.sample(FIELDS, rng.randint(1, 4))
    return {
        "name": tool_name(verb, obj),
        "description": f"{phrase} in {product.title()} ({domain}).",
        "inputSchema": {
            "type": "object",
            "properties": {f: {"type": "string", "description": f"The {obj} {f}"} for f in fields},
            "required": fields[:1],
        },
    }


def synthetic_queries(snapshot: Snapshot, n: int, seed: int = 11) -> list[Query]:
    """``n`` tasks in plain words, each meaning one tool of ``snapshot``."""
    rng = random.Random(seed)
    names = sorted(snapshot.servers)
    out = []
    for _ in range(n):
        server = snapshot.servers[rng.choice(names)]
        tool = rng.choice(server.tools)
        verb, _, obj = str(tool["name"]).partition("_")
        product = server.name.split("-", 1)[0]
        ask = VERBS[verb][1].format(o=obj.replace("_", " "))
        out.append(Query(f"{ask} in {product.title()}", server.name, str(tool["name"])))
    return out
