"""Text helpers for card generators: tokenising, identifier splitting, content words, CJK
segments, model-directed text filtering and the shared-word-run check.

Everything here is pure. The one definition of a "word" used by the no-verbatim rule lives here
(:func:`tokenise`): runs of letters/digits, split at camelCase boundaries, lower-cased; so
``placeId`` and ``place id`` are the same two words, and punctuation never separates a run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def wordset(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` as a set (for word lists in source)."""
    return frozenset(text.split())


# letters and digits, never the underscore: snake_case splits like spaces do
_RUN = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL = re.compile(
    r"[A-Z]{2,}s(?![a-z])|[A-Z]+\d*(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+[a-z]*|[^\W\d_a-zA-Z]+"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")

STOPWORDS = wordset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during each
    either else etc even ever every few for from further had has have having he her here hers
    him his how however i if in into is it its itself just let lets like may me might more most
    much must my no nor not now of off on once one only or other our ours out over own per
    please same shall she should since so some such than that the their theirs them then there
    these they this those though through thus to too under until up upon us use used uses using
    very via was we were what when where whether which while who whom whose why will with
    within without would yet you your yours e g i.e eg ie"""
)
"""English function words, plus the words every tool description uses about itself."""

_FILLER = wordset(
    """tool tools function functions allows allow allowed provides provide provided given
    specified specific various based optional optionally default defaults parameter parameters
    param params argument arguments value values input inputs output outputs returns return
    returned result results response responses object objects string strings
    boolean true false null none need needs needed want wants call calls called calling
    instead available example examples e.g note see also necessary useful helpful
    args kwargs mcp server servers important critical warning caution tip tips guidelines
    prerequisite prerequisites otherwise whenever always never ensure works"""
)
"""Words that say nothing about what a tool is for."""


def tokenise(text: str | None) -> list[str]:
    """The words of ``text``: letter/digit runs, camelCase split, lower-cased."""
    if not text:
        return []
    out: list[str] = []
    for run in _RUN.findall(text):
        if run.isascii():
            parts = _CAMEL.findall(run) or [run]
            out.extend(p.lower() for p in parts)
        else:
            out.append(run.lower())
    return out


def split_identifier(name: str) -> list[str]:
    """``get_weatherForecast-v2.x`` -> ``['get', 'weather', 'forecast', 'v2', 'x']``."""
    words: list[str] = []
    for part in tokenise(name):
        if part.isdigit() and words and words[-1].isalpha() and len(words[-1]) == 1:
            words[-1] += part  # keep "s3", "v2" together
        else:
            words.append(part)
    return words


def identifier_phrase(name: str) -> str:
    """An identifier as plain words: ``listOpenIssues`` -> ``list open issues``."""
    return " ".join(split_identifier(name))


def is_cjk(text: str) -> bool:
    return bool(_CJK.search(text or ""))


def content_words(
    text: str | None, *, limit: int | None = None, exclude: Iterable[str] = ()
) -> list[str]:
    """Salient words of ``text`` in first-seen order, no stopwords, fillers or repeats.

    CJK runs are left out (see :func:`cjk_segments`); bare numbers and one-letter words too.
    """
    skip = set(exclude)
    seen: set[str] = set()
    out: list[str] = []
    for word in tokenise(text):
        if (
            word in seen
            or word in skip
            or word in STOPWORDS
            or word in _FILLER
            or len(word) < 2
            or word.isdigit()
            or not word.isascii()
        ):
            continue
        seen.add(word)
        out.append(word)
        if limit is not None and len(out) >= limit:
            break
    return out


# CJK function characters and common particles: segment boundaries for CJK hint tokens.
_CJK_BREAK = re.compile(
    r"包含|包括|提供|获取|根据|支持|返回|使用|通过|指定|以及|或者|可以|并且|进行|相关|对应|"
    r"[的和与及并或在了是为对从将把被等中以其个所让给用也都就而且如上]"
)


def cjk_segments(text: str | None, *, max_len: int = 8) -> list[str]:
    """Short CJK content segments (split at particles and punctuation), deduplicated.

    Segments longer than ``max_len`` characters are dropped: they are clauses, not words.
    """
    if not text:
        return []
    seen: set[str] = set()
    out: list[str] = []
    for run in _CJK_RUN.findall(text):
        for seg in _CJK_BREAK.split(run):
            if 2 <= len(seg) <= max_len and seg not in seen:
                seen.add(seg)
                out.append(seg)
    return out


# --- the no-verbatim rule -------------------------------------------------------------------


def shared_run(source: Sequence[str], text: Sequence[str], n: int) -> tuple[str, ...] | None:
    """The first run of ``n`` consecutive words of ``source`` that also occurs in ``text``."""
    if n <= 0 or len(source) < n or len(text) < n:
        return None
    grams = {tuple(source[i : i + n]) for i in range(len(source) - n + 1)}
    for i in range(len(text) - n + 1):
        gram = tuple(text[i : i + n])
        if gram in grams:
            return gram
    return None


def longest_shared_run(source: str, text: str) -> int:
    """Length of the longest run of consecutive words of ``source`` found in ``text``."""
    src, txt = tokenise(source), tokenise(text)
    lo, hi = 0, min(len(src), len(txt))
    while lo < hi:  # a shared run of n implies one of every m < n: binary search works
        mid = (lo + hi + 1) // 2
        if shared_run(src, txt, mid) is not None:
            lo = mid
        else:
            hi = mid - 1
    return lo


# --- model-directed text --------------------------------------------------------------------


@dataclass(frozen=True)
class Dropped:
    """One piece of publisher text that addresses the model rather than describing the tool."""

    text: str
    reason: str

    def excerpt(self, words: int = 7) -> str:
        """The first few words: short enough never to carry a publisher sentence."""
        parts = self.text.split()
        head = " ".join(parts[:words])
        return head + (" …" if len(parts) > words else "")


@dataclass(frozen=True)
class Filtered:
    """A description with its model-directed parts removed."""

    kept: str
    dropped: tuple[Dropped, ...]


_BLOCK = re.compile(
    r"<(?P<tag>important|system|instructions?|secret|hidden|admin|sudo|critical|"
    r"note[-_ ]?to[-_ ]?(?:ai|assistant|model|llm))\b[^>]*>(?P<body>.*?)(?:</(?P=tag)\s*>|$)",
    re.IGNORECASE | re.DOTALL,
)
_WRAPPED = re.compile(r"(?<=[^\s.!?:;])[ \t]*\n[ \t]*(?=[a-z(])")
"""A line break inside a sentence (hard-wrapped text): read as a space."""
_SEGMENT_SPLIT = re.compile(r"(?<=[.!?。！？])\s+|\n+|\s+[-*•]\s+|(?<=:)\s+(?=[-*•]\s)")

_TO_MODEL = r"(?:the\s+)?(?:ai|assistant|model|llm|agent|claude|chatbot|copilot)"
_ACT = (
    r"(?:call|use|invoke|run|execute|pass|include|present|ask|prefer|start|emit|omit|"
    r"hide|guess|try|tell|mention|reveal|share|inform|show|send|read|respond|reply|output|"
    r"return|assume|forget|skip|let|volunteer|explain|provide|trigger|make|check|confirm)"
)
_DIRECTIVE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (reason, re.compile(pattern, re.IGNORECASE))
    for reason, pattern in (
        (
            "override",
            r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?"
            r"(?:previous|prior|above|earlier|other|system)\b",
        ),
        ("override", r"\bsystem\s+prompt\b|\bjailbreak\b|\bnew\s+instructions?\b"),
        (
            "secrecy",
            r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|reveal|notify|"
            r"alert|show)\b.{0,30}\buser\b|\bwithout\s+(?:telling|informing|notifying)\b",
        ),
        ("addressed", r"\byou\s+(?:must|should|shall|are\s+required|may\s+not|must\s+not)\b"),
        (
            "addressed",
            r"\byou\s+(?:need|have|will\s+need)\s+to\s+(?:first\s+)?"
            r"(?:call|use|invoke|run|execute|pass|include|ask|tell|confirm)\b",
        ),
        ("addressed", rf"\b{_TO_MODEL}\s+(?:must|should|shall|needs?\s+to|has\s+to|will)\b"),
        ("addressed", rf"\b(?:note|instructions?|message)\s+(?:to|for)\s+{_TO_MODEL}\b"),
        ("imperative", rf"\b(?:always|never)\s+(?:first\s+)?{_ACT}\b"),
        (
            "imperative",
            rf"\b(?:do\s+not|don'?t|must\s+not|must|should)\s+(?:first\s+)?{_ACT}"
            r"\b.{0,40}\b(?:this|that|these|other|the\s+\w+)\s+tools?\b",
        ),
        (
            "imperative",
            r"\b(?:before|after)\s+(?:using|calling|invoking|running)\s+"
            r"(?:this|any|other|the)\b",
        ),
        (
            "imperative",
            r"\b(?:call|use|invoke|run)\s+this\s+(?:tool|function)\s+"
            r"(?:first|before|after|instead|whenever|every\s+time|only)\b",
        ),
        ("imperative", r"\b(?:call|use|invoke)\s+\S+\s+(?:first|beforehand)\b"),
        (
            "imperative",
            r"\b(?:call|use|invoke)\s+[\w.-]+\s+instead\s+of\s+(?:calling|using|invoking)\s+"
            r"this\b",
        ),
        ("imperative", r"^\W*\[(?:important|critical|attention|warning|required)\b[^\]]*\]"),
        (
            "imperative",
            r"\b(?:call|invoke|run)\s+this(?:\s+tool|\s+function)?\s+(?:immediately|right\s+"
            r"(?:away|after|before)|(?:only\s+)?(?:when|if|once|unless|after|before))\b",
        ),
        (
            "addressed",
            r"\b(?:where|after|once)\s+you\s+(?:have\s+)?(?:used|called|invoked)\b",
        ),
        ("imperative", r"\bdo\s+not\s+(?:call|use|invoke)\s+this\b|\binternal\s+use\s+only\b"),
        ("imperative", r"\b(?:make\s+sure|ensure|remember)\s+(?:to|that)\s+(?:you|to)\b"),
        (
            "imperative",
            r"\b(?:important|critical|attention|warning|note)\s*[:!]\s*"
            r"(?:you|your|always|never|do\s+not|don'?t|first|before|use|call|must)\b",
        ),
        (
            "exfiltration",
            r"\b(?:read|send|pass|include|upload|cat|copy|share|forward|attach|post|leak|"
            r"exfiltrate|append)\b.{0,80}(?:~/\.ssh|id_rsa|mcp\.json|\.aws/credentials|"
            r"\.env\b|\.netrc|conversation\s+history|system\s+prompt|(?:user'?s|your|their)"
            r"\s+(?:private\s+keys?|passwords?|api[\s_-]?keys?|credentials|tokens?))",
        ),
    )
)


def filter_directives(text: str | None) -> Filtered:
    """Split ``text`` into what describes the tool and what addresses the model.

    Tagged blocks (``<IMPORTANT>...</IMPORTANT>``, ``<system>``, ...) are dropped whole; the rest
    is cut into sentences and bullet items, and a segment that matches a directive pattern
    (orders to the model, secrecy, instruction overrides, credential paths) is dropped.
    """
    if not text:
        return Filtered("", ())
    dropped: list[Dropped] = []

    def _block(match: re.Match[str]) -> str:
        body = " ".join(match.group(0).split())
        dropped.append(Dropped(body, f"<{match.group('tag').lower()}> block"))
        return "\n"

    rest = unwrap(_BLOCK.sub(_block, text))
    kept: list[str] = []
    for segment in _SEGMENT_SPLIT.split(rest):
        seg = segment.strip()
        if not seg:
            continue
        reason = directive_reason(seg)
        if reason is None:
            kept.append(seg)
        else:
            dropped.append(Dropped(" ".join(seg.split()), reason))
    return Filtered("\n".join(kept), tuple(dropped))


def unwrap(text: str) -> str:
    """``text`` with line breaks inside sentences (hard-wrapped text) read as spaces."""
    return _WRAPPED.sub(" ", text)


def directive_reason(segment: str) -> str | None:
    """Why ``segment`` is model-directed, or None when it describes the tool."""
    for reason, pattern in _DIRECTIVE_PATTERNS:
        if pattern.search(segment):
            return reason
    return None
