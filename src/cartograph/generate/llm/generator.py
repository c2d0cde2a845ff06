"""The operator's LLM card generator (``--generator llm``).

For each server it first runs the deterministic generator
(:func:`cartograph.generate.bootstrap.generator.generate_card`): that gives identity, capability,
the dropped-directive list, and for every tool the fields code owns (input schema as sent, schema
and description hashes, annotations, example arguments) plus a fallback entry. The model then writes
each tool's summary, usage, example tasks and tags (:mod:`cartograph.generate.llm.prompt`), with up
to ``max_attempts`` tries per tool, each rejected answer's problems fed back into the next prompt.
Fields are judged one by one (:mod:`cartograph.generate.llm.answer`): a field that passed is kept
across tries, and with fallback allowed, a field the model never got right takes the bootstrap
text for that field only, its reason in the run's ``field_fallbacks``. Summaries that collide
inside a server are regenerated with the collision named in the prompt.

Accepted answers are cached (:mod:`cartograph.generate.llm.cache`), so a re-run asks only about
changed tools (the key includes which siblings the prompt named). When no field of a tool can be
written (answers that are not JSON, endpoint down) the bootstrap entry is used if the operator
allows fallback; otherwise the server's card fails with a
:class:`~cartograph.errors.GeneratorError` naming the server and tool. Each entry's ``generator``
says who wrote it (``llm/1:<model>`` when the model wrote at least one of its fields, else
``bootstrap/1``); ``Provenance.model`` names the model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from cartograph.cards.model import Provenance, ToolEntry, ToolExample
from cartograph.errors import GeneratorError
from cartograph.generate.bootstrap.generator import GeneratedCard, generate_card
from cartograph.generate.bootstrap.schema import example_arguments
from cartograph.generate.llm.answer import (
    FIELDS,
    AnswerRejected,
    Written,
    check_fields,
    judge,
    parse_fields,
    summary_key,
    wire_schema,
)
from cartograph.generate.llm.cache import CacheKey, LLMCache
from cartograph.generate.llm.client import ChatClient, EndpointUnreachable, LLMSettings
from cartograph.generate.llm.prompt import (
    PROMPT_VERSION,
    ToolHint,
    build_messages,
    tool_hint,
    with_siblings,
)
from cartograph.generate.text import identifier_phrase
from cartograph.upstream.snapshot import ServerSnapshot

logger = logging.getLogger(__name__)

GENERATOR_NAME = "llm"
GENERATOR_VERSION = "1"
COLLISION_ROUNDS = 2

OnTool = Callable[[str, str, str], None]
"""Called with (server, tool, outcome) as each tool settles: cached/generated/fallback/failed."""


def generator_id(model: str) -> str:
    return f"{GENERATOR_NAME}/{GENERATOR_VERSION}:{model}"


@dataclass
class LLMStats:
    """What one run cost and how it went."""

    model: str = ""
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rejected: int = 0
    cache_hits: int = 0
    generated: int = 0
    regenerated_for_collision: int = 0
    fallbacks: dict[str, dict[str, str]] = field(default_factory=dict)
    field_fallbacks: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    """server -> tool -> field -> why that field kept the bootstrap text."""

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "rejected_answers": self.rejected,
            "cache_hits": self.cache_hits,
            "generated": self.generated,
            "regenerated_for_collision": self.regenerated_for_collision,
            "fallbacks": self.fallbacks,
            "field_fallbacks": self.field_fallbacks,
        }


@dataclass
class LLMGeneration:
    """Unsigned cards by server, servers that failed, and the run's figures."""

    cards: dict[str, GeneratedCard] = field(default_factory=dict)
    failed: dict[str, GeneratorError] = field(default_factory=dict)
    stats: LLMStats = field(default_factory=LLMStats)


@dataclass
class _Slot:
    """One tool of one server while its text is being written."""

    hint: ToolHint
    base: ToolEntry
    key: CacheKey
    answer: dict[str, Any] | None = None
    """The fields the model wrote (all of :data:`FIELDS` unless some are in ``kept``)."""
    kept: dict[str, str] = field(default_factory=dict)
    """Fields that keep the bootstrap text, each with the reason."""
    error: GeneratorError | None = None

    def summary(self) -> str:
        """The summary the entry will carry: the model's, or the bootstrap one it kept."""
        if self.answer and "summary" in self.answer:
            return str(self.answer["summary"])
        return self.base.summary


def generate_llm_cards(
    servers: list[ServerSnapshot],
    settings: LLMSettings,
    cache: LLMCache | None,
    *,
    created_at: str,
    snapshot_hash: str | None = None,
    on_tool: OnTool | None = None,
) -> LLMGeneration:
    """Write every server's card with the model (blocking; runs its own event loop)."""

    async def run() -> LLMGeneration:
        return await agenerate_llm_cards(
            servers,
            settings,
            cache,
            created_at=created_at,
            snapshot_hash=snapshot_hash,
            on_tool=on_tool,
        )

    return anyio.run(run)


