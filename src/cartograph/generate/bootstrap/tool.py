"""Per-tool text for the bootstrap generator: the operator's purpose sentence, usage, example
tasks, a few topic tags and the ranking-only keywords, composed from the tool name, its
parameters, its annotations and the publisher description (read for what the tool is for; its
sentences are restated, never carried over).

Every field passes the no-verbatim guard of :mod:`cartograph.generate.bootstrap.runs` (a run's
words rewritten by :func:`~cartograph.generate.bootstrap.rewrite.break_runs`, else a plainer form).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cartograph.generate.bootstrap.examples import object_phrase, plain_object, reword_verb, tasks
from cartograph.generate.bootstrap.identity import Product
from cartograph.generate.bootstrap.lexicon import (
    canonical_verb,
    cjk_gloss,
    noun_synonyms,
    sql_gloss,
    verb_of,
    verb_synonyms,
)
from cartograph.generate.bootstrap.phrasing import KNOWN_VERBS, base_verb, drop_s
from cartograph.generate.bootstrap.prose import Purpose, purpose_of, shorten
from cartograph.generate.bootstrap.rewrite import break_runs, first_clause, tidy_end
from cartograph.generate.bootstrap.runs import MAX_SHARED_RUN, guarded
from cartograph.generate.bootstrap.schema import Param, example_arguments, params_of
from cartograph.generate.bootstrap.server import ToolFacts, tool_mode
from cartograph.generate.bootstrap.siblings import Profile, profile
from cartograph.generate.bootstrap.usage import clean_title, usage_text
from cartograph.generate.text import (
    Dropped,
    cjk_segments,
    content_words,
    filter_directives,
    identifier_phrase,
    is_cjk,
    split_identifier,
    tokenise,
    wordset,
)

MAX_EXAMPLE_TASKS = 2
"""Example tasks a card keeps: the first of :func:`tasks`' candidates that pass the run guard."""

_MAX_KEYWORDS = 80
_NAME_NOISE = frozenset({"mcp", "tool", "tools", "api", "server"})
_EXTRA_WORDS = 20
_SHORT_SENTENCE = 10
"""A purpose sentence with fewer content words may take the publisher's next descriptive
sentence (long descriptions put purpose first, caveats and formats after)."""


@dataclass(frozen=True)
class ToolDraft:
    """Operator text for one tool, before sibling contrast makes it a ToolEntry."""

    name: str
    sentence: str
    """The purpose sentence (the summary's first sentence)."""
    extra: str
    """A second descriptive sentence the summary may carry when no contrast is needed."""
    usage: str
    examples: tuple[tuple[str, dict[str, Any]], ...]
    tags: tuple[str, ...]
    keywords: tuple[str, ...]
    facts: ToolFacts
    profile: Profile
    title: str | None
    dropped: tuple[Dropped, ...]
    warnings: tuple[str, ...]
    detail: str
    """The tool's name as words, for telling identical summaries apart."""


@dataclass(frozen=True)
class _Read:
    """What compose_tool reads off one tool before writing anything."""

    name: str
    description: str
    kept: str
    params: list[Param]
    dropped: list[Dropped]
    name_words: list[str]
    name_verb: str | None
    """The name word that is the verb (``get`` of ``get_user``), as written."""
    verb: str | None
    objects: list[str]
    hints: list[str]
    param_hints: list[str]
    gloss: list[str]
    named_objects: bool = True
    """Whether ``objects`` are the name's words (else the description's, for a bare name)."""

    @property
    def label(self) -> str:
        """The tool's name as words ("fetch html")."""
        return identifier_phrase(self.name) or self.name


def compose_tool(
    tool: dict[str, Any], product: Product, grams: frozenset[tuple[str, ...]]
) -> ToolDraft:
    """Compose the operator's text for one tool; ``grams``: the server's publisher word runs."""
    r = _read(tool, product)
    mode = tool_mode(tool, r.verb)
    purpose = purpose_of(r.kept, frozenset([*r.name_words, *product.words]))
    sentence = _sentence(r, purpose, product, grams)
    extra = _extra(purpose, sentence, grams)
    usage = guarded(
        grams,
        lambda: usage_text(tool, r.params, mode, deprecated=purpose.deprecated),
        lambda: usage_text(tool, r.params, mode, deprecated=purpose.deprecated, shown=3),
        lambda: usage_text(tool, r.params, mode, deprecated=purpose.deprecated, shown=0),
    )
    examples = _examples(tool, r, purpose, product, sentence, grams)
    title, title_note = clean_title(tool)
    warnings = [title_note] if title_note else []
    if not r.description.strip():
        warnings.append("no publisher description: text from name and parameters only")
    elif not r.kept.strip():
        warnings.append("the whole publisher description was model-directed and dropped")
    words = [*r.objects, *r.hints[:12], *(w for p in r.params for w in p.words)]
    required = [p.name for p in r.params if p.required]
    optional = [p.name for p in r.params if not p.required]
    arrays = [p.name for p in r.params if p.required and p.type.startswith("list")]
    plain = r.named_objects and plain_object(r.objects, {r.verb or "", r.name_verb or ""})
    return ToolDraft(
        name=r.name,
        sentence=sentence,
        extra=extra,
        usage=usage,
        examples=examples,
        tags=_tags(product, r.objects),
        keywords=_keywords(r, product, title),
        facts=ToolFacts(r.verb, tuple(r.objects), mode, tuple(words), plain, r.label),
        profile=profile(
            r.name,
            r.name_verb,
            purpose.sentence or sentence,
            required,
            optional,
            mode,
            arrays,
            product.words,
        ),
        title=title,
        dropped=tuple(r.dropped),
        warnings=tuple(warnings),
        detail=r.label,
    )


