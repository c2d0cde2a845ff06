"""The app factory: settings in, a proxy and its transport's access out, refused early when the
settings contradict each other (before anything listens or an upstream starts)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from proxykit import Env

from cartograph.errors import ConfigError, UsageError
from cartograph.proxy.app import build_app, build_proxy
from cartograph.proxy.settings import ServeSettings
from cartograph.workspace import Workspace, update_settings


def test_no_config_given_or_recorded_says_how_to_give_one(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "home").ensure()
    with pytest.raises(ConfigError, match="pass --config FILE"):
        build_proxy(ws, ServeSettings())


def test_recorded_config_and_stateful_servers_join_the_given_ones(env: Env) -> None:
    config = env.config()
    update_settings(env.ws, mcp_config=str(config), per_client=["calm"])
    proxy = build_proxy(env.ws, ServeSettings(per_client=frozenset({"chaos"}), max_in_flight=0))
    assert proxy.settings.per_client == {"chaos", "calm"}
    assert proxy.settings.limits.max_in_flight == 1  # at least one call per session
    assert proxy.configured == {"chaos", "calm", "crashy"}


def test_stdio_client_runs_under_the_policy_file_given(env: Env, tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"allow": ["chaos.*"]}), encoding="utf-8")
    app = build_app(env.ws, ServeSettings(config=str(env.config()), policy_file=str(policy)))
    assert app.caller is not None and app.caller.name == "stdio"
    assert app.caller.policy.permits("chaos", "echo")
    assert not app.caller.policy.permits("calm", "echo")
    assert app.access is None and app.sock is None


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (ServeSettings(client="desk", policy_file="POLICY"), "not both"),
        (ServeSettings(transport="http", client="desk"), "--client is for stdio"),
        (ServeSettings(transport="http", auth_issuer="https://a.test"), "both --auth-issuer"),
    ],
)
def test_contradicting_settings_are_usage_errors(
    env: Env, tmp_path: Path, settings: ServeSettings, message: str
) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"allow": ["*"]}), encoding="utf-8")
    config = str(env.config())
    fields = {"config": config, **({"policy_file": str(policy)} if settings.policy_file else {})}
    with pytest.raises(UsageError, match=message):
        build_app(env.ws, replace(settings, **fields))


def test_http_app_binds_a_port_and_names_its_public_url(env: Env) -> None:
    settings = ServeSettings(config=str(env.config()), transport="http", port=0, insecure_open=True)
    app = build_app(env.ws, settings)
    assert app.sock is not None and app.access is not None
    try:
        port = app.sock.getsockname()[1]
        assert port > 0 and app.resource == f"http://127.0.0.1:{port}/mcp"
    finally:
        app.sock.close()
