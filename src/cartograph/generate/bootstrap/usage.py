"""A tool's usage text and title for the bootstrap generator: what it needs, what it returns
(only where its output schema says so), whether it reads, changes or deletes data (annotations
first, else judged from its name), written as short sentences; and the publisher's title with
model-directed text removed and cut below the verbatim limit.

Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from cartograph.generate.bootstrap.schema import Param
from cartograph.generate.text import filter_directives, tokenise

MAX_TITLE_WORDS = 7
"""A publisher title of more words is cut (or left out): 8 would be a verbatim run."""

# (annotated by the publisher, judged from the name)
_MODE_TEXT = {
    "read": ("It only reads data.", "Judging by its name, it only reads data."),
    "write": ("It changes data.", "Judging by its name, it changes data."),
    "destructive": ("It can delete data.", "Judging by its name, it deletes data."),
    "unknown": ("", ""),
}


def usage_text(
    tool: dict[str, Any],
    params: Sequence[Param],
    mode: str,
    *,
    deprecated: bool = False,
    shown: int = 8,
) -> str:
    """The usage sentences; ``shown`` caps how many parameters are named in each list."""
    required = [p for p in params if p.required]
    optional = [p for p in params if not p.required]
    parts: list[str] = []
    if required:
        named = [f"{p.name} ({p.type})" for p in required[:shown]]
        more = len(required) - len(named)
        parts.append(f"It needs {_join(named, more)}.")
    elif params:
        parts.append("All its inputs are optional.")
    else:
        parts.append("It takes no inputs.")
    if optional and shown:
        named = [p.name for p in optional[:shown]]
        parts.append(f"It also accepts {_join(named, len(optional) - len(named))}.")
    returns = returned_fields(tool)
    if returns and shown:
        parts.append(f"It returns {_join(returns[:shown], len(returns) - shown)}.")
    ann = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    parts.append(_MODE_TEXT[mode][0 if ann else 1])
    if ann and ann.get("idempotentHint") is True and mode != "read":
        parts.append("Repeating a call with the same input is safe.")
    if ann and ann.get("openWorldHint") is True:
        parts.append("It reaches services outside this machine.")
    if deprecated:
        parts.append("Its publisher marks it as deprecated.")
    return " ".join(p for p in parts if p)


def returned_fields(tool: dict[str, Any]) -> list[str]:
    """The top-level field names of the tool's output schema (what it says comes back)."""
    out = tool.get("outputSchema")
    if isinstance(out, dict) and isinstance(out.get("properties"), dict):
        return [str(k) for k in out["properties"]]
    return []


def _join(items: Sequence[str], more: int = 0) -> str:
    items = list(items)
    if more > 0:
        return ", ".join(items) + f" and {more} more"
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


_TITLE_CUT = re.compile(r"\s*(?:\(|,|;|:|\s[-–—|]\s)")


def clean_title(tool: dict[str, Any]) -> tuple[str | None, str | None]:
    """(the title the card may carry, why the publisher's was changed or left out)."""
    title = tool.get("title")
    ann = tool.get("annotations")
    if not isinstance(title, str) and isinstance(ann, dict):
        title = ann.get("title")
    if not isinstance(title, str) or not title.strip():
        return None, None
    kept = " ".join(filter_directives(title).kept.split())
    if not kept:
        return None, "the title was model-directed and was left out"
    if len(tokenise(kept)) <= MAX_TITLE_WORDS:
        return kept, None if kept == " ".join(title.split()) else "model-directed text removed"
    head = _TITLE_CUT.split(kept, maxsplit=1)[0].strip()
    if head and len(tokenise(head)) <= MAX_TITLE_WORDS:
        return head, f"the title was cut to {len(tokenise(head))} words"
    return None, f"the title has {len(tokenise(kept))} words and was left out"
