"""Per-tool text for the bootstrap generator: the operator's summary, usage line, example tasks
and tags, composed from the tool name, its parameters, its annotations and the salient content
words of the publisher description (a hint only; its sentences are never carried over).

Every field passes the no-verbatim guard: if a run of :data:`MAX_SHARED_RUN` or more words of the
publisher's text would appear in it, the hint words are reordered, then left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cartograph.generate.bootstrap.digest import purpose_digest
from cartograph.generate.bootstrap.lexicon import (
    canonical_verb,
    cjk_gloss,
    noun_synonyms,
    verb_of,
    verb_synonyms,
)
from cartograph.generate.bootstrap.schema import Param, example_arguments, params_of
from cartograph.generate.bootstrap.server import Product, ToolFacts, tool_mode
from cartograph.generate.text import (
    STOPWORDS,
    Dropped,
    cjk_segments,
    content_words,
    filter_directives,
    identifier_phrase,
    is_cjk,
    split_identifier,
    tokenise,
)

MAX_SHARED_RUN = 6
"""Strictly below the 8-word limit the tests hold us to, for a margin."""

_SUMMARY_HINTS = 10
_USAGE_HINTS = 22
_TAG_HINTS = 70
_MAX_TAGS = 80
_NAME_NOISE = frozenset({"mcp", "tool", "tools", "api", "server"})


@dataclass(frozen=True)
class ToolDraft:
    """Operator text for one tool, before it becomes a ToolEntry."""

    name: str
    summary: str
    usage: str
    examples: tuple[tuple[str, dict[str, Any]], ...]
    tags: tuple[str, ...]
    facts: ToolFacts
    dropped: tuple[Dropped, ...]
    warnings: tuple[str, ...]
    detail: str
    """Words that tell this tool apart (name and parameters), for de-duplicating summaries."""
    vocabulary: tuple[str, ...] = ()
    """Every content word the card may use for this tool, best first."""
    grams: frozenset[tuple[str, ...]] = frozenset()
    """Word runs of the publisher's text that no operator field may contain."""


def compose_tool(tool: dict[str, Any], product: Product) -> ToolDraft:
    """Compose the operator's text for one tool of a server whose product is ``product``."""
    name = str(tool["name"])
    raw_description = tool.get("description")
    description = raw_description if isinstance(raw_description, str) else ""
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
    params = params_of(schema)
    filtered = filter_directives(description)
    dropped = list(filtered.dropped)
    param_text: list[str] = []
    for p in params:
        kept = filter_directives(p.description)
        dropped.extend(Dropped(d.text, f"{d.reason} (parameter {p.name})") for d in kept.dropped)
        param_text.append(kept.kept)

    name_words = [w for w in split_identifier(name) if w not in _NAME_NOISE]
    core = list(name_words)
    while len(core) > 1 and core[0] in product.words:  # "airbnb_search" -> "search"
        core.pop(0)
    verb, objects = _verb_and_objects(core)
    hint_words = content_words(
        _without_product(filtered.kept, product), exclude=(*name_words, *product.words)
    )
    if verb is None:
        verb = next((v for v in map(verb_of, hint_words[:3]) if v), None)
    if not objects:
        objects = [w for w in hint_words if not _verbish(w)][:2]
    param_hints = content_words(" ".join(param_text), exclude=(*name_words, *hint_words))
    gloss: list[str] = []
    segments: list[str] = []
    if is_cjk(description):
        gloss = cjk_gloss(filtered.kept + " " + " ".join(param_text))
        segments = cjk_segments(filtered.kept)[:8]
    mode = tool_mode(tool, verb)
    sources = publisher_grams([description, *(p.description for p in params)])

    s_hints = list(dict.fromkeys([*hint_words, *gloss]))[:_SUMMARY_HINTS]
    digest = purpose_digest(filtered.kept, sources, run=MAX_SHARED_RUN)
    summary = _guarded(
        sources,
        lambda: _digest_summary(digest, gloss),
        lambda: _summary(verb, objects, product, params, s_hints),
        lambda: _summary(verb, objects, product, params, sorted(s_hints)),
        lambda: _summary(verb, objects, product, [], []),
    )
    u_hints = [*hint_words[_SUMMARY_HINTS:_USAGE_HINTS], *param_hints[:6], *segments]
    kept = filtered.kept
    usage = _guarded(
        sources,
        lambda: _usage(tool, params, mode, kept, u_hints),
        lambda: _usage(tool, params, mode, kept, sorted(u_hints)),
        lambda: _usage(tool, sorted(params, key=lambda p: (not p.required, p.name)), mode, "", []),
        lambda: _usage(tool, params, mode, "", [], terse=True),
    )
    arguments = example_arguments(schema)
    examples = tuple(
        (_guarded(sources, lambda t=task: t, lambda: ""), arguments)
        for task in _tasks(verb, objects, product, params, arguments, hint_words)
    )
    examples = tuple((t, a) for t, a in examples if t) or (
        (f"Use {identifier_phrase(name) or name} in {product.display}", arguments),
    )
    words = [*core, *objects, *hint_words[:12], *(w for p in params for w in p.words)]
    choices = content_words(" ".join(str(v) for p in params for v in p.enum if isinstance(v, str)))
    title_words = content_words(_title(tool), exclude=name_words)
    extra = [
        *title_words,
        *hint_words[_USAGE_HINTS:_TAG_HINTS],
        *param_hints[6:30],
        *choices[:20],
    ]
    tag_list = _tags(product, verb, objects, [*gloss, *segments, *extra])
    joined = _guarded(
        sources,
        lambda: " ; ".join(tag_list),
        lambda: " ; ".join(sorted(tag_list)),
        lambda: " ; ".join(tag_list[:2]),
    )
    tags = tuple(t for t in joined.split(" ; ") if t)
    detail = identifier_phrase(name)
    warnings: list[str] = []
    if not description.strip():
        warnings.append("no publisher description: text from name and parameters only")
    elif not filtered.kept.strip():
        warnings.append("the whole publisher description was model-directed and dropped")
    facts = ToolFacts(verb, tuple(objects), mode, tuple(words))
    vocabulary = tuple(
        dict.fromkeys(
            [*core, *(w for p in params for w in p.words), *hint_words, *param_hints, *choices]
        )
    )
    return ToolDraft(
        name,
        summary,
        usage,
        examples,
        tags,
        facts,
        tuple(dropped),
        tuple(warnings),
        detail,
        vocabulary,
        sources,
    )


