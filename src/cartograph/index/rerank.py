"""The discover reranker: a cross-encoder that reads the task and a card's text together.

Stage one (the index's method, hybrid by default) ranks every tool; the reranker scores the
task against the dense document of each of stage one's top :data:`RERANK_DEPTH` tools (20, so
that it can change the top 5 from deep in the list) and the two are mixed: each score becomes a
z-score over those candidates and the final score is ``mix * reranker + (1 - mix) * stage one``,
``mix`` recorded in the model's manifest (chosen on tune parts; docs/models.md). A search for
more than 20 tools reranks all of them.

The model is ``minilm-rerank``: all-MiniLM-L6-v2 (6 layers) with a one-logit head, trained by
``scripts/train_reranker.py`` on the encoder's training triplets and shipped as int8 ONNX
package data, sha256-checked when first loaded (once a process, like the embedders). Its
manifest's ``"matmul": "int8"`` runs the weight products on int8
(:func:`~cartograph.index.onnx_lean.multiply_int8_weights`). It is off
unless asked for (``discover --rerank``, or ``"rerank": true`` in ``<home>/config.json`` for the
proxy), because it did not measure better than stage one on the tune parts, and it costs about
4 ms a pair at 2.6k tools with int8 products (p50 55 ms with two workers; docs/benchmarks.md,
"Reranker").
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cartograph.envflags import env_flag

if TYPE_CHECKING:
    from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

RERANKER = "minilm-rerank"
RERANK_DEPTH = 20
"""How many of stage one's tools the reranker reads (at least 20: it must be able to lift a
tool from far below the top 5)."""
RERANK_ENV = "CARTOGRAPH_RERANK"
"""``1``/``0`` turns reranking on or off for every command and the proxy (wins over config)."""
WORKERS_ENV = "CARTOGRAPH_RERANK_WORKERS"
"""How many pairs the reranker runs at once (default: the CPUs, at most 4)."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def rerank_workers(workers: int | None = None) -> int:
    """Pairs run at once: ``workers``, else ``$CARTOGRAPH_RERANK_WORKERS``, else the CPUs (at
    most 4). Each pair runs on one onnxruntime thread, so nothing spins while it waits (the
    reason the embedders keep to one thread); a discover's 20 pairs are shared out instead."""
    if workers is None:
        raw = os.environ.get(WORKERS_ENV, "").strip()
        try:
            workers = int(raw) if raw else min(4, usable_cpus())
        except ValueError:
            logger.warning("$%s=%r is not a number; using 1", WORKERS_ENV, raw)
            workers = 1
    return max(1, workers)


class Reranker:
    """A cross-encoder over ONNX: one relevance logit per (query, document) pair."""

    def __init__(
        self,
        folder: Path,
        manifest: dict[str, Any],
        threads: int | None = None,
        int8_matmul: bool | None = None,
        workers: int | None = None,
    ) -> None:
        from cartograph.index.minilm import load_tokenizer
        from cartograph.index.onnx_minilm import cpu_session

        self.folder = folder
        self.manifest = manifest
        self.mix = float(manifest.get("mix", 1.0))
        self.int8_matmul = manifest.get("matmul") == "int8" if int8_matmul is None else int8_matmul
        self.model = f"cartograph/{folder.name}@{manifest['files']['model.onnx'][:12]}"
        self._tok = load_tokenizer(int(manifest.get("max_length", 128)), folder / "tokenizer.json")
        self.workers = rerank_workers(workers)
        self._pool = ThreadPoolExecutor(self.workers, "rerank") if self.workers > 1 else None
        self._sess, self._run_options = cpu_session(
            folder / "model.onnx", threads, int8_matmul=self.int8_matmul
        )

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        """The logit of each document for ``query`` (higher: more relevant).

        Each pair runs alone at its own length: in a padded batch every pair pays for the
        longest one (discover p50 at 2.6k tools 240 -> 198 ms, 9.6k 404 -> 276 ms, the same logits;
        docs/benchmarks.md "Reranker"), and the activations held at once are one pair's a
        worker. The pairs are shared out among :attr:`workers`; a pair's logit does not depend
        on which worker ran it or on the other pairs.
        """
        encs = self._tok.encode_batch([(query, d) for d in documents])
        if self._pool is None or len(encs) < 2:
            return np.asarray([self._logit(e) for e in encs], dtype=np.float64)
        return np.asarray(list(self._pool.map(self._logit, encs)), dtype=np.float64)

    def _logit(self, enc: Any) -> float:
        n = sum(enc.attention_mask)  # the tokenizer pads on the right
        feeds = {
            name: np.asarray([values[:n]], dtype=np.int64)
            for name, values in (
                ("input_ids", enc.ids),
                ("attention_mask", enc.attention_mask),
                ("token_type_ids", enc.type_ids),
            )
        }
        (logits,) = self._sess.run(["logits"], feeds, self._run_options)
        return float(np.asarray(logits).reshape(-1)[0])


