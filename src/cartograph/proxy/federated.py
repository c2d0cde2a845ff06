"""Upstream prompts, resources and resource templates, federated under server-qualified names.

:class:`Federation` lists what the verified cards hold (the operator's summaries, never the
publisher's text: :mod:`cartograph.generate.bootstrap.extras`) under the names of
:mod:`cartograph.proxy.addresses`, and forwards ``prompts/get`` and ``resources/read`` through
the gateway to the owning upstream; what comes back (prompt messages, resource contents) passes
through as data, only the contents' URIs wrapped like the rest. The same rules hold as for
tools: a server must have a verified card and be in the config; a client's policy decides what
it may see (a prompt is matched as ``server.prompt``, like a tool; resources and templates need
a policy that may see the server at all); what the drift guard holds is neither listed nor
forwarded; every get and read is audited (``prompt`` and ``resource`` events).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from mcp import ClientSession, types
from pydantic import ValidationError

from cartograph.access.guard import Caller
from cartograph.access.policy import ALLOW_ALL
from cartograph.cards.listing import listing_key
from cartograph.cards.model import Card, PromptEntry
from cartograph.errors import (
    AccessDenied,
    ArgumentsInvalid,
    ToolNotFound,
    ToolQuarantined,
    UpstreamError,
)
from cartograph.gateway.base import Ask
from cartograph.gateway.connector import not_configured
from cartograph.proxy.addresses import (
    matches_template,
    prompt_name,
    split_prompt_name,
    split_wrapped,
    unwrap_uri,
    wrap_template,
    wrap_uri,
)
from cartograph.proxy.limits import MAX_NAME_CHARS
from cartograph.upstream.failures import protocol_error

if TYPE_CHECKING:
    from cartograph.proxy.core import Proxy

T = TypeVar("T")

MAX_URI_CHARS = 8 * 1024


class Federation:
    """prompts/list, prompts/get, resources/list, resources/templates/list and resources/read
    for one :class:`~cartograph.proxy.core.Proxy`."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy

    # -- listing ------------------------------------------------------------------------------

    def _cards(self) -> Iterator[tuple[str, Card]]:
        """Each configured server's verified card (without its tools), by server name."""
        catalog = self.proxy.catalog
        catalog.refresh()
        configured = self.proxy.configured
        for server in sorted(catalog.cards):
            head = catalog.cards.head(server)
            if head is not None and (configured is None or server in configured):
                yield server, head

    def _visible(self, caller: Caller | None, server: str, key: str, prompt: str = "") -> bool:
        """Whether ``caller`` may see the entry ``key`` of ``server`` (a prompt is matched by
        its name like a tool, a resource by its server) and the drift guard does not hold it."""
        if caller is not None and caller.policy != ALLOW_ALL:
            policy = caller.policy
            allowed = policy.permits(server, prompt) if prompt else policy.may_see_server(server)
            if not allowed:
                return False
        return self.proxy.guard.held(server, key) is None

    def prompts(self, caller: Caller | None = None) -> list[types.Prompt]:
        return [
            types.Prompt(
                name=prompt_name(server, p.name),
                description=p.summary,
                arguments=[
                    types.PromptArgument(
                        name=a.name, description=a.summary or None, required=a.required
                    )
                    for a in p.arguments
                ],
            )
            for server, card in self._cards()
            for p in card.prompts
            if self._visible(caller, server, listing_key("prompt", p.name), p.name)
        ]

    def resources(self, caller: Caller | None = None) -> list[types.Resource]:
        return [
            types.Resource(
                uri=wrap_uri(server, str(r.uri)),  # pyright: ignore[reportArgumentType]
                name=prompt_name(server, r.name),
                description=r.summary,
                mime_type=r.mime_type,
            )
            for server, card in self._cards()
            for r in card.resources
            if self._visible(caller, server, listing_key("resource", str(r.uri)))
        ]

    def templates(self, caller: Caller | None = None) -> list[types.ResourceTemplate]:
        return [
            types.ResourceTemplate(
                uri_template=wrap_template(server, str(t.uri_template)),
                name=prompt_name(server, t.name),
                description=t.summary,
                mime_type=t.mime_type,
            )
            for server, card in self._cards()
            for t in card.resource_templates
            if self._visible(caller, server, listing_key("template", str(t.uri_template)))
        ]

    # -- prompts/get and resources/read -------------------------------------------------------

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, str] | None,
        *,
        caller: Caller | None = None,
        client: str | None = None,
    ) -> types.GetPromptResult:
        """The upstream's answer to prompts/get for the qualified prompt ``name``."""
        record: dict[str, Any] = {"prompt": name[: MAX_NAME_CHARS * 2]}

        async def run() -> types.GetPromptResult:
            server, entry = self._prompt(name, caller)
            record["server"] = server
            check_prompt_arguments(name, entry, arguments)
            params = types.GetPromptRequestParams(name=entry.name, arguments=arguments)
            request = types.GetPromptRequest(params=params)
            key = listing_key("prompt", entry.name)
            return await self._forward(server, key, f"prompts/get {entry.name!r}", request, client)

        return await self._audited("prompt", record, caller, client, run)

    def _prompt(self, name: str, caller: Caller | None) -> tuple[str, PromptEntry]:
        cards = dict(self._cards())
        restricted = caller is not None and caller.policy != ALLOW_ALL
        hidden = ToolNotFound(f"no prompt {name!r} for you; list them with prompts/list")
        split = split_prompt_name(name, cards) if len(name) <= MAX_NAME_CHARS * 2 else None
        if split is None:
            if restricted:
                raise hidden
            with_prompts = ", ".join(s for s, c in cards.items() if c.prompts) or "none"
            raise ToolNotFound(
                f"no prompt {name[:300]!r}: prompts are named <server>.<prompt> "
                f"(servers with prompts: {with_prompts}); list them with prompts/list"
            )
        server, prompt = split
        if restricted and caller is not None and not caller.policy.permits(server, prompt):
            raise AccessDenied(str(hidden))
        entry = cards[server].prompt(prompt)
        if entry is None:
            if restricted:
                raise hidden
            known = ", ".join(p.name for p in cards[server].prompts[:30]) or "none"
            raise ToolNotFound(
                f"server {server!r} has no prompt {prompt!r} in its signed card (its prompts: "
                f"{known}); list them with prompts/list"
            )
        self._admit(server, listing_key("prompt", prompt), f"prompt {name!r}")
        return server, entry

    async def read_resource(
        self, uri: str, *, caller: Caller | None = None, client: str | None = None
    ) -> types.ReadResourceResult:
        """The upstream's answer to resources/read for the wrapped ``uri``, its contents'
        URIs wrapped again."""
        record: dict[str, Any] = {"uri": uri[:MAX_URI_CHARS]}

        async def run() -> types.ReadResourceResult:
            server, upstream, key = self.resource_target(uri, caller)
            record.update(server=server, upstream_uri=upstream)
            params = types.ReadResourceRequestParams(uri=upstream)  # pyright: ignore[reportArgumentType]
            request = types.ReadResourceRequest(params=params)
            result = await self._forward(
                server, key, f"resources/read {upstream!r}", request, client
            )
            contents = [
                c.model_copy(update={"uri": wrap_uri(server, str(c.uri))}) for c in result.contents
            ]
            return result.model_copy(update={"contents": contents})

        return await self._audited("resource", record, caller, client, run)

    def resource_target(
        self, uri: str, caller: Caller | None, *, admit: bool = True
    ) -> tuple[str, str, str]:
        """(server, upstream URI, drift-guard key) of a wrapped URI the caller may read (with
        ``admit``, refused when the drift guard holds it)."""
        split = split_wrapped(uri) if len(uri) <= MAX_URI_CHARS else None
        if split is None:
            raise ToolNotFound(
                f"resource {uri[:300]!r} is not one of this proxy's: they are named "
                "cartograph://<server>/<upstream URI, percent-encoded>; list them with "
                "resources/list or resources/templates/list"
            )
        server, rest = split
        hidden = ToolNotFound(f"no resource {uri[:300]!r} for you; list them with resources/list")
        if (
            caller is not None
            and caller.policy != ALLOW_ALL
            and not caller.policy.may_see_server(server)
        ):
            raise AccessDenied(str(hidden))
        card = dict(self._cards()).get(server)
        if card is None:
            raise ToolNotFound(f"no signed card for server {server!r}, so none of its resources")
        templates = [str(t.uri_template) for t in card.resource_templates]
        upstream = unwrap_uri(rest, templates)
        if card.resource(upstream) is not None:
            key = listing_key("resource", upstream)
        else:
            template = next((t for t in templates if matches_template(upstream, t)), None)
            if template is None:
                raise ToolNotFound(
                    f"server {server!r} has no resource {upstream[:300]!r} in its signed card, "
                    f"nor a resource template it fits ({len(card.resources)} resources, "
                    f"{len(templates)} templates); list them with resources/list"
                )
            key = listing_key("template", template)
        if admit:
            self._admit(server, key, f"resource {upstream[:300]!r} of server {server!r}")
        return server, upstream, key

    # -- shared -------------------------------------------------------------------------------

    def _admit(self, server: str, key: str, what: str) -> None:
        held = self.proxy.guard.held(server, key)
        if held is not None:
            raise ToolQuarantined(
                f"{what} is quarantined by the drift guard since {held.detected_at}: "
                f"{held.reason}. It cannot be used until the operator reviews it and "
                f"re-attests the server (`cartograph bootstrap --server {server}`)"
            )

    async def _forward(
        self, server: str, key: str, doing: str, request: Any, client: str | None
    ) -> Any:
        proxy = self.proxy
        if proxy.configured is not None and server not in proxy.configured:
            raise not_configured(server, proxy.settings.config_path)
        result_type = (
            types.GetPromptResult
            if isinstance(request, types.GetPromptRequest)
            else types.ReadResourceResult
        )

        async def send(session: ClientSession) -> Any:
            try:
                return await session.send_request(request, result_type)
            except ValidationError as exc:
                raise protocol_error(server, exc, doing) from None

        result = await proxy.gateway.request(server, Ask(doing, key, send), client=client)
        check_size(server, result, proxy.settings.limits.max_result_bytes)
        return result

    async def _audited(
        self,
        event: str,
        record: dict[str, Any],
        caller: Caller | None,
        client: str | None,
        run: Callable[[], Awaitable[T]],
    ) -> T:
        started = time.perf_counter()
        outcome = "ok"
        try:
            return await run()
        except Exception as exc:
            outcome = type(exc).__name__
            raise
        finally:
            self.proxy.audit.write(
                event,
                **record,
                outcome=outcome,
                ms=round((time.perf_counter() - started) * 1000, 2),
                client=caller.name if caller else None,
                session=client,
            )


