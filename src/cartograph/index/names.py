"""The ranking methods by name, and the default: what the CLI lists in ``--help`` without
loading NumPy (:mod:`cartograph.index.methods` implements them)."""

from __future__ import annotations

from typing import Literal, get_args

Method = Literal["hybrid", "two-stage", "flat", "bm25", "jaccard", "random"]
METHODS: tuple[Method, ...] = get_args(Method)
DEFAULT_METHOD: Method = "hybrid"
