"""The ``mcp.json`` reader: the shapes users have, turned into typed upstream configs.

Owns parsing (JSON, or JSON with comments and trailing commas as VS Code writes it), the
``${VAR}`` interpolation, the typed models :class:`StdioUpstream` and :class:`HttpUpstream`, and
which transport each model opens (:mod:`cartograph.transport.streams`: an async context manager
yielding the SDK's read/write streams, so session code never knows the transport) and how it
names itself in snapshots and cards without secrets (:mod:`cartograph.transport.endpoint`).

Shapes read::

    {"mcpServers": {name: {...}}}       Claude Desktop, Claude Code, Cursor
    {"servers": {name: {...}}}          VS Code .vscode/mcp.json
    {"mcp": {"servers": {name: {...}}}} VS Code settings.json

A server is ``{"command", "args", "env", "cwd"}`` (stdio) or ``{"url", "headers"}`` (streamable
HTTP, or SSE); ``type`` is one of stdio, http, streamable-http, sse and is inferred when absent
(command -> stdio, url -> http, url whose path ends in ``/sse`` -> sse). ``"disabled": true``
skips a server. Strings may use ``${VAR}``, ``${env:VAR}``, ``${VAR:-default}``, and the
predefined ``${configDir}`` (the config file's directory), ``${workspaceFolder}`` and
``${userHome}``. Every error is a :class:`~cartograph.errors.ConfigError` naming the file, the
server and the field.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Literal, TextIO, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cartograph.errors import ConfigError
from cartograph.transport import streams as transports
from cartograph.transport.endpoint import command_identity, redact_url
from cartograph.transport.streams import TransportStreams

SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
TransportKind = Literal["stdio", "http", "sse"]
"""How an upstream is reached: a child process on stdio, streamable HTTP, or HTTP+SSE."""
TRANSPORT_KINDS: tuple[TransportKind, ...] = get_args(TransportKind)

_TRANSPORTS: dict[str, TransportKind] = {
    "stdio": "stdio",
    "local": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}
_VAR_RE = re.compile(r"\$\{([^}]*)\}")


class StdioUpstream(BaseModel):
    """An upstream started as a child process that speaks MCP on its stdin/stdout."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict, repr=False)
    cwd: str | None = None
    transport: Literal["stdio"] = "stdio"
    # The identity as written in the config, before interpolation: ${VAR} stays a reference.
    endpoint_template: str | None = Field(default=None, repr=False)

    def open_transport(
        self, *, errlog: TextIO | None = None, timeout: float = 30.0
    ) -> AbstractAsyncContextManager[TransportStreams]:
        """Start the process; yields the SDK's streams. ``errlog`` receives the child's stderr."""
        del timeout  # spawning does not wait on the peer
        return transports.stdio_transport(
            self.command,
            self.args,
            self.env,
            self.cwd,
            errlog if errlog is not None else sys.stderr,
        )

    def public_endpoint(self) -> str:
        """How snapshots and cards name it: the command and a digest of the arguments as
        written in the config (``${VAR}`` unexpanded), never env or argument values."""
        if self.endpoint_template is not None:
            return self.endpoint_template
        return command_identity(self.command, list(self.args))


class HttpUpstream(BaseModel):
    """An upstream reached over streamable HTTP (``http``) or the older HTTP+SSE (``sse``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    url: str
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    transport: Literal["http", "sse"] = "http"
    endpoint_template: str | None = Field(default=None, repr=False)

    def open_transport(
        self, *, errlog: TextIO | None = None, timeout: float = 30.0
    ) -> AbstractAsyncContextManager[TransportStreams]:
        """Connect over HTTP; yields the SDK's streams. ``timeout`` bounds connect and writes."""
        del errlog  # no child process, no stderr
        if self.transport == "sse":
            return transports.sse_transport(self.url, self.headers, timeout)
        return transports.http_transport(self.url, self.headers, timeout)

    def public_endpoint(self) -> str:
        """The URL without credentials in it (userinfo password and secret-looking query values)."""
        return (
            self.endpoint_template if self.endpoint_template is not None else redact_url(self.url)
        )


UpstreamConfig = StdioUpstream | HttpUpstream


class FleetConfig(BaseModel):
    """A loaded config: the enabled servers by name, and the names skipped as disabled."""

    model_config = ConfigDict(frozen=True)

    path: Path
    servers: dict[str, UpstreamConfig]
    disabled: tuple[str, ...] = ()


# ------------------------------------------------------------------------------------ loading


