"""The number channel: whether a task asks about one thing or many, and whether a tool reads one
thing or lists many.

A sentence model hears "show the last commits" and "show a commit" as near neighbours, and so
do a tool that lists a project's updates and one that reads an update by its id: the words
agree and only their number differs. Discover's mistakes on the fleet's tune tasks and most
of the sibling pairs Rift grades HIGH are of that kind (``list_projects`` / ``get_project``,
``list_console_messages`` / ``get_console_message``, ``git_log`` / ``git_show``). This module
reads the number of the first thing a task names ("the last commits": many; "the project
called Apollo": one) and the number of what each tool reads, from its name (a listing verb, a
plural object: many; a reading verb with a singular object: one) or, where the name says
nothing, from its input schema (a limit or page argument: many; a required identifier: one).
Each tool gets +1 when the numbers agree, -1 when they differ and 0 when either side says
nothing. Tools that write, search or count say nothing: "send messages" and "find a flight" do
not tell one tool from another by number. docs/benchmarks.md "Number channel" has the figures.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cartograph.generate.bootstrap.lexicon import verb_of
from cartograph.generate.bootstrap.phrasing import sheds_s
from cartograph.generate.text import split_identifier, wordset
from cartograph.index.intent import TASK_OPENERS, TOOL_VERBS

ONE, MANY = "one", "many"

_LISTING = wordset("list enumerate browse")
"""Verbs that lead the name of a tool that returns many things whatever its object says."""
_READING = wordset("get read fetch describe show retrieve view lookup look inspect download")
"""Verbs after which a singular object means one thing (``get_project``, ``read_file``)."""
_SILENT = wordset("search find query count check export scan")
"""Reading verbs whose tools return whatever matches: their number is the task's to say."""
_ASPECTS = wordset(
    "details detail info information content contents metadata meta settings config stats "
    "status summary data body text bytes by id ids v1 v2 v3 v4 json raw full"
)
"""Words that name a part or a form of the thing a tool reads, not the thing itself
(``get_issue_details`` reads one issue)."""
_COUNTING = wordset("count counts total totals number numbers size")
"""Objects that are a number about many things: one value, though the task speaks of many."""
_SINGULAR_S = wordset(
    "news series species analytics kubernetes aws dns gis sms os ms https http windows "
    "diagnostics always plus canvas alias atlas chaos"
)
_PLURALS = wordset("people children men women indices criteria")
_LIMITS = re.compile(
    r"^(?:limit|max|maxcount|maxresults|maxitems|pagesize|perpage|page|offset|cursor|top|topk|"
    r"first|last|count|n|num|numresults|pagetoken|nextpagetoken|startcursor|after|before)$"
)
_IDENTIFIER = re.compile(r"(?:^|_)(?:id|uuid|sha|hash|revision|slug|ref)$|Id$")


def is_plural(word: str) -> bool:
    """Whether ``word`` reads as a plural noun ("commits", "entries", "people")."""
    low = word.lower()
    if low in _PLURALS:
        return True
    if low in _SINGULAR_S or len(low) < 4:
        return False
    return sheds_s(low) and not low.endswith(("ous", "ics", "ness", "sis"))


_PREPOSITIONS = wordset(
    "of for in on at from to with by about into within under over between across via since "
    "before after during per inside through"
)


def _head(words: Sequence[str]) -> str | None:
    """The last word of an object's words before a preposition, past its aspect words."""
    kept: list[str] = []
    for word in words:
        if word in _PREPOSITIONS or word in ("and", "or"):
            break
        kept.append(word)
    things = [w for w in kept if w not in _ASPECTS and not w.isdigit()]
    return things[-1] if things else None


