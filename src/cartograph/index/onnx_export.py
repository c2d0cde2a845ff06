"""A BERT-family torch model as weight-only int8 ONNX: the one export the trainers share.

``cartograph index tune`` (:mod:`cartograph.index.adapt_train`), ``scripts/train_encoder.py``
and ``scripts/train_reranker.py`` all export a Hugging Face model that takes ``input_ids``,
``attention_mask`` and ``token_type_ids``: the float graph is traced to ONNX (opset 17, batch and
token axes dynamic) and its weights are then quantised by
:func:`cartograph.index.onnx_int8.weight_only_int8` (activations stay float, so a text's output
does not depend on its batch mates). Needs the ``train`` extra (torch); nothing here is imported
by discover or the proxy.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def export_int8(
    model: Any,
    pick: Callable[[Any], Any],
    output: str,
    float_path: Path,
    dest: Path,
    *,
    per_token: bool,
) -> None:
    """Trace ``model`` (eval mode) to ``float_path`` with one output named ``output``, taken
    from the model's result by ``pick``, then write its int8 weights to ``dest``.
    ``per_token``: the output has a token axis (hidden states) as well as the batch axis."""
    import torch  # pyright: ignore[reportMissingImports]

    from cartograph.index.onnx_int8 import weight_only_int8

    class Named(torch.nn.Module):  # named inputs in, one named output out
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return pick(
                self.inner(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    token_type_ids=token_type_ids,
                )
            )

    ids = torch.ones((1, 8), dtype=torch.long)
    axes = {n: {0: "batch", 1: "tokens"} for n in INPUTS}
    axes[output] = {0: "batch", 1: "tokens"} if per_token else {0: "batch"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes it treats as constant
        torch.onnx.export(
            Named().eval(),
            (ids, ids, torch.zeros_like(ids)),
            str(float_path),
            input_names=list(INPUTS),
            output_names=[output],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    weight_only_int8(float_path, dest)