async def agenerate_llm_cards(
    servers: list[ServerSnapshot],
    settings: LLMSettings,
    cache: LLMCache | None,
    *,
    created_at: str,
    snapshot_hash: str | None = None,
    on_tool: OnTool | None = None,
) -> LLMGeneration:
    """Async form of :func:`generate_llm_cards`."""
    out = LLMGeneration(stats=LLMStats(model=settings.model))
    job = _Job(settings, cache, out, on_tool or (lambda *_a: None))
    async with ChatClient(settings) as client:
        job.client = client
        async with anyio.create_task_group() as tg:
            for server in servers:
                tg.start_soon(job.server, server, created_at, snapshot_hash)
    return out


@dataclass
class _Job:
    settings: LLMSettings
    cache: LLMCache | None
    out: LLMGeneration
    on_tool: OnTool
    client: ChatClient | None = None
    limiter: anyio.CapacityLimiter = field(init=False)
    unreachable: str | None = None

    def __post_init__(self) -> None:
        self.limiter = anyio.CapacityLimiter(self.settings.concurrency)

    async def server(self, server: ServerSnapshot, created_at: str, snap: str | None) -> None:
        base = generate_card(server, created_at=created_at, snapshot_hash=snap)
        hints = with_siblings(
            [tool_hint(t) for t in server.tools], [e.summary for e in base.card.tools]
        )
        slots = [
            _Slot(hint, entry, self._key(server.name, entry, hint))
            for hint, entry in zip(hints, base.card.tools, strict=True)
        ]
        async with anyio.create_task_group() as tg:
            for slot in slots:
                tg.start_soon(self._first_answer, server.name, slot)
        if not self.settings.allow_fallback:
            failed = next((s for s in slots if s.error is not None), None)
            if failed is not None and failed.error is not None:
                self.out.failed[server.name] = failed.error
                return
        await self._resolve_collisions(server.name, slots)
        fid = generator_id(self.settings.model)
        entries: list[ToolEntry] = []
        for slot in slots:
            if slot.answer is None:
                reason = str(slot.error) if slot.error else "no answer"
                self.out.stats.fallbacks.setdefault(server.name, {})[slot.base.name] = reason
                entries.append(slot.base)
                continue
            if slot.kept:
                self.out.stats.field_fallbacks.setdefault(server.name, {})[slot.base.name] = dict(
                    slot.kept
                )
            entries.append(_entry(slot.base, slot.answer, fid))
        prov = base.card.provenance.model_dump()
        prov.update(
            generator=GENERATOR_NAME, generator_version=GENERATOR_VERSION, model=self.settings.model
        )
        card = base.card.model_copy(update={"tools": entries, "provenance": Provenance(**prov)})
        self.out.cards[server.name] = GeneratedCard(card, base.report)

    def _key(self, server: str, entry: ToolEntry, hint: ToolHint) -> CacheKey:
        return CacheKey(
            server,
            entry.name,
            entry.input_schema_hash,
            entry.description_hash,
            self.settings.model,
            f"{PROMPT_VERSION}+{hint.context_digest()}",
        )

    async def _first_answer(self, server: str, slot: _Slot) -> None:
        cached = self.cache.get(slot.key) if self.cache else None
        written = self._from_cache(cached, slot.hint) if cached is not None else None
        if written is not None:
            slot.answer, slot.kept = written.fields, written.kept
            self.out.stats.cache_hits += 1
            self.on_tool(server, slot.base.name, "cached")
            return
        try:
            written = await self._ask(server, slot.hint, taken=())
        except GeneratorError as exc:
            slot.error = exc
            logger.warning("%s", exc)
            self.on_tool(
                server, slot.base.name, "fallback" if self.settings.allow_fallback else "failed"
            )
            return
        slot.answer, slot.kept = written.fields, written.kept
        self.out.stats.generated += 1
        self._store(slot)
        self.on_tool(server, slot.base.name, "generated")

    def _from_cache(self, cached: dict[str, Any], hint: ToolHint) -> Written | None:
        """A cached answer that still passes every check (None: ask again). Fields cached as
        bootstrap ones count only while fallback is allowed."""
        kept = cached.get("bootstrap_fields") or {}
        if not isinstance(kept, dict) or (kept and not self.settings.allow_fallback):
            return None
        try:
            fields, bad = parse_fields(_dumps({k: v for k, v in cached.items() if k in FIELDS}))
        except AnswerRejected:
            return None
        if not fields or set(bad) - set(kept) or check_fields(fields, hint):
            return None
        return Written(fields, {str(k): str(v) for k, v in kept.items() if k in FIELDS})

    async def _resolve_collisions(self, server: str, slots: list[_Slot]) -> None:
        """Regenerate summaries that another tool of the server already has."""
        for _ in range(COLLISION_ROUNDS):
            clashing = _clashes(slots)
            if not clashing:
                return
            for slot, taken in clashing:
                self.out.stats.regenerated_for_collision += 1
                try:
                    written = await self._ask(server, slot.hint, taken=taken)
                except GeneratorError as exc:
                    logger.info("%s (keeping a disambiguated summary)", exc)
                    break
                slot.answer, slot.kept = written.fields, written.kept
                self._store(slot)
        for slot, _taken in _clashes(slots):  # still the same: disambiguate by name, in code
            assert slot.answer is not None
            detail = identifier_phrase(slot.base.name) or slot.base.name
            summary = f"{slot.summary()} Tool: {detail}."
            if "summary" in slot.answer:
                slot.answer = {**slot.answer, "summary": summary}
            else:
                slot.base = slot.base.model_copy(update={"summary": summary})

    def _store(self, slot: _Slot) -> None:
        if self.cache is not None and slot.answer is not None:
            self.cache.put(slot.key, Written(slot.answer, slot.kept).cached())

    async def _ask(
        self, server: str, hint: ToolHint, *, taken: tuple[tuple[str, str], ...]
    ) -> Written:
        """The model's accepted fields for one tool after at most ``max_attempts`` tries, a
        field that passed once being kept. Fields still wrong after the last try fall back
        (fallback allowed and at least one field written); otherwise GeneratorError."""
        assert self.client is not None
        good: dict[str, Any] = {}
        why: dict[str, str] = {}
        problems: list[str] = []
        for attempt in range(1, self.settings.max_attempts + 1):
            if self.unreachable is not None:
                raise GeneratorError(server, self.unreachable, tool=hint.name)
            messages = build_messages(server, hint, problems=problems, taken=taken)
            async with self.limiter:
                try:
                    reply = await self.client.complete(
                        messages, wire_schema(), server=server, tool=hint.name
                    )
                except EndpointUnreachable as exc:
                    self.unreachable = exc.reason
                    raise
            self._count(reply.prompt_tokens, reply.completion_tokens)
            bad = judge(reply.content, hint, taken, good)
            if not bad:
                return Written(good, {})
            self.out.stats.rejected += 1
            why.update(bad)
            problems = list(dict.fromkeys(bad.values()))
            if reply.finish_reason == "length":
                problems.append("it was cut off at the token limit; answer more briefly")
            logger.info(
                "%s/%s: answer %d rejected: %s", server, hint.name, attempt, "; ".join(problems)
            )
        if self.settings.allow_fallback and good:
            return Written(good, {f: why[f] for f in FIELDS if f not in good})
        raise GeneratorError(
            server,
            f"the model {self.settings.model!r} answered badly {self.settings.max_attempts} "
            f"times; last problem: {'; '.join(problems)}",
            tool=hint.name,
        )

    def _count(self, prompt_tokens: int, completion_tokens: int) -> None:
        stats = self.out.stats
        stats.requests += 1
        stats.prompt_tokens += prompt_tokens
        stats.completion_tokens += completion_tokens


