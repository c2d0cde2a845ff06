"""Where an index's tool vectors live, and the dense side of search over them.

:class:`ToolVectors` is the seam: :class:`~cartograph.index.tool_index.ToolIndex` asks it for the
query's cosines against every tool and, for Rift and persistence, the whole matrix. The file
index keeps the matrix in memory (:class:`MatrixVectors`); the PostgreSQL store supplies its own
source (:class:`cartograph.storage.pg_index.PgVectors`), which computes cosines in the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


class ToolVectors(Protocol):
    """The (n, d) unit tool vectors of an index, in the index's tool order."""

    def matrix(self) -> np.ndarray:
        """All of them (a source that keeps them elsewhere reads them now)."""
        ...

    def cosine(self, query: np.ndarray) -> np.ndarray:
        """(n,): the cosine of one query (a unit vector) with every tool."""
        ...

    def cosines(self, queries: np.ndarray) -> np.ndarray:
        """(len(queries), n): each query's cosine with every tool (queries are unit rows)."""
        ...

    def stats(self, queries: np.ndarray) -> list[tuple[float, float]] | None:
        """Per query, the exact mean and standard deviation of its cosines over all tools when
        :meth:`cosines` is approximate (hybrid fusion standardises with them); None when exact."""
        ...

    def stored(self, picks: list[int]) -> dict[int, np.ndarray]:
        """The stored vectors of the tool positions ``picks`` (a missing one is left out)."""
        ...


@dataclass(frozen=True)
class MatrixVectors:
    """The tool vectors as an in-memory float32 matrix (the file index)."""

    array: np.ndarray

    def matrix(self) -> np.ndarray:
        return self.array

    def cosine(self, query: np.ndarray) -> np.ndarray:
        return self.array @ query

    def cosines(self, queries: np.ndarray) -> np.ndarray:
        return queries @ self.array.T

    def stats(self, queries: np.ndarray) -> list[tuple[float, float]] | None:
        del queries
        return None

    def stored(self, picks: list[int]) -> dict[int, np.ndarray]:
        return {i: self.array[i] for i in picks}


def unit_rows(rows: np.ndarray) -> np.ndarray:
    """``rows`` scaled to unit length (a zero row stays zero), as float32."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def server_centroids(vecs: np.ndarray, tool_server: np.ndarray, m: int) -> np.ndarray:
    """The unit mean of each of ``m`` servers' tool vectors (``tool_server``: each row's server)."""
    out = np.zeros((m, vecs.shape[1] if vecs.ndim == 2 else 0), dtype=np.float64)
    if m:
        np.add.at(out, tool_server, vecs.astype(np.float64))
        out /= np.maximum(np.bincount(tool_server, minlength=m), 1)[:, None]
    return unit_rows(out.astype(np.float32))
