"""The workspace settings in config.json: typed, old files load, bad fields are named."""

from __future__ import annotations

import json

import pytest

from cartograph.errors import ConfigError
from cartograph.workspace import Workspace, read_settings, update_settings
from cartograph.workspace_settings import WorkspaceSettings


def test_settings_default_when_config_json_is_absent(tmp_path) -> None:
    assert read_settings(Workspace(tmp_path)) == WorkspaceSettings()


def test_an_existing_config_json_loads_and_keeps_keys_this_version_does_not_know(
    tmp_path,
) -> None:
    ws = Workspace(tmp_path)
    old = {"mcp_config": "/etc/mcp.json", "per_client": ["browser"], "theme": "dark"}
    ws.config_file.write_text(json.dumps(old), encoding="utf-8")
    settings = read_settings(ws)
    assert settings.mcp_config == "/etc/mcp.json" and settings.per_client == ["browser"]
    updated = update_settings(ws, embedder="minilm")
    assert updated.embedder == "minilm" and updated.per_client == ["browser"]
    assert json.loads(ws.config_file.read_text(encoding="utf-8")) == {**old, "embedder": "minilm"}


def test_a_malformed_setting_names_the_file_and_the_field(tmp_path) -> None:
    ws = Workspace(tmp_path)
    ws.config_file.write_text('{"per_client": "browser"}', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_settings(ws)
    assert info.value.file == str(ws.config_file) and info.value.field == "per_client"


def test_a_bad_update_is_refused_and_nothing_is_written(tmp_path) -> None:
    ws = Workspace(tmp_path)
    update_settings(ws, mcp_config="/etc/mcp.json")
    before = ws.config_file.read_bytes()
    with pytest.raises(ConfigError, match="mcp_config"):
        update_settings(ws, mcp_config=42)
    assert ws.config_file.read_bytes() == before
