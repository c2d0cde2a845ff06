"""The no-verbatim rewriter: the fewest plain edits that leave an operator's sentence without a
run of publisher words, and the small word helpers the sentence writer shares.

:func:`break_runs` finds the first run of ``run`` words that the publisher's texts contain and
edits a word inside it: a plain substitute first ("in" -> "within", "specific" -> "given"), then
moving a closing phrase of means to the front ("With advanced filtering, search ..."), a synonym
for the opening verb, leaving out a bracketed aside, putting "the" after a preposition, leaving
out an article, and a wordier substitute ("and" -> "as well as"); see
:mod:`cartograph.generate.bootstrap.phrasing`. Content words are left out only in ``lenient``
mode, the caller's last resort before a plainer text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cartograph.generate.bootstrap.phrasing import (
    DROPPABLE,
    EXTRA,
    FIRST_VERB,
    SWAPS,
    WORDY,
    base_verb,
)
from cartograph.generate.text import tokenise, wordset

CLAUSE_END = re.compile(r"[,;:]$|^[-–—]$")


def core(word: str) -> str:
    return word.strip("\"'()[]{},.;:!?")


TRAILING = wordset(
    "a an the of to in on at for with from by and or but into as that which is are be "
    "can may its their this these those such like including"
)


_OPEN_ASIDE = re.compile(r"\s*\([^()]*$")
_LIST_INTRO = re.compile(
    r"[\s,]*\b(?:including|such as|e\.g|i\.e|for example|for instance|namely|as follows)"
    r"\W*$",
    re.IGNORECASE,
)


def tidy_end(sentence: str) -> str:
    """``sentence`` without an end left hanging where a list or an aside was cut away
    ("... a file or directory including.", "... queries (e.g.", "... replacement or."): the
    open aside and the word that introduced the list go, then trailing articles and
    conjunctions (a closing preposition stays: "which the user has access to"); ``""`` when
    fewer than two words are left of a sentence that needed it, or when it ends in a choice
    whose list is gone ("Provide exactly one of."). Other sentences are returned as they are."""
    whole = sentence.strip().rstrip(".")
    body = _LIST_INTRO.sub("", _OPEN_ASIDE.sub("", whole))
    words = body.split()
    if len(words) > 1 and core(words[-1]).lower() == "of" and words[-2].lower() in _CHOICE:
        return ""  # "Provide exactly one of: <a list>"
    cut = body != whole
    while words and (
        core(words[-1]).lower() in _DANGLING or not words[-1].strip(",;:-–—") or not core(words[-1])
    ):
        words.pop()
        cut = True
    if not cut:
        return sentence
    if words:
        words[-1] = words[-1].rstrip(",;:-–—")
    if len(words) < 2:
        return ""
    text = " ".join(words)
    return text if text.endswith(("!", "?", ".")) else text + "."


_DANGLING = wordset("and or but nor the a an its their this these those with including such")
_CHOICE = wordset("one any each either both none all some")
"""Before a closing "of", a choice whose list was cut away: nothing of the sentence is kept."""


def trim(words: list[str]) -> list[str]:
    out = list(words)
    out[-1] = out[-1].rstrip(",;:-–—")
    while out and (core(out[-1]).lower() in TRAILING or not core(out[-1])):
        out.pop()
        if out:
            out[-1] = out[-1].rstrip(",;:-–—")
    return out


_A_AN = re.compile(r"\b([Aa]n?)\s+([\w'-]+)")
_VOWEL_SOUND = re.compile(r"^(?:[aeiou]|hour|honest|honou?r|heir)", re.IGNORECASE)
_CONSONANT_SOUND = re.compile(r"^(?:uni|use|usu|uti|eu|one|once|u[bcfhjklmnpqrstvwxyz][aeiou])")


def articles(text: str) -> str:
    """``a``/``an`` agreeing with the next word (after words were left out or swapped)."""

    def fix(m: re.Match[str]) -> str:
        article, word = m.group(1), m.group(2)
        if word.isupper() and len(word) > 1:  # an acronym: "an API", "a URL" are both usual
            return m.group(0)
        vowel = bool(_VOWEL_SOUND.match(word)) and not _CONSONANT_SOUND.match(word.lower())
        want = "an" if vowel else "a"
        if article[0] == "A":
            want = want.capitalize()
        return f"{want} {word}"

    return _A_AN.sub(fix, text)


def break_runs(
    text: str, grams: frozenset[tuple[str, ...]], run: int, *, lenient: bool = False
) -> str | None:
    """``text`` with the fewest plain edits that leave no run of ``run`` words found in
    ``grams``; None when that would take more than a few edits per sentence. ``lenient``
    allows, as a last resort, leaving out a word inside the run (the text may then read
    less well, but it keeps its other words)."""
    words = text.split()
    state = _EditState()
    for _ in range(4 + len(words) // 3):
        hit = _first_run(words, grams, run)
        if hit is None:
            return articles(" ".join(words))
        if not _edit(words, hit, state) and not (lenient and _drop_inside(words, hit)):
            return None
    return None


def _drop_inside(words: list[str], owners: list[int]) -> bool:
    """End the sentence at a comma inside the run where three words or more stay before it
    (what follows was an aside: "..., helpful for debugging ..."), else leave out a small word
    inside the run, else a lower-case word in its middle."""
    if _end_at_comma(words, owners):
        return True
    inner = [i for i in owners if 0 < i < len(words) - 1]
    small = [i for i in inner if core(words[i]).lower() in TRAILING]
    rest = small or [i for i in inner if core(words[i])[:1].islower()]
    if not rest:
        return False
    _drop(words, rest[len(rest) // 2])
    return True


def _sentence_bounds(words: list[str], owners: list[int]) -> tuple[int, int]:
    """First and last word index of the sentence that holds the run ``owners``."""
    start = owners[0]
    while start > 0 and not words[start - 1].endswith((".", "!", "?")):
        start -= 1
    end = owners[-1]
    while end < len(words) - 1 and not words[end].endswith((".", "!", "?")):
        end += 1
    return start, end


def _end_at_comma(words: list[str], owners: list[int]) -> bool:
    start, end = _sentence_bounds(words, owners)
    for i in owners[:-1]:
        if not words[i].endswith(",") or i - start < 2:
            continue
        rest = [core(w).lower() for w in words[i + 1 : end + 1]]
        if any(w.endswith(",") for w in words[i + 1 : end]) or {"and", "or"} & set(rest):
            return False  # a list ("by name, project key or type"), not an aside
        words[i] = words[i].rstrip(",") + "."
        del words[i + 1 : end + 1]
        return True
    return False


@dataclass
class _EditState:
    done: set[int]
    fronted: bool
    inserted: int

    def __init__(self) -> None:
        self.done = set()
        self.fronted = False
        self.inserted = 0


_TAKES_ARTICLE = wordset("for with from in on into about across between")


def _insert_article(words: list[str], owners: list[int], state: _EditState) -> bool:
    """Put "the" between a preposition inside the run and the lower-case noun after it
    ("for specific needs" -> "for the specific needs"); at most twice a text."""
    if state.inserted >= 2:
        return False
    for i in reversed(owners):
        if i + 1 not in owners:
            continue  # "the" after the run's last word would not break it
        nxt = core(words[i + 1])
        if (
            core(words[i]).lower() in _TAKES_ARTICLE
            and not words[i].endswith((",", ".", ";", ":"))
            and nxt.isalpha()
            and nxt.islower()
            and nxt not in TRAILING
            and nxt not in _NO_ARTICLE_AFTER
            and not nxt.endswith("ing")
            and base_verb(nxt) != nxt
        ):
            words.insert(i + 1, "the")
            state.inserted += 1
            state.done = {j + 1 if j > i else j for j in state.done}
            return True
    return False


_NO_ARTICLE_AFTER = wordset(
    "both either neither "
    "all any each every some one two three several many multiple most other another "
    "which what whom whose me him her them us it"
)


def first_clause(text: str) -> str:
    """The sentence's first clause (cut at a comma, semicolon, colon or dash after four or more
    words), as a sentence; ``""`` when it has no such clause."""
    words = text.split()
    for i in range(4, len(words) - 1):
        if CLAUSE_END.search(words[i - 1]):
            cut = trim(words[:i])
            return " ".join(cut) + "." if len(cut) >= 3 else ""
    return ""


def _first_run(words: list[str], grams: frozenset[tuple[str, ...]], run: int) -> list[int] | None:
    """The word indexes that make up the first run found in ``grams``, else None."""
    flat: list[tuple[str, int]] = [(p, i) for i, w in enumerate(words) for p in tokenise(w)]
    for start in range(len(flat) - run + 1):
        if tuple(p for p, _ in flat[start : start + run]) in grams:
            return sorted({i for _, i in flat[start : start + run]})
    return None


def _edit(words: list[str], owners: list[int], state: _EditState) -> bool:
    """Apply the best edit inside ``owners`` (a run); False when none is possible.

    In order: a plain substitute (SWAPS, EXTRA), moving the sentence's last phrase to its
    front ("With advanced filtering, search for papers on arXiv."), a synonym for the opening
    verb, leaving out a bracketed aside, putting "the" after a preposition, leaving out an
    article, and a wordier substitute. Content words are never left out: where none of these
    applies the caller uses a shorter or plainer text."""
    done = state.done
    if _swap(words, owners, done, ((SWAPS, False), (EXTRA, False))):
        return True
    if not state.fronted and _front(words, owners):
        state.fronted = True
        done.clear()
        return True
    if _swap(words, owners, done, ((FIRST_VERB, True),)):
        return True
    if _drop_aside(words, owners) or _insert_article(words, owners, state):
        return True
    droppable = [i for i in owners if not _opens(words, i) and core(words[i]).lower() in DROPPABLE]
    if droppable:
        _drop(words, droppable[-1])
        return True
    return _swap(words, owners, done, ((WORDY, False),))


_FRONTABLE = wordset("with using via through without")
"""Phrases of means or manner: they read as well before the verb as after the object."""
_BOUND_TO_NEXT = wordset("along together")
"""Words that belong to the preposition after them ("along with", "together with")."""


def _front(words: list[str], owners: list[int]) -> bool:
    """Move the last prepositional phrase of the sentence holding the run to its front."""
    start, end = _sentence_bounds(words, owners)
    for p in range(end, start + 2, -1):
        if core(words[p]).lower() not in _FRONTABLE or words[p - 1].endswith((",", ";", ":")):
            continue
        if p - 1 > start + 1 and core(words[p - 1]).lower() in _BOUND_TO_NEXT:
            p -= 1  # "along with ..." moves whole: no "along" left dangling at the end
        tail, head = words[p : end + 1], words[start:p]
        if len(tail) < 3 or len(tail) > 8 or any(w.endswith((",", ";", ":")) for w in tail[:-1]):
            return False
        if not tail[-1].endswith(".") or not head or core(head[0]) != head[0].strip():
            return False
        tail = [*tail[:-1], tail[-1].rstrip(".") + ","]
        tail[0] = tail[0][0].upper() + tail[0][1:]
        first = head[0]
        if first[:1].isupper() and first[1:].islower():
            head[0] = first.lower()
        head[-1] = head[-1].rstrip(",;:") + "."
        words[start : end + 1] = [*tail, *head]
        return True
    return False


def _drop_aside(words: list[str], owners: list[int]) -> bool:
    """Leave out a bracketed aside that the run goes through ("(API: updateCustomView)")."""
    for i in owners:
        if words[i].startswith("("):
            j = i
            while j < len(words) - 1 and ")" not in words[j]:
                j += 1
            if ")" not in words[j] or j - i > 8:
                return False
            tail = words[j][words[j].index(")") + 1 :]
            del words[i : j + 1]
            if i > 0:
                words[i - 1] += tail
            return True
    return False


def _swap(
    words: list[str], owners: list[int], done: set[int], tables: tuple[tuple[dict, bool], ...]
) -> bool:
    for table, first_only in tables:
        for i in reversed(owners):
            low = core(words[i]).lower()
            if i in done or low not in table or first_only != _opens(words, i):
                continue
            if core(words[i])[:1].isupper() and not _opens(words, i):
                continue  # part of a name ("Price List API")
            after = core(" ".join(words[i + 1 : i + 2]))
            if low == "based" and after.lower() != "on":
                continue  # "based on" -> "depending on", but "JavaScript based" stays
            if low == "like" and not after[:1].islower():
                continue  # "like pods" -> "such as pods", but "like Excel's Replace All" stays
            if low == "in" and _IDIOM.search(" ".join(words[i + 1 : i + 5])):
                continue  # "in a detailed manner", "in order to"
            if low == "that" and not _after_a_noun(words, i):
                continue  # "so that", "verify that": not a relative "which"
            if low == "single" and not (i > 0 and core(words[i - 1]).lower() in ("a", "an")):
                continue
            if low == "single":
                words[i - 1] = _replace(words[i - 1], "one")  # "a single x" -> "one x"
                del words[i]
                done.add(i - 1)
                return True
            words[i] = _replace(words[i], table[low])
            done.add(i)
            return True
    return False


def _after_a_noun(words: list[str], i: int) -> bool:
    """Whether word ``i`` can open a relative clause ("the views that"): not at the start of a
    sentence or clause, nor after a verb of saying or checking or a conjunction ("verify that",
    "so that")."""
    if i == 0 or words[i - 1].endswith((".", ",", ";", ":", "!", "?")):
        return False
    return core(words[i - 1]).lower() not in _NOT_BEFORE_RELATIVE


_NOT_BEFORE_RELATIVE = wordset(
    "so such now given provided assuming except ensure ensures ensuring verify verifies "
    "verifying check checks checking confirm confirms confirming sure means indicate indicates "
    "say says show shows validate validates validating test tests"
)

_IDIOM = re.compile(r"\b(?:manner|way|order|detail|general|particular|case|fact|short)\b", re.I)


def _opens(words: list[str], i: int) -> bool:
    """Whether word ``i`` opens a sentence."""
    return i == 0 or words[i - 1].endswith((".", "!", "?"))


def _replace(word: str, substitute: str) -> str:
    bare = core(word)
    if bare[:1].isupper():
        substitute = substitute[0].upper() + substitute[1:]
    return word.replace(bare, substitute, 1)


def _drop(words: list[str], i: int) -> None:
    tail = words[i][len(words[i].rstrip(",;:.")) :]
    del words[i]
    if tail and i > 0:
        words[i - 1] = words[i - 1].rstrip(",;:.") + tail