def distinguish(draft: ToolDraft, others: Sequence[ToolDraft], *, limit: int = 3) -> str:
    """``draft``'s summary plus the words that set it apart from ``others`` (tools a detector
    found too close to it); the summary unchanged when nothing sets it apart.

    The rivals are not named: their names in this card would make it match *their* tasks
    better, and few words keep the dense vector near the tool's own (measured with
    ``benchmarks/rift_regenerate.py`` on the fleet, docs/rift.md: naming the rivals raised the
    tools that lose their own synthetic query from 108 to 141; six words instead of three
    lowered dev-set R@1 0.545 -> 0.506, three words 0.545 -> 0.558)."""
    taken = {w for other in others for w in other.vocabulary}
    own = [w for w in draft.vocabulary if w not in taken and w not in STOPWORDS]
    if not own or not others:
        return draft.summary

    def build(words: list[str]) -> str:
        return f"{draft.summary} Sets it apart: {', '.join(words)}." if words else draft.summary

    return _guarded(
        draft.grams,
        lambda: build(own[:limit]),
        lambda: build(sorted(own[:limit])),
        lambda: draft.summary,
    )


def _verb_and_objects(core: list[str]) -> tuple[str | None, list[str]]:
    for i, word in enumerate(core):
        verb = canonical_verb(word)
        if verb:
            return verb, [w for j, w in enumerate(core) if j != i]
    return None, list(core)


def _title(tool: dict[str, Any]) -> str:
    title = tool.get("title")
    ann = tool.get("annotations")
    if not isinstance(title, str) and isinstance(ann, dict):
        title = ann.get("title")
    return title if isinstance(title, str) else ""


def _without_product(text: str, product: Product) -> str:
    """``text`` without mentions of the product's own words (``GitHub`` would split into the
    hint words ``git`` and ``hub``; the product name is in the text anyway)."""
    for word in product.words:
        if len(word) >= 4 and word.isascii():
            text = re.sub(rf"(?i)(?<![a-z]){re.escape(word)}(?![a-z])", " ", text)
    return text


def _verbish(word: str) -> bool:
    """``adds``, ``created``, ``searching``: an inflected action verb."""
    return verb_of(word) is not None


def publisher_grams(texts: Sequence[str]) -> frozenset[tuple[str, ...]]:
    """Every run of :data:`MAX_SHARED_RUN` words in the publisher's texts."""
    n = MAX_SHARED_RUN
    sources = [tokenise(t) for t in texts]
    return frozenset(tuple(s[i : i + n]) for s in sources for i in range(len(s) - n + 1))


def shares_run(grams: frozenset[tuple[str, ...]], text: str) -> bool:
    """Whether ``text`` contains one of the publisher's word runs."""
    n = MAX_SHARED_RUN
    words = tokenise(text)
    return any(tuple(words[i : i + n]) in grams for i in range(len(words) - n + 1))


def _guarded(grams: frozenset[tuple[str, ...]], *candidates: Callable[[], str]) -> str:
    """The first non-empty candidate text that shares no word run with the publisher's text;
    else the last one (the most terse)."""
    text = ""
    for build in candidates:
        text = build()
        if text and not shares_run(grams, text):
            return text
    return text


