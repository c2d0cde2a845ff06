"""The embedder seam: a small Protocol, the spec strings that name a backend, and the loader.

Specs understood by :func:`load_embedder`:

``minilm``                 the default MiniLM backend, :data:`DEFAULT_SPEC` = ``minilm-int8``
``minilm-int8``            all-MiniLM-L6-v2, int8 ONNX on onnxruntime (the stock model):
                           measured against the exact path on LiveMCPBench it ranks the same
                           (top-10 agreement 0.967, equal R@5), costs 13 ms CPU a query instead
                           of 23 ms and embeds 61 instead of 48 documents per CPU-second (as
                           measured then; since 2026-12-07 its weight products run on int8,
                           each text alone, about twice as fast again:
                           :mod:`cartograph.index.onnx_minilm`)
``minilm-tools``           all-MiniLM-L6-v2 fine-tuned here for tool retrieval, int8 ONNX shipped
                           as package data (``index/models/minilm-tools``, sha256-checked at
                           load; model card: docs/models.md); better on BFCL and MetaTool, worse
                           on LiveMCPBench and the union (MCP catalogs), so not the default
``minilm-exact``           all-MiniLM-L6-v2, exact float32 NumPy forward pass
``adapted:<folder>``       a catalog-adapted model written by ``cartograph index tune``
                           (``<home>/models/adapted``; chosen by itself while it is current)
``openai:<model>@<url>``   an OpenAI-compatible ``/embeddings`` endpoint; the key is read from
                           ``$CARTOGRAPH_EMBED_API_KEY`` or ``$OPENAI_API_KEY`` (optional)
``st:<model>``             sentence-transformers, when installed (a local path or a cached name)

Backends whose model embeds queries and documents differently (E5's ``query:``/``passage:``)
also offer ``embed_query``; :func:`embed_queries` uses it when present.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from cartograph.errors import EmbedderError

logger = logging.getLogger(__name__)

DEFAULT_SPEC = "minilm-int8"
SPEC_ENV = "CARTOGRAPH_EMBEDDER"
KNOWN_SPECS = (
    "minilm",
    "minilm-exact",
    "minilm-int8",
    "minilm-tools",
    "adapted:<folder>",
    "openai:<model>@<base_url>",
    "st:<model>",
)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of size ``dim``."""

    name: str
    model: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Embed search queries: through ``embed_query`` when the backend has one, else ``embed``;
    each query first passes :func:`cartograph.index.query.embedding_text`."""
    from cartograph.index.query import embedding_text

    texts = [embedding_text(t) for t in texts]
    fn = getattr(embedder, "embed_query", None)
    vecs = fn(texts) if callable(fn) else embedder.embed(texts)
    return np.asarray(vecs, dtype=np.float32)


def query_and_step_vectors(embedder: Embedder, query: str, steps: list[str]) -> np.ndarray:
    """The query's vector, then its steps' (``steps`` are parts of ``query``).

    A backend with ``embed_spans`` pools each step from the query's own forward pass (one
    model call); others embed the query and each step as separate texts.
    """
    from cartograph.index.query import embedding_text, step_spans

    spans_fn = getattr(embedder, "embed_spans", None)
    if steps and callable(spans_fn):
        text = embedding_text(query)
        spans = step_spans(text, [embedding_text(s) for s in steps])
        if spans is not None:
            return np.asarray(spans_fn(text, spans), dtype=np.float32)
    return embed_queries(embedder, [query, *steps])


_cache: dict[str, Embedder] = {}


def load_embedder(spec: str | None = None) -> Embedder:
    """The embedder named by ``spec`` (else ``$CARTOGRAPH_EMBEDDER``, else the default).

    Local MiniLM backends are loaded once per process and shared.
    """
    spec = (spec or os.environ.get(SPEC_ENV) or DEFAULT_SPEC).strip()
    if spec == "minilm":
        spec = DEFAULT_SPEC
    if spec in _cache:
        return _cache[spec]
    embedder: Embedder
    if spec == "minilm-exact":
        from cartograph.index.minilm import NumpyMiniLM

        embedder = NumpyMiniLM()
    elif spec == "minilm-int8":
        from cartograph.index.onnx_minilm import OnnxMiniLM

        embedder = OnnxMiniLM()
    elif spec == "minilm-tools":
        from cartograph.index.packaged import load_packaged

        embedder = load_packaged(spec)
    elif spec.startswith("adapted:"):
        from cartograph.index.adapt import load_adapted, read_adapted

        model = read_adapted(Path(spec[len("adapted:") :]))
        if model is None:
            raise EmbedderError(
                f"embedder spec {spec!r}: no adapted model there; run `cartograph index tune`"
            )
        embedder = load_adapted(model)
    elif spec.startswith("openai:"):
        from cartograph.index.remote import OpenAIEmbedder

        model, sep, url = spec[len("openai:") :].partition("@")
        if not sep or not model or not url:
            raise EmbedderError(
                f"embedder spec {spec!r}: write it as openai:<model>@<base_url>, e.g. "
                "openai:text-embedding-3-small@https://api.openai.com/v1"
            )
        return OpenAIEmbedder(model=model, base_url=url)
    elif spec.startswith("st:"):
        from cartograph.index.remote import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(spec[len("st:") :])
    else:
        raise EmbedderError(f"unknown embedder {spec!r}; use one of: {', '.join(KNOWN_SPECS)}")
    _cache[spec] = embedder
    logger.info("loaded embedder %s (%s, d=%d)", embedder.name, embedder.model, embedder.dim)
    return embedder
