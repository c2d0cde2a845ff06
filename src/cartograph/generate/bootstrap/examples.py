"""Example tasks for a tool, phrased the way a user asks ("Get the current time for timezone
Europe/Paris"), each with the arguments that would serve it.

The first task names the tool's action and object, the product where users would say it ("in
Linear"; not for products named by a common word such as Time), and the values of up to two
required inputs; the second asks the same with another verb users say for it: the summary's own
request with its verb changed where the first task is that request and its verb has another
("Add a new Shortcut story" beside "Create a new Shortcut story"), else the tool's action and
object. Values come from
:func:`cartograph.generate.bootstrap.schema.example_arguments`.

A task is only written from words that read as an object: the name's words after its verb are
not one when they open with a preposition or particle ("exec_in_pod"), end in a qualifier
("content single") or repeat the verb ("firecrawl_map"); the first task then asks the summary's
first clause, and no second task is made from the name. Another verb is only said for the
tool's own verb (the summary's, else the name's), never for the action it was filed under
("push" is an upload, but "Attach a remote repository" is not a push), and only where it takes
the same words after it ("Add X to Y" is not "Create X to Y"; "Search for X" is "Find X").

Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from cartograph.generate.bootstrap.identity import Product
from cartograph.generate.bootstrap.lexicon import verb_synonyms
from cartograph.generate.bootstrap.phrasing import base_verb
from cartograph.generate.bootstrap.schema import Param
from cartograph.generate.text import identifier_phrase, wordset

_INDEFINITE = wordset(
    "create add insert generate make upload send post write book schedule start open new "
    "draft publish invite"
)
_NO_ARTICLE = wordset("a an the all any my some this these those each every")


def object_phrase(verb: str | None, objects: Sequence[str]) -> str:
    """``the current time``, ``a record``, ``all projects``: the object with an article (none
    before a preposition: ``from favorites``)."""
    what = " ".join(objects) if objects else ""
    if not what:
        return ""
    first = what.split()[0]
    if first in _NO_ARTICLE or first in _FUNCTION_WORDS:
        return what  # "all projects"; "from favorites" (``removeFromFavorites``)
    if verb in _INDEFINITE and not what.endswith("s"):
        return ("an " if first[0] in "aeiou" else "a ") + what
    return "the " + what


def tasks(
    verb: str | None,
    objects: Sequence[str],
    product: Product,
    params: Sequence[Param],
    arguments: dict[str, Any],
    name: str,
    summary: str = "",
    reword: str | None = None,
) -> list[str]:
    """The example tasks in order of preference (see the module doc): the first, then up to two
    ways to ask it again; a card keeps the first two that share no run with the publisher's
    text. ``verb`` is the action the tool is filed under; ``reword`` the verb whose other
    words may ask for it again with ``objects`` (:func:`reword_verb`), None for none."""
    action = verb or "use"
    plain = plain_object(objects, {action, reword or action})
    what = object_phrase(verb, objects) or (identifier_phrase(name) or name)
    said = _request(summary) or ("" if plain else _request(first_clause_of(summary)))
    where = ""
    if not product.generic and product.display.lower() not in (said or what).lower():
        where = f" in {product.display}"
    values = [
        f"{identifier_phrase(p.name) or p.name} {_shown(arguments[p.name])}"
        for p in params
        if p.required and _scalar(arguments.get(p.name))
    ][:2]
    first = f"{said or f'{action.capitalize()} {what}'}{where}"
    if values:
        first += " for " + " and ".join(values)
    out = [first]
    again = _said_again(said) if said else ""
    if again:
        out.append(f"{again}{where}")
    synonyms = [s for s in verb_synonyms(reword) if s != action] if reword and plain else []
    if synonyms:
        out.append(f"{synonyms[0].capitalize()} {what}{where}")
    return out


_FUNCTION_WORDS = wordset(
    "in on to for of by with from at as into onto near back forward out up off down over and or "
    "via within without about"
)
_QUALIFIERS = wordset("single multiple specific given all new existing one many other")


def plain_object(objects: Sequence[str], verbs: set[str]) -> bool:
    """Whether the name's words after its verb read as an object ("calendar event"): not empty,
    not opening with a preposition or particle ("in pod") nor ending in one or in a qualifier
    ("content single"), and not repeating the verb ("map" for ``firecrawl_map``)."""
    words = [w.lower() for w in objects]
    if not words or words[0] in _FUNCTION_WORDS or words[-1] in _FUNCTION_WORDS | _QUALIFIERS:
        return False
    said = {v for v in verbs if v} | {base_verb(v) or v for v in verbs if v}
    return not any((base_verb(w) or w) in said for w in words)


_CLAUSE_END = re.compile(
    r",\s|;\s|:\s|\s[—–-]\s|\s\((?=\w)|\s(?:and|to|which|that)\s(?=[a-z]+s?\b)"
)
"""Where a first clause ends: a comma, a colon, a dash, a bracket, or a joint word before the
next verb or clause ("Execute a command within a pod or container | and return output")."""


def first_clause_of(summary: str) -> str:
    """The summary's first clause when it holds at least three words, else ``""``."""
    first = summary.split(". ")[0].strip().rstrip(".")
    cut = _CLAUSE_END.search(first)
    clause = first[: cut.start()] if cut else ""
    words = clause.split()
    return clause if len(words) >= 3 and base_verb(words[0]) else ""


