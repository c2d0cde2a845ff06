"""Unit-length rows: the one normalisation every embedder backend applies to its output."""

from __future__ import annotations

import numpy as np

from cartograph.errors import EmbedderError

__all__ = ["normalise_rows"]


def normalise_rows(vecs: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    vecs = np.asarray(vecs, dtype=np.float32)
    if vecs.ndim != 2:
        raise EmbedderError(f"expected a 2-D array of embeddings, got shape {vecs.shape}")
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return (vecs / np.where(norms > 0, norms, 1.0)).astype(np.float32)