_loaded: dict[tuple[Path, int | None, bool | None, int | None], Reranker] = {}


def load_reranker(
    folder: Path | None = None,
    threads: int | None = None,
    int8_matmul: bool | None = None,
    workers: int | None = None,
) -> Reranker:
    """The shipped reranker (or the one in ``folder``), every file checked against its manifest
    on the first load; later loads in the process (the proxy reopens its index whenever the
    cards change) share it. ``int8_matmul`` overrides the manifest's ``matmul`` and ``workers``
    :func:`rerank_workers` (benchmarks)."""
    from cartograph.index.packaged import checked_model, models_dir

    folder = folder or models_dir() / RERANKER
    key = (folder, threads, int8_matmul, workers)
    if key not in _loaded:
        checked = checked_model(RERANKER, folder)
        _loaded[key] = Reranker(folder, checked.manifest, threads, int8_matmul, workers)
    return _loaded[key]


def rerank_wanted(setting: bool | None, flag: bool | None = None) -> bool:
    """Whether discover reranks: the command's flag, else ``$CARTOGRAPH_RERANK``, else the
    workspace's ``rerank`` setting, else off."""
    if flag is not None:
        return flag
    env = env_flag(RERANK_ENV, logger)
    return bool(setting) if env is None else env


def workspace_reranker(ws: Workspace, flag: bool | None = None) -> Reranker | None:
    """The reranker when :func:`rerank_wanted` says so for ``ws`` (else None); raises
    :class:`EmbedderError` naming the file when the shipped model is damaged."""
    from cartograph.workspace import read_settings

    return load_reranker() if rerank_wanted(read_settings(ws).rerank, flag) else None


def _z(values: np.ndarray) -> np.ndarray:
    spread = float(values.std())
    return (values - values.mean()) / spread if spread > 1e-9 else np.zeros_like(values)


def mixed_scores(rerank: np.ndarray, first: np.ndarray, mix: float) -> np.ndarray:
    """``mix`` of the reranker's z-scores plus the rest of stage one's, over the same tools."""
    return mix * _z(rerank) + (1.0 - mix) * _z(first)


def top_indexes(scores: np.ndarray, k: int) -> np.ndarray:
    """The indexes of the ``k`` highest ``scores``, best first (ties in index order)."""
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.lexsort((top, -scores[top]))]


def reranked_top(
    reranker: Reranker,
    query: str,
    text_of: Callable[[int], str],
    scores: np.ndarray,
    k: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The top ``k`` tool indexes after reranking stage one's best :data:`RERANK_DEPTH` (or
    ``k``, if more) by ``scores``, and their mixed scores; ``text_of(i)`` is tool i's document."""
    depth = top_indexes(scores, max(k, RERANK_DEPTH))
    mixed = mixed_scores(
        reranker.score(query, [text_of(int(i)) for i in depth]), scores[depth], reranker.mix
    )
    order = np.argsort(-mixed, kind="stable")[:k]
    return depth[order], mixed[order]
