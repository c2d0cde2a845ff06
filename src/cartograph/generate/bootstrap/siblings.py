"""Sibling contrast: what sets a tool apart from the closest other tool of the same server.

Each tool gets a :class:`Profile` (name words, the words of its purpose sentence, parameters,
read/write mode, one-or-many, version). :func:`closest` finds the sibling whose words overlap
most; when the overlap is high (:data:`CLOSE`), :func:`contrast` writes one sentence that says
what differs, in this order: what each covers ("Unlike list_directory, it also covers sizes"),
read vs write, one vs several, version, then the inputs only this tool takes. A card therefore
depends only on its own server's snapshot.

Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cartograph.generate.bootstrap.phrasing import base_verb
from cartograph.generate.text import STOPWORDS, content_words, split_identifier, wordset

CLOSE = 0.5
"""Jaccard overlap of two tools' words above which the closer one is contrasted."""

_VERSION = re.compile(r"^v\d+$|^\d+$")
_BATCH_WORDS = frozenset({"batch", "bulk", "multiple", "many", "several", "all"})
_MODE_PHRASE = {
    "read": "only reads data",
    "write": "changes data",
    "destructive": "can delete data",
}


@dataclass(frozen=True)
class Profile:
    """The facts about one tool that tell it apart from its siblings."""

    name: str
    verb: str | None
    name_words: tuple[str, ...]
    words: frozenset[str]
    """Content words of the name and the purpose sentence."""
    ordered: tuple[str, ...]
    """The same words in reading order (name first), for writing them out."""
    required: tuple[str, ...]
    optional: tuple[str, ...]
    mode: str
    many: bool | None
    version: str | None
    text: str = ""
    """The name as words and the purpose sentence, lower case (where two words stand side by
    side, :func:`apart` says them as one phrase)."""


def profile(
    name: str,
    verb: str | None,
    sentence: str,
    required: Sequence[str],
    optional: Sequence[str],
    mode: str,
    array_params: Sequence[str] = (),
    drop: Sequence[str] = (),
) -> Profile:
    """The profile of one tool (``drop``: product words that every sibling shares)."""
    name_words = tuple(w for w in split_identifier(name) if w not in drop)
    said = content_words(sentence, exclude=drop)
    ordered = tuple(dict.fromkeys([*(w for w in name_words if w not in STOPWORDS), *said]))
    version = next((w for w in name_words if _VERSION.match(w)), None)
    many: bool | None = None
    if (
        _BATCH_WORDS & set(name_words)
        or array_params
        or any(w.endswith("s") and not w.endswith("ss") for w in name_words[1:])
    ):
        many = True
    elif name_words[1:]:
        many = False
    return Profile(
        name,
        verb,
        name_words,
        frozenset(ordered),
        ordered,
        tuple(required),
        tuple(optional),
        mode,
        many,
        version,
        " ".join([*name_words, *re.findall(r"[a-z0-9]+", sentence.lower())]),
    )


def overlap(a: Profile, b: Profile) -> float:
    if not a.words or not b.words:
        return 0.0
    return len(a.words & b.words) / len(a.words | b.words)


def closest(me: Profile, others: Sequence[Profile]) -> tuple[Profile, float] | None:
    """The sibling with the highest overlap (ties: name order), or None without siblings."""
    best: tuple[Profile, float] | None = None
    for other in others:
        if other.name == me.name:
            continue
        score = overlap(me, other)
        if best is None or score > best[1] or (score == best[1] and other.name < best[0].name):
            best = (other, score)
    return best


def closest_all(profiles: Sequence[Profile]) -> list[tuple[Profile, float] | None]:
    """:func:`closest` for every profile against all the others, through an index of who
    holds which word (a server of 3,000 tools is not 9 million comparisons)."""
    holders: dict[str, list[int]] = {}
    for i, p in enumerate(profiles):
        for w in p.words:
            holders.setdefault(w, []).append(i)
    out: list[tuple[Profile, float] | None] = []
    for i, me in enumerate(profiles):
        shared: dict[int, int] = {}
        for w in me.words:
            for j in holders[w]:
                if j != i:
                    shared[j] = shared.get(j, 0) + 1
        best: tuple[Profile, float] | None = None
        for j, n in shared.items():
            other = profiles[j]
            if other.name == me.name:
                continue
            score = n / (len(me.words) + len(other.words) - n)
            if best is None or score > best[1] or (score == best[1] and other.name < best[0].name):
                best = (other, score)
        if best is None:
            others = [p for p in profiles if p.name != me.name]
            best = (min(others, key=lambda p: p.name), 0.0) if others else None
        out.append(best)
    return out


