"""The action channel: whether a task asks to create, read, update or delete, and whether a
tool's name says it does that.

A dense sentence model hears "file a bug" and "update an issue" as near neighbours: the
objects agree and the verbs weigh little. Many of discover's top-1 mistakes on the fleet's tune
tasks were of that kind (create_incident for "which incidents are open", create-calendar-event
for "what meetings do I have"). This module reads the coarse action of the task from the words
that open its clauses ("what", "which", "file a", "open a", "remove") and the action of each tool
from the first verb of its name (or, when no such verb leads it, from its card's
``readOnlyHint``), and gives each tool +1 when its action is one the task asks for, -1 when the
task asks for others only, and 0 when either side says nothing. docs/benchmarks.md "Action
channel" has the figures.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from cartograph.generate.bootstrap.lexicon import verb_of
from cartograph.generate.text import split_identifier, wordset

CREATE, READ, UPDATE, DELETE = "create", "read", "update", "delete"


_BOTH = frozenset({CREATE, UPDATE})

TOOL_VERBS: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        wordset(
            "create add insert new make post upload generate append build compose register "
            "open start schedule book reserve submit draft send reply"
        ),
        frozenset({CREATE}),
    ),
    **dict.fromkeys(
        wordset(
            "get list search find query read fetch lookup look describe show retrieve browse view "
            "count check download export inspect"
        ),
        frozenset({READ}),
    ),
    **dict.fromkeys(
        wordset("update edit modify set patch rename move change replace assign transition"),
        frozenset({UPDATE}),
    ),
    **dict.fromkeys(wordset("write save put upsert store"), _BOTH),
    **dict.fromkeys(
        wordset("delete remove drop destroy erase cancel clear purge unset"),
        frozenset({DELETE}),
    ),
}
"""The coarse actions of a tool whose name leads with one of these words (``write_file`` and
``save_note`` create or overwrite)."""

TASK_OPENERS: dict[str, str] = {
    **dict.fromkeys(
        wordset(
            "create add make new file log open start post submit insert upload schedule book "
            "register raise draft generate spin remember save store record note reserve send "
            "tell commit push publish deploy merge"
        ),
        CREATE,
    ),
    **dict.fromkeys(
        wordset(
            "what which who when where how is are do does did list show get find search look "
            "fetch read view count see display give pull print"
        ),
        READ,
    ),
    **dict.fromkeys(
        wordset(
            "update edit change modify rename set move overwrite replace swap mark assign switch "
            "reassign"
        ),
        UPDATE,
    ),
    **dict.fromkeys(wordset("delete remove drop cancel clear erase purge"), DELETE),
}
"""The action a task asks for when one of these words opens a clause of it."""

_LEADS = wordset("and then to please also just now first next finally you me i we lets let us so")
"""Words after which the next word still opens the clause ("can you show", "I want to add")."""

_NEEDS_ARTICLE = frozenset({"open", "file", "log", "start", "raise", "spin"})
"""Openers that ask to create only before "a", "an" or "new" ("open a pull request", not
"open the report")."""

_HOW_MUCH = wordset("many much long far big old often large")
"""After "how", the words that make a question about data ("how many"), not about a method."""

_TOKEN = re.compile(r"[a-z][a-z']*|[.,;:!?\n]")
_NAME_VERB_WINDOW = 3


def task_actions(task: str) -> frozenset[str]:
    """The actions ``task`` asks for: the opener of each clause (see :data:`TASK_OPENERS`)."""
    found: set[str] = set()
    opening = True
    tokens = [t.replace("'", "") for t in _TOKEN.findall(task.lower().replace("’", "'"))]
    for i, word in enumerate(tokens):
        if not word[0].isalpha():
            opening = True
            continue
        if opening and word in TASK_OPENERS:
            after = tokens[i + 1] if i + 1 < len(tokens) else ""
            bare = word in _NEEDS_ARTICLE and after not in ("a", "an", "new", "up")
            if word == "tell":  # "tell me" asks to read, "tell the channel" to post
                found.add(READ if after in ("me", "us") else CREATE)
            elif not bare and not (word == "how" and after not in _HOW_MUCH):
                found.add(TASK_OPENERS[word])
        opening = word in _LEADS or (opening and word in ("can", "could", "would", "help"))
    return frozenset(found)


def tool_action(name: str) -> frozenset[str]:
    """The actions a tool name leads with (``asana_create_task`` -> create, and both of a
    joined pair: ``create_or_update_file``, ``find_and_replace``), or none."""
    words = split_identifier(name)
    for k, word in enumerate(words[:_NAME_VERB_WINDOW]):
        if word in TOOL_VERBS:
            joined = words[k + 2] if len(words) > k + 2 and words[k + 1] in ("or", "and") else ""
            return TOOL_VERBS[word] | TOOL_VERBS.get(joined, frozenset())
        if verb_of(word):  # another verb leads ("run_tests", "convert_time"): no coarse action
            return frozenset()
    return frozenset()


_BITS = {CREATE: 1, READ: 2, UPDATE: 4, DELETE: 8}
_READS = frozenset({READ})
_WRITES = frozenset({CREATE, UPDATE, DELETE})


def _mask(actions: frozenset[str]) -> int:
    return sum(_BITS[a] for a in actions)


class ActionMatch:
    """Each tool's actions, read once from the names, and their agreement with a task."""

    def __init__(
        self, tool_names: Sequence[str], reads: Sequence[bool | None] | None = None
    ) -> None:
        """``reads[i]``: the card's ``readOnlyHint`` of tool ``i`` (None where it has none),
        for the tools whose name leads with no action verb (``git_log`` only reads,
        ``git_commit`` changes data: any action but reading)."""
        hints = reads if reads is not None else [None] * len(tool_names)
        masks = []
        for name, hint in zip(tool_names, hints, strict=True):
            actions = tool_action(name)
            if not actions and hint is not None:
                actions = _READS if hint else _WRITES
            masks.append(_mask(actions))
        self._tools = np.array(masks, dtype=np.int8)

    def agreement(self, task: str, also: frozenset[str] = frozenset()) -> np.ndarray:
        """(n,) +1 where the tool does what the task asks, -1 where the task asks for other
        actions only, 0 where the task or the tool name says no action. ``also``: actions the
        task asks for that its words do not open a clause with (a task written from a tool's
        name asks for that tool's action: Rift's synthetic tasks)."""
        asked = _mask(task_actions(task) | also)
        out = np.zeros(len(self._tools), dtype=np.float32)
        if not asked:
            return out
        known = self._tools > 0
        hit = (self._tools & asked) > 0
        out[known & hit] = 1.0
        out[known & ~hit] = -1.0
        return out
