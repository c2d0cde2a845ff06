"""The workspace settings: the typed model of ``<home>/config.json``.

Read and written by :func:`cartograph.workspace.read_settings` and
:func:`~cartograph.workspace.update_settings` (kept apart from :mod:`cartograph.workspace` so
that importing the workspace, as every CLI command's ``--help`` does, does not load pydantic).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class WorkspaceSettings(BaseModel):
    """``<home>/config.json``: settings the commands record or read (all optional).

    Keys this version does not know are kept as they are (another version may own them).
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    mcp_config: str | None = None
    """The mcp.json the last ``bootstrap --config`` federated; ``serve`` uses it by default."""
    per_client: list[str] = Field(default_factory=list)
    """Stateful upstreams that get one session per MCP client (``serve --per-client``)."""
    embedder: str | None = None
    """The embedder spec of the retrieval index (``index build --embedder``)."""
    rerank: bool | None = Field(default=None, strict=True)
    """Whether discover reranks stage one's top 20 with the cross-encoder (``discover
    --rerank``; the proxy reads it at start). Off when unset."""
    reorder: bool | None = Field(default=None, strict=True)
    """Whether discover puts hybrid's top 5 in the trained encoder's order (``discover
    --reorder``; the proxy reads it at start). On when unset; the reranker, when on, takes its
    place."""
    llm: dict[str, Any] | None = None
    """The llm generator's block (checked field by field by ``generate.llm.client``)."""
    card_history: int | None = None
    """How many versions of each card the store keeps (default: the storage layer's)."""

    @field_validator("card_history", mode="before")
    @classmethod
    def _whole_number(cls, value: object) -> object:
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise ValueError(
                f"card_history must be a whole number of card versions to keep, at least 1 "
                f"(got {value!r})"
            )
        return value
