"""The purpose digest: a telegraphic restatement of what a publisher says a tool is for.

The bootstrap generator's summary used to be a template ("Get data in Product by x.") plus a list
of keywords. Measured on MetaTool and BFCL that lost a sixth of dense recall against the
publisher's own text: the template kept keywords but not purpose. The digest keeps the purpose.
It walks the description (model-directed parts already removed) clause by clause and keeps the
content words in their order, with the few function words that carry direction or negation
("from", "to", "without", "not"), and drops the rest: articles, pronouns, auxiliaries and
marketing adjectives ("seamless", "powerful"). So

    "Quickly create resumes and receive feedback on your resume."

becomes ``create resumes, receive feedback on resume``. The result is the operator's own text: every
word run that would match :data:`~cartograph.generate.bootstrap.tool.MAX_SHARED_RUN` words of the
publisher's text is broken by leaving the word that completes it out (the no-verbatim rule), and the
text is capped at :data:`MAX_WORDS` words."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from cartograph.generate.text import STOPWORDS, tokenise, wordset

MAX_WORDS = 24
FOLLOW_ON_WORDS = 12

KEPT_FUNCTION_WORDS = wordset("from to into for by with without not no")
"""Function words that change what a phrase means (direction, purpose, negation)."""

MARKETING = wordset(
    """best ultimate seamless seamlessly exciting powerful easily easy quickly comprehensive
    renowned amazing awesome great perfect simply effortless effortlessly instantly instant
    innovative incredible fantastic unique personalized personalised smart intelligent advanced
    robust cutting edge state art world class leading premier top tier fun enjoyable magical
    revolutionary unparalleled unlimited endless wonderful delightful beautiful hassle"""
)
"""Adjectives and adverbs that sell a tool rather than say what it does."""

SELF_REFERENCE = wordset(
    "tool tools function functions allows allow allowed enables enable lets mcp server works"
)
"""Words a description uses about itself or its caller, not about the task."""

NEGATIONS = wordset("not no without")

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_CLAUSE = re.compile(r"[.;:!?()\[\]{}\n。！？；：]+|,\s+|\s+[-–—]\s+")
_WORD = re.compile(r"\d+(?:[.,\-–]\d+)*\+?|[^\W_]+(?:['’.\-+#][^\W_]+)*\+*#?", re.UNICODE)
_NEGATED = re.compile(r"(?i)^(?:don|doesn|didn|can|cannot|won|isn|aren|wasn|shouldn)['’]?t$")


def purpose_digest(
    text: str, grams: frozenset[tuple[str, ...]], *, run: int, max_words: int = MAX_WORDS
) -> str:
    """The digest of ``text`` (see the module doc); ``""`` when nothing in it is content.

    The first sentence may use all ``max_words``; later ones are read only while the digest
    is shorter than :data:`FOLLOW_ON_WORDS` (long descriptions put purpose first and caveats,
    formats and instructions after). ``grams`` are the publisher's word runs of length ``run``
    that the digest may not contain: a word that would complete one first displaces a
    function word inside the run, else it is left out.
    """
    kept: list[_Word] = []
    clause_no = 0
    for n, sentence in enumerate(_SENTENCE.split(text)):
        if n and len(kept) >= FOLLOW_ON_WORDS:
            break
        for clause in _CLAUSE.split(sentence):
            clause_no += 1
            if _is_shouting(clause):
                continue
            for surface in _clause_words(clause):
                word = _Word(clause_no, surface, tuple(tokenise(surface)))
                if _place(kept, word, grams, run) and len(kept) >= max_words:
                    return _render(kept)
    return _render(kept)


class _Word(NamedTuple):
    clause: int
    surface: str
    pieces: tuple[str, ...]  # the word as tokenise() sees it, for the no-verbatim check


def _place(kept: list[_Word], word: _Word, grams: frozenset[tuple[str, ...]], run: int) -> bool:
    """Append ``word`` unless that creates a publisher run; may drop one function word."""
    if not _completes_run(_tail(kept, run), word.pieces, grams, run):
        kept.append(word)
        return True
    for i in range(len(kept) - 1, max(-1, len(kept) - run), -1):
        low = kept[i].surface.lower()
        if low in KEPT_FUNCTION_WORDS and low not in NEGATIONS:
            trial = kept[:i] + kept[i + 1 :]
            if not _completes_run(_tail(trial, run), word.pieces, grams, run):
                kept[:] = [*trial, word]
                return True
    return False


def _tail(kept: list[_Word], run: int) -> list[str]:
    """The last ``run - 1`` tokens of the digest so far (all a new run can start in)."""
    out: list[str] = []
    for word in reversed(kept):
        out[:0] = word.pieces
        if len(out) >= run - 1:
            break
    return out


def _render(kept: list[_Word]) -> str:
    clauses: dict[int, list[str]] = {}
    for word in kept:
        clauses.setdefault(word.clause, []).append(word.surface)
    parts = []
    for words in clauses.values():
        while words and words[-1].lower() in KEPT_FUNCTION_WORDS - NEGATIONS:
            words.pop()
        if words:
            parts.append(" ".join(words))
    return ", ".join(parts)


def _is_shouting(clause: str) -> bool:
    """A clause in capitals ("CHUNKING IS STANDARD PRACTICE"): emphasis aimed at the model."""
    letters = [w for w in _WORD.findall(clause) if any(c.isalpha() for c in w)]
    return len(letters) >= 2 and all(w.isupper() for w in letters)


def _clause_words(clause: str) -> list[str]:
    """The content words of one clause, in order, with leading function words trimmed."""
    words: list[str] = []
    for match in _WORD.finditer(clause):
        surface = match.group(0)
        if _NEGATED.match(surface):
            surface = "not"
        low = surface.lower()
        if low in KEPT_FUNCTION_WORDS:
            if words or low in NEGATIONS:
                words.append(low)
            continue
        if low in STOPWORDS or low in MARKETING or low in SELF_REFERENCE:
            continue
        if len(low) < 2 and not low.isdigit():
            continue
        words.append(surface)
    while words and words[-1].lower() in KEPT_FUNCTION_WORDS:
        words.pop()
    return _squeeze(words)


def _squeeze(words: list[str]) -> list[str]:
    """No two function words in a row ("from to" once "the" between them is gone), unless
    the first is a negation ("not for")."""
    out: list[str] = []
    for word in words:
        if (
            out
            and word in KEPT_FUNCTION_WORDS
            and out[-1] in KEPT_FUNCTION_WORDS
            and out[-1] not in NEGATIONS
        ):
            out[-1] = word
            continue
        out.append(word)
    return out


def _completes_run(
    tokens: list[str], pieces: Sequence[str], grams: frozenset[tuple[str, ...]], run: int
) -> bool:
    """Whether appending ``pieces`` to ``tokens`` creates a run found in ``grams``."""
    if not grams or not pieces:
        return False
    tail = tokens[-(run - 1) :] if run > 1 else []
    joined = [*tail, *pieces]
    start = max(0, len(tail) - run + 1)
    return any(tuple(joined[i : i + run]) in grams for i in range(start, len(joined) - run + 1))