def load_config(
    path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None
) -> FleetConfig:
    """Read an ``mcp.json`` file. ``environ`` (default ``os.environ``) feeds ``${VAR}``."""
    file = Path(path)
    where = str(file)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise ConfigError("no such file; pass the path of an mcp.json", file=where) from None
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror or exc}", file=where) from exc
    data = parse_json_text(raw, where)
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object at the top level", file=where)
    section, entries = _servers_section(data, where)
    config_dir = file.resolve().parent
    variables = {
        "configDir": str(config_dir),
        "workspaceFolder": str(config_dir.parent if config_dir.name == ".vscode" else config_dir),
        "userHome": str(Path.home()),
    }
    env = os.environ if environ is None else environ
    servers: dict[str, UpstreamConfig] = {}
    disabled: list[str] = []
    for name, entry in entries.items():
        if not SERVER_NAME_RE.match(name):
            raise ConfigError(
                "server names must match [A-Za-z0-9._-]{1,64} so tool names stay valid; rename it",
                file=where,
                server=name,
            )
        if not isinstance(entry, dict):
            raise ConfigError(f"expected an object under {section!r}", file=where, server=name)
        if entry.get("disabled") is True:
            disabled.append(name)
            continue
        ctx = _Ctx(where, name, variables, env)
        servers[name] = _build_server(ctx, entry)
    return FleetConfig(path=file, servers=servers, disabled=tuple(disabled))


def parse_json_text(raw: bytes, where: str) -> Any:
    """Parse JSON, falling back to JSONC (comments, trailing commas); errors name the line."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", file=where) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as first:
        try:
            return json.loads(_strip_jsonc(text))
        except (ValueError, RecursionError):
            pass
        raise ConfigError(
            f"not valid JSON at line {first.lineno} column {first.colno}: {first.msg}", file=where
        ) from None
    except (ValueError, RecursionError) as exc:  # huge integers, absurd nesting
        raise ConfigError(f"not usable JSON: {exc}", file=where) from None


def _strip_jsonc(text: str) -> str:
    """Blank out // and /* */ comments and drop trailing commas, keeping line numbers."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _servers_section(data: dict[str, Any], where: str) -> tuple[str, dict[str, Any]]:
    for key in ("mcpServers", "servers"):
        if key in data:
            value = data[key]
            if not isinstance(value, dict):
                raise ConfigError("expected an object of servers", file=where, field=key)
            return key, value
    nested = data.get("mcp")
    if isinstance(nested, dict) and "servers" in nested:
        value = nested["servers"]
        if not isinstance(value, dict):
            raise ConfigError("expected an object of servers", file=where, field="mcp.servers")
        return "mcp.servers", value
    raise ConfigError(
        "no 'mcpServers' (Claude, Cursor) or 'servers' (VS Code) object at the top level",
        file=where,
    )


