"""The capability card: what the operator says a server and each of its tools are for.

A card is the only text ranking reads. It is written by the operator's generator (never the
publisher's copy verbatim), carries the tool input schemas it was generated from (so discover and
call use signed schemas only), and is sealed with Ed25519 over its RFC 8785 canonical form
without the ``signature`` block (see :mod:`cartograph.cards.seal`).
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
    generator: str = Field(description="Which generator wrote this entry, e.g. 'bootstrap/1'.")
    dropped: list[str] = Field(
        default_factory=list, description="Model-directed publisher text that was dropped."
    )


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
    signature: Signature | None = None

    @property
    def server(self) -> str:
        return self.identity.server

    def tool(self, name: str) -> ToolEntry | None:
        for entry in self.tools:
            if entry.name == name:
                return entry
        return None

    def unsigned_payload(self) -> dict[str, Any]:
        """The JSON object the signature covers: the card without its signature block.

        An empty ``keywords`` list is left out, so cards signed before the field existed keep
        verifying."""
        payload = self.model_dump(mode="json", exclude={"signature"})
        for tool in payload["tools"]:
            if not tool.get("keywords"):
                tool.pop("keywords", None)
        return payload
