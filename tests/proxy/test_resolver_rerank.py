"""Through the proxy: the workspace's ``rerank`` setting turns the cross-encoder on, status
names it, and a damaged reranker costs the reranking only, never discover."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from proxykit import Env, connected, data

from cartograph.index import packaged
from cartograph.index.rerank import RERANK_ENV, RERANKER

pytestmark = pytest.mark.anyio


async def discover_and_status(env: Env) -> tuple[dict, dict]:
    async with connected(env.proxy()) as client:
        found = data(await client.call_tool("discover", {"task": "echo some text back", "k": 3}))
        status = data(await client.call_tool("status", {}))
    return found, status


async def test_the_setting_turns_reranking_on_and_status_names_the_model(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(RERANK_ENV, raising=False)
    _plain, before = await discover_and_status(env)
    env.ws.config_file.write_text(json.dumps({"rerank": True}))
    found, after = await discover_and_status(env)
    assert "reranker" not in before["index"]
    assert after["index"]["reranker"].startswith(f"cartograph/{RERANKER}@")
    assert len(found["tools"]) == 3


async def test_a_damaged_reranker_leaves_discover_working(
    env: Env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shutil.copytree(packaged.models_dir(), tmp_path / "models")
    (tmp_path / "models" / RERANKER / "model.onnx").write_bytes(b"not a model")
    monkeypatch.setattr(packaged, "models_dir", lambda: tmp_path / "models")
    monkeypatch.setenv(RERANK_ENV, "1")
    found, status = await discover_and_status(env)
    assert len(found["tools"]) == 3
    assert "reranker" not in status["index"] and status["index"]["method"] == "hybrid"
    assert "discover does not rerank" in caplog.text and "model.onnx" in caplog.text