def _clashes(slots: list[_Slot]) -> list[tuple[_Slot, tuple[tuple[str, str], ...]]]:
    """Slots whose summary an earlier slot already has, each with the (tool, summary) taken."""
    seen: dict[str, tuple[str, str]] = {}
    out: list[tuple[_Slot, tuple[tuple[str, str], ...]]] = []
    for slot in slots:
        summary = slot.summary()
        key = summary_key(summary)
        if key in seen:
            if slot.answer is not None:
                out.append((slot, (seen[key],)))
        else:
            seen[key] = (slot.base.name, summary)
    return out


def _entry(base: ToolEntry, answer: dict[str, Any], generator: str) -> ToolEntry:
    """The card entry: the model's fields (the bootstrap entry's for those it did not write),
    everything else copied by code from ``base``."""
    arguments = (
        base.examples[0].arguments if base.examples else example_arguments(base.input_schema)
    )
    examples = (
        [ToolExample(task=t, arguments=dict(arguments)) for t in answer["example_tasks"]]
        if "example_tasks" in answer
        else list(base.examples)
    )
    return ToolEntry(
        name=base.name,
        title=base.title,
        summary=answer.get("summary", base.summary),
        usage=answer.get("usage", base.usage),
        examples=examples,
        tags=list(answer.get("tags", base.tags)),
        keywords=list(base.keywords),
        input_schema=base.input_schema,
        input_schema_hash=base.input_schema_hash,
        description_hash=base.description_hash,
        annotations=base.annotations,
        output_schema=base.output_schema,
        output_schema_hash=base.output_schema_hash,
        generator=generator,
        dropped=list(base.dropped),
    )


def _dumps(answer: dict[str, Any]) -> str:
    import json

    return json.dumps(answer, ensure_ascii=False)
