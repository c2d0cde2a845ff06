"""The text that ranking reads for each tool, composed only from the operator's signed card.

One document per tool: the tool name split into words, the operator's summary, usage and
example tasks, the parameter names, the ranking-only keywords (the product's names, synonyms),
and the server's identity and domains (users name the product: "in Linear", "on GitHub"). The
server document (its name, summary, usage, domains) feeds server-level scoring. Publisher
descriptions never enter here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cartograph.cards.model import Card, ToolEntry

_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-./:~]+")
_WORDS = re.compile(r"[^\W_]+")
MAX_EXAMPLES = 3
MAX_PARAMS = 12


def split_name(name: str) -> str:
    """``get_pullRequest-files`` -> ``get pull Request files``."""
    return " ".join(p for p in _SPLIT.split(name) if p).strip()


def param_names(schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return []
    return [split_name(str(k)) for k in list(props)[:MAX_PARAMS]]


_GENERIC = frozenset({"mcp", "server", "servers", "model", "context", "protocol", "py", "go"})


def server_label(card: Card) -> str:
    """Words that name the server (its name, publisher, package), each once, minus "mcp server"."""
    ident = card.identity
    sources = [ident.server, ident.publisher or "", (ident.package or "").split("/")[-1]]
    words: list[str] = []
    seen: set[str] = set()
    for source in sources:
        for word in split_name(source.lstrip("@")).split():
            key = word.lower()
            if key not in seen and key not in _GENERIC:
                seen.add(key)
                words.append(word)
    return " ".join(words) or ident.server


def _short_label(card: Card) -> str:
    """The server's own name as words: the part of the label every sibling's dense text
    carries, kept short so that siblings stay apart (the publisher and package words are in
    the lexical text)."""
    words = [w for w in split_name(card.identity.server).split() if w.lower() not in _GENERIC]
    return " ".join(words) or card.identity.server


@dataclass(frozen=True)
class ToolDocument:
    """The texts of one tool: ``dense`` for the embedder and ``lexical`` for BM25/Jaccard, and
    ``reads``: the card's ``readOnlyHint`` where it has one (the action channel reads it for a
    tool whose name leads with no action verb, see :mod:`.intent`)."""

    server: str
    tool: str
    dense: str
    lexical: str
    reads: bool | None = None


_DISTINCT = re.compile(
    r" Tool: [^.]*\.| Name: \S+\.| Entry \d+\.| Listed as [^.]*\.| Unlike [^,]+, it [^.]*\."
)


def _core_summary(summary: str) -> str:
    """The summary without the generator's additions that the dense text does not need: a
    trailing keyword list ("About: a, b.") of older cards, the note that keeps same-server
    summaries distinct ("Listed as get_user."), and the sibling contrast ("Unlike list_files,
    it ..."), which names the sibling and so pulls the two vectors together (measured: it
    cost fleet flat R@5). What Rift asked for ("What sets it apart: it ...") stays: it names
    no sibling."""
    head, sep, _ = summary.partition(" About: ")
    return _DISTINCT.sub("", head if sep else summary).strip()


_UNLIKE = re.compile(r"\s*Unlike [^,]+, it [^.]*\.")
"""The sibling contrast: it names the sibling and the sibling's words, which would make the
tool match queries for its sibling."""
_STOCK = re.compile(
    r"\s*(?:Judging by its name, it (?:only reads|changes|deletes) data\.|It only reads data\.|"
    r"It changes data\.|It can delete data\.|It reaches services outside this machine\.|"
    r"Repeating a call with the same input is safe\.|It takes no inputs\.|"
    r"All its inputs are optional\.)"
)
"""The generator's stock sentences on mode and inputs: the same on most tools, so they only
add length to the lexical text."""


def tool_document(
    card: Card, entry: ToolEntry, shared: frozenset[str] | None = None
) -> ToolDocument:
    """Two texts per tool.

    ``dense`` is kept short (about 40-60 word pieces): the name and the operator's summary
    (without the sibling contrast), then the server's own name unless the tool name already
    says it, then the objects the tool acts on that neither says and most siblings do not
    share (:func:`_objects`; ``shared`` is :func:`shared_tags` of the card, computed once per
    card by :func:`card_documents`). Chosen on the fleet dev set and the tune parts: with the
    objects, fleet R@5 hybrid 0.857 -> 0.870 and flat 0.805 -> 0.818, the MetaTool and BFCL
    tune parts equal or better at R@5. Embedding cost grows with length, and the long tail
    (usage, example tasks, parameters, keywords, domains) is better matched lexically;
    measured on MetaTool, BFCL and LiveMCPBench, the generator's domain labels and template
    example tasks lowered dense recall, and the publisher and package words of the label raised
    the similarity of siblings (fleet mean within-server cosine 0.511 with them, 0.497
    without). ``lexical`` carries all of it for BM25 and Jaccard, with the product's names from
    the ranking-only
    ``keywords``, but without the generator's stock sentences and the sibling contrast.
    """
    label = server_label(card)
    short = _short_label(card)
    domains = ", ".join(card.capability.domains)
    name_words = split_name(entry.name)
    title = f" ({entry.title})" if entry.title and entry.title.lower() != name_words.lower() else ""
    context = f"{label}" + (f" ({domains})" if domains else "")
    named = set(_WORDS.findall(f"{name_words} {title}".lower()))
    label_part = "" if set(_WORDS.findall(short.lower())) <= named else f"[{short}]"
    dense = " ".join(
        p for p in (f"{name_words}{title}: {_core_summary(entry.summary)}.", label_part) if p
    ).replace("..", ".")
    objects = _objects(entry, dense, shared_tags(card) if shared is None else shared)
    dense = f"{dense} ({objects})" if objects else dense
    examples = " ".join(ex.task.rstrip(".") + "." for ex in entry.examples[:MAX_EXAMPLES])
    usage = _UNLIKE.sub("", _STOCK.sub("", entry.usage))
    params = ", ".join(param_names(entry.input_schema))
    lexical_parts = [
        f"{name_words}{title}: {_core_summary(entry.summary)}",
        usage,
        examples,
        context,
        " ".join(entry.tags),
        " ".join(entry.keywords),
        params,
    ]
    lexical = " ".join(p.strip() for p in lexical_parts if p and p.strip())
    hint = (entry.annotations or {}).get("readOnlyHint")
    reads = hint if isinstance(hint, bool) else None
    return ToolDocument(card.server, entry.name, dense, lexical, reads)


SHARED_TAG_SHARE = 0.5
"""A tag on more than this share of a server's tools (servers of :data:`SHARED_TAG_MIN` tools or
more) is what the siblings share, and stays out of the dense text."""
SHARED_TAG_MIN = 4


def shared_tags(card: Card) -> frozenset[str]:
    """The tags that more than :data:`SHARED_TAG_SHARE` of ``card``'s tools carry."""
    n = len(card.tools)
    if n < SHARED_TAG_MIN:
        return frozenset()
    counts = Counter(tag for entry in card.tools for tag in set(entry.tags))
    return frozenset(tag for tag, count in counts.items() if count > SHARED_TAG_SHARE * n)


