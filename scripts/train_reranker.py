"""Train the discover reranker: a MiniLM cross-encoder, exported as int8 ONNX package data.

Uses the triplets of ``scripts/train_encoder.py data`` (query, positive card text, mined hard
negative: a sibling tool of the same server or the positive's nearest neighbour under the stock
model), so the evaluation sets' test parts stay out exactly as they do for the encoder. Each
triplet gives two labelled pairs, (query, positive, 1) and (query, negative, 0); the head is a
new one-logit classifier over all-MiniLM-L6-v2, trained with binary cross-entropy. Never part
of CI::

    PYTHONPATH=src .venv/bin/python scripts/train_encoder.py data --out RUN/pairs.jsonl
    RUN_VENV/bin/python scripts/train_reranker.py train --pairs RUN/pairs.jsonl --run RUN
    RUN_VENV/bin/python scripts/train_reranker.py export --run RUN \
        --dest src/cartograph/index/models/minilm-rerank
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reranker_lists import add_parser, build_lists
from train_encoder import BASE_MODEL, SEED, base_model_dir, file_sha256

from protocol import read_jsonl

PAIR_TEXTS = (
    ("show the last commits of the git repository", "git log: Show the commit history. [git]"),
    ("remember that Alice works at Acme", "memory create_entities: Store facts. [memory]"),
)


def _pair_data(args: argparse.Namespace, model):
    """(dataset, loss, description) for triplets: two labelled pairs each, binary cross-entropy."""
    from datasets import Dataset
    from sentence_transformers.cross_encoder import losses

    rows = read_jsonl(Path(args.pairs))
    rows = rows[: args.limit or None]
    queries, passages, labels = [], [], []
    for r in rows:
        queries += [r["query"], r["query"]]
        passages += [r["positive"], r["negative"]]
        labels += [1.0, 0.0]
    data = Dataset.from_dict({"query": queries, "passage": passages, "label": labels})
    what = "BinaryCrossEntropyLoss; one positive and one mined hard negative a query"
    return data, losses.BinaryCrossEntropyLoss(model), what, len(labels)


def _list_data(args: argparse.Namespace, model):
    """(dataset, loss, description) for stage-one lists (``lists``): the positive against the
    first ``--negatives`` of its list and ``--in-batch`` other lists' positives, softmax
    cross-entropy (the cross-encoder's MultipleNegativesRankingLoss). Lists whose positive
    stage one ranks below ``--max-positive-rank`` are left out: there the tools above it are
    as likely unlabelled duplicates as mistakes."""
    from datasets import Dataset
    from sentence_transformers.cross_encoder import losses

    rows = read_jsonl(Path(args.lists))
    rows = [
        r
        for r in rows
        if r["positive_rank"] < args.max_positive_rank and len(r["negatives"]) >= args.negatives
    ]
    rows = rows[: args.limit or None]
    columns: dict[str, list[str]] = {
        "query": [r["query"] for r in rows],
        "positive": [r["positive"] for r in rows],
    }
    for n in range(args.negatives):
        columns[f"negative_{n + 1}"] = [r["negatives"][n] for r in rows]
    loss = losses.MultipleNegativesRankingLoss(model, num_negatives=args.in_batch)
    what = (
        f"MultipleNegativesRankingLoss over stage-one lists: 1 positive, {args.negatives} "
        f"stage-one negatives, {args.in_batch} in-batch; positive ranked below "
        f"{args.max_positive_rank} left out; {len(rows)} lists"
    )
    return Dataset.from_dict(columns), loss, what, len(rows) * (1 + args.negatives)


def train(args: argparse.Namespace) -> int:
    import torch
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )

    torch.set_num_threads(args.threads)
    torch.manual_seed(SEED)
    run = Path(args.run)
    run.mkdir(parents=True, exist_ok=True)
    model = CrossEncoder(
        str(base_model_dir()), num_labels=1, max_length=args.max_length, device="cpu"
    )
    if args.layers:  # a shallower, cheaper reranker: the first N of MiniLM's 6 layers
        bert = model.model.bert  # type: ignore[attr-defined]
        bert.encoder.layer = bert.encoder.layer[: args.layers]
        bert.config.num_hidden_layers = args.layers
        model.model.config.num_hidden_layers = args.layers  # type: ignore[attr-defined]
    data, loss, what, labelled = (_list_data if args.lists else _pair_data)(args, model)
    targs = CrossEncoderTrainingArguments(
        output_dir=str(run / "checkpoints"),
        num_train_epochs=args.epochs,
        max_steps=args.max_steps or -1,
        per_device_train_batch_size=args.batch,
        learning_rate=args.lr,
        warmup_steps=0.1,
        seed=SEED,
        save_strategy="steps",
        save_steps=args.save_steps,
        save_total_limit=2,
        logging_steps=10,
        report_to="none",
        dataloader_num_workers=0,
        use_cpu=True,
    )
    trainer = CrossEncoderTrainer(model=model, args=targs, train_dataset=data, loss=loss)
    ckpts = sorted((run / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name[11:]))
    t0 = time.time()
    trainer.train(resume_from_checkpoint=str(ckpts[-1]) if ckpts else None)
    model.save(str(run / "final"))
    data_file = Path(args.lists or args.pairs)
    info = {
        "base": BASE_MODEL,
        "seed": SEED,
        ("lists_sha256" if args.lists else "pairs_sha256"): file_sha256(data_file),
        "labelled_pairs": labelled,
        "epochs": args.epochs,
        "batch": args.batch,
        "lr": args.lr,
        "max_length": args.max_length,
        "layers": args.layers or 6,
        "steps": trainer.state.global_step,
        "rows_seen": trainer.state.global_step * args.batch,
        "loss": what,
        "wall_s_this_session": round(time.time() - t0),
        "threads": args.threads,
        "resumed_from": ckpts[-1].name if ckpts else None,
    }
    (run / "final" / "training.json").write_text(json.dumps(info, indent=1) + "\n")
    print(json.dumps(info), file=sys.stderr)
    return 0


def export(args: argparse.Namespace) -> int:
    from transformers import AutoModelForSequenceClassification

    from cartograph.index.onnx_export import export_int8

    run = Path(args.run)
    dest = Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    source = Path(args.checkpoint) if args.checkpoint else run / "final"
    clf = AutoModelForSequenceClassification.from_pretrained(str(source)).eval()
    export_int8(
        clf,
        lambda out: out.logits[:, 0],
        "logits",
        run / "reranker-float.onnx",
        dest / "model.onnx",
        per_token=False,
    )
    (dest / "tokenizer.json").write_bytes((base_model_dir() / "tokenizer.json").read_bytes())
    info_path = source / "training.json"
    info = json.loads(info_path.read_text()) if info_path.is_file() else {"checkpoint": str(source)}
    manifest = {
        "name": dest.name,
        "base": BASE_MODEL,
        "kind": "cross-encoder",
        "max_length": int(info.get("max_length", 128)),
        "layers": int(info.get("layers", 6)),
        "files": {n: file_sha256(dest / n) for n in ("model.onnx", "tokenizer.json")},
        "training": info,
        # weight products on int8 (DynamicQuantizeMatMul): half the time and memory of
        # dequantised weights, the tune and test rows within a few tasks (docs/models.md)
        "matmul": "int8",
    }
    manifest["int8_vs_float_max_logit_gap"] = logit_parity(source, dest, manifest)
    manifest["int8_matmul_vs_weight_only_max_logit_gap"] = matmul_gap(dest, manifest)
    spread = logit_spread(dest, manifest)
    if spread < 0.5:  # a collapsed head scores every pair alike: refuse to ship it
        raise SystemExit(
            f"{source}: the fixed pairs' logits span only {spread:.4f}; the model did not "
            "learn (check the training loss)"
        )
    manifest["fixed_pairs_logit_range"] = round(spread, 3)
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(manifest, indent=1))
    return 0


def logit_parity(source: Path, dest: Path, manifest: dict) -> float:
    """Largest gap between the float torch logits and the int8 ONNX ones on :data:`PAIR_TEXTS`."""
    import numpy as np
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder

    from cartograph.index.rerank import Reranker

    ref = CrossEncoder(str(source), device="cpu")
    raw = ref.predict(list(PAIR_TEXTS), activation_fn=torch.nn.Identity())
    want = np.asarray(raw, dtype=np.float64)
    reranker = Reranker(dest, manifest)
    got = np.asarray([reranker.score(q, [d])[0] for q, d in PAIR_TEXTS])
    return round(float(np.max(np.abs(want - got))), 4)


def matmul_gap(dest: Path, manifest: dict) -> float:
    """Largest gap on :data:`PAIR_TEXTS` between int8 weight products and dequantised float
    ones, over the same int8 ONNX model (what ``"matmul": "int8"`` costs in logits)."""
    import numpy as np

    from cartograph.index.rerank import Reranker

    int8, floats = (Reranker(dest, manifest, int8_matmul=on) for on in (True, False))
    gaps = [int8.score(q, [d])[0] - floats.score(q, [d])[0] for q, d in PAIR_TEXTS]
    return round(float(np.max(np.abs(gaps))), 4)


def logit_spread(dest: Path, manifest: dict) -> float:
    """The range of the logits of :data:`PAIR_TEXTS` and of their swapped pairs: near 0 when
    the head collapsed to one score for every pair (as a 3-layer run here did, its loss stuck
    at 0.693), however close the int8 and float logits agree."""
    import numpy as np

    from cartograph.index.rerank import Reranker

    reranker = Reranker(dest, manifest)
    (q1, d1), (q2, d2) = PAIR_TEXTS
    logits = np.concatenate([reranker.score(q1, [d1, d2]), reranker.score(q2, [d2, d1])])
    return float(logits.max() - logits.min())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    t = sub.add_parser("train", help="fine-tune the cross-encoder (resumes from RUN/checkpoints)")
    data = t.add_mutually_exclusive_group(required=True)
    data.add_argument("--pairs", help="triplets of `train_encoder.py data` (binary labels)")
    data.add_argument("--lists", help="stage-one lists of `lists` (softmax over each list)")
    t.add_argument("--negatives", type=int, default=6, help="--lists: negatives a list")
    t.add_argument("--in-batch", type=int, default=1, help="--lists: in-batch negatives")
    t.add_argument("--max-positive-rank", type=int, default=30, help="--lists: see _list_data")
    t.add_argument("--run", required=True)
    t.add_argument("--epochs", type=int, default=1)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--lr", type=float, default=4e-5)
    t.add_argument("--max-length", type=int, default=128)
    t.add_argument("--save-steps", type=int, default=50)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--limit", type=int, default=0, help="train on the first N triplets only")
    t.add_argument("--max-steps", type=int, default=0, help="stop after N steps (0: epochs)")
    t.add_argument("--layers", type=int, default=0, help="keep the first N layers (0: all 6)")
    e = sub.add_parser("export", help="int8 ONNX + tokenizer + manifest into --dest")
    e.add_argument("--run", required=True)
    e.add_argument("--dest", required=True)
    e.add_argument("--checkpoint", default=None, help="export this checkpoint, not RUN/final")
    add_parser(sub)
    args = ap.parse_args(argv)
    return {"train": train, "export": export, "lists": build_lists}[args.step](args)


if __name__ == "__main__":
    raise SystemExit(main())
