"""Card entries for a server's prompts, resources and resource templates (bootstrap generator).

Each entry's summary is written in the operator's voice from the item's name, its arguments or
its URI variables and MIME type, and the salient content words of the publisher description (a
hint only, model-directed text dropped first); a summary that would share a run of
:data:`~cartograph.generate.bootstrap.tool.MAX_SHARED_RUN` words with the publisher's text
loses its hint words. The hashes of what was sent go with each entry, for the drift guard
(:mod:`cartograph.gateway.drift`), hashed by :mod:`cartograph.cards.listing`. Pure: same input,
same entries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cartograph.cards.listing import description_hash, prompt_shape, resource_shape
from cartograph.cards.model import PromptArgument, PromptEntry, ResourceEntry
from cartograph.generate.bootstrap.identity import Product
from cartograph.generate.bootstrap.runs import publisher_grams, shares_run
from cartograph.generate.text import (
    content_words,
    filter_directives,
    identifier_phrase,
    split_identifier,
)
from cartograph.upstream.snapshot import ServerSnapshot

_HINTS = 8
_VARIABLE = re.compile(r"\{[+#./;?&]?([A-Za-z0-9_,.*]+)\}")


@dataclass(frozen=True)
class ListingEntries:
    """The card's ``prompts``, ``resources`` and ``resource_templates`` entries."""

    prompts: list[PromptEntry]
    resources: list[ResourceEntry]
    resource_templates: list[ResourceEntry]


def listing_entries(server: ServerSnapshot, product: Product, generator: str) -> ListingEntries:
    """The card entries of ``server``'s recorded prompts, resources and resource templates."""
    return ListingEntries(
        prompts=[prompt_entry(p, product, generator) for p in server.prompts or []],
        resources=[resource_entry(r, product, generator) for r in server.resources or []],
        resource_templates=[
            resource_entry(t, product, generator) for t in server.resource_templates or []
        ],
    )


def prompt_entry(prompt: dict[str, Any], product: Product, generator: str) -> PromptEntry:
    name = str(prompt["name"])
    raw_args = prompt.get("arguments")
    arguments = [
        PromptArgument(
            name=str(a["name"]),
            required=a.get("required") is True,
            summary=_argument_summary(a),
        )
        for a in (raw_args if isinstance(raw_args, list) else [])
        if isinstance(a, dict) and isinstance(a.get("name"), str) and a["name"]
    ]
    if arguments:
        takes = "; takes " + ", ".join(
            f"{identifier_phrase(a.name) or a.name} ({'required' if a.required else 'optional'})"
            for a in arguments
        )
    else:
        takes = "; takes no arguments"
    head = f"{_article(product.display)} prompt template: {identifier_phrase(name) or name}"
    summary = _guarded(prompt, product, name, head, takes + ".")
    return PromptEntry(
        name=name,
        summary=summary,
        arguments=arguments,
        arguments_hash=prompt_shape(prompt),
        description_hash=description_hash(prompt),
        generator=generator,
    )


def resource_entry(item: dict[str, Any], product: Product, generator: str) -> ResourceEntry:
    uri = item.get("uri")
    template = item.get("uriTemplate")
    address = str(uri if isinstance(uri, str) else template)
    name = item.get("name")
    name = name if isinstance(name, str) and name else address
    mime = item.get("mimeType")
    mime = mime if isinstance(mime, str) and mime else None
    kind = "resource" if isinstance(uri, str) else "resource template"
    head = f"{_article(product.display)} {kind}: {identifier_phrase(name) or name}"
    tail = f" ({mime})" if mime else ""
    if not isinstance(uri, str):
        variables = _VARIABLE.findall(address)
        if variables:
            phrases = (identifier_phrase(v) or v for v in variables)
            tail += "; fill in " + ", ".join(phrases)
    return ResourceEntry(
        uri=uri if isinstance(uri, str) else None,
        uri_template=None if isinstance(uri, str) else address,
        name=name,
        summary=_guarded(item, product, name, head, tail + "."),
        mime_type=mime,
        shape_hash=resource_shape(item),
        description_hash=description_hash(item),
        generator=generator,
    )


def _guarded(item: dict[str, Any], product: Product, name: str, head: str, tail: str) -> str:
    """``head``, the description's hint words, ``tail``: without the hints when they would
    repeat a run of the publisher's words (then in sorted order, then none)."""
    description = item.get("description")
    kept = filter_directives(description if isinstance(description, str) else None).kept
    skip = {*split_identifier(name), *product.words}
    hints = content_words(kept, limit=_HINTS, exclude=skip)
    title = item.get("title")
    grams = publisher_grams([kept, title if isinstance(title, str) else ""])
    for words in (hints, sorted(hints)):
        if not words:
            break
        text = f"{head}, about {', '.join(words)}{tail}"
        if not shares_run(grams, text):
            return text
    return f"{head}{tail}"


def _argument_summary(argument: dict[str, Any]) -> str:
    """An argument's phrase in the operator's words: its name, then description hint words."""
    name = str(argument["name"])
    description = argument.get("description")
    kept = filter_directives(description if isinstance(description, str) else None).kept
    hints = content_words(kept, limit=4, exclude=split_identifier(name))
    phrase = identifier_phrase(name) or name
    return f"{phrase}: {', '.join(hints)}" if hints else phrase


def _article(product: str) -> str:
    """``A GitHub``, ``An Everything``: the article the product name takes, and the name."""
    return f"{'An' if product[:1].lower() in 'aeio' else 'A'} {product}"
