"""Persistence of a :class:`~cartograph.index.tool_index.ToolIndex` (the layout is in that
module's docstring): written whole into a temporary directory and renamed over the old one;
read back only when every file matches the hash its manifest recorded."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cartograph.errors import IndexError_
from cartograph.files import temp_name
from cartograph.index.documents import ToolDocument
from cartograph.index.embedders import Embedder, load_embedder
from cartograph.index.lexical import Lexical
from cartograph.index.manifest import (
    INDEX_FORMAT,
    MANIFEST,
    embedder_spec,
    read_manifest,
    sha256_file,
)
from cartograph.index.vectors import MatrixVectors

if TYPE_CHECKING:
    from cartograph.index.tool_index import ToolIndex


def save_index(index: ToolIndex, directory: Path) -> Path:
    """Write ``index`` into ``directory`` (replaced as a whole) and return it."""
    final = directory
    tmp = temp_name(final)  # a directory: built whole, then renamed over the old one
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    np.save(tmp / "tool_vectors.npy", index.tool_vectors, allow_pickle=False)
    np.save(tmp / "centroids.npy", index.centroids, allow_pickle=False)
    np.save(tmp / "server_vectors.npy", index.server_vectors, allow_pickle=False)
    index.lexical.save(tmp / "bm25")
    files = {
        p.relative_to(tmp).as_posix(): sha256_file(p) for p in sorted(tmp.rglob("*")) if p.is_file()
    }
    manifest: dict[str, Any] = {
        "format": INDEX_FORMAT,
        "card_digest": index.card_set_digest,  # the key keeps its name: old indexes load
        "embedder": {
            "spec": embedder_spec(index.embedder),
            "name": index.embedder.name,
            "model": index.embedder.model,
            "dim": index.embedder.dim,
        },
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "build_seconds": round(index.build_seconds, 3),
        "servers": index.servers,
        "server_documents": index.server_documents,
        "tools": [
            {"server": d.server, "tool": d.tool, "dense": d.dense, "lexical": d.lexical}
            | ({} if d.reads is None else {"reads": d.reads})
            for d in index.documents
        ],
        "files": files,
    }
    (tmp / MANIFEST).write_text(
        json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    if final.exists():
        old = final.with_name(f".{final.name}.{os.getpid()}.old")
        final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp.rename(final)
    return final


def load_index(cls: type[ToolIndex], root: Path, embedder: Embedder | None) -> ToolIndex:
    """The index saved in ``root``; :class:`IndexError_` if it is missing or was altered."""
    manifest = read_manifest(root)
    for rel, digest in manifest["files"].items():
        path = root / rel
        if not path.is_file():
            raise IndexError_(f"{path}: missing from the index; rebuild it")
        if sha256_file(path) != digest:
            raise IndexError_(f"{path}: content does not match the manifest (tampered?)")
    rec = manifest["embedder"]
    embedder = embedder or load_embedder(rec["spec"])
    if (embedder.name, embedder.model, embedder.dim) != (rec["name"], rec["model"], rec["dim"]):
        raise IndexError_(
            f"{root}: built with {rec['name']} ({rec['model']}), asked to search with "
            f"{embedder.name} ({embedder.model}); rebuild it with `cartograph index build`"
        )
    tools = manifest["tools"]
    docs = [
        ToolDocument(t["server"], t["tool"], t["dense"], t["lexical"], _reads(t.get("reads")))
        for t in tools
    ]
    servers = list(manifest["servers"])
    pos = {s: i for i, s in enumerate(servers)}
    index = cls(
        tool_ids=[(d.server, d.tool) for d in docs],
        vectors=MatrixVectors(np.load(root / "tool_vectors.npy", allow_pickle=False)),
        servers=servers,
        tool_server=np.asarray([pos[d.server] for d in docs], dtype=np.int64),
        centroids=np.load(root / "centroids.npy", allow_pickle=False),
        server_vectors=np.load(root / "server_vectors.npy", allow_pickle=False),
        documents=docs,
        server_documents=list(manifest["server_documents"]),
        lexical=Lexical.load(root / "bm25"),
        embedder=embedder,
        card_set_digest=str(manifest["card_digest"]),
        build_seconds=float(manifest.get("build_seconds") or 0.0),
    )
    if index.tool_vectors.shape != (len(docs), rec["dim"]):
        raise IndexError_(f"{root}: tool_vectors.npy has the wrong shape; rebuild the index")
    return index


def _reads(value: object) -> bool | None:
    return value if isinstance(value, bool) else None
