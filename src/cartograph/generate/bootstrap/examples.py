"""Example tasks for a tool, phrased the way a user asks ("Get the current time for timezone
Europe/Paris"), each with the arguments that would serve it.

The first task names the tool's action and object, the product where users would say it ("in
Linear"; not for products named by a common word such as Time), and the values of up to two
required inputs; the second asks the same with another verb users say for it: the summary's own
request with its verb changed where the first task is that request and its verb has another
("Add a new Shortcut story" beside "Create a new Shortcut story"), else the tool's action and
object. Values come from
:func:`cartograph.generate.bootstrap.schema.example_arguments`.

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
    """``the current time``, ``a record``, ``all projects``: the object with an article."""
    what = " ".join(objects) if objects else ""
    if not what:
        return ""
    first = what.split()[0]
    if first in _NO_ARTICLE:
        return what
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
) -> list[str]:
    """The example tasks in order of preference (see the module doc): the first, then up to two
    ways to ask it again; a card keeps the first two that share no run with the publisher's
    text."""
    action = verb or "use"
    what = object_phrase(verb, objects) or (identifier_phrase(name) or name)
    said = _request(summary)
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
    synonyms = [s for s in verb_synonyms(verb) if s != action] if verb else []
    if synonyms:
        out.append(f"{synonyms[0].capitalize()} {what}{where}")
    return out


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
    for other in verb_synonyms(base or own):
        if other.endswith(" all") and words[0].lower() in _DETERMINERS:
            other = other.removesuffix(" all")  # "Show all the databases", not "all all"
        if other not in (own, base):
            return f"{other.capitalize()} {rest}"
    return ""


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
