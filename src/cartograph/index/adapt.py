"""Catalog adaptation: an encoder tuned to the operator's own catalog (`cartograph index tune`).

This module owns what needs no torch: the pseudo-queries drawn from the verified cards (each
tool's example tasks and the first sentence of its summary, paired with the tool's dense
document, the text the index embeds, and a hard negative from the same server), the
held-out split that decides whether the adapted model is kept, the digest of the documents it
was tuned on, the adapted model's folder in the workspace (``<home>/models/adapted/``:
``model.onnx``, ``tokenizer.json`` and ``manifest.json`` with its provenance) and the choice
of embedder when an index opens: the adapted one while the cards are the ones it was tuned on,
else the shipped model with a warning. Training and export are in
:mod:`cartograph.index.adapt_train` (torch, the ``train`` extra).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cartograph.cards.model import Card, ToolEntry
from cartograph.errors import EmbedderError
from cartograph.index.documents import ToolDocument, card_documents
from cartograph.index.names import TUNED_MARK

logger = logging.getLogger(__name__)

ADAPTED = "adapted"
HOLDOUT_SHARE = 0.2
SEED = 18
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def adapted_dir(home: Path) -> Path:
    return home / "models" / ADAPTED


@dataclass(frozen=True)
class Pair:
    """One training example: a pseudo-query, its tool's document, and a sibling's document."""

    query: str
    positive: str
    negative: str
    tool: str  # "server.tool"


def documents_digest(documents: list[ToolDocument]) -> str:
    """Names what a tuning saw: every tool's server, name and dense text (not the signatures or
    timestamps, so re-signing the same text keeps the adapted model)."""
    h = hashlib.sha256()
    for doc in sorted(documents, key=lambda d: (d.server, d.tool)):
        h.update(json.dumps([doc.server, doc.tool, doc.dense], ensure_ascii=False).encode())
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


def pseudo_queries(entry: ToolEntry) -> list[str]:
    """The tasks a tool should answer: its example tasks (which the dense text does not hold)
    and its summary's first sentence (what the tool does, in the operator's words)."""
    queries = [ex.task.strip() for ex in entry.examples if ex.task.strip()]
    first = _SENTENCE.split(entry.summary.strip(), 1)[0].rstrip(".")
    return list(dict.fromkeys([*queries, first] if first else queries))


def holdout_tools(documents: list[ToolDocument], share: float = HOLDOUT_SHARE) -> set[str]:
    """A seeded share of the tools whose pseudo-queries only judge (never train) the model."""
    keys = sorted(f"{d.server}.{d.tool}" for d in documents)
    n = max(1, round(share * len(keys))) if len(keys) > 4 else 0
    return set(random.Random(SEED).sample(keys, n))


def catalog_pairs(cards: Mapping[str, Card], held_out: set[str]) -> tuple[list[Pair], list[Pair]]:
    """(training pairs, held-out pairs) from ``cards``. A pair's negative is a sibling on the same
    server (seeded pick), or any other tool's document on a one-tool server."""
    rng = random.Random(SEED)
    docs = {(d.server, d.tool): d for d in card_documents(cards)}
    everything = sorted({d.dense for d in docs.values()})
    train: list[Pair] = []
    judge: list[Pair] = []
    for server in sorted(cards):
        siblings = [docs[(server, e.name)].dense for e in cards[server].tools]
        for entry in cards[server].tools:
            key = f"{server}.{entry.name}"
            positive = docs[(server, entry.name)].dense
            others = [s for s in siblings if s != positive]
            for query in pseudo_queries(entry):
                negative = rng.choice(others) if others else _elsewhere(rng, everything, positive)
                pair = Pair(query, positive, negative, key)
                (judge if key in held_out else train).append(pair)
    rng.shuffle(train)
    return train, judge


def _elsewhere(rng: random.Random, documents: list[str], positive: str) -> str:
    others = [d for d in rng.sample(documents, min(3, len(documents))) if d != positive]
    return others[0] if others else positive


def recall_at(vectors: np.ndarray, keys: list[str], queries: np.ndarray, wanted: list[str], k: int):
    """R@1 and R@k of ``queries`` (unit vectors) over the tool ``vectors``, dense only."""
    pos = {key: i for i, key in enumerate(keys)}
    scores = queries @ vectors.T
    top = np.argsort(-scores, axis=1)[:, :k]
    want = np.asarray([pos[w] for w in wanted])
    r1 = float(np.mean(top[:, 0] == want)) if len(want) else 0.0
    rk = float(np.mean([w in row for w, row in zip(want, top, strict=True)])) if len(want) else 0.0
    return r1, rk


# ------------------------------------------------------------------ the stored model


@dataclass(frozen=True)
class AdaptedModel:
    """A checked ``<home>/models/adapted/`` folder."""

    folder: Path
    manifest: dict[str, Any]

    @property
    def model_id(self) -> str:
        sha = self.manifest["files"]["model.onnx"][:12]
        return f"{self.manifest['base_model']}{TUNED_MARK}{sha}"

    @property
    def digest(self) -> str:
        return str(self.manifest.get("documents_digest", ""))


def read_adapted(folder: Path) -> AdaptedModel | None:
    """The adapted model in ``folder`` (:func:`adapted_dir`), every file checked against its
    manifest; ``None`` when there is none. A damaged folder raises :class:`EmbedderError`
    naming the file."""
    from cartograph.index.packaged import checked_model

    if not (folder / "manifest.json").is_file():
        return None
    checked = checked_model(ADAPTED, folder)
    for field in ("base_model", "documents_digest"):
        if not isinstance(checked.manifest.get(field), str):
            raise EmbedderError(
                f"{folder / 'manifest.json'}: field {field!r} missing; run `cartograph index "
                "tune` again (or delete the folder to use the shipped model)"
            )
    return AdaptedModel(folder, checked.manifest)


def load_adapted(model: AdaptedModel):
    """An :class:`~cartograph.index.onnx_minilm.OnnxMiniLM` over the adapted weights."""
    from cartograph.index.onnx_minilm import OnnxMiniLM

    embedder = OnnxMiniLM(
        model_path=model.folder / "model.onnx",
        tokenizer=model.folder / "tokenizer.json",
        model_id=model.model_id,
    )
    embedder.name = ADAPTED
    embedder.spec = f"{ADAPTED}:{model.folder}"  # type: ignore[attr-defined]
    return embedder
