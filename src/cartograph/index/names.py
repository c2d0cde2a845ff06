"""The ranking methods by name, and the default: what the CLI lists in ``--help`` without
loading NumPy (:mod:`cartograph.index.methods` implements them)."""

from __future__ import annotations

from typing import Literal, get_args

Method = Literal["hybrid", "two-stage", "flat", "bm25", "jaccard", "random"]
METHODS: tuple[Method, ...] = get_args(Method)
DEFAULT_METHOD: Method = "hybrid"

TUNED_MARK = "+tuned@"
"""A catalog-adapted model's id is ``<base model id>+tuned@<sha12>`` (`cartograph index tune`): a
new tuning is a new id (and a rebuilt index); fusion weights and the abstain threshold are looked
up under the base's id."""


INT8_MARK = "+int8"
"""The int8 MiniLM's id ends in this when its weight products run on int8, each text alone
(:mod:`cartograph.index.onnx_minilm`): its vectors are not the float products' vectors."""


def calibration_id(model: str | None) -> str:
    """The model id whose fusion weights and abstain threshold apply: an adapted model's base,
    and the same weights whether the products run on int8 or float."""
    return (model or "").split(TUNED_MARK, 1)[0].removesuffix(INT8_MARK)