def _objects(entry: ToolEntry, dense: str, shared: frozenset[str]) -> str:
    """The tool's topic words (``tags``) that its dense text does not hold yet: the objects it
    acts on ("calendar event", "mail folder"), without the product's names (the first of the
    ranking-only ``keywords``, as both generators write them) and without the tags most of its
    siblings carry (:func:`shared_tags`), which would pull the siblings' vectors together
    (measured on the fleet: mean within-server cosine 0.541 with every tag, 0.498 without the
    shared ones; the publisher text's is 0.501)."""
    said = set(_WORDS.findall(dense.lower()))
    if entry.keywords:
        said |= set(_WORDS.findall(entry.keywords[0].lower()))
    new = [t for t in entry.tags if t not in shared and not set(_WORDS.findall(t.lower())) <= said]
    return ", ".join(new)


def server_document(card: Card) -> str:
    cap = card.capability
    domains = ", ".join(cap.domains)
    parts = [
        server_label(card) + (f" ({domains})" if domains else "") + ":",
        cap.summary,
        cap.usage,
    ]
    return " ".join(p.strip() for p in parts if p and p.strip())


def card_documents(cards: Mapping[str, Card]) -> list[ToolDocument]:
    """Every tool document of ``cards``, servers in name order, tools in card order."""
    docs: list[ToolDocument] = []
    for server in sorted(cards):
        card = cards[server]
        shared = shared_tags(card)
        docs.extend(tool_document(card, entry, shared) for entry in card.tools)
    return docs