def _examples(
    tool: dict[str, Any],
    r: _Read,
    purpose: Purpose,
    product: Product,
    sentence: str,
    grams: frozenset[tuple[str, ...]],
) -> tuple[tuple[str, dict[str, Any]], ...]:
    """The first :data:`MAX_EXAMPLE_TASKS` tasks past the run guard ("Use <name>" if none)."""
    arguments = example_arguments(tool.get("inputSchema"), r.name_words)
    verb = _task_verb(r, purpose)
    found = tasks(
        verb, r.objects, product, r.params, arguments, r.name, sentence, _reword(r, purpose, verb)
    )
    kept = [t for t in (guarded(grams, lambda t=t: t, lambda: "") for t in found) if t]
    return tuple((task, arguments) for task in kept[:MAX_EXAMPLE_TASKS]) or (
        (f"Use {r.label}", arguments),
    )


def _read(tool: dict[str, Any], product: Product) -> _Read:
    name = str(tool["name"])
    raw = tool.get("description")
    description = raw if isinstance(raw, str) else ""
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
    name_verb = next((w for w in core if canonical_verb(w)), None)
    hints = content_words(filtered.kept, exclude=(*name_words, *product.words))
    gloss: list[str] = []
    if is_cjk(name + description):
        gloss = cjk_gloss(f"{name} {filtered.kept} {' '.join(param_text)}")
    if verb is None:
        verb = next((v for v in map(verb_of, [*gloss[:2], *hints[:3]]) if v), None)
    named_objects = bool(objects)
    if not objects:
        objects = [w for w in [*gloss, *hints] if not verb_of(w) and w not in product.words][:2]
    param_hints = content_words(" ".join(param_text), exclude=(*name_words, *hints))
    return _Read(
        name,
        description,
        filtered.kept,
        params,
        dropped,
        name_words,
        name_verb,
        verb,
        objects,
        hints,
        param_hints,
        gloss,
        named_objects,
    )


def _task_verb(r: _Read, purpose: Purpose) -> str | None:
    """The verb a user would say: the description's own where it is a known action, else the
    name's (``firecrawl_search_feedback`` sends feedback)."""
    if purpose.verb in KNOWN_VERBS:
        return canonical_verb(purpose.verb) or purpose.verb
    return r.verb


def _reword(r: _Read, purpose: Purpose, filed: str | None) -> str | None:
    """The verb whose other words may ask for the tool again with the name's objects
    (:func:`~cartograph.generate.bootstrap.examples.reword_verb`; ``filed``: its
    :func:`_task_verb`), None when its objects came from the description rather than the name
    ("Fetch the commit" is not ``git_log``)."""
    if not r.named_objects:
        return None
    own = purpose.verb if purpose.verb in KNOWN_VERBS else base_verb(r.name_verb or "")
    return reword_verb(own or r.name_verb, filed)


def _verb_and_objects(core: list[str]) -> tuple[str | None, list[str]]:
    for i, word in enumerate(core):
        verb = canonical_verb(word)
        if verb:
            return verb, [w for j, w in enumerate(core) if j != i]
    if len(core) > 1 and base_verb(core[0]) == core[0]:  # "toggle_logging"
        return core[0], core[1:]
    return None, list(core)


def _sentence(
    r: _Read, purpose: Purpose, product: Product, grams: frozenset[tuple[str, ...]]
) -> str:
    """The purpose sentence, or a sentence from the name and inputs when the description
    gives none (or none that can be restated)."""
    text = "" if is_cjk(purpose.sentence) else purpose.sentence
    if text and purpose.verb is None:
        text = _as_order(text) or _with_verb(text, r)
    if text and purpose.deprecated:
        text = _marked_deprecated(text)
    if text:
        text = tidy_end(
            break_runs(text, grams, MAX_SHARED_RUN)
            or break_runs(text, grams, MAX_SHARED_RUN, lenient=True)
            or break_runs(first_clause(text), grams, MAX_SHARED_RUN)
            or ""
        )
    if text:
        return text
    made = guarded(grams, lambda: _template(r, product), lambda: _template(r, product, 0))
    return _marked_deprecated(made) if made and purpose.deprecated else made


