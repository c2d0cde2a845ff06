"""Server-level text for the bootstrap generator: whether a tool reads or writes, and the
server's capability text (the product it fronts, what its tools work with, how many read and
how many change data, example tasks, and what its own instructions say it is for), written as
sentences. The product and vendor come from :mod:`cartograph.generate.bootstrap.identity`.

Pure functions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cartograph.generate.bootstrap.identity import Product
from cartograph.generate.bootstrap.lexicon import domains_for
from cartograph.generate.bootstrap.phrasing import base_verb, drop_s
from cartograph.generate.text import STOPWORDS, wordset

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
    plain: bool = True
    """Whether ``objects`` are the name's words and read as an object ("calendar event"; not
    "listings pagination" from a description, nor "in pod")."""
    label: str = ""
    """The tool's name as words ("fetch html")."""


def capability_text(
    product: Product,
    facts: Sequence[ToolFacts],
    sample_tasks: Sequence[str],
    about: str = "",
    only_tool: str = "",
    summaries: Sequence[str] = (),
) -> tuple[str, str, list[str]]:
    """(summary, usage, domains) for the whole server. ``about``: a sentence on what the
    server's own instructions say it is for (already restated); ``only_tool``: the summary of
    a server's one tool; ``summaries``: every tool's summary, in the order of ``facts`` (a
    small server names what a tool does from its summary where the name's words are not an
    object)."""
    domains = domains_for([list(f.words) for f in facts], product.words)
    n = len(facts)
    if n == 1 and only_tool:
        summary = f"{product.named} offers one tool: {only_tool}"
    elif n <= 4:
        told = list(summaries) if len(summaries) == n else [""] * n
        phrases = [_phrase(f, s) for f, s in zip(facts, told, strict=True)]
        repeated = {p for p in phrases if phrases.count(p) > 1}
        phrases = [_phrase(f) if p in repeated else p for f, p in zip(facts, phrases, strict=True)]
        summary = f"{product.named} offers {_count(n, 'tool')}: {_and(phrases)}."
    else:
        summary = f"{product.named} offers {_count(n, 'tool')}{_works_with(facts, product)}."
    usage = f"Use it for tasks in {product.display}. {_modes(facts)}"
    if about:
        usage += f" {about}"
    if sample_tasks:
        usage += " For example: " + "; ".join(t.rstrip(".") for t in sample_tasks[:3]) + "."
    return summary, usage, domains


def _phrase(f: ToolFacts, summary: str = "") -> str:
    """What one tool does in a few words: its verb and the name's object ("list indices"), else
    the opening request of its summary ("search for Airbnb listings"), else its name as words
    ("fetch html")."""
    if (f.plain or not summary) and f.verb:
        return " ".join([f.verb, *f.objects])
    return _opening_request(summary) or f.label or " ".join([f.verb or "use", *f.objects])


_REQUEST_END = re.compile(
    r"[,;:(]|\s[—–-]\s|\s(?:with|using|via|through|as well as|and return|and get|from|in order)\s"
)
_MOST_WORDS = 7


def _opening_request(summary: str) -> str:
    """The summary's opening request, lower case, up to the first aside or phrase of means
    ("Search for Airbnb listings | with different filters"); ``""`` when it does not open with
    a verb or runs past a few words."""
    first = summary.split(". ")[0].strip().rstrip(".")
    for cut in _REQUEST_END.finditer(first):
        if len(first[: cut.start()].split()) >= 3:
            first = first[: cut.start()]
            break
    words = first.split()
    if not 2 <= len(words) <= _MOST_WORDS or not base_verb(words[0]) or "," in first:
        return ""
    return " ".join([words[0].lower(), *words[1:]])


def _modes(facts: Sequence[ToolFacts]) -> str:
    """How many tools only read and how many change data, as a sentence."""
    modes = Counter(f.mode for f in facts)
    n = len(facts)
    reads = modes.get("read", 0)
    writes = modes.get("write", 0) + modes.get("destructive", 0)
    deletes = modes.get("destructive", 0)
    if not reads and not writes:
        return ""
    if n == 1:
        return "Its tool only reads data." if reads else "Its tool changes data."
    every = "Both" if n == 2 else f"All {n}"
    if reads == n:
        return f"{every} tools only read data."
    if writes == n:
        text = f"{every} tools change data"
    else:
        text = f"Of its {n} tools, {reads} only read data and {writes} change it"
    if deletes:
        text += f" ({deletes} can delete data)"
    return text + "."


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _count(n: int, noun: str) -> str:
    return f"{'one' if n == 1 else n} {noun}{'' if n == 1 else 's'}"