def tool_number(name: str, schema: Mapping[str, Any] | None = None) -> str | None:
    """Whether the tool ``name`` reads one thing or lists many (``schema``: its input schema),
    or None where its name and schema do not say or it writes, searches or counts."""
    words = [w.lower() for w in split_identifier(name)]
    if "all" in words:
        return MANY
    for k, word in enumerate(words[:3]):
        if word in _LISTING:
            return MANY
        if word in TOOL_VERBS and word not in _READING:
            return None  # it writes, searches or counts
        if word in _READING:
            head = _head(words[k + 1 :])
            if head is None or head in _COUNTING:
                return _schema_number(schema)
            return MANY if is_plural(head) else (_schema_number(schema) or ONE)
        if verb_of(word):  # another verb ("git_log"): a limit or a page says many
            return MANY if _schema_number(schema) == MANY else None
    head = _head(words)
    if head is not None and head not in _SILENT and head not in _COUNTING and is_plural(head):
        return MANY
    return _schema_number(schema)


def _schema_number(schema: Mapping[str, Any] | None) -> str | None:
    """MANY where the schema takes a limit, page or cursor; ONE where it requires an
    identifier and takes none of those; else None."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return None
    names = [str(p) for p in props]
    if any(_LIMITS.match(re.sub(r"[^a-z]", "", n.lower())) for n in names):
        return MANY
    required = schema.get("required") if isinstance(schema, Mapping) else None
    if isinstance(required, list) and any(_IDENTIFIER.search(str(r)) for r in required):
        return ONE
    return None


_TOKEN = re.compile(r"[a-z0-9][a-z0-9'\-]*|[.,;:!?\"()]")
_SKIP = wordset(
    "the a an my our your their its his her this these those some any me us please "
    "current new existing latest last recent newest oldest first top next previous open "
    "there here"
)
_MANY_WORDS = wordset("all every list")
_ONE_WORDS = wordset("a an this one single specific particular")
_STOP = wordset(
    "is are was were be been do does did have has had can could will would should may might "
    "i we you they it he she that which who whose where when if so then but not and or"
)
_QUESTIONS = wordset("what which who")


def task_number(task: str) -> str | None:
    """Whether ``task`` asks about one thing or many: the number of the first thing it names
    after its opening verb or question word, or None where it names none or counts."""
    tokens = _TOKEN.findall(task.lower().replace("’", "'"))
    for i, word in enumerate(tokens):
        if word not in TASK_OPENERS:
            continue
        if word == "how":
            return None  # "how many", "how do I": a count or a method, not a number
        return _phrase_number(tokens[i + 1 :], question=word in _QUESTIONS)
    return None


def _phrase_number(tokens: Sequence[str], *, question: bool) -> str | None:
    """The number of the noun phrase ``tokens`` opens with (an aspect word lets the phrase
    after "of" speak: "the status of the last deployments" is about deployments)."""
    cue: str | None = None
    phrase: list[str] = []
    for k, word in enumerate(tokens):
        if word in _MANY_WORDS:
            cue = MANY
        elif word in _ONE_WORDS and not phrase:
            cue = cue or ONE
        elif word[0].isdigit():
            if phrase:
                break
            cue = MANY if word not in ("1", "one") else ONE
        elif word in _SKIP:
            continue
        elif word in _STOP or not word[0].isalpha():
            if phrase or not question:
                break
        elif word in _PREPOSITIONS:
            if phrase and all(w in _ASPECTS for w in phrase) and word in ("of", "for", "about"):
                return _phrase_number(tokens[k + 1 :], question=False)
            break
        else:
            phrase.append(word)
    head = next((w for w in reversed(phrase) if w not in _ASPECTS), None)
    if head is None:
        return cue if phrase or cue == MANY else None
    if head in _COUNTING:
        return None
    if is_plural(head) or cue == MANY:
        return MANY
    return ONE


class NumberMatch:
    """Each tool's number, read once from its name and schema, and its agreement with a task."""

    def __init__(self, numbers: Sequence[str | None]) -> None:
        self._tools = np.array([{ONE: 1, MANY: 2}.get(n or "", 0) for n in numbers], np.int8)

    def agreement(self, task: str) -> np.ndarray:
        """(n,) +1 where the tool's number is the task's, -1 where it is the other, 0 where
        either says none."""
        asked = task_number(task)
        out = np.zeros(len(self._tools), dtype=np.float32)
        if asked is None:
            return out
        want = 1 if asked == ONE else 2
        out[self._tools == want] = 1.0
        out[(self._tools > 0) & (self._tools != want)] = -1.0
        return out