def _marked_deprecated(sentence: str) -> str:
    return sentence.rstrip(".") + " (deprecated)."


def _with_verb(text: str, r: _Read) -> str:
    """``text`` (no verb of its own) led by the name's verb: "Use dynamic and reflective
    problem-solving ..."."""
    verb = (r.verb or "use").capitalize()
    words = text.split()
    named = len(words) > 1 and words[1][:1].isupper()  # "Azure Confidential Ledger ..."
    if words[0] in ("A", "An", "The") or (not named and _capitalised_here(words[0], r.description)):
        text = text[0].lower() + text[1:]
    return f"{verb} {text}"


def _capitalised_here(word: str, description: str) -> bool:
    """Whether ``word`` is capitalised only because a sentence now starts with it: the
    description writes it in lower case and never capitalised inside a sentence ("A tool for
    dynamic ..." -> "Dynamic ..."; "Azure" stays)."""
    low = word.lower()
    if not (word[:1].isupper() and word[1:] == low[1:]) or low not in tokenise(description):
        return False
    return not re.search(rf"[^.!?\s]\s+{re.escape(word)}\b", description)


_ORDER_NEXT = wordset(
    "the a an all any each every to at from into on onto off what which whose your my one "
    "multiple several up down out back"
)
_NOT_ORDERS = wordset(
    "all this these that each every some any one be is are was it its if when while where "
    "whether unless once after before since as because for"
)


def _as_order(text: str) -> str:
    """``text`` when it already opens with an order whose verb the tables do not know ("Rebuild
    the local index", "Rebases a branch" -> "Rebase a branch"): a capitalised word followed by
    an article, a determiner or a particle; ``""`` otherwise."""
    words = text.split()
    if len(words) < 3 or not words[0].isalpha() or not words[0][:1].isupper():
        return ""
    first, after = words[0], words[1].strip(",;:()\"'").lower()
    if first.lower() in _NOT_ORDERS or after not in _ORDER_NEXT or not first[1:].islower():
        return ""
    return " ".join([drop_s(first), *words[1:]])


def _template(r: _Read, product: Product, inputs: int = 2) -> str:
    verb = r.verb or "use"
    what = object_phrase(r.verb, r.objects) or f"the {product.display} tool {r.name}"
    text = f"{verb.capitalize()} {what}"
    required = [identifier_phrase(p.name) or p.name for p in r.params if p.required][:inputs]
    if required:
        text += f", given the {_and(required)}"
    text += "."
    said = set(tokenise(text))
    mentioned = [w for w in r.gloss if w not in said and w not in product.words][:8]
    if mentioned:  # a description in Chinese or Japanese, read through the glossary
        text += f" Its description, in {_language(r.description)}, mentions {_and(mentioned)}."
    return text


def _language(text: str) -> str:
    if re.search(r"[\u3040-\u30ff]", text):
        return "Japanese"
    if re.search(r"[\uac00-\ud7af]", text):
        return "Korean"
    return "Chinese"


def _extra(purpose: Purpose, sentence: str, grams: frozenset[tuple[str, ...]]) -> str:
    if not purpose.extra or len(content_words(sentence)) >= _SHORT_SENTENCE:
        return ""
    extra = shorten(purpose.extra, _EXTRA_WORDS)
    said = set(content_words(purpose.sentence))
    again = content_words(extra)
    if not again or sum(w in said for w in again) >= 0.6 * len(again):
        return ""  # nothing, or the publisher saying the same thing twice
    return tidy_end(break_runs(extra, grams, MAX_SHARED_RUN) or "")


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _tags(product: Product, objects: Sequence[str]) -> tuple[str, ...]:
    """A few topic words: the product, then the objects the tool acts on."""
    out = [product.display.lower(), *(o for o in objects if len(o) > 1)]
    return tuple(dict.fromkeys(out))[:5]


def _keywords(r: _Read, product: Product, title: str | None) -> tuple[str, ...]:
    """Ranking-only words (never shown to an agent): the product's names, the verb and the
    words users say for it, the objects and their synonyms, the description's content words,
    the parameters' hints, their choices and any CJK segments."""
    choices = content_words(
        " ".join(str(v) for p in r.params for v in p.enum if isinstance(v, str))
    )
    words: list[str] = [*product.keywords()]
    if r.verb:
        words += [r.verb, *verb_synonyms(r.verb)[:3]]
    words += r.objects
    words += [s for obj in r.objects for s in noun_synonyms(obj)]
    words += content_words(title or "", exclude=r.name_words)
    hints = [*r.gloss, *sql_gloss(r.kept), *cjk_segments(r.kept)[:8], *r.hints]
    hints += [*r.param_hints[:24], *choices[:20]]
    head = list(dict.fromkeys(w.lower() for w in words if w))
    rest = [w for w in dict.fromkeys(w.lower() for w in hints if w) if w not in head]
    # the description's words in sorted order: they rank, but never read as its sentences
    return tuple([*head, *sorted(rest[: max(0, _MAX_KEYWORDS - len(head))])])