_JOINING = wordset("in on to for of by with from at as into near via within and or")


def _head(objects: Sequence[str]) -> list[str]:
    """The object's words before the first joining word ("header" of "header near text"),
    with a letter split from its number put back ("k8s") and no other one-letter word."""
    head: list[str] = []
    for word in objects:
        if word in _JOINING:
            break
        if len(word) == 1 and head and head[-1][-1:].isdigit():
            head[-1] += word  # "k8" "s" -> "k8s"
        else:
            head.append(word)
    return [w for w in head if len(w) > 1]


_ASPECTS = wordset(
    "details detail info information list stats status summary metadata content contents "
    "names ids values types"
)
"""Words that close an object's name without being the thing itself ("actor details")."""


def _object_of(f: ToolFacts, product: Product) -> list[str]:
    """The words of the thing ``f``'s tool acts on, head noun last, at most two ("calendar
    event"; from the name where ``f.plain``, else from its description); none where they are
    an action alone (``puppeteer_hover``, ``tavily_map``, ``git_commit``), the product itself
    or a state, and no action that closes the name (``browser_resize``: the browser)."""
    words = [w for w in _head(f.objects) if w not in STOPWORDS]
    while len(words) > 1 and words[-1] in _ASPECTS:
        words = words[:-1]
    named = [w for w in f.label.split() if w not in product.words]
    opens_with_action = bool(named) and bool(base_verb(named[0])) and len(named) > 1
    if words and named[-1:] == words[-1:] and base_verb(words[-1]) and not opens_with_action:
        words = words[:-1]  # no verb leads the name, so its last word is the action
    if any(w in product.words for w in words) and all(
        w in product.words or base_verb(w) for w in words
    ):
        return []  # "ping joplin": the product itself
    if len(words) == 1 and words[0].endswith("ed"):
        return []  # "diff unstaged": a state, not a thing
    return words[-2:]


def _works_with(facts: Sequence[ToolFacts], product: Product) -> str:
    """`` that work with incidents, events and services``: the things most tools act on,
    counted by their head noun (ties: the first named), each with the word before it where
    one such phrase makes up two thirds of its uses, in the form the names use most (a
    plural where one was used); where fewer than two are named, the tools' own actions
    (``: search, extract, crawl, map and research``)."""
    uses: dict[str, list[str]] = {}
    told: dict[str, list[str]] = {}  # from the descriptions, where the name says no object
    for f in facts:
        words = _object_of(f, product)
        if words:
            (uses if f.plain else told).setdefault(drop_s(words[-1]), []).append(" ".join(words))
    top = sorted(uses, key=lambda k: -len(uses[k]))[:3]  # stable: the first named wins ties
    more = [k for k in sorted(told, key=lambda k: -len(told[k])) if len(told[k]) > 1]
    for key in [k for k in more if k not in uses][:1] if len(top) == 2 else []:
        top.append(key)  # git_log and git_show: both descriptions read commits
        uses[key] = told[key]
    if len(top) < 2:
        return _actions(facts, product)
    shown = []
    for key in top:
        said = uses[key]
        phrases = Counter(" ".join([*p.split()[:-1], key]) for p in said)
        phrase, count = phrases.most_common(1)[0]
        lead = phrase.split()[:-1] if count * 3 >= len(said) * 2 else []
        heads = Counter(p.split()[-1] for p in said)
        plural = [h for h in heads if h != key]
        head = max(plural, key=lambda h: heads[h]) if plural and len(said) > 1 else key
        shown.append(" ".join([*lead, head]))
    return " that work with " + _and(shown)


_MOST_ACTIONS = 8


def _actions(facts: Sequence[ToolFacts], product: Product) -> str:
    """``: navigate, screenshot, click and fill``: each tool's name without the product's
    words, where every one is a word or two and there are at most eight; else ``""``."""
    names = []
    for f in facts:
        words = [w for w in f.label.split() if w not in product.words]
        if not 1 <= len(words) <= 2:
            return ""
        names.append(" ".join(words))
    unique = list(dict.fromkeys(names))
    if len(unique) != len(names) or len(unique) > _MOST_ACTIONS:
        return ""
    return ": " + _and(unique)
