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
from dataclasses import dataclass
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
from cartograph.generate.bootstrap.identity import Product, product_of
from cartograph.generate.bootstrap.prose import purpose_of
from cartograph.generate.bootstrap.rewrite import break_runs
from cartograph.generate.bootstrap.runs import (
    MAX_SHARED_RUN,
    guarded,
    publisher_grams,
    shares_run,
)
from cartograph.generate.bootstrap.server import capability_text
from cartograph.generate.bootstrap.siblings import (
    CLOSE,
    Profile,
    apart,
    closest_all,
    contrast,
)
from cartograph.generate.bootstrap.tool import ToolDraft, compose_tool
from cartograph.generate.quality import publisher_texts
from cartograph.generate.text import Dropped, filter_directives
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

    Every tool's text is written knowing its siblings: a tool whose words overlap a sibling's
    closely says what sets it apart. ``distinguish_from`` (tool name -> the ``server/tool`` names
    it is confused with, as Rift reports them) adds a sentence on what sets it apart from those
    tools (see :func:`cartograph.generate.bootstrap.siblings.apart`). Rivals on this server are
    always read; a rival on another server is read when ``rival_servers`` holds that server's
    snapshot (the one place where a card depends on another server's tools), and then the
    product's own name leads the words that set the tool apart.
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
    grams = publisher_grams(publisher_texts(server))
    drafts = [compose_tool(tool, product, grams) for tool in server.tools]
    rivals = _rivals(server.name, drafts, distinguish_from or {}, rival_servers or {})
    summaries, compare = _summaries(drafts, grams, rivals, product.words, product.display)
    summaries = _distinct(
        summaries, drafts, [_dup_index(server.tools, i) for i in range(len(drafts))]
    )

    about, instr_dropped = _instruction_sentence(server, grams)
    if instr_dropped:
        server_warnings.append(
            f"dropped {instr_dropped} model-directed segment(s) of the server instructions"
        )
    capability = _capability(product, drafts, summaries, about, grams)
    entries: list[ToolEntry] = []
    reports: list[ToolReport] = []
    for tool, draft, summary, other in zip(server.tools, drafts, summaries, compare, strict=True):
        entry, warnings = _checked(_entry(tool, draft, summary, other, capability.domains), draft)
        entries.append(entry)
        reports.append(ToolReport(draft.name, draft.dropped, warnings))
        for d in draft.dropped:
            logger.info("%s/%s: dropped %s text: %.60s", server.name, draft.name, d.reason, d.text)

    card = _card(server, product, capability, entries, created_at, snapshot_hash)
    report = GenerationReport(server.name, tuple(reports), tuple(server_warnings))
    return GeneratedCard(card, report)


def _card(
    server: ServerSnapshot,
    product: Product,
    capability: Capability,
    entries: list[ToolEntry],
    created_at: str,
    snapshot_hash: str | None,
) -> Card:
    listings = server.listings()
    extras = listing_entries(server, product, GENERATOR_ID)
    return Card(
        identity=Identity(
            server=server.name,
            transport=server.transport if server.transport in TRANSPORT_KINDS else "unknown",
            endpoint=server.endpoint,
            publisher=_publisher(server),
            package=server.package,
            version=server.version or _info_str(server, "version"),
        ),
        capability=capability,
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


def _capability(
    product: Product,
    drafts: list[ToolDraft],
    summaries: list[str],
    about: str,
    grams: frozenset[tuple[str, ...]],
) -> Capability:
    """The server's capability block, guarded like every other field."""
    facts = [d.facts for d in drafts]
    only = summaries[0] if len(drafts) == 1 else ""
    summary, usage, domains = capability_text(
        product, facts, _sample_tasks(drafts), about, only, summaries
    )
    return Capability(
        summary=guarded(grams, lambda: summary, lambda: f"{product.named}."),
        usage=guarded(grams, lambda: usage, lambda: capability_text(product, facts, [])[1]),
        domains=domains,
    )


def _checked(entry: ToolEntry, draft: ToolDraft) -> tuple[ToolEntry, tuple[str, ...]]:
    """``entry`` without examples whose arguments do not validate, and the tool's warnings
    (saying why when no example is left)."""
    warnings = list(draft.warnings)
    kept = [ex for ex in entry.examples if not _schema_problem(entry.input_schema, ex.arguments)]
    if len(kept) < len(entry.examples):
        problem = _schema_problem(entry.input_schema, entry.examples[0].arguments)
        entry = entry.model_copy(update={"examples": kept})
        if not kept:
            warnings.append(f"no example: its arguments would not validate ({problem})")
    return entry, tuple(warnings)


def _entry(
    tool: dict[str, Any], draft: ToolDraft, summary: str, other: str, domains: list[str]
) -> ToolEntry:
    schema = tool.get("inputSchema")
    schema = schema if isinstance(schema, dict) else {}
    description = tool.get("description")
    annotations = tool.get("annotations")
    usage = f"{other} {draft.usage}" if other else draft.usage
    return ToolEntry(
        name=draft.name,
        title=draft.title,
        summary=summary,
        usage=usage,
        examples=[ToolExample(task=t, arguments=a) for t, a in draft.examples],
        tags=list(dict.fromkeys([*draft.tags, *domains]))[:6],
        keywords=list(draft.keywords),
        input_schema=schema,
        input_schema_hash=sha256_json(schema),
        description_hash=sha256_text(description if isinstance(description, str) else None),
        annotations=annotations if isinstance(annotations, dict) else None,
        **output_schema_fields(tool),
        generator=GENERATOR_ID,
        dropped=[d.excerpt() for d in draft.dropped],
    )


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


def _instruction_sentence(
    server: ServerSnapshot, grams: frozenset[tuple[str, ...]]
) -> tuple[str, int]:
    """What the server's own instructions (or serverInfo description) say it is for, as one
    sentence of the capability usage ("Use it to ..."), and how many model-directed segments
    of the instructions were dropped."""
    filtered = filter_directives(server.instructions)
    info = server.server_info or {}
    text = filtered.kept or str(info.get("description") or "")
    purpose = purpose_of(text)
    if not purpose.sentence or purpose.verb is None:
        return "", len(filtered.dropped)
    sentence = purpose.sentence[0].lower() + purpose.sentence[1:]
    return break_runs(f"Use it to {sentence}", grams, MAX_SHARED_RUN) or "", len(filtered.dropped)


def _dup_index(tools: list[dict[str, Any]], i: int) -> int:
    """How many earlier tools share tool ``i``'s name (0 for the first)."""
    name = tools[i]["name"]
    return sum(1 for t in tools[:i] if t["name"] == name)


def _sample_tasks(drafts: list[ToolDraft], k: int = 3) -> list[str]:
    """One example task from each of the ``k`` objects most tools of the server act on."""
    groups: dict[str, list[ToolDraft]] = {}
    for d in drafts:
        key = " ".join(d.facts.objects[-2:]).rstrip("s")
        groups.setdefault(key, []).append(d)
    order = sorted(groups, key=lambda g: (-len(groups[g]), g))
    return [groups[g][0].examples[0][0] for g in order[:k] if groups[g][0].examples]


def _rivals(
    own: str,
    drafts: list[ToolDraft],
    distinguish_from: dict[str, list[str]],
    rival_servers: Mapping[str, ServerSnapshot],
) -> dict[str, tuple[list[Profile], bool]]:
    """Rift's rivals of each named tool as profiles (this server's tools, and other servers'
    where their snapshots were given), and whether any is on another server."""
    mine = {d.name: d.profile for d in drafts}
    foreign: dict[str, Profile] = {}
    for other in sorted({o for names in distinguish_from.values() for o in names}):
        srv, _, tool = other.partition("/")
        snap = rival_servers.get(srv) if srv != own else None
        raw = next((t for t in snap.tools if str(t.get("name")) == tool), None) if snap else None
        if snap is not None and raw is not None:
            grams = publisher_grams(publisher_texts(snap))
            foreign[other] = compose_tool(raw, product_of(snap), grams).profile
    out: dict[str, tuple[list[Profile], bool]] = {}
    for name, others in distinguish_from.items():
        same = [mine[t] for o in others for s, _, t in [o.partition("/")] if s == own and t in mine]
        away = [foreign[o] for o in others if o in foreign]
        found = [p for p in same if p.name != name] + away
        if found:
            out[name] = (found, bool(away))
    return out


def _summaries(
    drafts: list[ToolDraft],
    grams: frozenset[tuple[str, ...]],
    rivals: dict[str, tuple[list[Profile], bool]],
    product_words: tuple[str, ...],
    product: str = "",
) -> tuple[list[str], list[str]]:
    """Each tool's summary (its purpose sentence, and one more descriptive sentence when the
    first is short) and its contrast sentence: what sets it apart from its closest sibling,
    for the usage text. A summary that would be the same as a sibling's carries the contrast
    itself; a tool Rift found confused with others gains a sentence on what sets it apart."""
    profiles = [d.profile for d in drafts]
    plain = [
        break_runs(f"{d.sentence} {d.extra}".strip(), grams, MAX_SHARED_RUN) or d.sentence
        for d in drafts
    ]
    counts = Counter(plain)
    nearest = closest_all(profiles)
    summaries: list[str] = []
    contrasts: list[str] = []
    for draft, text, found in zip(drafts, plain, nearest, strict=True):
        sentence = ""
        if found is not None and (found[1] >= CLOSE or counts[text] > 1):
            sentence = contrast(draft.profile, found[0])
            if sentence and shares_run(grams, sentence):
                sentence = ""
        if sentence and counts[text] > 1:
            text = break_runs(f"{draft.sentence} {sentence}", grams, MAX_SHARED_RUN) or text
            sentence = ""
        if draft.name in rivals:
            others, away = rivals[draft.name]
            said = (
                apart(draft.profile, others, product_words, product)
                if away
                else apart(draft.profile, others)
            )
            text = (break_runs(f"{text} {said}", grams, MAX_SHARED_RUN) if said else None) or text
        summaries.append(text)
        contrasts.append(sentence)
    return summaries, contrasts


def _distinct(summaries: list[str], drafts: list[ToolDraft], dup_index: list[int]) -> list[str]:
    """Summaries made distinct within the server: where two are the same, each says which
    tool it is ("Listed as get_user."), then which entry of a repeated name."""
    out = list(summaries)
    for step in range(2):
        counts = Counter(out)
        clashing = [i for i, s in enumerate(out) if counts[s] > 1]
        if not clashing:
            break
        for i in clashing:
            if step == 0:
                out[i] = f"{out[i]} Listed as {drafts[i].name}."
            else:
                out[i] = f"{out[i].rstrip('.')}, entry {dup_index[i] + 1}."
    return out


def _schema_problem(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """The first reason ``arguments`` do not satisfy ``schema``, or None."""
    try:
        cls = validator_for(schema, default=Draft202012Validator)
        error = next(iter(cls(schema).iter_errors(arguments)), None)
    except (SchemaError, UnknownType, Unresolvable, KeyError, TypeError) as exc:
        return f"schema cannot be checked: {str(exc)[:120]}"
    return None if error is None else error.message[:200]
