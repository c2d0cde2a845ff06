"""Query analysis (pure, no I/O): the steps a multi-step task names, and a task's frame.

Agents often hand discover a whole task ("find X, chart it, and save it as a PDF"). Each step
needs a different tool; retrieving for each step as well as for the whole task lets one tool
per step reach the top k. Splitting is deliberately simple: sentence ends, semicolons, commas
and "and/then" joints, keeping steps that still carry at least two content words.

A task's *frame* (:func:`task_frame`) is what it asks for without what it is about: "look up
the latest news" of "look up the latest news about the EU AI Act". A sentence embedder reads
the topic loudest, so a task about AI regulation lands on tools about AI models; the frame's
own vector finds the tools that do that kind of job whatever the topic (web search, fetch,
research), and the fusion weighs both (``HybridParams.w_frame``).
"""

from __future__ import annotations

import re

from cartograph.index.lexical import tokenize

MAX_STEPS = 4
_SPLIT = re.compile(
    r"(?<=[.!?;])\s+|;\s*|,\s*(?:and\s+|then\s+)?|\s+(?:and\s+then|then|and\s+also|and)\s+"
    r"|[。；！？，]",
    re.IGNORECASE,
)


_PATH = re.compile(r"(?<![\w/])(?:~|\.{1,2})?(?:/[\w.\-]+){2,}/?|\b[A-Za-z]:\\\S+")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def embedding_text(query: str) -> str:
    """``query`` as the embedder should read it: file paths become words.

    A path such as ``/root/markdown/report.md`` is noise to a sentence embedder (a dozen word
    pieces of folder names) while it says plainly that the task touches files. It is read as
    ``file report.md`` (last part has an extension) or ``folder music`` (no extension).
    """

    def words(match: re.Match[str]) -> str:
        path = match.group(0).rstrip("/\\")
        last = re.split(r"[/\\]", path)[-1]
        return f"file {last}" if _EXTENSION.search(last) else f"folder {last}"

    return _PATH.sub(words, query)


def step_spans(query: str, steps: list[str]) -> list[tuple[int, int]] | None:
    """Where each step lies in ``query`` (character ranges), or None if one cannot be found."""
    spans: list[tuple[int, int]] = []
    at = 0
    for step in steps:
        first, last = step.split()[0], step.split()[-1]
        lo = query.find(first, at)
        hi = query.find(last, max(lo, 0) + len(step) - len(last)) if lo >= 0 else -1
        if lo < 0 or hi < 0:
            return None
        spans.append((lo, hi + len(last)))
        at = hi + len(last)
    return spans


def split_steps(query: str, max_steps: int = MAX_STEPS) -> list[str]:
    """The steps of ``query``; empty when it names only one (then the whole query suffices)."""
    parts = [p.strip(" .;:!?") for p in _SPLIT.split(query) if p and p.strip(" .;:!?")]
    steps: list[str] = []
    pending = ""
    for part in parts:
        text = f"{pending} {part}".strip() if pending else part
        if len(tokenize(text)) >= 2:
            steps.append(text)
            pending = ""
        else:
            pending = text
    if pending and steps:
        steps[-1] = f"{steps[-1]} {pending}"
    if len(steps) < 2:
        return []
    return steps[:max_steps]


_CLAUSE_END = re.compile(r"[,;:.!?](?:\s|$)|\s+(?:and|then|but|so)\s+", re.IGNORECASE)
_TOPIC = re.compile(
    r"\s+(?:about|on|regarding|for|from|of|in|with|under|at|into|between|against|by|that|which"
    r"|who|whose|where|so|using|via|within|inside|across|since|before|after|during|per|like)\s+",
    re.IGNORECASE,
)
"""The words that open what a clause is about (prepositions and relative pronouns)."""
_WRAPPER = re.compile(
    r"^(?:(?:can|could|would|will)\s+you(?:\s+please)?|please|help\s+me(?:\s+to)?|help|let'?s"
    r"|(?:i|we)\s+(?:want|need|would\s+like|'d\s+like|wish)(?:\s+you)?\s+to"
    r"|(?:i|we)(?:'m|\s+am|'re|\s+are)\s+looking\s+(?:for|to)|(?:i|we)\s+(?:want|need)"
    r"|(?:want|need)\s+to)\s+",
    re.IGNORECASE,
)
"""The request's wrapping ("can you", "I need to", "please"): what follows is the request."""
_LEAD = re.compile(
    r"^(?:(?:and|but|so|then|also|now|next|first|firstly|finally|lastly|afterwards|kindly|ok"
    r"|okay|hey|hi)\b[\s,]*)+",
    re.IGNORECASE,
)
"""Words that join a clause to the one before, or greet: not part of what it asks."""
_NOT_REQUEST = re.compile(
    r"^(?:i|i'm|i've|i'd|im|we|we're|we've|my|our|this|that|these|those|it|it's|its|there|here"
    r"|the|a|an|if|when|while|since|because|as|after|before|in|on|at|from|for|with|using|via"
    r"|under|within|inside|given|based|assuming|note|also|currently|today|yesterday)\b",
    re.IGNORECASE,
)
"""Openers of a clause that sets the scene (a statement, a condition, where or when) rather
than asking: the frame is looked for in the next clause."""


def task_frame(query: str) -> str | None:
    """What ``query`` asks for without what it is about: the first clause that asks (not one
    that sets the scene), without the request's wrapping ("can you ..."), up to the first word
    that opens its topic. None when that leaves fewer than two indexed words (the lexical
    channel's) or the whole query. A clause of fewer than two indexed words ("First,") is
    passed over."""
    for part in _CLAUSE_END.split(query.strip()):
        clause = _LEAD.sub("", part.strip())
        request = _WRAPPER.sub("", clause)
        if len(tokenize(request)) < 2 or (request == clause and _NOT_REQUEST.match(clause)):
            continue
        head = _TOPIC.split(request, maxsplit=1)[0].strip()
        if len(tokenize(head)) < 2 or len(head.split()) >= len(query.split()):
            return None
        return head
    return None