class _Ctx:
    """Where we are (for messages) and what variables exist (for interpolation)."""

    def __init__(
        self, file: str, server: str, variables: dict[str, str], env: Mapping[str, str]
    ) -> None:
        self.file, self.server, self.variables, self.env = file, server, variables, env

    def error(self, message: str, field: str | None = None) -> ConfigError:
        return ConfigError(message, file=self.file, server=self.server, field=field)

    def string(self, value: Any, field: str) -> str:
        """A string field (numbers and booleans tolerated, as JSON configs often hold them)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float | str):
            return str(value)
        raise self.error(f"expected a string, got {type(value).__name__}", field)

    def expand(self, value: str, field: str) -> str:
        def replace(match: re.Match[str]) -> str:
            body = match.group(1)
            name, sep, default = body.partition(":-")
            if name.startswith("env:"):
                name = name[4:]
            elif name.startswith("input:"):
                raise self.error(
                    f"${{{body}}} asks for an interactive input, which Cartograph cannot show; "
                    f"use ${{env:NAME}} and set NAME in the environment",
                    field,
                )
            if name in self.variables:
                return self.variables[name]
            if name in self.env:
                return self.env[name]
            if sep:
                return default
            raise self.error(
                f"variable ${{{name}}} is not defined; set it in the environment "
                f"or write ${{{name}:-default}}",
                field,
            )

        if "${" in value and "}" not in value[value.index("${") :]:
            raise self.error("unclosed '${' in value", field)
        expanded = _VAR_RE.sub(replace, value)
        if value.startswith(("${configDir}", "${workspaceFolder}", "${userHome}")):
            expanded = os.path.normpath(expanded)  # "${configDir}/../x" -> a clean absolute path
        return expanded


def _build_server(ctx: _Ctx, entry: dict[str, Any]) -> UpstreamConfig:
    kind = _transport_of(ctx, entry)
    try:
        if kind == "stdio":
            return _build_stdio(ctx, entry)
        return _build_http(ctx, entry, kind)
    except ValidationError as exc:  # our checks run first; this is a safety net
        raise ctx.error(f"invalid server entry: {exc.errors()[0]['msg']}") from None


def _transport_of(ctx: _Ctx, entry: dict[str, Any]) -> TransportKind:
    declared = entry.get("type", entry.get("transport"))
    if declared is not None:
        if not isinstance(declared, str) or declared.lower() not in _TRANSPORTS:
            raise ctx.error(
                f"unknown transport {declared!r}; use one of stdio, http, streamable-http, sse",
                "type",
            )
        return _TRANSPORTS[declared.lower()]
    has_command, has_url = "command" in entry, "url" in entry or "serverUrl" in entry
    if has_command and has_url:
        raise ctx.error("has both 'command' and 'url'; keep one, or set 'type'", "type")
    if has_command:
        return "stdio"
    if has_url:
        url = entry.get("url", entry.get("serverUrl"))
        if isinstance(url, str) and urlsplit(url).path.rstrip("/").endswith("/sse"):
            return "sse"
        return "http"
    raise ctx.error("needs 'command' (a local server) or 'url' (a remote one)", "command")


def _build_stdio(ctx: _Ctx, entry: dict[str, Any]) -> StdioUpstream:
    if "envFile" in entry:
        raise ctx.error("'envFile' is not supported; put the variables in 'env'", "envFile")
    raw_command = entry.get("command")
    if raw_command is None or (isinstance(raw_command, str) and not raw_command.strip()):
        raise ctx.error("missing the command that starts the server", "command")
    command_tpl = ctx.string(raw_command, "command")
    raw_args = entry.get("args", [])
    if raw_args is None:
        raw_args = []
    if not isinstance(raw_args, list):
        raise ctx.error("expected a list of strings", "args")
    args_tpl = [ctx.string(a, f"args[{i}]") for i, a in enumerate(raw_args)]
    command = ctx.expand(command_tpl, "command")
    if not command.strip() or "\0" in command:
        raise ctx.error("the command is empty or holds a NUL byte after interpolation", "command")
    args = tuple(ctx.expand(a, f"args[{i}]") for i, a in enumerate(args_tpl))
    env = _string_map(ctx, entry.get("env"), "env")
    cwd: str | None = None
    if entry.get("cwd") is not None:
        cwd = ctx.expand(ctx.string(entry["cwd"], "cwd"), "cwd")
        if not os.path.isabs(cwd):
            cwd = str(Path(ctx.variables["configDir"]) / cwd)
    return StdioUpstream(
        name=ctx.server,
        command=command,
        args=args,
        env=env,
        cwd=cwd,
        endpoint_template=command_identity(command_tpl, args_tpl),
    )


def _build_http(ctx: _Ctx, entry: dict[str, Any], kind: TransportKind) -> HttpUpstream:
    field = "url" if "url" in entry or "serverUrl" not in entry else "serverUrl"
    raw_url = entry.get(field)
    if raw_url is None:
        raise ctx.error(f"missing the URL of the {kind} server", "url")
    url_tpl = ctx.string(raw_url, field)
    url = ctx.expand(url_tpl, field)
    try:
        parts = urlsplit(url) if url.isprintable() else None
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise ctx.error(f"expected an http:// or https:// URL, got {url_tpl!r}", field)
    headers = _string_map(ctx, entry.get("headers"), "headers")
    if not all(k.isprintable() and v.isprintable() for k, v in headers.items()):
        raise ctx.error("header names and values must be printable text", "headers")
    transport: Literal["http", "sse"] = "sse" if kind == "sse" else "http"
    return HttpUpstream(
        name=ctx.server,
        url=url,
        headers=headers,
        transport=transport,
        endpoint_template=redact_url(url_tpl),
    )


def _string_map(ctx: _Ctx, value: Any, field: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ctx.error("expected an object of string values", field)
    out: dict[str, str] = {}
    for key, item in value.items():
        if item is None:
            raise ctx.error("null value; remove the entry or give it a string", f"{field}.{key}")
        expanded = ctx.expand(ctx.string(item, f"{field}.{key}"), f"{field}.{key}")
        if "\0" in key or "\0" in expanded or (field == "env" and ("=" in key or not key)):
            raise ctx.error("not a usable name or value (empty, '=' or NUL)", f"{field}.{key}")
        out[key] = expanded
    return out
