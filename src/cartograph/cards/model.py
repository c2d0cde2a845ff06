"""The capability card: what the operator says a server and each of its tools are for.

A card is the only text ranking reads. It is written by the operator's generator (never the
publisher's copy verbatim), carries the tool input schemas it was generated from (so discover and
call use signed schemas only), and is sealed with Ed25519 over its RFC 8785 canonical form
without the ``signature`` block (see :mod:`cartograph.cards.seal`).

A card may also hold the server's prompts, resources and resource templates (``prompts``,
``resources``, ``resource_templates``), each with the operator's own summary and the hashes of
what the publisher sent, for the drift guard. They are optional: a card that has none of them
signs and digests exactly as a card written before they existed (:meth:`Card.unsigned_payload`
leaves them out while they are empty), so every older signed card still verifies. A tool's
``output_schema`` (and its hash) is optional the same way: left out while None.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ToolExample(_Strict):
    """One usage example: a task in plain words and the arguments that would serve it."""

    task: str
    arguments: dict[str, Any]


class ToolEntry(_Strict):
    """The operator's card entry for one tool of the server."""

    name: str = Field(min_length=1)
    title: str | None = None
    summary: str = Field(min_length=1, description="Operator-written, one or two sentences.")
    usage: str = Field(default="", description="When to use it, what it needs, what it returns.")
    examples: list[ToolExample] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list, description="A few topic words.")
    keywords: list[str] = Field(
        default_factory=list,
        description="Ranking-only words (product names, synonyms, hints): read by the lexical "
        "index, never shown to an agent.",
    )
    input_schema: dict[str, Any] = Field(default_factory=dict)
    input_schema_hash: str
    description_hash: str = Field(description="sha256 of the publisher description (hint only).")
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = Field(
        default=None, description="The tool's outputSchema as sent; None when it has none."
    )
    output_schema_hash: str | None = Field(
        default=None, description="sha256 of the outputSchema as sent (the drift guard's)."
    )
    generator: str = Field(description="Which generator wrote this entry, e.g. 'bootstrap/1'.")
    dropped: list[str] = Field(
        default_factory=list, description="Model-directed publisher text that was dropped."
    )


class PromptArgument(_Strict):
    """One argument of a prompt: its name, whether it is required, the operator's phrase."""

    name: str = Field(min_length=1)
    required: bool = False
    summary: str = ""


class PromptEntry(_Strict):
    """The operator's card entry for one prompt of the server (prompts/list)."""

    name: str = Field(min_length=1)
    summary: str = Field(min_length=1, description="Operator-written, never the publisher's.")
    arguments: list[PromptArgument] = Field(default_factory=list)
    arguments_hash: str = Field(description="sha256 of the prompt's arguments as sent.")
    description_hash: str = Field(description="sha256 of the publisher description (hint only).")
    generator: str


class ResourceEntry(_Strict):
    """The operator's card entry for one resource (``uri``) or resource template
    (``uri_template``) of the server."""

    uri: str | None = None
    uri_template: str | None = None
    name: str = Field(min_length=1)
    summary: str = Field(min_length=1, description="Operator-written, never the publisher's.")
    mime_type: str | None = None
    shape_hash: str = Field(description="sha256 of name, URI (template) and mimeType as sent.")
    description_hash: str = Field(description="sha256 of the publisher description (hint only).")
    generator: str

    @property
    def address(self) -> str:
        """The upstream URI, or URI template, this entry stands for."""
        return self.uri if self.uri is not None else str(self.uri_template)


class Identity(_Strict):
    """Who the server is and how it is reached."""

    server: str = Field(min_length=1)
    transport: Literal["stdio", "http", "sse", "unknown"] = "unknown"
    endpoint: str | None = Field(default=None, description="Command line or URL (no secrets).")
    publisher: str | None = None
    package: str | None = None
    version: str | None = None


class Capability(_Strict):
    """What the server as a whole is for."""

    summary: str = Field(min_length=1)
    usage: str = ""
    domains: list[str] = Field(default_factory=list)


class Provenance(_Strict):
    """How and from what this card was generated."""

    generator: str
    generator_version: str
    model: str | None = None
    created_at: str
    tools_list_hash: str = Field(description="sha256 of canonical JSON of tools/list as sent.")
    snapshot_hash: str | None = None
    instructions_hash: str | None = None
    listings_hash: str | None = Field(
        default=None,
        description="sha256 of prompts/list, resources/list and resources/templates/list as "
        "sent; None when they were not recorded or empty (the card attests no prompts or "
        "resources, and reads as a card written before they existed).",
    )


class Signature(_Strict):
    """Ed25519 over the canonical card without this block."""

    alg: Literal["Ed25519"] = "Ed25519"
    key_id: str
    value: str = Field(description="base64url signature, no padding.")
    signed_at: str


class Card(_Strict):
    """A signed capability card for one upstream server."""

    schema_version: Literal[1] = SCHEMA_VERSION
    identity: Identity
    capability: Capability
    tools: list[ToolEntry]
    provenance: Provenance
    prompts: list[PromptEntry] = Field(default_factory=list)
    resources: list[ResourceEntry] = Field(default_factory=list)
    resource_templates: list[ResourceEntry] = Field(default_factory=list)
    signature: Signature | None = None

    @property
    def server(self) -> str:
        return self.identity.server

    def tool(self, name: str) -> ToolEntry | None:
        for entry in self.tools:
            if entry.name == name:
                return entry
        return None

    def prompt(self, name: str) -> PromptEntry | None:
        return next((p for p in self.prompts if p.name == name), None)

    def resource(self, uri: str) -> ResourceEntry | None:
        return next((r for r in self.resources if r.uri == uri), None)

    def template(self, uri_template: str) -> ResourceEntry | None:
        return next((r for r in self.resource_templates if r.uri_template == uri_template), None)

    @property
    def attests_listings(self) -> bool:
        """Whether the card was made from a recorded prompts/resources listing."""
        return self.provenance.listings_hash is not None

    def unsigned_payload(self) -> dict[str, Any]:
        """The JSON object the signature covers: the card without its signature block.

        The optional listing fields and an empty ``keywords`` list are left out while empty, and
        a tool's output schema fields while None, so a card without them has the payload (and
        digest, and signature) it had before they existed."""
        payload = self.model_dump(mode="json", exclude={"signature"})
        for key in _OPTIONAL_LISTS:
            if not payload[key]:
                del payload[key]
        for tool in payload["tools"]:
            for key in _OPTIONAL_TOOL_FIELDS:
                if tool[key] is None:
                    del tool[key]
        if payload["provenance"]["listings_hash"] is None:
            del payload["provenance"]["listings_hash"]
        for tool in payload["tools"]:
            if not tool.get("keywords"):
                tool.pop("keywords", None)
        return payload

    def stored_payload(self) -> dict[str, Any]:
        """The whole card as stored: :meth:`unsigned_payload` and the signature block."""
        payload = self.unsigned_payload()
        payload["signature"] = self.signature.model_dump(mode="json") if self.signature else None
        return payload


_OPTIONAL_LISTS = ("prompts", "resources", "resource_templates")
_OPTIONAL_TOOL_FIELDS = ("output_schema", "output_schema_hash")
