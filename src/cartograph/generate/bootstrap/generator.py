"""The operator's deterministic card generator (``--generator bootstrap``).

:func:`generate_card` turns one recorded server (:class:`ServerSnapshot`) into an UNSIGNED
:class:`~cartograph.cards.model.Card` plus a :class:`GenerationReport` of what was dropped and
why. The text is composed by :mod:`cartograph.generate.bootstrap.tool` (per tool) and
:mod:`cartograph.generate.bootstrap.server` (per server); this module adds identity, provenance and
hashes and the entries of the server's prompts and resources
(:mod:`cartograph.generate.bootstrap.extras`), makes every summary within a server distinct, and
checks example arguments against the schema. Same input, same card: nothing here reads the clock,
the disk or the network.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from jsonschema.exceptions import SchemaError, UnknownType
from jsonschema.validators import Draft202012Validator, validator_for
from referencing.exceptions import Unresolvable

from cartograph.canonical import sha256_json, sha256_text
from cartograph.cards.listing import output_schema_fields
from cartograph.cards.model import (
    Capability,
    Card,
    Identity,
    Provenance,
    ToolEntry,
    ToolExample,
)
from cartograph.config import TRANSPORT_KINDS
from cartograph.generate.bootstrap.extras import listing_entries
from cartograph.generate.bootstrap.lexicon import cjk_gloss
from cartograph.generate.bootstrap.server import Product, capability_text, product_of
from cartograph.generate.bootstrap.tool import (
    ToolDraft,
    compose_tool,
    distinguish,
    publisher_grams,
    shares_run,
)
from cartograph.generate.text import Dropped, content_words, filter_directives, is_cjk
from cartograph.upstream.snapshot import ServerSnapshot, Snapshot

logger = logging.getLogger(__name__)

GENERATOR_NAME = "bootstrap"
GENERATOR_VERSION = "1"
GENERATOR_ID = f"{GENERATOR_NAME}/{GENERATOR_VERSION}"


@dataclass(frozen=True)
class ToolReport:
    """What the generator left out of one tool's publisher text, and what it noticed."""

    tool: str
    dropped: tuple[Dropped, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class GenerationReport:
    """Per-tool dropped model-directed text and warnings for one server's card."""

    server: str
    tools: tuple[ToolReport, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def dropped_count(self) -> int:
        return sum(len(t.dropped) for t in self.tools)

    def tools_with_dropped(self) -> list[str]:
        return [t.tool for t in self.tools if t.dropped]


@dataclass(frozen=True)
class GeneratedCard:
    """An unsigned card and the report of how it was made."""

    card: Card
    report: GenerationReport


def generate_card(
    server: ServerSnapshot,
    *,
    created_at: str,
    snapshot_hash: str | None = None,
    distinguish_from: dict[str, list[str]] | None = None,
    rival_servers: Mapping[str, ServerSnapshot] | None = None,
) -> GeneratedCard:
    """Compose the operator's unsigned card for ``server``.

    ``distinguish_from`` (tool name -> the ``server/tool`` names it is confused with, as Rift
    reports them) asks for contrast: those tools' summaries gain their name phrase and the words
    (from name, parameters and description hints) that none of their rivals has. Rivals on this
    server are always read; a rival on another server is read when ``rival_servers`` holds that
    server's snapshot (the one place where a card depends on another server's tools), and then
    the product's own name is among the words that set the tool apart.
    """
    product = product_of(server)
    names = Counter(str(t["name"]) for t in server.tools)
    server_warnings = [
        f"tool name {n!r} appears {c} times; entries after the first are numbered"
        for n, c in sorted(names.items())
        if c > 1
    ]
    if server.error:
        server_warnings.append(f"the server failed when recorded: {server.error}")
    drafts = [compose_tool(tool, product) for tool in server.tools]
    summaries = _distinct_summaries(
        drafts, [_dup_index(server.tools, i) for i in range(len(drafts))]
    )
    if distinguish_from:
        summaries = _contrasted(server, drafts, summaries, distinguish_from, rival_servers or {})

    about, instr_dropped = _instruction_hints(server, product)
    if instr_dropped:
        server_warnings.append(
            f"dropped {instr_dropped} model-directed segment(s) of the server instructions"
        )
    tasks = [ex[0] for d in drafts[:3] for ex in d.examples[:1]]
    facts = [d.facts for d in drafts]
    grams = publisher_grams([server.instructions or ""])
    for hints in (about, sorted(about), []):
        cap_summary, cap_usage, domains = capability_text(product, facts, tasks, hints)
        if not shares_run(grams, f"{cap_summary} {cap_usage}"):
            break
    entries: list[ToolEntry] = []
    reports: list[ToolReport] = []
    for tool, draft, summary in zip(server.tools, drafts, summaries, strict=True):
        schema = tool.get("inputSchema")
        schema = schema if isinstance(schema, dict) else {}
        warnings = list(draft.warnings)
        examples = []
        for task, arguments in draft.examples:
            problem = _schema_problem(schema, arguments)
            if problem:
                warnings.append(f"example arguments do not validate: {problem}")
            examples.append(ToolExample(task=task, arguments=arguments))
        description = tool.get("description")
        annotations = tool.get("annotations")
        title = tool.get("title")
        if not isinstance(title, str) and isinstance(annotations, dict):
            title = annotations.get("title")
        entries.append(
            ToolEntry(
                name=draft.name,
                title=title if isinstance(title, str) and title else None,
                summary=summary,
                usage=draft.usage,
                examples=examples,
                tags=[*draft.tags, *(d for d in domains if d not in draft.tags)],
                input_schema=schema,
                input_schema_hash=sha256_json(schema),
                description_hash=sha256_text(description if isinstance(description, str) else None),
                annotations=annotations if isinstance(annotations, dict) else None,
                **output_schema_fields(tool),
                generator=GENERATOR_ID,
                dropped=[d.excerpt() for d in draft.dropped],
            )
        )
        reports.append(ToolReport(draft.name, draft.dropped, tuple(warnings)))
        for d in draft.dropped:
            logger.info("%s/%s: dropped %s text: %.60s", server.name, draft.name, d.reason, d.text)

    listings = server.listings()
    extras = listing_entries(server, product, GENERATOR_ID)
    card = Card(
        identity=Identity(
            server=server.name,
            transport=server.transport if server.transport in TRANSPORT_KINDS else "unknown",
            endpoint=server.endpoint,
            publisher=_publisher(server),
            package=server.package,
            version=server.version or _info_str(server, "version"),
        ),
        capability=Capability(summary=cap_summary, usage=cap_usage, domains=domains),
        tools=entries,
        provenance=Provenance(
            generator=GENERATOR_NAME,
            generator_version=GENERATOR_VERSION,
            created_at=created_at,
            tools_list_hash=sha256_json(server.tools),
            snapshot_hash=snapshot_hash,
            instructions_hash=sha256_text(server.instructions) if server.instructions else None,
            listings_hash=sha256_json(listings) if listings and any(listings.values()) else None,
        ),
        prompts=extras.prompts,
        resources=extras.resources,
        resource_templates=extras.resource_templates,
    )
    report = GenerationReport(server.name, tuple(reports), tuple(server_warnings))
    return GeneratedCard(card, report)


def generate_cards(
    snapshot: Snapshot, *, created_at: str | None = None
) -> dict[str, GeneratedCard]:
    """Cards for every server of ``snapshot`` that answered, keyed by server name."""
    when = created_at or snapshot.created_at
    digest = snapshot.digest()
    out: dict[str, GeneratedCard] = {}
    for name in sorted(snapshot.servers):
        server = snapshot.servers[name]
        if server.error and not server.tools:
            logger.warning("%s: skipped, it failed when recorded: %s", name, server.error)
            continue
        out[name] = generate_card(server, created_at=when, snapshot_hash=digest)
    return out


def _publisher(server: ServerSnapshot) -> str | None:
    return _info_str(server, "name")


def _info_str(server: ServerSnapshot, key: str) -> str | None:
    value = (server.server_info or {}).get(key)
    return value if isinstance(value, str) and value else None


def _instruction_hints(server: ServerSnapshot, product: Product) -> tuple[list[str], int]:
    """Salient words of the server's own instructions (model-directed parts dropped), and how
    many segments were dropped."""
    filtered = filter_directives(server.instructions)
    words = content_words(filtered.kept, exclude=product.words, limit=12)
    if is_cjk(filtered.kept):
        words = list(dict.fromkeys([*words, *cjk_gloss(filtered.kept)]))[:12]
    return words, len(filtered.dropped)


def _dup_index(tools: list[dict[str, Any]], i: int) -> int:
    """How many earlier tools share tool ``i``'s name (0 for the first)."""
    name = tools[i]["name"]
    return sum(1 for t in tools[:i] if t["name"] == name)


def _distinct_summaries(drafts: list[ToolDraft], dup_index: list[int]) -> list[str]:
    """Each draft's summary, with distinguishing detail added where two would be identical."""
    summaries = [d.summary for d in drafts]
    for step in range(3):
        counts = Counter(summaries)
        clashing = [i for i, s in enumerate(summaries) if counts[s] > 1]
        if not clashing:
            break
        for i in clashing:
            d = drafts[i]
            if step == 0:
                summaries[i] = f"{summaries[i]} Tool: {d.detail}."
            elif step == 1:
                summaries[i] = f"{summaries[i]} Name: {d.name}."
            else:
                summaries[i] = f"{summaries[i]} Entry {dup_index[i] + 1}."
    return summaries


def _contrasted(
    server: ServerSnapshot,
    drafts: list[ToolDraft],
    summaries: list[str],
    rivals: dict[str, list[str]],
    rival_servers: Mapping[str, ServerSnapshot],
) -> list[str]:
    """Summaries with contrast added for the tools named in ``rivals`` (see generate_card):
    the tool's name phrase, then the words (from its name, parameters and description hints)
    that none of its rivals has; against another server's tool, the product name leads them."""
    pos = {d.name: i for i, d in enumerate(drafts)}
    product = product_of(server)
    foreign = _foreign_drafts(server.name, rivals, rival_servers)
    out = list(summaries)
    for name in sorted(rivals):
        i = pos.get(name)
        if i is None:
            continue
        mates: list[ToolDraft] = []
        for other in rivals[name]:
            srv, _, tool = other.partition("/")
            if srv == server.name and tool in pos and pos[tool] != i:
                mates.append(drafts[pos[tool]])
            elif other in foreign:
                mates.append(foreign[other])
        base = out[i]
        if drafts[i].detail not in base:
            base += f" Tool: {drafts[i].detail}."
        draft = replace(drafts[i], summary=base)
        if any(m in foreign.values() for m in mates):
            words = tuple(w for w in product.words if w not in draft.vocabulary)
            draft = replace(draft, vocabulary=(*words, *draft.vocabulary))
        out[i] = distinguish(draft, mates)
    return out


def _foreign_drafts(
    own: str, rivals: dict[str, list[str]], rival_servers: Mapping[str, ServerSnapshot]
) -> dict[str, ToolDraft]:
    """Drafts of the rivals on other servers whose snapshots were given, by ``server/tool``."""
    wanted = {o for names in rivals.values() for o in names if not o.startswith(f"{own}/")}
    out: dict[str, ToolDraft] = {}
    for other in sorted(wanted):
        srv, _, tool = other.partition("/")
        snap = rival_servers.get(srv)
        raw = next((t for t in snap.tools if str(t.get("name")) == tool), None) if snap else None
        if snap is not None and raw is not None:
            out[other] = compose_tool(raw, product_of(snap))
    return out


def _schema_problem(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """The first reason ``arguments`` do not satisfy ``schema``, or None."""
    try:
        cls = validator_for(schema, default=Draft202012Validator)
        error = next(iter(cls(schema).iter_errors(arguments)), None)
    except (SchemaError, UnknownType, Unresolvable, KeyError, TypeError) as exc:
        return f"schema cannot be checked: {str(exc)[:120]}"
    return None if error is None else error.message[:200]
