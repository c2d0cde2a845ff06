"""Through the proxy: the reorder stage is on by default and status names its model; the
workspace's ``rerank`` setting turns the cross-encoder on in its place; a damaged second model
costs its stage only, never discover."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest
from proxykit import Env, connected, data

from cartograph.index import packaged, reorder, reorder_vectors
from cartograph.index.reorder import REORDER_ENV, REORDER_MODEL
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
    monkeypatch.delenv(REORDER_ENV, raising=False)
    _plain, before = await discover_and_status(env)
    env.ws.config_file.write_text(json.dumps({"rerank": True}))
    found, after = await discover_and_status(env)
    assert "reranker" not in before["index"]
    assert before["index"]["reorder"].startswith(f"cartograph/{REORDER_MODEL}@")
    assert (env.ws.root / "index-reorder" / "vectors.npy").is_file()
    assert after["index"]["reranker"].startswith(f"cartograph/{RERANKER}@")
    assert "reorder" not in after["index"]  # one second model at a time
    assert len(found["tools"]) == 3


async def test_the_setting_turns_the_reorder_off(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REORDER_ENV, raising=False)
    env.ws.config_file.write_text(json.dumps({"reorder": False}))
    found, status = await discover_and_status(env)
    assert "reorder" not in status["index"] and len(found["tools"]) == 3


async def test_a_damaged_trained_model_costs_the_reorder_only(
    env: Env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shutil.copytree(packaged.models_dir(), tmp_path / "models")
    (tmp_path / "models" / REORDER_MODEL / "model.onnx").write_bytes(b"not a model")
    monkeypatch.setattr(packaged, "models_dir", lambda: tmp_path / "models")
    monkeypatch.setattr(reorder, "_embedders", {})  # loaded by other tests
    monkeypatch.delenv(REORDER_ENV, raising=False)
    found, status = await discover_and_status(env)
    assert len(found["tools"]) == 3
    assert "reorder" not in status["index"] and status["index"]["method"] == "hybrid"
    assert "does not reorder" in caplog.text and "model.onnx" in caplog.text


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


async def test_closing_the_proxy_stops_the_background_embedding(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(REORDER_ENV, raising=False)
    monkeypatch.setattr(reorder, "WAIT_BELOW", 0)  # every document is embedded in the background
    monkeypatch.setattr(reorder_vectors, "CHUNK", 1)
    workers: list[threading.Thread] = []
    attach = reorder.attach_reorderer

    def recorded(*args, **kwargs):
        worker = attach(*args, **kwargs)
        if worker is not None:
            workers.append(worker)
        return worker

    monkeypatch.setattr(reorder, "attach_reorderer", recorded)
    proxy = env.proxy()
    async with connected(proxy) as client:
        found = data(await client.call_tool("discover", {"task": "echo some text back", "k": 3}))
    assert len(found["tools"]) == 3
    assert proxy.resolver.closing.is_set()
    assert len(workers) == 1 and not workers[0].daemon
    workers[0].join(timeout=60)
    assert not workers[0].is_alive()
