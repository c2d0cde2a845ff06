"""mcp.json reading: shapes, inference, interpolation, public endpoints, and error messages."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cartograph.config import HttpUpstream, StdioUpstream, load_config
from cartograph.errors import ConfigError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def write(tmp_path: Path, data: Any, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_claude_desktop_shape_gives_stdio_and_http_upstreams(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server-fs", "/tmp"], "env": {"A": "1"}},
                "remote": {"url": "https://mcp.example.com/mcp", "headers": {"X-Key": "s3cret"}},
                "legacy": {"url": "https://mcp.example.com/v1/sse"},
                "typed": {"type": "streamable-http", "url": "http://127.0.0.1:9/sse"},
            }
        },
    )
    cfg = load_config(path)
    fs = cfg.servers["fs"]
    assert isinstance(fs, StdioUpstream)
    assert (fs.command, fs.args, fs.env) == ("npx", ("-y", "server-fs", "/tmp"), {"A": "1"})
    remote = cfg.servers["remote"]
    assert isinstance(remote, HttpUpstream)
    assert (remote.transport, remote.headers) == ("http", {"X-Key": "s3cret"})
    assert cfg.servers["legacy"].transport == "sse"  # inferred from the /sse path
    assert cfg.servers["typed"].transport == "http"  # an explicit type wins over the path


def test_vscode_shape_with_comments_and_trailing_commas_loads(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """{
          // VS Code writes JSON with comments
          "servers": {
            "time": {"type": "stdio", "command": "mcp-server-time", "args": ["--tz", "UTC",],},
            /* a remote one */
            "api": {"type": "sse", "url": "https://example.com/events"},
          },
        }""",
    )
    cfg = load_config(path)
    assert cfg.servers["time"].transport == "stdio"
    assert cfg.servers["api"].transport == "sse"


def test_disabled_servers_are_skipped_and_listed(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {"mcpServers": {"on": {"command": "a"}, "off": {"command": "b", "disabled": True}}},
    )
    cfg = load_config(path)
    assert list(cfg.servers) == ["on"]
    assert cfg.disabled == ("off",)


def test_variables_interpolate_from_environment_defaults_and_config_dir(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "s": {
                    "command": "${configDir}/bin/server",
                    "args": ["--token", "${TOKEN}", "--region=${REGION:-eu}", "${env:TOKEN}"],
                    "env": {"HOME": "${configDir}/../home"},
                    "cwd": "work",
                }
            }
        },
    )
    cfg = load_config(path, environ={"TOKEN": "t0k"})
    s = cfg.servers["s"]
    assert isinstance(s, StdioUpstream)
    assert s.command == str(tmp_path / "bin" / "server")
    assert s.args == ("--token", "t0k", "--region=eu", "t0k")
    assert s.env == {"HOME": str(tmp_path.parent / "home")}
    assert s.cwd == str(tmp_path / "work")


def test_public_endpoint_never_shows_env_or_header_values_or_secret_args(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "s": {
                    "command": "srv",
                    "args": ["--api-key", "sk-live-123", "--password=hunter2", "--tok", "${T}"],
                    "env": {"GITHUB_TOKEN": "ghp_secret"},
                },
                "h": {
                    "url": "https://user:pw@api.example.com/mcp?api_key=abc&x=1",
                    "headers": {"Authorization": "Bearer xyz"},
                },
            }
        },
    )
    cfg = load_config(path, environ={"T": "from-env-secret"})
    stdio = cfg.servers["s"].public_endpoint()
    http = cfg.servers["h"].public_endpoint()
    for secret in ("sk-live-123", "hunter2", "ghp_secret", "from-env-secret"):
        assert secret not in stdio
    assert stdio.startswith("srv [5 args sha256:")
    for secret in (":pw@", "abc", "xyz"):
        assert secret not in http
    assert "api.example.com/mcp" in http and "x=1" in http
    assert "ghp_secret" not in repr(cfg.servers["s"]) and "xyz" not in repr(cfg.servers["h"])


def test_a_literal_secret_in_args_never_reaches_the_public_endpoint(tmp_path: Path) -> None:
    """No pattern can tell a secret argument from a path: the identity keeps the command and
    a digest of the arguments as written, never their values."""
    servers = {
        "a": {"command": "srv", "args": ["--user-agent", "sk-live-abcdef0123456789"]},
        "b": {"command": "srv", "args": ["--user-agent", "sk-live-abcdef0123456789"]},
        "c": {"command": "srv", "args": ["--user-agent", "other"]},
        "d": {"command": "srv"},
    }
    cfg = load_config(write(tmp_path, {"mcpServers": servers}), environ={})
    shown = {name: server.public_endpoint() for name, server in cfg.servers.items()}
    assert "sk-live" not in "".join(shown.values()) and "user-agent" not in shown["a"]
    assert shown["a"] == shown["b"] != shown["c"]  # same arguments, same identity
    assert shown["a"].startswith("srv [2 args sha256:") and shown["d"] == "srv"


def test_example_config_loads_and_points_into_the_fleet_dir() -> None:
    cfg = load_config(EXAMPLES / "mcp.json", environ={})
    expected = {"filesystem", "memory", "everything", "sequential-thinking"}
    expected |= {"time", "fetch", "git", "sqlite"}
    assert set(cfg.servers) == expected
    fleet = str((EXAMPLES.parent / ".fleet").resolve())
    for server in cfg.servers.values():
        assert isinstance(server, StdioUpstream)
        assert server.env["HOME"].startswith(fleet)
        assert server.public_endpoint().startswith(("node [", "${configDir}/../.fleet/"))


@pytest.mark.parametrize(
    ("data", "server", "field", "words"),
    [
        ({"mcpServers": {"s": {"type": "websocket", "url": "ws://x"}}}, "s", "type", "unknown"),
        ({"mcpServers": {"s": {"args": ["x"]}}}, "s", "command", "needs 'command'"),
        ({"mcpServers": {"s": {"type": "stdio", "args": []}}}, "s", "command", "missing"),
        ({"mcpServers": {"s": {"command": "x", "args": "-v"}}}, "s", "args", "list"),
        ({"mcpServers": {"s": {"command": "${NOPE}"}}}, "s", "command", "${NOPE}"),
        ({"mcpServers": {"s": {"command": "x", "env": {"K": "${NOPE}"}}}}, "s", "env.K", "NOPE"),
        ({"mcpServers": {"s": {"url": "ftp://x"}}}, "s", "url", "http"),
        ({"mcpServers": {"s": {"command": "x", "url": "http://x"}}}, "s", "type", "both"),
        ({"mcpServers": {"bad name": {"command": "x"}}}, "bad name", None, "rename"),
        (
            {"mcpServers": {"s": {"command": "x", "args": ["${input:key}"]}}},
            "s",
            "args[0]",
            "input",
        ),
        ({"mcpServers": []}, None, "mcpServers", "object"),
        ({"tools": {}}, None, None, "mcpServers"),
    ],
)
def test_config_errors_name_the_file_server_and_field(
    tmp_path: Path, data: Any, server: str | None, field: str | None, words: str
) -> None:
    path = write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    err = info.value
    assert err.file == str(path)
    assert err.server == server
    assert err.field == field
    assert words in str(err)
    assert err.exit_code == 2


def test_bad_json_error_gives_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "mcpServers": {\n    "s": {"command": "x",,}\n  }\n}')
    with pytest.raises(ConfigError, match="line 3"):
        load_config(path)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "absent.json")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=30,
)
FIELDS = st.sampled_from(["command", "args", "env", "cwd", "url", "headers", "type", "disabled"])
SERVER = st.dictionaries(FIELDS, JSON | st.text(alphabet="${}:-abcAB/ ", max_size=16), max_size=6)
CONFIG = (
    st.fixed_dictionaries(
        {},
        optional={"mcpServers": st.dictionaries(st.text(max_size=10), SERVER | JSON, max_size=3)},
    )
    | JSON
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=CONFIG)
def test_no_json_input_raises_anything_but_config_error(tmp_path: Path, data: Any) -> None:
    path = write(tmp_path, data, "fuzz.json")
    try:
        cfg = load_config(path, environ={"A": "1"})
    except ConfigError:
        return
    for server in cfg.servers.values():
        server.public_endpoint()


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_no_bytes_raise_anything_but_config_error(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "fuzz.json"
    path.write_bytes(raw)
    with contextlib.suppress(ConfigError):
        load_config(path, environ={})
