"""The operator's LLM endpoint: settings and one chat-completions call.

Owns :class:`LLMSettings` (read from the ``llm`` block of ``<home>/config.json``, with command-line
overrides) and :class:`ChatClient`, an async client for any OpenAI-compatible
``POST {base_url}/chat/completions`` endpoint. Every request asks for temperature 0 and a fixed
seed, and for structured JSON output: ``response_format`` ``json_schema`` first; a server that
refuses it (a 4xx, or a 5xx naming ``response_format``, as llama-cpp-python answers) is asked
again with ``json_object`` and then with no ``response_format`` (the answer is validated by the
generator either way). HTTP and transport failures become
:class:`~cartograph.errors.GeneratorError`. The API key is read from the environment variable the
settings NAME; the key itself is never stored, logged or put in an error message.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

import httpx

from cartograph.errors import ConfigError, GeneratorError

logger = logging.getLogger(__name__)

RESPONSE_FORMATS: tuple[str, ...] = ("json_schema", "json_object", "none")


@dataclass(frozen=True)
class LLMSettings:
    """Where the operator's model is and how to ask it."""

    base_url: str
    model: str
    api_key_env: str | None = None
    concurrency: int = 2
    allow_fallback: bool = False
    seed: int = 0
    max_tokens: int = 320
    max_attempts: int = 3
    timeout: float = 120.0
    response_format: str = "json_schema"

    def validate(self, source: str = "llm settings") -> LLMSettings:
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"base_url must be an http(s) URL, got {self.base_url!r}",
                file=source,
                field="llm.base_url",
            )
        if not self.model:
            raise ConfigError("model is required", file=source, field="llm.model")
        for name in ("concurrency", "max_tokens", "max_attempts"):
            if int(getattr(self, name)) < 1:
                raise ConfigError("must be at least 1", file=source, field=f"llm.{name}")
        if self.timeout <= 0:
            raise ConfigError("must be positive", file=source, field="llm.timeout")
        if self.response_format not in RESPONSE_FORMATS:
            raise ConfigError(
                f"choose one of {', '.join(RESPONSE_FORMATS)}",
                file=source,
                field="llm.response_format",
            )
        return self

    def api_key(self) -> str | None:
        """The key from the environment variable named by ``api_key_env`` (None if unnamed)."""
        if not self.api_key_env:
            return None
        value = os.environ.get(self.api_key_env)
        if not value:
            raise ConfigError(
                f"environment variable {self.api_key_env} is not set", field="llm.api_key_env"
            )
        return value


_FIELDS: dict[str, type] = {
    "base_url": str,
    "model": str,
    "api_key_env": str,
    "concurrency": int,
    "allow_fallback": bool,
    "seed": int,
    "max_tokens": int,
    "max_attempts": int,
    "timeout": float,
    "response_format": str,
}


def settings_from(
    block: object, overrides: dict[str, Any] | None = None, *, source: str = "config.json"
) -> LLMSettings:
    """:class:`LLMSettings` from the workspace ``llm`` block, then non-None ``overrides``."""
    data: dict[str, Any] = {}
    if block is not None:
        if not isinstance(block, dict):
            raise ConfigError("expected a JSON object", file=source, field="llm")
        for key, value in block.items():
            if key not in _FIELDS:
                raise ConfigError(
                    f"unknown setting; known: {', '.join(_FIELDS)}", file=source, field=f"llm.{key}"
                )
            data[key] = value
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    for key, typ in _FIELDS.items():
        if key not in data or data[key] is None:
            continue
        value = data[key]
        ok = isinstance(value, typ) and not (typ is int and isinstance(value, bool))
        if typ is float and isinstance(value, int) and not isinstance(value, bool):
            data[key], ok = float(value), True
        if not ok:
            raise ConfigError(
                f"expected {typ.__name__}, got {type(value).__name__}",
                file=source,
                field=f"llm.{key}",
            )
    for required in ("base_url", "model"):
        if not data.get(required):
            raise ConfigError(
                f'the llm generator needs {required}: set it in the "llm" block of {source} '
                f"or pass --llm-{required.replace('_', '-')}",
                file=source,
                field=f"llm.{required}",
            )
    return LLMSettings(**data).validate(source)


