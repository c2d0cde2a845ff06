"""Measures of card text that tests and ``scripts/card_measures.py`` share (pure functions).

- :func:`prose_share`: of the tool summaries with 5 or more words, how many hold at least one
  function word (:data:`FUNCTION_WORDS`: "a", "the", "of", "to", ...). Text with the small words
  taken out ("Get current time specific timezone.") fails it.
- :func:`directive_hits`: fields whose text orders the model about (the patterns of
  :func:`cartograph.generate.text.directive_reason`), sentence by sentence.
- :func:`publisher_runs`: fields that carry a run of ``n`` consecutive words of the publisher's
  text (descriptions, parameter descriptions, titles, instructions, serverInfo), under two
  tokenisers: :func:`cartograph.generate.text.tokenise` and plain ``\\w+`` runs.
- :func:`agent_fields`: the card fields an agent or a person reads (titles included; the
  ranking-only ``keywords`` are not among them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cartograph.cards.model import Card
from cartograph.generate.text import directive_reason, tokenise, wordset

FUNCTION_WORDS = wordset(
    """a an the of to in on at for with from by and or into onto over under through across
    between within without about as than per is are be that which its their this these those"""
)
"""Articles, prepositions, conjunctions and a few pronouns and copulas."""

_WORD = re.compile(r"[A-Za-z0-9']+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def words_of(text: str) -> list[str]:
    """Lower-cased letter/digit/apostrophe runs (the prose measure's own word split)."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class ProseShare:
    """How many summaries of 5+ words hold a function word, and the ones that do not."""

    counted: int
    prose: int
    failing: tuple[str, ...]

    @property
    def share(self) -> float:
        return self.prose / self.counted if self.counted else 1.0


def prose_share(summaries: Iterable[str], *, min_words: int = 5) -> ProseShare:
    counted = prose = 0
    failing: list[str] = []
    for text in summaries:
        words = words_of(text)
        if len(words) < min_words:
            continue
        counted += 1
        if FUNCTION_WORDS & set(words):
            prose += 1
        else:
            failing.append(text)
    return ProseShare(counted, prose, tuple(failing))


def agent_fields(card: Card) -> list[tuple[str, str]]:
    """(where, text) for every field a reader of the card sees, titles included."""
    out = [
        ("capability.summary", card.capability.summary),
        ("capability.usage", card.capability.usage),
    ]
    for e in card.tools:
        if e.title:
            out.append((f"{e.name}.title", e.title))
        out += [(f"{e.name}.summary", e.summary), (f"{e.name}.usage", e.usage)]
        out += [(f"{e.name}.example", ex.task) for ex in e.examples]
        out.append((f"{e.name}.tags", " ; ".join(e.tags)))
    return out


def directive_hits(fields: Iterable[tuple[str, str]]) -> list[str]:
    """``where: reason: sentence`` for each sentence of ``fields`` that addresses the model."""
    hits: list[str] = []
    for where, text in fields:
        for sentence in _SENTENCE.split(text or ""):
            reason = directive_reason(sentence)
            if reason:
                hits.append(f"{where}: {reason}: {sentence[:80]}")
    return hits


def _plain_words(text: str) -> list[str]:
    """An independent tokeniser: lower-case ``\\w+`` runs (underscores kept, no camel split)."""
    return re.findall(r"\w+", text.lower())


TOKENISERS: tuple[Callable[[str], list[str]], ...] = (tokenise, _plain_words)


def publisher_texts(server: Any) -> list[str]:
    """Every text of a recorded server (a ``ServerSnapshot``) that its publisher wrote."""
    texts = [server.instructions or ""]
    info = server.server_info or {}
    texts += [str(info.get(k) or "") for k in ("title", "description")]
    for tool in server.tools:
        texts.append(str(tool.get("description") or ""))
        title = tool.get("title") or (tool.get("annotations") or {}).get("title")
        texts.append(str(title or ""))
        props = (tool.get("inputSchema") or {}).get("properties")
        if isinstance(props, dict):
            texts += [
                str(p.get("description") or "") for p in props.values() if isinstance(p, dict)
            ]
    return [t for t in texts if t]


def publisher_runs(
    sources: Sequence[str], fields: Iterable[tuple[str, str]], *, n: int = 8
) -> list[str]:
    """``where: run`` for each field sharing a run of ``n`` words with ``sources``."""
    fields = list(fields)
    problems: list[str] = []
    for tok in TOKENISERS:
        grams: set[tuple[str, ...]] = set()
        for text in sources:
            words = tok(text)
            grams.update(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
        for where, text in fields:
            words = tok(text)
            for i in range(len(words) - n + 1):
                if tuple(words[i : i + n]) in grams:
                    problems.append(f"{where}: {' '.join(words[i : i + n])}")
                    break
    return problems
