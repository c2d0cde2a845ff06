"""The operator's sentence for a tool: what the publisher says it is for, restated in the
imperative and in plain words, never carrying a run of the publisher's words.

:func:`purpose_of` reads a description whose model-directed parts are already removed. It
drops markup, emoji, tagged example blocks and section labels, skips notes, parameter lists and
"Returns ..." sentences (what comes back is said from the output schema only), takes the first
sentence that says what the tool does, removes what a description says about itself ("This tool
allows you to"), marketing words and the second person, turns the verb into the imperative
("Retrieves" -> "Retrieve", "Searches ... and returns" -> "Search ... and return") and cuts the
sentence at a clause boundary when it runs long.

:func:`cartograph.generate.bootstrap.rewrite.break_runs` then edits the words that would
complete a run of publisher words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cartograph.generate.bootstrap.phrasing import (
    LABELS,
    MARKETING,
    SKIP_OPENERS,
    WRAPPERS,
    base_verb,
    sheds_s,
)
from cartograph.generate.bootstrap.rewrite import CLAUSE_END, TRAILING, articles, core, trim
from cartograph.generate.text import tokenise, unwrap, wordset

MAX_WORDS = 28
"""A longer sentence is cut at its last clause boundary before this many words."""

_BLOCKS = re.compile(
    r"<(examples?|usecases?|use_cases?|notes?|usage|returns?|args|parameters)\b[^>]*>.*?"
    r"(?:</\1\s*>|$)",
    re.IGNORECASE | re.DOTALL,
)
_TAG = re.compile(r"</?[A-Za-z][\w:-]*[^>]*>")
_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\u2190-\u21ff\u2300-\u23ff\u2460-\u24ff\u25a0-\u27bf"
    "\u2b00-\u2bff\ufe0f\u200d]+"
)
_MARKUP = re.compile(r"\*\*|__|`+|^#+\s*|^\s*>\s*", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+", re.MULTILINE)
_SENTENCE = re.compile(
    r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n+|(?<=[.!?])$|(?<=[a-z]\.)(?=[A-Z][a-z])"
)
_PAREN = re.compile(r"\s*\((?:e\.g\.|i\.e\.|eg|ie|for example|for instance|such as|see)\b[^)]*\)")
_LONG_PAREN = re.compile(r"\s*\([^()]*\)")
_SECOND_PERSON = (
    (re.compile(r"\byour\s+own\b", re.IGNORECASE), "the user's own"),
    (re.compile(r"\byours\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\byour\b", re.IGNORECASE), "the"),
    (re.compile(r"\byou(?:'re| are)\b", re.IGNORECASE), "the user is"),
    (re.compile(r"\byou\b", re.IGNORECASE), "the user"),
    (re.compile(r"\bour\b", re.IGNORECASE), "the"),
)
_GET_AFTER_PROVIDE = re.compile(
    r"^(?:information|info|details|data|insights?|statistics|stats|an?\s+list|lists?|"
    r"the\s+list|real-time|current|up-to-date|the\s+latest|latest)\b",
    re.IGNORECASE,
)
_SUITS = re.compile(
    r"^(?:(?:this|the)\s+(?:tool|function)\s+(?:is\s+)?|it\s+is\s+)?(?:especially\s+)?"
    r"(?:best|ideal|great|useful|good|perfect|designed|meant)\s+for\s+",
    re.I,
)
"""A sentence that says what the tool suits ("Ideal for large files", "This tool is perfect for
understanding ..."): kept as "It suits ..." ("It helps with ..." before a gerund)."""
_DEFINITE = wordset(
    "current latest newest oldest first last next previous default full complete entire whole "
    "main top primary active"
)
_NOTICE = re.compile(
    r"(?i)\b(?:will|to|may|might|shall) be (?:removed|deleted|retired|discontinued)\b|"
    r"^\W*(?:deprecated|obsolete)\b"
)
"""A sentence that only announces the tool's end, not what it does."""
_DEPRECATED = re.compile(
    r"\bDEPRECATED\b|(?i:^\W*deprecated\b|\bis (?:now )?deprecated\b|\(deprecated\)|"
    r"\bdeprecated\s*[:;-]|\bdeprecated\.)",
    re.MULTILINE,
)
_CALLER_VERBS = wordset(
    "use call pass specify provide include set make ensure try do avoid prefer remember"
)
_RETURNS = re.compile(r"^(?:it\s+|this\s+)?(?:returns?|outputs?|responds?|yields)\b", re.I)
_MODAL = re.compile(r"\b(?:should|must|needs? to|make sure)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Purpose:
    """What a description says a tool does, as the operator's sentences."""

    sentence: str
    """The imperative sentence, ending in a full stop; ``""`` when the text says nothing."""
    verb: str | None
    """Its opening verb (base form, lower case); None when it had to open with a noun."""
    extra: str = ""
    """A second descriptive sentence, normalised the same way (may be ``""``)."""
    deprecated: bool = False


def purpose_of(text: str, names: frozenset[str] = frozenset()) -> Purpose:
    """The purpose sentence (and one more) of an already filtered description. ``names``: the
    tool's and product's name words, which a description may open with ("dbt run executes
    ...")."""
    cleaned = _clean(text)
    deprecated = bool(_DEPRECATED.search(cleaned))
    found: list[tuple[str, str | None]] = []
    for raw in _SENTENCE.split(cleaned):
        sentence = LABELS.sub("", " ".join(raw.replace("\u2024", ".").split()).strip(" -–—:;,"))
        if not sentence or SKIP_OPENERS.match(sentence) or _is_shouting(sentence):
            continue
        if _NOTICE.search(sentence):
            continue  # "This tool will be removed in a future release": the flag says it
        if _IDENT.match(sentence) and names and set(tokenise(sentence)) <= names:
            continue  # the tool's own name as a heading ("get_lineage_dev" over its text)
        if found and (_MODAL.search(sentence) or _RETURNS.match(sentence)):
            continue  # a rule for the caller, or what comes back: not what the tool does
        if found and _SUITS.match(sentence):
            rest = _unaddressed(_SUITS.sub("", sentence, count=1))
            lead = "It helps with " if rest.split()[0].lower().endswith("ing") else "It suits "
            sentence = lead + rest
            found.append((sentence.rstrip(".") + ".", "suit"))
            break
        normal = _normalise(sentence, cleaned, names, third=bool(found))
        if normal[0]:
            found.append(normal)
        if len(found) == 2:
            break
    if not found:
        return Purpose("", None, deprecated=deprecated)
    sentence, verb = found[0]
    short = len(sentence.split()) <= (4 if verb is None else 3)
    joinable = len(found) > 1 and len(found[1][0].split()) >= 4 and found[1][0][:1].isalpha()
    if short and joinable and (verb is None or found[1][1] is None):
        second = found[1][0]  # "Key Vault operations" + ": commands for managing ..."
        head = second.split()[0]
        if head[:1].isupper() and head[1:].islower():
            second = second[0].lower() + second[1:]
        sentence = f"{sentence.rstrip('.')}: {second}"
        found = found[:1]
    extra = ""
    if (
        len(found) > 1
        and found[1][1]
        and found[1][1] not in _CALLER_VERBS
        and found[1][0][:1].isalpha()
    ):
        extra = found[1][0]
    return Purpose(sentence, verb, extra, deprecated)


_ABBREVIATION = re.compile(r"\b(e\.g|i\.e|etc|vs|approx|incl|esp|cf)\.", re.IGNORECASE)
_IDENT = re.compile(r"^[A-Za-z]+(?:_[A-Za-z0-9]+)+:?$|^[a-z]+[A-Z][A-Za-z0-9]*:?$")
_ADVERB = re.compile(r"^(?:[A-Za-z]+ly|also|then|now|just|first)\s+(?=[A-Za-z])", re.IGNORECASE)


def _clean(text: str) -> str:
    text = _ABBREVIATION.sub(lambda m: m.group(1).replace(".", "\u2024") + "\u2024", unwrap(text))
    text = _BLOCKS.sub("\n", text)
    text = _TAG.sub(" ", text)
    text = _EMOJI.sub(" ", text)
    text = _MARKUP.sub("", text)
    return _BULLET.sub("\n", text)


def _is_shouting(sentence: str) -> bool:
    letters = [w for w in re.findall(r"[^\W\d_]+", sentence) if len(w) > 1]
    return len(letters) >= 3 and sum(w.isupper() for w in letters) >= 0.7 * len(letters)


def _normalise(
    sentence: str, context: str, names: frozenset[str] = frozenset(), *, third: bool = False
) -> tuple[str, str | None]:
    """(imperative sentence, its verb) for one publisher sentence; ("", None) if empty.
    ``third``: a sentence that follows the first one keeps a third-person verb and says "It"
    ("It supports pagination."), which reads as description rather than as an order."""
    text = _named_subject(sentence.rstrip(".!?;:, "), names)
    for _ in range(3):
        before = text
        for wrapper in WRAPPERS:
            text = wrapper.sub("", text, count=1)
        text = LABELS.sub("", text)
        if text == before:
            break
    text = _PAREN.sub("", _unaddressed(text))
    text = _LONG_PAREN.sub(lambda m: m.group(0) if len(m.group(0).split()) <= 8 else "", text)
    parts = text.split()
    if len(parts) > 1 and _IDENT.match(parts[0]) and base_verb(core(parts[1])):
        text = " ".join(parts[1:])  # "Sync_application syncs ..." -> "syncs ..."
    if not base_verb(text.split()[0] if text.split() else ""):
        text = _ADVERB.sub("", text, count=1)
    words = [w for w in text.split() if core(w).lower() not in MARKETING]
    if not words:
        return "", None
    said = list(words)
    verb = _imperative(words, context)
    first = core(said[0]).lower()
    subject = len(said) > 1 and core(said[1]).lower() in _AUXILIARIES  # "Highlights are on"
    if third and verb and first != verb and first.endswith("s") and base_verb(first):
        words = said if subject else ["It", first, *said[1:]]  # "It supports pagination"
    elif verb and len(words) > 2 and core(words[1]).lower() in _DEFINITE and words[1].islower():
        words.insert(1, "the")  # "Get current time" -> "Get the current time"
    words = _without_dangling_end(_cut(words))
    if not words:
        return "", None
    out = articles(" ".join(words))
    return out[0].upper() + out[1:] + ".", verb


def _named_subject(text: str, names: frozenset[str]) -> str:
    """``text`` without a subject made of the tool's own name words when a verb follows it
    ("dbt run executes models" -> "executes models")."""
    words = text.split()
    n = 0
    while n < min(3, len(words) - 1) and set(tokenise(words[n])) <= names and tokenise(words[n]):
        n += 1
    an_order = base_verb(core(words[0])) == core(words[0]).lower() if n else False  # "List CRON"
    alone = n == len(words) - 1  # "Subscribe to issue | updates": a noun, not its verb
    if n and not an_order and not alone and _verb_after_subject(words[n], names):
        return " ".join(words[n:])
    return text


def _verb_after_subject(word: str, names: frozenset[str]) -> bool:
    """Whether ``word`` is a verb in the third person ("executes"), not a name word or its
    plural ("List key-value | stores owned by ...", "Get favorite Linear | views"), a noun in
    "ss" ("Provision AI model | access") or an aside ("List contact groups | (labels)")."""
    low = core(word).lower()
    base = base_verb(low)
    if not base or word.startswith("(") or low.endswith("ss") or not low.endswith("s"):
        return False
    return base not in names and low not in names


def _imperative(words: list[str], context: str) -> str | None:
    """Turn the opening verb into the imperative in place; returns it (None: no verb)."""
    first = core(words[0])
    low = first.lower()
    nxt = " ".join(words[1:3])
    if low in ("returns", "return") and not nxt.lower().startswith("to "):
        words[0] = "get"
        return "get"
    if low in ("provides", "provide", "offers", "offer", "gives", "give"):
        verb = "get" if _GET_AFTER_PROVIDE.match(nxt) else "offer"
        words[0] = verb
        return verb
    verb = base_verb(first) if first.isalpha() or "-" in first else None
    if verb is None and _drop_subject(words):
        first = core(words[0])
        low = first.lower()
        verb = base_verb(first)
    if verb is None:
        if low in ("a", "an", "the"):
            words[0] = words[0].replace(first, low, 1)
            return None
        after = core(words[1]) if len(words) > 1 else ""
        proper = after[:1].isupper()
        if (
            first[:1].isupper()
            and first[1:].islower()
            and not proper
            and re.search(rf"\b{re.escape(low)}\b", context)
        ):
            words[0] = words[0].replace(first, low, 1)  # "Statistics of ..." is not a name
        return None
    third_person = low != verb and not low.endswith(("ing", "ed"))
    words[0] = words[0].replace(first, verb, 1)
    if not low.endswith(("ing", "ed")):
        _coordinated_verbs(words, strict=not third_person)
    return verb


def _coordinated_verbs(words: list[str], *, strict: bool) -> None:
    """Put the verbs joined to the opening one in the imperative ("Search ... and return",
    "Fetch ... and optionally extract"). ``strict`` (the publisher's opening was an order):
    only a word an object follows ("and returns a link"); never a listed plural noun."""
    for i in range(1, len(words) - 1):
        if core(words[i]).lower() in _RELATIVE and _third_person(core(words[i + 1])):
            return  # "... an operation that gathers, analyzes ...": not the main verb's
        if strict and _third_person(core(words[i])):
            return  # "Parse command parses and validates": the verbs are another subject's
        if core(words[i]).lower() not in ("and", "or", "then") and not words[i].endswith(","):
            continue
        j = i + 1
        if _is_adverb(words[j]) and j + 1 < len(words):
            j += 1  # "and optionally extracts"
        word = core(words[j])
        if not _third_person(word) or words[j] != words[j].rstrip(",.;:"):
            continue
        follower = core(words[j + 1]).lower() if j + 1 < len(words) else ""
        if (strict or j > i + 1) and follower not in _OBJECT_OPENERS:
            continue
        before = words[i] if words[i].endswith(",") else words[i - 1]
        if _listed_noun(core(before), follower):
            continue  # "issues and comments for a repository", "users, groups and roles"
        words[j] = words[j].replace(word, base_verb(word) or word, 1)


_OBJECT_OPENERS = wordset(
    "a an the its their his her all any each every some this that these those them it "
    "your our my up out back"
)
"""Words that open what a verb acts on: after them, a word in -s is a verb, not a noun."""


def _listed_noun(before: str, follower: str) -> bool:
    """Whether a word in -s between ``before`` and ``follower`` is one noun of a list: a plural
    stands before it and a preposition, a conjunction or nothing after it."""
    return sheds_s(before) and (not follower or follower in _LIST_FOLLOWERS)


_LIST_FOLLOWERS = wordset("for of in on at to from with by within across and or as via into")


def _is_adverb(word: str) -> bool:
    low = core(word).lower()
    return low == "also" or (low.endswith("ly") and len(low) > 4 and not base_verb(low))


_RELATIVE = wordset("that which who whose where")
_AUXILIARIES = wordset("is are was were be been have has had can will may must should do does")


def _unaddressed(text: str) -> str:
    """``text`` with its words to the reader ("your project") said of the user or the tool."""
    for pattern, replacement in _SECOND_PERSON:
        text = pattern.sub(replacement, text)
    return text


def _third_person(word: str) -> bool:
    """``gathers``, ``analyzes``: an inflected action verb (not ``are``, not a plural noun)."""
    low = word.lower()
    base = base_verb(word)
    return bool(base) and low.endswith("s") and low != base


def _without_dangling_end(words: list[str]) -> list[str]:
    """``words`` without an end left hanging ("... directory given as", where a placeholder
    such as ``<revision>:<path>`` was taken out): cut back to the last comma when one leaves
    three words or more (else it is left as it is)."""
    if not words or core(words[-1]).lower() not in TRAILING:
        return words
    commas = [i for i, w in enumerate(words[:-1]) if w.endswith(",") and i >= 2]
    if not commas:
        return words
    rest = [core(w).lower() for w in words[commas[-1] + 1 :]]
    if rest[0] not in ("and", "or") and {"and", "or"} & set(rest):
        return words  # the last comma is a list's ("boards, docs and folders within")
    return [*words[: commas[-1]], words[commas[-1]].rstrip(",")]


def _drop_subject(words: list[str]) -> bool:
    """Leave out a short subject before the sentence's verb ("KalendarAI sales agents generate
    revenue ..." -> "generate revenue ..."); True when one was left out."""
    for k in range(1, min(5, len(words) - 1)):
        word = core(words[k])
        if not word.isalpha() or not word.islower() or word.endswith(("ing", "ed")):
            continue
        after = core(words[k + 1]).lower()
        if base_verb(word) and word not in _NOT_VERBS and after and after not in TRAILING:
            del words[:k]
            return True
        if word in TRAILING:
            return False  # "Guidance for ..." has no verb to find
    return False


_NOT_VERBS = wordset(
    "data list set name record report map order process state is are was were be been has have"
)
"""Words that look like a verb but are a noun here, or an auxiliary (a passive "is returned"
has no imperative)."""


def _cut(words: list[str], limit: int = MAX_WORDS, *, boundary_only: bool = False) -> list[str]:
    """At most ``limit`` words, cut after a clause boundary where there is one (else, with
    ``boundary_only``, nothing)."""
    if len(words) <= limit:
        return words
    for end in range(limit, 5, -1):
        if CLAUSE_END.search(words[end - 1]) or core(words[end]).lower() in ("which", "that"):
            return trim(words[:end])
    return [] if boundary_only else trim(words[:limit])


def shorten(sentence: str, limit: int) -> str:
    """``sentence`` cut to at most ``limit`` words at a clause boundary (a full stop kept)."""
    words = sentence.split()
    if len(words) <= limit:
        return sentence
    cut = _cut(words, limit, boundary_only=True)
    return " ".join(cut).rstrip(".,;:") + "." if cut else ""