class EndpointUnreachable(GeneratorError):
    """The endpoint refused or never accepted the connection: later requests would fail too."""


@dataclass(frozen=True)
class ChatReply:
    """The text of the first choice and the tokens the server says it used."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None


@dataclass
class ChatClient:
    """An async client for one OpenAI-compatible chat-completions endpoint."""

    settings: LLMSettings
    _http: httpx.AsyncClient | None = field(default=None, init=False, repr=False)
    _format: str = field(default="json_schema", init=False)

    async def __aenter__(self) -> ChatClient:
        headers = {"Content-Type": "application/json"}
        key = self.settings.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._format = self.settings.response_format
        self._http = httpx.AsyncClient(
            base_url=self.settings.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(self.settings.timeout, connect=min(10.0, self.settings.timeout)),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def complete(
        self, messages: list[dict[str, str]], schema: dict[str, Any], *, server: str, tool: str
    ) -> ChatReply:
        """One chat completion; structured output when the server supports it."""
        if self._http is None:
            raise RuntimeError("ChatClient used outside 'async with'")
        while True:
            body: dict[str, Any] = {
                "model": self.settings.model,
                "messages": messages,
                "temperature": 0,
                "seed": self.settings.seed,
                "max_tokens": self.settings.max_tokens,
                "stream": False,
            }
            mode = self._format
            fmt = _response_format(mode, schema)
            if fmt is not None:
                body["response_format"] = fmt
            try:
                response = await self._http.post("chat/completions", json=body)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                raise EndpointUnreachable(
                    server,
                    f"LLM endpoint {self.settings.base_url} unreachable: "
                    f"{type(exc).__name__}: {exc}",
                    tool=tool,
                ) from exc
            except httpx.HTTPError as exc:
                raise GeneratorError(
                    server,
                    f"LLM endpoint {self.settings.base_url} failed: {type(exc).__name__}: {exc}",
                    tool=tool,
                ) from exc
            if fmt is not None and _refused_format(response) and self._downgrade(mode, response):
                continue
            if response.status_code != 200:
                raise GeneratorError(
                    server,
                    f"LLM endpoint {self.settings.base_url} answered HTTP "
                    f"{response.status_code}: {response.text[:300]}",
                    tool=tool,
                )
            return _parse_reply(response, server=server, tool=tool)

    def _downgrade(self, mode: str, response: httpx.Response) -> bool:
        """Step down from ``mode`` after a refusal; False when no plainer mode is left.

        Concurrent requests refused in the same mode step down once, not once each."""
        if self._format != mode:
            return True  # another request already stepped down: retry with the current mode
        order = list(RESPONSE_FORMATS)
        i = order.index(mode)
        if i + 1 >= len(order):
            return False
        logger.info(
            "LLM endpoint refused response_format %s (HTTP %d: %.200s); trying %s",
            mode,
            response.status_code,
            response.text,
            order[i + 1],
        )
        self._format = order[i + 1]
        return True


def _refused_format(response: httpx.Response) -> bool:
    """A 4xx, or a 5xx that names response_format (llama-cpp-python answers 500 to a request
    body it cannot validate): the request may go through with a plainer structured mode."""
    code = response.status_code
    if code in (401, 403, 404) or code < 400:
        return False
    return code < 500 or "response_format" in response.text


def _response_format(mode: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "tool_card", "strict": True, "schema": schema},
        }
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def _parse_reply(response: httpx.Response, *, server: str, tool: str) -> ChatReply:
    try:
        data = response.json()
        choice = data["choices"][0]
        content = choice["message"].get("content") or ""
        usage = data.get("usage") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise GeneratorError(
            server,
            f"LLM endpoint answered something that is not a chat completion: {response.text[:200]}",
            tool=tool,
        ) from exc
    return ChatReply(
        content=str(content),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        finish_reason=choice.get("finish_reason"),
    )