def _param_phrase(p: Param) -> str:
    return identifier_phrase(p.name) or p.name


def _digest_summary(digest: str, gloss: list[str]) -> str:
    """The purpose digest as a sentence, with English glosses of CJK text; ``""`` (so the
    template is used) when the description had no content words."""
    if not digest:
        return ""
    text = digest[0].upper() + digest[1:]
    if gloss:
        text += " (" + ", ".join(gloss[:8]) + ")"
    return text + "."


def _summary(
    verb: str | None, objects: list[str], product: Product, params: list[Param], hints: list[str]
) -> str:
    required = [_param_phrase(p) for p in params if p.required][:3]
    action = verb or "work with"
    what = " ".join(objects) if objects else "data"
    first = f"{action.capitalize()} {what} in {product.display}"
    if required:
        first += " by " + ", ".join(required)
    text = first + "."
    if hints:
        text += " About: " + ", ".join(hints) + "."
    return text


# (annotated by the publisher, inferred from the verb)
_MODE_TEXT = {
    "read": ("Read-only.", "Likely read-only."),
    "write": ("Changes data.", "Likely changes data."),
    "destructive": ("Destructive: can delete data.", "Likely destructive."),
    "unknown": ("", ""),
}


def _usage(
    tool: dict[str, Any],
    params: list[Param],
    mode: str,
    kept: str,
    hints: list[str],
    *,
    terse: bool = False,
) -> str:
    parts: list[str] = []
    required = [p for p in params if p.required]
    optional = [p for p in params if not p.required]
    if terse:
        parts.append(f"Takes {len(required)} required and {len(optional)} optional inputs.")
    elif required:
        parts.append("Needs " + ", ".join(f"{_param_phrase(p)} ({p.type})" for p in required) + ".")
    elif params:
        parts.append("No required inputs.")
    else:
        parts.append("Takes no inputs.")
    if optional and not terse:
        shown = ", ".join(_param_phrase(p) for p in optional[:10])
        more = f" and {len(optional) - 10} more" if len(optional) > 10 else ""
        parts.append(f"Optional: {shown}{more}.")
    returns = "" if terse else _returns(tool, kept)
    if returns:
        parts.append(f"Returns {returns}.")
    ann = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    parts.append(_MODE_TEXT[mode][0 if ann else 1])
    if ann and ann.get("idempotentHint") is True:
        parts.append("Safe to repeat.")
    if ann and ann.get("openWorldHint") is True:
        parts.append("Reaches external services.")
    if hints:
        parts.append("Related: " + ", ".join(hints) + ".")
    return " ".join(p for p in parts if p)


def _returns(tool: dict[str, Any], kept: str) -> str:
    out = tool.get("outputSchema")
    if isinstance(out, dict) and isinstance(out.get("properties"), dict):
        names = [identifier_phrase(str(k)) for k in out["properties"]][:5]
        if names:
            return ", ".join(names)
    words = tokenise(kept)
    for i, word in enumerate(words):
        if word in ("returns", "return", "returning"):
            got = content_words(" ".join(words[i + 1 : i + 9]), limit=4)
            if got:
                return ", ".join(got)
    return ""


def _tasks(
    verb: str | None,
    objects: list[str],
    product: Product,
    params: list[Param],
    arguments: dict[str, Any],
    hints: list[str],
) -> list[str]:
    what = " ".join(objects) if objects else "data"
    first = f"{(verb or 'use').capitalize()} {what} in {product.display}"
    shown = [
        f"{_param_phrase(p)} {arguments[p.name]}"
        for p in params
        if p.required
        and isinstance(arguments.get(p.name), str | int | float)
        and not isinstance(arguments.get(p.name), bool)
    ][:2]
    if shown:
        first += " for " + " and ".join(shown)
    tasks = [first]
    synonyms = verb_synonyms(verb) if verb else ()
    extra = [h for h in hints if h not in objects][:3]
    if synonyms or extra:
        alt = f"{(synonyms[0] if synonyms else verb or 'use').capitalize()} {what}"
        if extra:
            alt += " (" + ", ".join(extra) + ")"
        tasks.append(f"{alt} with {product.display}")
    return tasks


def _tags(
    product: Product,
    verb: str | None,
    objects: list[str],
    hints: list[str],
) -> list[str]:
    tags: list[str] = [" ".join(product.words)]
    if product.vendor:
        tags.append(product.vendor.lower())
    if verb:
        tags.append(verb)
        tags.extend(verb_synonyms(verb)[:3])
    tags.extend(objects)
    tags.extend(s for obj in objects for s in noun_synonyms(obj))
    tags.extend(hints)
    out: list[str] = []
    for tag in tags:
        if tag and tag not in out:
            out.append(tag)
    return out[:_MAX_TAGS]
