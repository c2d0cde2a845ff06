"""Word tables for the operator's sentences: which words are verbs (to turn "Retrieves" into
"Retrieve"), what a description says about itself ("This tool allows you to"), and the plain
substitutes that break a run of publisher words without changing what the sentence says.

Data only, plus lookups over it.
"""

from __future__ import annotations

import re

from cartograph.generate.bootstrap.lexicon import VERB_ALIASES, VERB_SYNONYMS
from cartograph.generate.text import wordset

_COMMON_VERBS = wordset(
    """access accept activate adapt add adjust aggregate allocate analyse analyze animate
    annotate answer append apply approve archive arrange ask assess assign attach audit
    authenticate authorize autocomplete back backup ban batch begin block book bookmark boost
    break browse build bulk calculate call cancel capture categorize change chat check
    checkout choose classify clean clear click clone close cluster collect combine comment
    commit compare compile complete compose compress compute configure confirm connect
    consolidate construct contact control convert copy correct count crawl create crop
    customize debug decline decode decrypt deduplicate define delete deliver deploy describe
    design detect determine diagnose diff disable disconnect discover dismiss display
    download draft drag draw duplicate edit embed enable encode encrypt end enrich enroll
    ensure enter estimate evaluate examine exchange execute expand explain explore export
    extend extract fetch fill filter find finish fix flag follow forecast fork format
    forward freeze generate geocode get give go grant group guess handle hide highlight
    hover identify import improve index infer initialize initiate insert inspect install
    integrate interact invite invoke issue join keep kill label launch learn leave like
    link lint list load locate lock log login logout look lookup make manage map mark match
    measure merge migrate mint modify monitor mount move mute name navigate normalize
    notify obtain offer open optimize order organize output overwrite paginate parse pause
    perform pin place plan play plot poll post predict prepare preview print prioritize
    process produce profile promote provide publish pull purchase push put query queue
    rank rate read reboot receive recommend reconcile record recover redact redirect
    refresh refund register reject release reload remind remove rename render reopen
    reorder replace reply report request rerun reschedule reserve reset resize resolve
    restart restore resume retrieve retry return revert review revoke rewrite rotate route
    run sample save scale scan schedule scrape screenshot scroll search select sell send
    serve set share show shut sign simulate skip snapshot solve sort speak split stage
    star start stop store stream submit subscribe suggest summarize summarise suspend
    switch sync synchronize tag take talk terminate test think toggle track trade train
    transcribe transfer transform translate trigger truncate tune type unarchive undo
    unfollow uninstall unlink unlock unmute unpin unpublish unsubscribe unwatch update
    upgrade upload upsert use validate verify view visit vote wait watch write zip conduct
    elevate explain fix gather generate inspect interpret leverage list obtain power research
    retrieve reverse scan scrape surface unstage stage wrap echo stay unlock enhance empower
    bring master meet chat talk shop discover keep enjoy experience craft capture connect
    design develop draw engage improve learn organize personalize plan practice prepare
    protect query receive reach simplify streamline support transform turn unleash
    visualize write accelerate assist automate calculate compare convert customize deliver
    detect elevate embed estimate evaluate explore fetch filter generate guide help host
    identify inspire integrate interpret locate maintain measure monitor navigate optimize
    predict preview provide recommend rewrite schedule score search secure share shorten
    demonstrate showcase sign solve spot submit suggest summarize supercharge sync teach tell track
    translate understand upgrade validate verify watch"""
)

KNOWN_VERBS = frozenset(
    _COMMON_VERBS | {v for v in (*VERB_SYNONYMS, *VERB_ALIASES) if len(v) > 2 and v != "new"}
)
"""Base forms of the action verbs tool descriptions start with."""

_IRREGULAR = {"does": "do", "goes": "go", "has": "have", "is": "be", "sees": "see"}


def sheds_s(word: str) -> bool:
    """Whether ``word`` ends in an -s that an inflection added ("files", "gets"), not one of its
    own ("access", "status", "analysis")."""
    low = word.lower()
    return low.endswith("s") and not low.endswith(("ss", "us", "is"))


def drop_s(word: str) -> str:
    """``word`` without the -s or -es an inflection added, its case kept: "Rebases" -> "Rebase",
    "Pushes" -> "Push", "Copies" -> "Copy", "Finalizes" -> "Finalize", "files" -> "file";
    "status" and "access" as they are."""
    low = word.lower()
    if low.endswith(("ches", "shes", "sses", "xes", "zzes")):
        return word[:-2]
    if low.endswith("ies") and len(low) > 4:
        return word[:-3] + "y"
    if sheds_s(low):
        return word[:-1]
    return word


