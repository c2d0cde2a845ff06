"""Server-qualified names for upstream prompts and resources on the proxy's front.

- A prompt is named ``<server>.<prompt>`` (``everything.args-prompt``); a name is split at
  the longest server name with a card that it starts with, so server names may hold dots.
- A resource URI is wrapped as ``cartograph://<server>/<upstream URI, percent-encoded>``
  (``cartograph://everything/demo%3A%2F%2Fresource%2Fstatic%2Fdocument%2Farchitecture.md``):
  every character of the upstream URI that is not unreserved is encoded, so URL normalisation
  on the way (dot segments, case) cannot change which resource is meant.
- A resource template is wrapped the same way, its ``{expressions}`` left as they are, so a
  client expands it as it would the upstream's; :func:`unwrap_uri` matches an expanded URI
  against the server's signed templates and keeps the expanded values exactly as sent.

Pure: nothing here knows about cards beyond the names handed in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote, unquote

SCHEME = "cartograph://"
_EXPRESSION = re.compile(r"\{[^{}]*\}")


def prompt_name(server: str, prompt: str) -> str:
    return f"{server}.{prompt}"


def split_prompt_name(name: str, servers: Iterable[str]) -> tuple[str, str] | None:
    """``(server, prompt)`` for a qualified prompt name, by the longest matching server."""
    best = max((s for s in servers if name.startswith(f"{s}.")), key=len, default=None)
    if best is None:
        return None
    return best, name[len(best) + 1 :]


def wrap_uri(server: str, uri: str) -> str:
    return f"{SCHEME}{quote(server, safe='')}/{quote(uri, safe='')}"


def wrap_template(server: str, template: str) -> str:
    """The template with its literal parts encoded as :func:`wrap_uri` does, expressions kept."""
    parts: list[str] = []
    at = 0
    for match in _EXPRESSION.finditer(template):
        parts.append(quote(template[at : match.start()], safe=""))
        parts.append(match.group(0))
        at = match.end()
    parts.append(quote(template[at:], safe=""))
    return f"{SCHEME}{quote(server, safe='')}/{''.join(parts)}"


def split_wrapped(uri: str) -> tuple[str, str] | None:
    """``(server, the encoded rest)`` of a wrapped URI, or None when it is not one of ours."""
    if not uri.startswith(SCHEME):
        return None
    server, sep, rest = uri[len(SCHEME) :].partition("/")
    if not sep or not server or not rest:
        return None
    return unquote(server), rest


def unwrap_uri(rest: str, templates: Iterable[str]) -> str:
    """The upstream URI behind the encoded ``rest`` of a wrapped URI: when it expands one of
    ``templates`` (the server's upstream URI templates), the template's literal parts decoded
    and the expanded values kept as sent; else the whole of it decoded."""
    for template in templates:
        literals = _EXPRESSION.split(template)
        if len(literals) < 2:
            continue
        pattern = "(.*?)".join(re.escape(quote(lit, safe="")) for lit in literals)
        match = re.fullmatch(pattern, rest, flags=re.DOTALL)
        if match is not None:
            values = match.groups()
            out = [literals[0]]
            for value, literal in zip(values, literals[1:], strict=True):
                out.extend((value, literal))
            return "".join(out)
    return unquote(rest)


def matches_template(uri: str, template: str) -> bool:
    """Whether the upstream ``uri`` is an expansion of the upstream ``template``."""
    literals = _EXPRESSION.split(template)
    pattern = "(.*?)".join(re.escape(lit) for lit in literals)
    return re.fullmatch(pattern, uri, flags=re.DOTALL) is not None