def reword_verb(own: str | None, filed: str | None) -> str | None:
    """The verb whose other words (:func:`verb_synonyms`) may ask for a tool whose own text says
    ``own`` and that is filed under the action ``filed``: ``own`` where the lexicon lists its
    other words, ``filed`` where ``own`` is one of those ("retrieve" is one of "get"'s), else
    None ("push" is filed under "upload", but "attach" is not a push)."""
    if own and verb_synonyms(own):
        return own
    if own and filed and (own == filed or own in verb_synonyms(filed)):
        return filed
    return None


_DETERMINERS = wordset("all a an my your this these each every any some")
_NOT_AN_OBJECT = wordset("and or & out up off down over back in on")
"""A second verb ("List and monitor") or a particle ("Fill out"): another verb would not fit."""


def _said_again(said: str) -> str:
    """The summary's request with another verb users say for its own ("Add a new Shortcut
    story" for "Create a new Shortcut story"); ``""`` when its verb has none or is one of two
    ("List and monitor Heroku app dynos"), or the request is not one sentence of prose."""
    verb, _, rest = said.partition(" ")
    words = rest.split()
    if not words or words[0].lower() in _NOT_AN_OBJECT or "|" in said:
        return ""
    own = verb.lower()
    base = base_verb(own)
    leads_for = words[0].lower() == "for"  # "Search for records ..."
    if leads_for and len(words) > 1:
        rest = " ".join(words[1:])  # "Find records ...", not "Find for records ..."
    destination = bool(_DESTINATION.search(rest))
    for other in verb_synonyms(base or own):
        if other.endswith(" all") and words[0].lower() in _DETERMINERS:
            other = other.removesuffix(" all")  # "Show all the databases", not "all all"
        if other.endswith(" to") and words[0].lower() in _FUNCTION_WORDS:
            other = other.removesuffix(" to")  # "Go to a URL", "Go forward", not "Go to to"
        if destination and other in _NO_DESTINATION:
            continue  # "Create password protection to a document" does not say it
        if leads_for and other in _TAKES_FOR:
            continue
        if other not in (own, base):
            return f"{other.capitalize()} {rest}"
    return ""


_DESTINATION = re.compile(r"\b(?:to|onto)\b", re.IGNORECASE)
_NO_DESTINATION = wordset("create make new generate produce draw insert")
"""Verbs that make a thing rather than put it somewhere: no "to a document" after them."""
_TAKES_FOR = wordset("query ask")
"""Other verbs for "search" that would need its "for" back ("Query for ...") read worse."""


_MAX_REQUEST_WORDS = 10
_UNSAID = re.compile(
    r"\s+(?:in|for|of|on|by|from|to|within)\s+(?:a|an|the)\s+(?:specific|given|specified|"
    r"particular|provided)\s+[\w-]+$",
    re.IGNORECASE,
)
"""A closing "in a specific timezone": the task's own values say which."""
_SOME = re.compile(r"\b(?:a|an)\s+(?:specific|given|specified|particular)\b", re.IGNORECASE)
""""a specific document" is "the document" once the task names it."""


def _request(summary: str) -> str:
    """The summary's first sentence as a request ("Show the commit logs"), when it is a short
    order with no clause after it; ``""`` otherwise (the name's verb and object serve)."""
    sentence = _UNSAID.sub("", summary.split(". ")[0].strip().rstrip("."))
    sentence = _SOME.sub("the", sentence)
    words = sentence.split()
    if not 2 <= len(words) <= _MAX_REQUEST_WORDS or any(c in sentence for c in ",;:()"):
        return ""
    return sentence


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    text = str(value)
    return f'"{text}"' if not text.replace(".", "").replace("-", "").isalnum() else text