def check_prompt_arguments(name: str, entry: PromptEntry, arguments: dict[str, str] | None) -> None:
    """Refuse a prompts/get that leaves out an argument the signed card marks required."""
    given = arguments or {}
    missing = [a.name for a in entry.arguments if a.required and a.name not in given]
    if missing:
        takes = ", ".join(f"{a.name}{' (required)' if a.required else ''}" for a in entry.arguments)
        raise ArgumentsInvalid(
            f"prompt {name!r} needs the argument(s) {', '.join(missing)}; it takes {takes}",
            [f"{m}: required" for m in missing],
        )


def check_size(
    server: str, result: types.GetPromptResult | types.ReadResourceResult, limit: int
) -> None:
    """Refuse a prompt or resource reply over the proxy's reply size limit."""
    size = 0
    if isinstance(result, types.ReadResourceResult):
        for c in result.contents:
            size += len(c.text) if isinstance(c, types.TextResourceContents) else len(c.blob)
    else:
        for m in result.messages:
            block = m.content
            if isinstance(block, types.TextContent):
                size += len(block.text)
            elif isinstance(block, types.ImageContent | types.AudioContent):
                size += len(block.data)
            elif isinstance(block, types.EmbeddedResource):
                res = block.resource
                size += (
                    len(res.text) if isinstance(res, types.TextResourceContents) else len(res.blob)
                )
            else:
                size += 256
    if size > limit:
        raise UpstreamError(
            server, f"the reply is {size / 1e6:.1f} MB, over the proxy's {limit / 1e6:.1f} MB limit"
        )
