"""The ranking methods by name, and the default: what the CLI lists in ``--help`` without
loading NumPy (:mod:`cartograph.index.methods` implements them)."""

from __future__ import annotations

METHODS: tuple[str, ...] = ("hybrid", "two-stage", "flat", "bm25", "jaccard", "random")
DEFAULT_METHOD = "hybrid"