def base_verb(word: str) -> str | None:
    """The base form of an inflected action verb (``Retrieves`` -> ``retrieve``, ``fetching``
    -> ``fetch``), or None when ``word`` is not a known verb in any form."""
    low = word.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    stems = [low]
    if low.endswith("ies") and len(low) > 4:
        stems.append(low[:-3] + "y")
    if low.endswith("es"):
        stems.append(low[:-2])
    if sheds_s(low):
        stems.append(low[:-1])
    if low.endswith("ing") and len(low) > 5:
        stem = low[:-3]
        stems += [stem, stem + "e"]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            stems.append(stem[:-1])  # "getting" -> "get"
    if low.endswith("ed") and len(low) > 4:
        stems += [low[:-2], low[:-1]]
    found = next((s for s in stems if s in KNOWN_VERBS), None)
    if found is None and low.endswith(("ize", "ise", "ify")) and len(low) > 5 and low.isalpha():
        return low  # "capitalize", "normalise", "classify"
    return found


# A description talking about itself or its caller, before the verb it is about.
_SUBJECT = (
    r"(?:this|the|our)\s+(?:mcp\s+)?(?:tool|function|endpoint|api|method|command|operation|"
    r"action|plugin|service|utility|feature|app|integration|server)"
)
_CALLER = r"(?:you|users?|the\s+user|agents?|the\s+(?:agent|assistant|model|llm)|llms?|ai)"
WRAPPERS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"^{_SUBJECT}\s+(?:is\s+(?:used|designed|meant|intended)\s+to|can\s+be\s+used\s+to|"
        rf"is\s+(?:a\s+way\s+)?to|serves\s+to|is\s+for|will|can|should\s+be\s+used\s+to|"
        rf"(?:allows|lets|enables|helps)\s+{_CALLER}\s+(?:to\s+)?|helps\s+(?:to\s+)?|"
        rf"provides\s+(?:a\s+way|the\s+ability|functionality|the\s+functionality)\s+to|"
        rf"is\s+responsible\s+for|takes\s+care\s+of)\s+",
        rf"^{_SUBJECT}\s+",
        r"^(?:the\s+)?(?:[\w-]+\s+){1,2}(?:command|tool)\s+is\s+responsible\s+for\s+",
        r"^(?:please\s+)?use\s+(?:this\s+)?(?:tool|function|endpoint)?\s*(?:to|for|when)\s+",
        r"^(?:an?\s+)?(?:[\w-]+\s+){0,3}?(?:tool|function|utility|helper|endpoint|api|plugin|"
        r"service|assistant|app)\s+(?:that|which|to|for|used\s+to|designed\s+to)\s+",
        rf"^(?:allows|lets|enables|helps)\s+{_CALLER}\s+(?:to\s+)?",
        r"^(?:allows|enables|lets)\s+(?:for\s+)?",
        r"^(?:is\s+)?(?:used|designed|meant|intended)\s+(?:to|for)\s+",
        r"^(?:can\s+be\s+used|is\s+used)\s+(?:to|for)\s+",
        rf"^{_CALLER}\s+can\s+",
        r"^(?:we|i)\s+(?:can|will|help\s+you)\s+",
        r"^(?:the\s+)?ability\s+to\s+",
        r"^(?:a\s+)?(?:way|means)\s+to\s+",
    )
)

LABELS = re.compile(
    r"^(?:[A-Z][A-Z_ ]{2,24}|(?i:purpose|description|summary|overview|what it does|function|"
    r"tool|action|goal))\s*:\s+|^(?i:otherwise|else|in\s+general)\s*[:,]\s+|"
    r"^(?:[A-Z0-9][\w.-]*\s){0,2}[A-Z0-9][\w.-]*\s+\|\s+(?=\S)"
)
"""A leading section label ("PURPOSE:", "Description:", a product's "Notion | ") before the
sentence it labels, or the connector left when the sentence before it was a rule for the model
("Otherwise: ...")."""

SKIP_OPENERS = re.compile(
    r"^(?:returns?|outputs?|responses?)\s*:|"
    r"^(?:note|notes|example|examples|usage|usage notes|args|arguments|parameters|params|"
    r"inputs?|prerequisites?|requirements?|important|warning|"
    r"caution|tip|tips|when to use|when not to use|use when|use this when|see also|"
    r"workflow|deprecated|limitations?|errors?|best practices?|hint|hints|format|"
    r"rate limits?|requires|authentication|auth)\b"
    r"(?:\s*[:\-–—]|\s+(?:this|that|the|a|an|it|you|if|when|for|to|with|of|on|in)\b)",
    re.IGNORECASE,
)
"""Sentences that do not say what a tool is for (notes, examples, parameter lists, ...)."""