def apart(
    me: Profile, rivals: Sequence[Profile], lead_words: Sequence[str] = (), product: str = ""
) -> str:
    """The sentence Rift asks for: what sets ``me`` apart from ``rivals`` (tools found too
    close to it, on any server), in its own words only. The rivals are not named and none of
    their words is used: naming them made the card match *their* tasks, and three words kept
    the vector nearest the tool's own (measured for issue 19, docs/rift.md). Against another
    server's tool, ``product`` (its name as users write it, "GitHub") comes first, and
    ``lead_words`` (the product's words, "github", "git", "hub") are not repeated as words it
    covers."""
    taken = {w for r in rivals for w in r.words}
    taken_stems = {_stem(w) for w in taken}
    own = [
        w
        for w in me.ordered
        if w not in taken
        and _stem(w) not in taken_stems
        and not base_verb(w)
        and not any(w in lead for lead in lead_words)
        and (w in me.name_words or not _vague(w))
    ]
    named = bool(product and lead_words)
    facets: list[str] = [f"works in {product}"] if named else []
    leads = [w for w in lead_words if not any(w != o and w in o for o in lead_words)]
    words = list(dict.fromkeys(own))[: max(0, 3 - len(leads)) if named else 3]  # 3 in all
    if words:
        facets.append(f"covers {_join(_phrases(words, me.text))}")
    modes = {r.mode for r in rivals}
    if me.mode in _MODE_PHRASE and me.mode not in modes and "unknown" not in modes:
        facets.append(_MODE_PHRASE[me.mode])
    needs = [p for p in me.required if all(p not in r.required for r in rivals)]
    if needs:
        facets.append(f"needs {_join(needs[:2])}")
    if not facets or not rivals:
        return ""
    return f"What sets it apart: it {_join(facets[: 3 if named else 2])}."


def contrast(me: Profile, other: Profile) -> str:
    """One sentence on what sets ``me`` apart from ``other``, its closest sibling, for the
    usage text ("Unlike list_directory, it also covers sizes."); ``""`` when nothing does."""
    facets: list[str] = []
    own, their = _stems(me.name_words), _stems(other.name_words)
    mine = [w for w in _objects(me) if _stem(w) not in their][:3]
    theirs = [w for w in _objects(other) if _stem(w) not in own][:3]
    if mine and theirs:
        facets.append(f"covers {_join(mine)} rather than {_join(theirs)}")
    elif mine:
        facets.append(f"also covers {_join(mine)}")
    elif theirs:
        facets.append(f"leaves out {_join(theirs)}")
    if me.mode != other.mode and me.mode in _MODE_PHRASE and other.mode != "unknown":
        facets.append(_MODE_PHRASE[me.mode])
    same_object = [_stem(w) for w in _objects(me)] == [_stem(w) for w in _objects(other)]
    if same_object and me.many is not None and other.many is not None and me.many != other.many:
        facets.append("works on several at once" if me.many else "works on one at a time")
    if me.version != other.version and me.version:
        facets.append(f"is the {me.version} version")
    own_required = [p for p in me.required if p not in other.required]
    if own_required and len(facets) < 2:
        facets.append(f"needs {_join(own_required[:3])}")
    own_optional = [p for p in me.optional if p not in other.optional and p not in other.required]
    if own_optional and len(facets) < 2:
        facets.append(f"takes {_join(own_optional[:3])}")  # usage says "It also accepts"
    if not facets:
        return ""
    return f"Unlike {other.name}, it {_join(facets[:2])}."


def _objects(p: Profile) -> list[str]:
    """The name words after the verb, each stem once (``case``/``cases`` count as one)."""
    words = [w for w in p.name_words if w not in STOPWORDS and not _VERSION.match(w)]
    if words and p.verb and words[0] == p.verb:
        words = words[1:]
    out: list[str] = []
    for w in words:
        if _stem(w) not in {_stem(o) for o in out}:
            out.append(w)
    return out


def _stem(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _stems(words: Sequence[str]) -> set[str]:
    return {_stem(w) for w in words}


_VAGUE = wordset(
    "new multiple required optional given specific current existing normal original compact "
    "async various several single additional full basic"
)


def _vague(word: str) -> bool:
    """A word that says nothing of what a tool works on ("new", "required") or a participle of
    its description ("containing", "owned"): left out of a contrast unless the name has it."""
    return word in _VAGUE or (len(word) > 5 and word.endswith(("ing", "ed")))


def _phrases(words: Sequence[str], text: str) -> list[str]:
    """``words`` with each run that stands side by side in ``text`` said as one phrase
    (["rectangular", "area"] in "... within a rectangular area of a table": "rectangular
    area"), so a contrast does not read as a list of loose words."""
    out: list[str] = []
    padded = f" {text} "
    for word in words:
        if out and f" {out[-1].split()[-1]} {word} " in padded:
            out[-1] = f"{out[-1]} {word}"
        else:
            out.append(word)
    return out


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