# Plain substitutes that break a run of publisher words without changing what the sentence
# says (see prose.break_runs), tried in this order: SWAPS anywhere, FIRST_VERB for the opening
# verb, then EXTRA, then a DROPPABLE word is left out, then WORDY.
SWAPS: dict[str, str] = {
    "in": "within",
    "within": "in",
    "that": "which",
    "which": "that",
    "using": "with",
    "via": "through",
    "through": "via",
    "specific": "given",
    "specified": "given",
    "particular": "given",
    "certain": "given",
    "given": "chosen",
    "provided": "given",
    "selected": "chosen",
    "multiple": "several",
    "several": "multiple",
    "various": "different",
    "information": "details",
    "info": "details",
    "details": "information",
    "detailed": "full",
    "complete": "full",
    "entire": "whole",
    "whole": "entire",
    "each": "every",
    "can": "may",
    "associated": "linked",
    "related": "linked",
    "corresponding": "matching",
    "relevant": "matching",
    "regarding": "about",
    "concerning": "about",
    "upon": "on",
    "including": "with",
    "includes": "has",
    "contains": "holds",
    "containing": "holding",
    "allowing": "letting",
    "optionally": "possibly",
    "existing": "current",
    "based": "depending",
    "among": "between",
    "single": "one",
    "done": "complete",
    "like": "such as",
}

FIRST_VERB: dict[str, str] = {
    "get": "fetch",
    "fetch": "get",
    "retrieve": "fetch",
    "obtain": "get",
    "list": "show",
    "show": "display",
    "display": "show",
    "view": "see",
    "find": "locate",
    "locate": "find",
    "discover": "find",
    "search": "query",
    "query": "search",
    "create": "make",
    "make": "create",
    "generate": "produce",
    "produce": "generate",
    "update": "modify",
    "modify": "change",
    "change": "alter",
    "edit": "revise",
    "delete": "remove",
    "remove": "delete",
    "add": "insert",
    "insert": "add",
    "calculate": "compute",
    "compute": "calculate",
    "check": "verify",
    "verify": "check",
    "validate": "check",
    "execute": "run",
    "run": "execute",
    "perform": "carry out",
    "start": "begin",
    "begin": "start",
    "initiate": "start",
    "stop": "halt",
    "provide": "give",
    "manage": "handle",
    "handle": "manage",
    "book": "reserve",
    "reserve": "book",
    "send": "deliver",
    "analyze": "examine",
    "analyse": "examine",
    "examine": "inspect",
    "inspect": "examine",
    "extract": "pull",
    "convert": "transform",
    "transform": "convert",
    "determine": "work out",
    "identify": "pick out",
    "predict": "forecast",
    "estimate": "approximate",
    "set": "configure",
    "configure": "set up",
    "read": "load",
    "load": "read",
    "write": "save",
    "save": "store",
    "store": "save",
    "download": "fetch",
    "navigate": "go",
    "explore": "browse",
    "browse": "explore",
    "return": "give",
    "give": "return",
    "track": "follow",
    "monitor": "watch",
    "summarize": "condense",
    "translate": "render",
    "publish": "release",
    "cancel": "call off",
    "close": "shut",
    "move": "shift",
    "copy": "duplicate",
    "merge": "combine",
    "apply": "put",
    "assign": "allot",
    "post": "publish",
    "upload": "transfer",
    "record": "log",
    "log": "record",
    "schedule": "plan",
    "plan": "schedule",
    "compare": "contrast",
    "test": "try",
    "sort": "order",
    "filter": "narrow",
    "invite": "ask",
    "scrape": "extract",
    "crawl": "walk",
    "lookup": "look up",
    "look": "search",
    "mark": "flag",
    "toggle": "switch",
    "echo": "repeat",
    "describe": "detail",
    "duplicate": "copy",
    "archive": "shelve",
}

EXTRA: dict[str, str] = {
    "all": "all the",
    "into": "to",
    "onto": "to",
    "about": "on",
    "also": "as well",
    "every": "each",
    "list": "set",
}

WORDY: dict[str, str] = {"and": "as well as", "from": "out of"}
"""Substitutes that read worse than leaving out an article; tried after DROPPABLE."""

DROPPABLE = wordset("the a an new its their this these those some any also just then very")
"""Words that may be left out when nothing else breaks a publisher run."""

MARKETING = wordset(
    """best ultimate seamless seamlessly exciting powerful easily easy quickly comprehensive
    renowned amazing awesome great perfect simply effortless effortlessly instantly innovative
    incredible fantastic unique magical revolutionary unparalleled wonderful delightful
    beautiful hassle-free cutting-edge state-of-the-art world-class ai-powered robust
    blazing blazingly lightning"""
)
"""Words that sell a tool rather than say what it does."""
